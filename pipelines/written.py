"""What the two written stages (written_reports, written_answers) share: a hash-invalidated stage
(pipelines.stage) whose rows a language model writes and pipelines.citations verifies."""

from collections.abc import Callable, Iterator
from typing import Any

from acervo.pipelines import citations
from acervo.pipelines.citations import Task, Written
from acervo.pipelines.db import execute
from acervo.pipelines.llm import Meter
from acervo.pipelines.run import Run
from acervo.pipelines.runs import SKIPPED, Work
from acervo.pipelines.stage import Hashed, refresh

Tasks = Callable[[Run], Iterator[list[Task]]]  # the requests of a stage's todo rows, a batch at a time


def written(run: Run, stage: Hashed, llm: Meter | None, tasks: Tasks, *, version: str, prompt: str, model: str,
            key: str, text: str, **params: Any) -> Work:
    """Write the rows of `stage`'s todo with `llm` (`key` and `text` name its id and text columns), keeping those
    citations.generate stores; drop every row when `llm` is None. An index never given a model stores no setting
    for the stage, and its tables stay empty."""
    if llm is None and run.get(stage.name) is None:
        read = 0 if run.logged else execute(run.con, f"{stage.name}.read").fetchone()[0]
        return Work(read, 0, 0, 0, {"skipped": 1, "no_model": 1})
    setting = f"{version}:{model}:{citations.prompt(prompt).version}" if llm is not None else ""
    before = llm.usage if llm is not None else None
    done: list[Written] = []

    def write(run: Run) -> int:
        kept = []
        for batch in tasks(run):
            replies = citations.generate(llm, batch)
            done.extend(replies)
            kept += [(task, w) for task, w in zip(batch, replies, strict=True) if w.stored]
        return run.insert(stage.name, ({key: task.key, text: w.text, "refs": list(w.refs), "inputs": list(task.inputs),
                                        "reason": w.reason, "input_hash": task.input_hash} for task, w in kept))

    work = refresh(run, stage, setting, write, **params)
    return work if llm is None or work is SKIPPED else work._replace(detail=citations.detail(llm, before, done))
