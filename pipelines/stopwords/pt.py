"""Portuguese stop words: the common words a sentence may start with, the words a question's content leaves out
and the closed-class words of questions."""

# common words a capitalised word at a sentence's start may be (case-folded, accents kept): no candidate name
COMMON = frozenset("""
o os um uma uns umas este esta estes estas esse essa isso isto aquele aquela eu nós tu ele ela eles
elas nosso nossa meu minha seu sua e ou mas se que quando onde como porque porém também já ainda
hoje agora então depois antes durante para por com sem sobre entre até desde no na nos nas num numa
em ao aos à às do da dos das senhor senhora sr sra
""".split())
STOP_WORDS = frozenset(  # words a question's content words leave out (folded)
    "a de da das do dos e em na nas no nos o os para por que um uma com como qual quais quem onde quando".split())
FUNCTION_WORDS = frozenset(  # closed-class words (folded): how a question asks, not what
    "eu tu ele ela nos eles elas me te lhe lhes se mim meu minha meus minhas teu tua seu sua seus suas "
    "nosso nossa nossos nossas dele dela deles delas este esta estes estas isto esse essa esses essas isso "
    "aquele aquela aqueles aquelas aquilo ao aos pelo pela pelos pelas num numa sem sob sobre entre ate "
    "desde contra mas nem ou porque cujo cuja quanto quanta quantos quantas ser sou somos sao era eram foi "
    "foram sera seria estou estao estava estavam tenho tem temos tinha tinham ha havia posso pode podem "
    "podemos devo deve devem devemos faco nao sim muito muita muitos muitas mais menos tambem ja ainda so "
    "apenas".split())
