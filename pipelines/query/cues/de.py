"""German collection cues: the kinds of en.py, in German (folded: no umlauts, ß as ss)."""

WHOLE = "sammlung sammlungen korpus dokumentensammlung textsammlung"
ITEM = "dokument dokuments text textes artikel seite episode transkript kapitel abschnitt"
ITEMS = (r"dokumente|dokumenten|texte|texten|artikeln|seiten|episoden|transkripte|transkripten|kapiteln|abschnitte"
         r"|abschnitten")
REPORTING = (r"diskut\w*|erwahn\w*|sprechen|spricht|beschreib\w*|beschrieben|hervorgehoben"
             r"|betont|betonen|zitiert|zitieren|sagen|sagt|gesagt|laut|zufolge|glauben|glaubt")
HOLDING = (r"vorkomm\w*|kommen vor|kommt vor|auftauch\w*|tauchen auf|taucht auf|erschein\w*|erschien\w*"
           r"|enthalt\w*|behandel\w*|abgedeckt|deckt ab|decken ab")
CUES = (r"wiederkehr\w*|wiederhol\w*|haufig\w*|oft|ofter|oftesten|am meisten|gemeinsam\w*|typisch\w*|ublich\w*"
        r"|im allgemeinen|allgemein|generell|insgesamt|im ganzen|trends?|tendenz\w*|themen|thema|thematisch\w*"
        r"|muster|vergleich\w*|unterschied\w*|unterscheid\w*|verschieden\w*|vielfalt\w*|mehrere|ahnlich\w*"
        r"|immer wieder|durchweg")
REPORTED = (r"irgendwelche|beispiele|ansichten|perspektiven|meinungen|ansatze|geschichten|anekdoten"
            r"|erfahrungen")
OVERVIEW = (r"was sind die (wichtigsten |haupt)?themen|\w*themen|uberblick|ubersicht|zusammenfass\w*|fasse zusammen"
            r"|fass zusammen|worum geht es|dominier\w*|hauptideen|die ganze sammlung|die gesamte sammlung")
WIDER = (r"im allgemeinen|allgemeinen kontext|breiteren kontext|grosseren zusammenhang|gesamtbild"
         r"|im grossen und ganzen|generell")
