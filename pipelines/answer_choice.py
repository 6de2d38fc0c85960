"""The choice of an entity's short answer: the best "what is X" sentence among the chunks that mention it."""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from acervo.pipelines.layout import sentence_key
from acervo.pipelines.names import WORD, position, words
from acervo.pipelines.sentences import sentences

MAX_CANDIDATE_CHUNKS = 16  # chunks an entity's short answer is chosen among, best evidence first
MIN_WORDS = 4  # a shorter sentence is a poor short answer (a caption, a fragment)
COPULAS = frozenset([
    "is", "was", "are", "were", "refers", "means", "denotes", "defines",
    "é", "foi", "são", "era", "eram", "designa", "significa", "define", "definem", "consiste", "consistem",
])
COPULA_WINDOW = 8  # tokens after a name within which a defining verb makes the sentence a definition


@dataclass(frozen=True)
class Candidate:
    """A chunk that mentions the entity, with what ranks it."""

    chunk_id: str
    content_hash: str
    ord: int
    title: str
    n_entities: int
    boilerplate: frozenset[str] = frozenset()  # keys of its sentences that many documents write (layout.sentence_key)


def _defining(sentence: str, tokens: Sequence[str], at: int) -> bool:
    """Whether a defining verb follows the name that starts at token `at` ("X is", "X é", "X refers").

    Copulas are matched with accents kept ("é" is not "e", which means "and" in Portuguese).
    """
    cased = WORD.findall(sentence.casefold())
    window = (cased if len(cased) == len(tokens) else tokens)[at : at + COPULA_WINDOW]
    return any(t in COPULAS for t in window)


def choose(names_of: Sequence[str], candidates: Sequence[Candidate], texts: dict[str, str], *,
           max_chars: int, split: Callable[[str], Iterable[tuple[int, int]]] = sentences,
           spell: Callable[[str], tuple[str, ...]] = words) -> tuple[str, str]:
    """(sentence, chunk_id): the best "what is X" sentence among the candidates' chunks.

    Preference, in order: a sentence that is not boilerplate (many documents write it: a greeting, a licence
    line); one that names X; one where a defining verb follows the name;
    of reasonable length (the one chosen is `clipped` to `max_chars`); from a chunk titled X, then one shared
    with fewer entities; earlier;
    shorter; then chunk id and offset, so ties never depend on input order. The lead sentence of a
    document titled X counts as naming and defining X (it may use a shorter name).

    `split` and `spell` (sentence spans, tokens) may be a caller's caches: a chunk is a candidate of
    every entity it mentions.
    """
    keys = [spell(n) for n in names_of]
    keys = [k for k in keys if k]
    ranked = sorted(candidates, key=lambda c: (spell(c.title) not in keys, c.n_entities, c.chunk_id))
    best: tuple | None = None
    for chunk_rank, cand in enumerate(ranked[:MAX_CANDIDATE_CHUNKS]):
        text = texts[cand.chunk_id]
        lead = cand.ord == 0 and spell(cand.title) in keys
        for place, (start, end) in enumerate(split(text)):
            sentence = text[start:end]
            tokens = spell(sentence)
            where = [p for k in keys if (p := position(tokens, k)) is not None]
            named = bool(where) or (lead and place == 0)
            defining = (lead and place == 0) or (bool(where) and _defining(sentence, tokens, min(where)))
            odd_length = len(sentence) > max_chars or len(tokens) < MIN_WORDS
            common = bool(cand.boilerplate) and sentence_key(sentence) in cand.boilerplate
            score = (common, not named, not defining, odd_length, chunk_rank, place, len(sentence), cand.chunk_id,
                     start)
            if best is None or score < best[0]:
                best = (score, sentence, cand.chunk_id)
            if score[:4] == (False, False, False, False):  # later sentences rank after this one: it is the best
                return sentence, cand.chunk_id
    assert best is not None, "an entity always has a chunk with text"
    return clipped(best[1], max_chars), best[2]


def clipped(sentence: str, max_chars: int) -> str:
    """`sentence`, or when longer than `max_chars` its opening up to the last clause mark (, ; :) in its second
    half, else the last word that ends within it: still a verbatim quote, and short (a text that never closes
    a sentence, such as one written without capitals or stops, is one long "sentence")."""
    if len(sentence) <= max_chars:
        return sentence
    head = sentence[: max_chars + 1]
    clause = max(head.rfind(mark) for mark in ",;:")
    cut = clause if clause >= max_chars // 2 else head.rfind(" ")
    return sentence[: cut if cut > 0 else max_chars].rstrip(" ,;:") or sentence[:max_chars]
