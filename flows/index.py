"""The `index` flow: every stage in order, into a staging file that replaces the index only when complete."""

import glob
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from time import perf_counter
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE

from pipelines import answers, chunks, communities, documents, edges, mentions, reports, runs
from pipelines.db import Connection, connect
from pipelines.runs import StageResult
from pipelines.settings import Settings

Wrap = Callable[[Callable[..., tuple[int, int]], str], Callable[..., tuple[int, int]]]


def plain(fn: Callable[..., tuple[int, int]], name: str) -> Callable[..., tuple[int, int]]:
    """A stage called as it is (benchmarks, tests of the pipeline without Prefect)."""
    return fn


def as_task(fn: Callable[..., tuple[int, int]], name: str) -> Callable[..., tuple[int, int]]:
    """A stage as a Prefect task named after it; caching is off, content hashes decide what reruns."""
    return task(fn, name=name, cache_policy=NO_CACHE)


def build(con: Connection, source: Path, settings: Settings, *, wrap: Wrap = plain,
          progress: Callable[[StageResult], Any] | None = None) -> list[StageResult]:
    """Run every stage over `con`, in order; return what each read, wrote and took."""
    done: list[StageResult] = []

    def step(name: str, fn: Callable[..., tuple[int, int]], **knobs: Any) -> None:
        start = perf_counter()
        rows_in, rows_out = wrap(fn, name)(con, **knobs)
        done.append(StageResult(name, rows_in, rows_out, perf_counter() - start))
        if progress:
            progress(done[-1])

    step("documents", documents.run, source=source, max_bytes=settings.max_document_bytes)
    step("chunks", chunks.run, encoding=settings.encoding, max_tokens=settings.chunk_tokens)
    step("mentions", mentions.run, mode=settings.mentions, gazetteer_path=settings.gazetteer)
    step("edges", edges.run)
    step("communities", communities.run, max_size=settings.max_cluster_size, max_levels=settings.max_levels,
         seed=settings.seed, resolution=settings.resolution)
    step("entity_answers", answers.run, max_chars=settings.answer_max_chars)
    step("community_reports", reports.run, max_lines=settings.report_max_lines, n_evidence=settings.report_evidence)
    return done


def _remove_abandoned_staging(db: Path) -> None:
    """Delete staging files that killed runs left beside `db` (their process no longer exists)."""
    for path in db.parent.glob(f"{glob.escape(db.name)}.staging-*"):
        pid = path.name.rsplit("-", 1)[-1].removesuffix(".wal")
        if pid.isdigit() and not _alive(int(pid)):
            path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    """Whether a process with this id exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def publish(source: Path, db: Path, settings: Settings, *, wrap: Wrap = plain,
            progress: Callable[[StageResult], Any] | None = None) -> tuple[str, list[StageResult]]:
    """Build the whole index into a staging file beside `db`, then atomically replace `db` with it.

    Until the replace, readers of `db` see the previous index; a crash leaves only a stale staging file.
    """
    db.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned_staging(db)
    staging = db.with_name(f"{db.name}.staging-{os.getpid()}")
    started = runs.now()
    run_id = f"{started:%Y%m%dT%H%M%S%f}-{os.getpid()}"
    try:
        con = connect(staging)
        try:
            stages = build(con, source, settings, wrap=wrap, progress=progress)
            runs.record(con, run_id=run_id, started_at=started, source=str(source),
                        settings=settings.model_dump(mode="json"), stages=stages, status="ok")
            con.execute("checkpoint")
        finally:
            con.close()
        os.replace(staging, db)
    finally:
        staging.unlink(missing_ok=True)
        Path(f"{staging}.wal").unlink(missing_ok=True)
    return run_id, stages


@flow(name="acervo-index", log_prints=True)
def index(source: Path, db: Path, settings: Settings | None = None) -> dict[str, Any]:
    """Index `source` (JSONL file or folder) into the DuckDB file `db`; return the run summary."""
    settings = settings or Settings()
    logger = get_run_logger()
    run_id, stages = publish(source, db, settings, wrap=as_task,
                             progress=lambda s: logger.info("%-18s in=%-8d out=%-8d %.2fs", s.stage, s.rows_in,
                                                            s.rows_out, s.seconds))
    table = [{"stage": s.stage, "rows_in": s.rows_in, "rows_out": s.rows_out, "seconds": round(s.seconds, 3)}
             for s in stages]
    create_table_artifact(table=table, key="acervo-index-run", description=f"acervo index run {run_id} into {db.name}")
    return {"run_id": run_id, "db": str(db), "stages": table, "seconds": round(sum(s.seconds for s in stages), 3),
            "finished_at": datetime.now().isoformat(timespec="seconds")}
