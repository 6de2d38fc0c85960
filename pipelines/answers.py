"""Stage `entity_answers`: for each entity, one sentence quoted verbatim from a chunk that mentions it."""

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from pipelines import names
from pipelines.chunks import sentences
from pipelines.db import Connection, content_hash, insert, keys, sql, transaction
from pipelines.runs import Work

VERSION = "extractive-1"
MAX_CANDIDATE_CHUNKS = 16
MIN_WORDS = 4
COPULAS = frozenset([
    "is", "was", "are", "were", "refers", "means", "denotes", "defines",
    "é", "foi", "são", "era", "eram", "designa", "significa", "define", "definem", "consiste", "consistem",
])
COPULA_WINDOW = 8


@dataclass(frozen=True)
class Candidate:
    """A chunk that mentions the entity, with what ranks it."""

    chunk_id: str
    content_hash: str
    ord: int
    title: str
    n_entities: int


def _position(tokens: Sequence[str], name: Sequence[str]) -> int | None:
    """Index of the first occurrence of `name` in `tokens`, or None."""
    n = len(name)
    for i in range(len(tokens) - n + 1):
        if tokens[i] == name[0] and tuple(tokens[i : i + n]) == tuple(name):
            return i
    return None


def _defining(sentence: str, tokens: Sequence[str], at: int) -> bool:
    """Whether a defining verb follows the name that starts at token `at` ("X is", "X é", "X refers").

    Copulas are matched with accents kept ("é" is not "e", which means "and" in Portuguese).
    """
    cased = names.WORD.findall(sentence.casefold())
    window = (cased if len(cased) == len(tokens) else tokens)[at : at + COPULA_WINDOW]
    return any(t in COPULAS for t in window)


def choose(names_of: Sequence[str], candidates: Sequence[Candidate], texts: dict[str, str], *,
           max_chars: int) -> tuple[str, str]:
    """(sentence, chunk_id): the best "what is X" sentence among the candidates' chunks.

    Preference, in order: a sentence that names X; one where a defining verb follows the name;
    of reasonable length; from a chunk titled X, then one shared with fewer entities; earlier;
    shorter; then chunk id and offset, so ties never depend on input order. The lead sentence of a
    document titled X counts as naming and defining X (it may use a shorter name).
    """
    keys = [names.words(n) for n in names_of]
    keys = [k for k in keys if k]
    ranked = sorted(candidates, key=lambda c: (names.words(c.title) not in keys, c.n_entities, c.chunk_id))
    best: tuple | None = None
    for chunk_rank, cand in enumerate(ranked[:MAX_CANDIDATE_CHUNKS]):
        text = texts[cand.chunk_id]
        lead = cand.ord == 0 and names.words(cand.title) in keys
        for position, (start, end) in enumerate(sentences(text)):
            sentence = text[start:end]
            tokens = names.words(sentence)
            where = [p for k in keys if (p := _position(tokens, k)) is not None]
            named = bool(where) or (lead and position == 0)
            defining = (lead and position == 0) or (bool(where) and _defining(sentence, tokens, min(where)))
            odd_length = len(sentence) > max_chars or len(tokens) < MIN_WORDS
            score = (not named, not defining, odd_length, chunk_rank, position, len(sentence), cand.chunk_id, start)
            if best is None or score < best[0]:
                best = (score, sentence, cand.chunk_id)
    assert best is not None, "an entity always has a chunk with text"
    return best[1], best[2]


def input_hash(entity_id: str, names_of: Sequence[str], candidates: Sequence[Candidate], max_chars: int) -> str:
    """Hash of exactly what `choose` reads for one entity."""
    parts = [VERSION, str(max_chars), entity_id, *sorted(names_of)]
    for c in sorted(candidates, key=lambda c: c.chunk_id):
        parts += [c.chunk_id, c.content_hash, str(c.ord), c.title, str(c.n_entities)]
    return content_hash(*parts)


def run(con: Connection, *, max_chars: int) -> Work:
    """Choose the short answer of every entity whose input hash changed; drop those of vanished entities."""
    aliases: dict[str, list[str]] = {}
    for eid, alias in con.execute("select entity_id, alias from entity_aliases order by all").fetchall():
        aliases.setdefault(eid, []).append(alias)
    labels = dict(con.execute("select entity_id, label from entities").fetchall())
    stored = dict(con.execute("select entity_id, input_hash from entity_answers").fetchall())
    todo = []
    for eid, group in itertools.groupby(con.execute(sql("answer_candidates")).fetchall(), key=lambda r: r[0]):
        candidates = [Candidate(*r[1:]) for r in group]
        names_of = sorted({labels[eid], *aliases.get(eid, [])})
        digest = input_hash(eid, names_of, candidates, max_chars)
        if stored.get(eid) != digest:
            todo.append((eid, names_of, candidates, digest))
    keys(con, "chunk", {c.chunk_id for _, _, cands, _ in todo for c in cands})
    texts = dict(con.execute(sql("chunk_texts_todo")).fetchall())
    answers = []
    for eid, names_of, candidates, digest in todo:
        sentence, ref = choose(names_of, candidates, texts, max_chars=max_chars)
        answers.append({"entity_id": eid, "answer": sentence, "evidence_ref": ref, "input_hash": digest})
    with transaction(con):
        keys(con, "entity", (eid for eid, *_ in todo))
        deleted = con.execute(sql("entity_answers_delete")).fetchone()[0]
        insert(con, "entity_answers", answers)
    replaced = len(stored.keys() & {a["entity_id"] for a in answers})
    return Work(len(labels), len(labels) - len(answers), len(answers), deleted - replaced)
