"""The `index` flow: the pipeline of flows.build as a Prefect flow, each stage a task."""

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.settings import get_current_settings

from flows.build import Stage, publish
from flows.progress import stage_line
from pipelines.runs import StageResult
from pipelines.settings import Requested, Settings


def as_task(fn: Stage, name: str) -> Stage:
    """A stage as a Prefect task named after it; caching is off, content hashes decide what reruns."""
    return task(fn, name=name, cache_policy=NO_CACHE)


def ensure_temporary_server() -> None:
    """Without an API URL, start Prefect's temporary server now, as acervo's child (see flows.server); idempotent."""
    if get_current_settings().api.url is None:
        from flows.server import TemporaryServer

        TemporaryServer().start()


@flow(name="acervo-index", log_prints=True)
def index(source: Path | None, db: Path, settings: Settings | Requested | None = None,
          delete: list[str] | None = None, fresh: bool = False, wait: float = 0.0) -> dict[str, Any]:
    """Index `source` (JSONL file or folder) into the DuckDB file `db`, incrementally; return the run summary.

    `Requested` settings are resolved against the index's own (see flows.build.publish)."""
    settings = settings or Settings()
    logger = get_run_logger()

    def progress(s: StageResult) -> None:
        logger.info("%s", stage_line(s.row()))

    run_id, stages = publish(source, db, settings, delete=delete or (), fresh=fresh, wait=wait, wrap=as_task,
                             progress=progress)
    table = [{**s.row(), "seconds": round(s.seconds, 3)} for s in stages]
    create_table_artifact(table=[{k: v for k, v in r.items() if k != "detail"} for r in table], key="acervo-index-run",
                          description=f"acervo index run {run_id} into {db.name}")
    return {"run_id": run_id, "db": str(db), "stages": table, "seconds": round(sum(s.seconds for s in stages), 3)}
