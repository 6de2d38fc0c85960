"""Stage `entity_answers`: for each entity, one sentence quoted verbatim from a chunk that mentions it.

Writes entity_answers (answer, evidence_ref, input_hash).
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from pipelines import names
from pipelines.chunks import sentences
from pipelines.db import sql
from pipelines.run import Run
from pipelines.runs import Work

VERSION = "extractive-1"
MAX_CANDIDATE_CHUNKS = 16
MIN_WORDS = 4
COPULAS = frozenset([
    "is", "was", "are", "were", "refers", "means", "denotes", "defines",
    "é", "foi", "são", "era", "eram", "designa", "significa", "define", "definem", "consiste", "consistem",
])
COPULA_WINDOW = 8
SPELLED = 4096  # sentences (and names) whose tokens an answer run keeps: chunks recur across entities


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
           max_chars: int, split: Callable[[str], Iterable[tuple[int, int]]] = sentences,
           spell: Callable[[str], tuple[str, ...]] = names.words) -> tuple[str, str]:
    """(sentence, chunk_id): the best "what is X" sentence among the candidates' chunks.

    Preference, in order: a sentence that names X; one where a defining verb follows the name;
    of reasonable length; from a chunk titled X, then one shared with fewer entities; earlier;
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
        for position, (start, end) in enumerate(split(text)):
            sentence = text[start:end]
            tokens = spell(sentence)
            where = [p for k in keys if (p := _position(tokens, k)) is not None]
            named = bool(where) or (lead and position == 0)
            defining = (lead and position == 0) or (bool(where) and _defining(sentence, tokens, min(where)))
            odd_length = len(sentence) > max_chars or len(tokens) < MIN_WORDS
            score = (not named, not defining, odd_length, chunk_rank, position, len(sentence), cand.chunk_id, start)
            if best is None or score < best[0]:
                best = (score, sentence, cand.chunk_id)
            if score[:3] == (False, False, False):  # later sentences rank after this one: it is the best
                return sentence, cand.chunk_id
    assert best is not None, "an entity always has a chunk with text"
    return best[1], best[2]


def run(run: Run, *, max_chars: int) -> Work:
    """Choose the short answer of every entity whose input hash changed; drop those of vanished entities.

    Within a run, only entities the change log points at are hashed (unless the settings changed).
    """
    con = run.con
    setting = f"{VERSION}:{max_chars}"
    con.execute("delete from keys where kind = 'answer'")
    full = not run.logged or run.get("entity_answers") != setting
    con.execute(sql("answers_scope"), {"full": full})
    con.execute(sql("answer_todo"), {"version": VERSION, "max_chars": max_chars})
    texts = dict(con.execute(sql("answer_texts")).fetchall())
    answers = []
    split = cache(lambda text: tuple(sentences(text)))  # this run's chunks are split once
    spell = lru_cache(maxsize=SPELLED)(names.words)  # and their recent sentences tokenised once
    todo = con.execute("select entity_id, names, chunks, input_hash from answer_todo order by entity_id").fetchall()
    for eid, aliases, chunks, digest in todo:
        candidates = [Candidate(c["id"], c["hash"], c["ord"], c["title"], c["crowd"]) for c in chunks]
        sentence, ref = choose(aliases, candidates, texts, max_chars=max_chars, split=split, spell=spell)
        answers.append({"entity_id": eid, "answer": sentence, "evidence_ref": ref, "input_hash": digest})
    n_entities = con.execute("select count(*) from entities").fetchone()[0]
    replaced = con.execute("select count(*) from entity_answers where entity_id in "
                           "(select entity_id from answer_todo)").fetchone()[0]
    with run.transaction():
        deleted = con.execute(sql("entity_answers_delete")).fetchone()[0]
        run.insert("entity_answers", answers)
        run.note("changed_answers")
        run.put("entity_answers", setting)
    return Work(n_entities, n_entities - len(answers), len(answers), deleted - replaced)
