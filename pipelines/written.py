"""What the two written stages (written_reports, written_answers) share: the setting a run stores, when a
stage has nothing to do, and how verified rows are stored. Each stage's statements are named alike in its
sql/ file: read, delete_all, replaced, delete."""

from collections.abc import Sequence

from pipelines import citations
from pipelines.citations import Task, Written
from pipelines.db import sql
from pipelines.llm import Meter, Usage
from pipelines.run import Run
from pipelines.runs import SKIPPED, Work


def begin(run: Run, stage: str, llm: Meter | None, *, reads: Sequence[str], version: str, prompt: str,
          model: str) -> Work | str:
    """The setting `stage` stores in this run, or the Work it returns at once: skipped (never given a model, so
    nothing to drop nor store; or nothing it reads changed) or, without a model now, every row dropped."""
    con = run.con
    if llm is None and run.get(stage) is None:
        return SKIPPED if run.logged else Work(con.execute(sql(f"{stage}.read")).fetchone()[0], 0, 0)
    setting = f"{version}:{model}:{citations.prompt(prompt).version}" if llm is not None else ""
    if run.unchanged(reads, stage, setting):
        return SKIPPED
    if llm is None:
        n_read = con.execute(sql(f"{stage}.read")).fetchone()[0]
        with run.transaction():
            removed = len(con.execute(sql(f"{stage}.delete_all")).fetchall())
            run.put(stage, setting)
        return Work(n_read, 0, 0, removed)
    return setting


def store(run: Run, stage: str, *, key: str, text: str, setting: str, todo: list[Task], done: list[Written],
          llm: Meter, before: Usage) -> Work:
    """Replace the rows of `todo` with those of `done` that are to be kept (`key` and `text` name the id and
    text columns); a stage that left rows unwritten stores its setting marked incomplete, so the next run
    looks at every row again."""
    con = run.con
    n_read = con.execute(sql(f"{stage}.read")).fetchone()[0]
    replaced = con.execute(sql(f"{stage}.replaced")).fetchone()[0]
    kept = [(task, w) for task, w in zip(todo, done, strict=True) if w.stored]
    with run.transaction():
        deleted = con.execute(sql(f"{stage}.delete")).fetchone()[0]
        run.insert(stage, ({key: task.key, text: w.text, "refs": list(w.refs), "inputs": list(task.inputs),
                            "reason": w.reason, "input_hash": task.input_hash} for task, w in kept))
        run.put(stage, setting if len(kept) == len(todo) else citations.INCOMPLETE + setting)
    return Work(n_read, n_read - len(todo), len(kept), deleted - replaced, citations.detail(llm, before, done))
