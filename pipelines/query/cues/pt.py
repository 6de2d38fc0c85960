"""Portuguese collection cues: the kinds of en.py, in Portuguese."""

WHOLE = "acervo acervos colecao colecoes"
ITEM = "documento texto artigo pagina episodio transcricao capitulo secao"
ITEMS = r"documentos|textos|artigos|paginas|episodios|transcricoes|capitulos|secoes"
REPORTING = (r"discut\w*|mencion\w*|falam|descrevem|descrit\w*|destac\w*|citad[oa]s?|citam|enfatiz\w*|dizem|segundo"
             r"|acreditam")
HOLDING = r"aparec\w*|tratad[oa]s?|abordad[oa]s?|trazem|traz|contem"
CUES = (r"recorrentes?|comum|comuns|comumente|frequentes|frequentemente|com (mais |que |muita )?frequencia"
        r"|geralmente|normalmente|tipicamente|costuma\w*|em geral|no geral|de modo geral|ao longo|tendencias?"
        r"|temas?|topicos?|assuntos?|padroes|padrao|repet\w*|mais vezes|diferen\w*|varia|variam|varios|varias"
        r"|diversos|diversas|semelhan\w*|compartilhad\w*|muitas vezes")
REPORTED = r"algum|alguma|alguns|algumas|exemplos|opinioes|perspectivas|visoes|abordagens|historias|experiencias"
OVERVIEW = (r"quais sao os (principais )?(temas|assuntos|topicos)|quais os (principais )?(temas|assuntos|topicos)"
            r"|temas|topicos|panorama|visao geral|resum\w*|do que (tratam?|falam?)|dominam|principais assuntos")
WIDER = (r"contexto (geral|amplo|maior)|no contexto|de forma geral|de modo geral|em geral|visao ampla"
         r"|quadro geral")
