"""Spanish collection cues: the kinds of en.py, in Spanish."""

WHOLE = "coleccion colecciones corpus"
ITEM = "documento texto articulo pagina episodio transcripcion capitulo seccion"
ITEMS = r"documentos|textos|articulos|paginas|episodios|transcripciones|capitulos|secciones"
REPORTING = (r"discut\w*|mencion\w*|hablan|describen|descrit\w*|destac\w*|citad[oa]s?|citan"
             r"|enfatiz\w*|dicen|segun|creen")
HOLDING = r"aparec\w*|tratad[oa]s?|tratan|abordad[oa]s?|abordan|contienen|contiene|cubren|cubre|figuran"
CUES = (r"recurrentes?|comun|comunes|comunmente|frecuentes?|frecuentemente|con (mas |que |mucha )?frecuencia"
        r"|a menudo|generalmente|normalmente|tipicamente|tipic[oa]s|habitual\w*|suele\w*|en general|en conjunto"
        r"|a lo largo|tendencias?|temas?|tematic\w*|topicos?|asuntos?|patron|patrones|repet\w*|repit\w*|mas veces"
        r"|diferen\w*|compar\w*|varia|varian|variacion\w*|varios|varias|diversos|diversas|multiples"
        r"|semejan\w*|similitud\w*|compartid\w*|muchas veces|en comun")
REPORTED = (r"algun|alguna|algunos|algunas|ejemplos|opiniones|perspectivas|visiones|enfoques|historias|anecdotas"
            r"|experiencias")
OVERVIEW = (r"cuales son los (principales )?(temas|asuntos|topicos)|temas principales|ideas principales"
            r"|temas|topicos|panorama|vision general|vista general|resum\w*|de que (tratan?|hablan?)|dominan"
            r"|dominantes?|(toda|en toda) la coleccion|todo el corpus")
WIDER = (r"contexto (general|amplio|mas amplio)|en el contexto|de forma general|de modo general|en general"
         r"|vision amplia|panorama general|en terminos generales")
