"""Query: the words with which a question asks about a collection as a whole, one module per language (en, pt, es,
de); here each kind as one regular expression over every language's words, as the router reads a question in any
of them (folded: pipelines.names.words). A question in another language is routed by its words' statistics and,
with the packaged model, by its meaning (pipelines.query.router, rule 3)."""

import re

from acervo.pipelines.query.cues import de, en, es, pt

LANGUAGES = (en, pt, es, de)


def _either(kind: str) -> str:
    """The alternatives of every language for one kind of word."""
    return "|".join(getattr(language, kind) for language in LANGUAGES)


WHOLE = frozenset(w for language in LANGUAGES for w in language.WHOLE.split())  # the collection as a whole
ITEMS = frozenset(w for language in LANGUAGES for w in language.ITEMS.split("|"))  # its items in the plural
COLLECTION = WHOLE | ITEMS | {w for language in LANGUAGES for w in language.ITEM.split()}  # with one item
HOLDS = re.compile(rf"\b({_either('HOLDING')})\b")  # how a question says its items hold something: no subject
CUES = re.compile(  # words that ask about many documents at once (frequency, recurrence, comparison, trends)
    rf"\b({_either('CUES')}|{_either('ITEMS')}|{_either('REPORTING')}|{_either('REPORTED')})\b")
FREQUENCY = re.compile(rf"\b({_either('CUES')})\b")  # the cues of frequency, recurrence, comparison and trends alone
REFERS = re.compile(  # words that refer to the collection's text: the collection, its items, what they say or hold
    rf"\b({'|'.join(sorted(COLLECTION))}|{_either('REPORTING')}|{_either('HOLDING')})\b")
ACROSS = re.compile(  # those that refer to more than one of its items: no "the episode", which is one
    rf"\b({'|'.join(sorted(WHOLE | ITEMS))}|{_either('REPORTING')}|{_either('HOLDING')})\b")
OVERVIEW = re.compile(rf"\b({_either('OVERVIEW')})\b")  # a request for an overview of the collection
WIDER = re.compile(rf"\b({_either('WIDER')})\b")  # a request for wider context
