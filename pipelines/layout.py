"""What the stages store that the query side reads back by its meaning: the form of a chunk id, a sentence's key and
stored counts; here, so that the query side imports no stage module."""

from hashlib import blake2b

from acervo.pipelines.names import words
from acervo.pipelines.sentences import sentences

BOILERPLATE_DOCUMENTS = 3  # documents that must write a sentence for it to be boilerplate (a quote twice is content)
KEY_BYTES = 8  # bytes of a sentence key: collisions are negligible among a corpus's sentences
EVIDENCE = 2  # evidence chunks stored per entity, best first: what a question reads of an entity
TITLE_MEMBERS = 3  # a community's title names this many of its most central members


def document_of(chunk_id: str) -> str:
    """The id of the document a chunk id names (chunk_id: the document's id, '#', 12 hex)."""
    return chunk_id.rpartition("#")[0]


def sentence_key(sentence: str) -> str:
    """A sentence's key (chunk_sentences, chunk_boilerplate): a hash of its folded words, punctuation left out (""
    for a sentence without words)."""
    said = " ".join(w for w in words(sentence) if w[0].isalnum())
    return blake2b(said.encode(), digest_size=KEY_BYTES).hexdigest() if said else ""


def sentence_keys(text: str) -> list[str]:
    """The keys of the sentences of `text` that hold words, in order."""
    return [k for start, end in sentences(text) if (k := sentence_key(text[start:end]))]
