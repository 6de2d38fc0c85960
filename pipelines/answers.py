"""Stage `entity_answers`: for each entity, one sentence quoted verbatim from a chunk that mentions it.

Writes entity_answers (answer, evidence_ref, input_hash) and each entity's best EVIDENCE chunks (evidence), so that
a question reads an entity's evidence as one row, whatever the corpus's size.
"""

from collections.abc import Iterator
from functools import cache, lru_cache
from typing import Any

from acervo.pipelines.answer_choice import Candidate, choose
from acervo.pipelines.db import Connection, sql
from acervo.pipelines.layout import EVIDENCE
from acervo.pipelines.names import words
from acervo.pipelines.run import Run
from acervo.pipelines.runs import Work
from acervo.pipelines.sentences import sentences
from acervo.pipelines.stage import Hashed, refresh

VERSION = "extractive-5"  # 5: names found in words without marks, and in pairs of Thai or Khmer letters
BATCH = 20_000  # entities whose answers are chosen at a time: a run holds their chunks' text, not the corpus's
SPELLED = 4096  # sentences (and names) whose tokens an answer run keeps: chunks recur across entities
READS = ("documents", "chunks", "mentions", "boilerplate")  # the stages whose tables this stage reads (its own aside)
STAGE = Hashed("entity_answers", READS, "entity_id", "answer_todo", "entities", scoped=True, logs=True, ranged=True)


def run(run: Run, *, max_chars: int) -> Work:
    """Choose the short answer of every entity whose input hash changed; drop those of vanished entities."""
    return refresh(run, STAGE, f"{VERSION}:{max_chars}",
                   lambda run: run.insert("entity_answers", _chosen(run.con, max_chars)),
                   version=VERSION, max_chars=max_chars, evidence=EVIDENCE)


def _chosen(con: Connection, max_chars: int) -> Iterator[dict[str, Any]]:
    """The entity_answers row of each entity of answer_todo, chosen BATCH entities at a time."""
    spell = lru_cache(maxsize=SPELLED)(words)  # recent sentences (and names) tokenised once
    after = None
    while todo := con.execute(sql("entity_answers.todo_batch"), {"after": after, "n": BATCH}).fetchall():
        texts = dict(con.execute(sql("entity_answers.batch_texts"), {"after": after, "last": todo[-1][0]}).fetchall())
        split = cache(lambda text: tuple(sentences(text)))  # the batch's chunks are split once
        for eid, aliases, chunks, evidence, digest in todo:
            candidates = [Candidate(c["id"], c["hash"], c["ord"], c["title"], c["crowd"], frozenset(c["boilerplate"]))
                          for c in chunks]
            sentence, ref = choose(aliases, candidates, texts, max_chars=max_chars, split=split, spell=spell)
            yield {"entity_id": eid, "answer": sentence, "evidence_ref": ref, "input_hash": digest,
                   "evidence": evidence}
        after = todo[-1][0]
