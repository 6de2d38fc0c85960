"""Stop words, one module per language (en, pt); here each kind of list with every language's words, as the code
that reads a text of any of them uses it."""

from acervo.pipelines.stopwords import en, pt

COMMON = en.COMMON | pt.COMMON  # common words a capitalised word at a sentence's start may be (accents kept)
STOP_WORDS = en.STOP_WORDS | pt.STOP_WORDS  # words a question's content words leave out (folded)
FUNCTION_WORDS = en.FUNCTION_WORDS | pt.FUNCTION_WORDS  # closed-class words: how a question asks, not what (folded)
