"""Stage `entity_answers`: for each entity, one sentence quoted verbatim from a chunk that mentions it.

Writes entity_answers (answer, evidence_ref, input_hash).
"""

from functools import cache, lru_cache

from pipelines.db import sql
from pipelines.run import Run
from pipelines.runs import SKIPPED, Work
from pipelines.text import Candidate, choose, sentences, words

VERSION = "extractive-1"
SPELLED = 4096  # sentences (and names) whose tokens an answer run keeps: chunks recur across entities
READS = ("documents", "chunks", "mentions")  # the stages whose tables this stage reads (its own aside)


def run(run: Run, *, max_chars: int) -> Work:
    """Choose the short answer of every entity whose input hash changed; drop those of vanished entities.

    Within a run, only entities the change log points at are hashed (unless the settings changed).
    """
    con = run.con
    setting = f"{VERSION}:{max_chars}"
    if run.unchanged(READS, "entity_answers", setting):
        return SKIPPED
    run.keys("answer", ())
    full = not run.logged or run.get("entity_answers") != setting
    con.execute(sql("entity_answers.scope"), {"full": full})
    con.execute(sql("entity_answers.todo"), {"version": VERSION, "max_chars": max_chars})
    texts = dict(con.execute(sql("entity_answers.texts")).fetchall())
    answers = []
    split = cache(lambda text: tuple(sentences(text)))  # this run's chunks are split once
    spell = lru_cache(maxsize=SPELLED)(words)  # and their recent sentences tokenised once
    todo = con.execute(sql("entity_answers.todo_rows")).fetchall()
    for eid, aliases, chunks, digest in todo:
        candidates = [Candidate(c["id"], c["hash"], c["ord"], c["title"], c["crowd"]) for c in chunks]
        sentence, ref = choose(aliases, candidates, texts, max_chars=max_chars, split=split, spell=spell)
        answers.append({"entity_id": eid, "answer": sentence, "evidence_ref": ref, "input_hash": digest})
    n_entities = con.execute(sql("entity_answers.entities")).fetchone()[0]
    replaced = con.execute(sql("entity_answers.replaced")).fetchone()[0]
    with run.transaction():
        deleted = con.execute(sql("entity_answers.delete")).fetchone()[0]
        run.insert("entity_answers", answers)
        run.note("entity_answers.changed")
        run.put("entity_answers", setting)
    return Work(n_entities, n_entities - len(answers), len(answers), deleted - replaced)
