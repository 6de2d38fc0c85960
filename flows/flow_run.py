"""The `index` flow: the pipeline of flows.index as a Prefect flow run, each stage a Prefect task, with the run's
stage table as an artifact (scheduled and triggered runs, and `acervo index --prefect`)."""

from pathlib import Path
from typing import Any

from acervo.flows import startup

startup()  # before Prefect's first import, which reads its settings once

from prefect import flow, get_run_logger, task  # noqa: E402
from prefect.artifacts import create_table_artifact  # noqa: E402
from prefect.cache_policies import NO_CACHE  # noqa: E402

from acervo.flows.index import Stage, publish  # noqa: E402
from acervo.flows.progress import stage_line  # noqa: E402
from acervo.pipelines.runs import StageResult  # noqa: E402
from acervo.pipelines.settings import Requested, Settings  # noqa: E402


def as_task(fn: Stage, name: str) -> Stage:
    """A stage as a Prefect task named after it; caching is off, content hashes decide what reruns."""
    return task(fn, name=name, cache_policy=NO_CACHE)


@flow(name="acervo-index", log_prints=True)
def index(source: Path | None, db: Path, settings: Settings | Requested | None = None,
          delete: list[str] | None = None, fresh: bool = False, wait: float = 0.0) -> dict[str, Any]:
    """Index `source` (JSONL file or folder) into the DuckDB file `db`, incrementally; return the run summary.

    `Requested` settings are resolved against the index's own (see flows.index.publish). With the setting
    `workers`, each shard of the per-document work is a task on the flow's task runner, which must be their Dask
    cluster's (`on_cluster`), its files in `shard_location` (flows.workers)."""
    settings = settings or Settings()
    knobs = settings if isinstance(settings, Settings) else Settings(**settings.given)  # run knobs: never stored
    logger = get_run_logger()

    def progress(s: StageResult) -> None:
        logger.info("%s", stage_line(s.row()))

    # on a cluster the shards are the run's tasks, and the stages run in the flow itself: a task's context (its
    # parameters, the run's connection among them) would travel with each task submitted from it
    run_id, stages = publish(source, db, settings, delete=delete or (), fresh=fresh, wait=wait,
                             wrap=None if knobs.workers else as_task, progress=progress,
                             fanout=_fanout(knobs.shard_location, knobs.shard_size) if knobs.workers else None)
    table = [{**s.row(), "seconds": round(s.seconds, 3)} for s in stages]
    create_table_artifact(table=[{k: v for k, v in r.items() if k != "detail"} for r in table], key="acervo-index-run",
                          description=f"acervo index run {run_id} into {db.name}")
    return {"run_id": run_id, "db": str(db), "stages": table, "seconds": round(sum(s.seconds for s in stages), 3)}


def on_cluster(workers: str | None) -> Any:
    """The `index` flow, on the Dask task runner of `workers` (flows.workers.runner) when given."""
    if not workers:
        return index
    from acervo.flows.workers import runner  # the dask extra: prefect-dask and distributed

    return index.with_options(task_runner=runner(workers))


def _fanout(location: str | None, size: int) -> Any:
    """The run's fan-out onto the flow run's Dask task runner (flows.workers.fanout)."""
    from acervo.flows.workers import fanout  # the dask extra: prefect-dask and distributed

    return fanout(location, size)
