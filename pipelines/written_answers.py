"""Stage `written_answers`: with a language model, a written short answer for each entity, every sentence
citing chunks that mention it (the extractive answer's own chunk and a few others), verified before it is
stored (pipelines.citations).

Optional: it runs only with a model (settings llm_url / llm_model, or a Chat passed in); without one, no
written answer is kept. A reply that fails verification twice is stored without text and with its reason:
the extractive answer stands, and the row is not asked again until its inputs change. A row the run's budget
had no room for is not stored: the next run writes it.
"""

from collections.abc import Iterator
from itertools import groupby

from acervo.pipelines import citations
from acervo.pipelines.citations import Task
from acervo.pipelines.db import sql
from acervo.pipelines.llm import Meter
from acervo.pipelines.run import Run
from acervo.pipelines.runs import Work
from acervo.pipelines.stage import Hashed
from acervo.pipelines.written import written

VERSION = "written-answer-1"  # what a prompt shows: the label, the extractive answer, the chunks, the citable ids
PROMPT = "written_answer"  # pipelines/prompts/written_answer.txt, the system message
CHUNKS = 3  # chunks a prompt shows: the answer's own, then those fewest entities share, then by chunk id
BATCH = 1_000  # entities whose prompts are made at a time: a run holds their chunks' text, not the corpus's
READS = ("chunks", "mentions", "entity_answers")  # the stages whose tables this stage reads (its own aside)
STAGE = Hashed("written_answers", READS, "entity_id", "written_answer_todo", "entity_answers",
               optional=True)


def run(run: Run, *, llm: Meter | None, model: str = "") -> Work:
    """Write the short answer of every entity whose label or extractive input hash changed (every one after a
    change of model or prompt); drop those of vanished entities; drop every one when `llm` is None."""
    return written(run, STAGE, llm, _tasks, version=VERSION, prompt=PROMPT, model=model, key="entity_id",
                   text="answer", n=CHUNKS)


def _tasks(run: Run) -> Iterator[list[Task]]:
    """The requests of the entities of written_answer_todo, BATCH entities at a time."""
    after = None
    while batch := run.con.execute(sql("written_answers.todo_batch"), {"after": after, "size": BATCH}).fetchall():
        found = run.con.execute(sql("written_answers.batch_chunks"),
                                {"after": after, "last": batch[-1][0], "n": CHUNKS}).fetchall()
        chunks = {eid: [(ref, text) for _, ref, text in rows] for eid, rows in groupby(found, key=lambda r: r[0])}
        yield [_task(eid, label, answer, ref, chunks[eid], digest) for eid, label, answer, ref, digest in batch]
        after = batch[-1][0]


def _task(entity_id: str, label: str, answer: str, ref: str, chunks: list[tuple[str, str]], digest: str) -> Task:
    """The request for one entity's answer: its label, its extractive answer with its chunk, and the text of
    its CHUNKS chosen chunks, which alone it may cite."""
    inputs = tuple(chunk_id for chunk_id, _ in chunks)
    user = "\n".join([f"Entity: {label}", f"Extractive answer: {' '.join(answer.split())} [{ref}]",
                      "Chunks that mention it:", *(f"[{chunk_id}]\n{text}\n" for chunk_id, text in chunks),
                      citations.allowed_line(inputs)])
    return Task(entity_id, citations.messages(citations.prompt(PROMPT), user), inputs, digest)
