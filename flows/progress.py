"""What a person sees of a long run on stderr: each index stage as it finishes, and the questions `eval` has done.

On a terminal Rich draws a live bar; elsewhere (a log, a pipe) plain lines are printed; `--json` shows nothing.
"""

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

EVAL_STEPS = 10  # off a terminal, eval prints a line after each tenth of its questions


def stage_line(row: dict[str, Any]) -> str:
    """One stage's ledger row (`StageResult.row`, a `run_stages` row) in one line: its rows and seconds."""
    detail = row["detail"] or {}
    skipped = ("  off: no language model (--llm-url)" if detail.get("no_model")
               else "  skipped: nothing it reads changed" if detail.get("skipped") else "")
    return (f"{row['stage']:<18} read {row['rows_read']:>8}  reused {row['rows_reused']:>8}  "
            f"recomputed {row['rows_recomputed']:>8}  removed {row['rows_removed']:>6}  {row['seconds']:8.3f} s"
            f"{skipped}")


def _bar(*columns: Any) -> Any:
    """A transient Rich progress display on stderr."""
    from rich.console import Console
    from rich.progress import Progress

    return Progress(*columns, console=Console(stderr=True, highlight=False), transient=True)


@contextmanager
def stages_shown(*, quiet: bool) -> Iterator[Callable[[Any], None] | None]:
    """A callback for each finished stage (a StageResult): its line, above a spinner naming the last stage on a
    terminal; none with `quiet`."""
    if quiet:
        yield None
        return
    if not sys.stderr.isatty():
        yield lambda s: print(f"  {stage_line(s.row())}", file=sys.stderr, flush=True)
        return
    from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

    with _bar(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn()) as bar:
        task = bar.add_task("indexing", total=None)

        def shown(s: Any) -> None:
            bar.console.print(f"  {stage_line(s.row())}", markup=False)
            bar.update(task, description=f"indexing: {s.stage} done")

        yield shown


@contextmanager
def questions_shown(total: int, *, quiet: bool) -> Iterator[Callable[[int], None] | None]:
    """A callback for each question evaluated (the number done): a bar on a terminal, a line per tenth of the
    questions otherwise; none with `quiet` or no question."""
    if quiet or not total:
        yield None
    elif sys.stderr.isatty():
        from rich.progress import MofNCompleteColumn, Progress

        with _bar(*Progress.get_default_columns(), MofNCompleteColumn()) as bar:
            task = bar.add_task("questions", total=total)
            yield lambda done: bar.update(task, completed=done)
    else:
        step = max(1, total // EVAL_STEPS)

        def line(done: int) -> None:
            if done % step == 0 or done == total:
                print(f"acervo eval: {done}/{total} questions", file=sys.stderr, flush=True)

        yield line
