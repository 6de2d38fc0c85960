"""The build's per-document work on a Dask cluster: each shard (pipelines.shards) a Prefect task on prefect-dask's
DaskTaskRunner, the flow run's task runner; `--workers N` starts a local cluster of N worker processes, `--workers
ADDRESS` uses a running scheduler (on Kubernetes, a batch scheduler, another machine: docs/scale-out.md).

Dask runs again, on another worker, a shard whose worker was lost; Prefect retries a shard that failed RETRIES times
before the run fails, with nothing published.
"""

import logging
from collections.abc import Callable
from functools import partial

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.futures import wait
from prefect_dask import DaskTaskRunner

from acervo.pipelines.settings import SHARD_SIZE
from acervo.pipelines.shards import Fanout, Shard, made

RETRIES = 2  # a shard that failed is tried this many times more


class ShardFailed(RuntimeError):
    """A shard failed on the cluster for good (after RETRIES): the run publishes nothing."""


def runner(workers: str) -> DaskTaskRunner:
    """Prefect's Dask task runner for `workers`: a number starts a local cluster of that many worker processes of a
    thread each, anything else names a running scheduler (tcp://host:8786). Dask's own news (a worker started, a
    connection made) stays out of the run's log; its warnings and errors do not."""
    logging.getLogger("distributed").setLevel(logging.WARNING)
    if workers.isdigit():
        return DaskTaskRunner(cluster_kwargs={"n_workers": int(workers), "threads_per_worker": 1, "processes": True,
                                              "dashboard_address": None})
    return DaskTaskRunner(address=workers)


def fanout(location: str | None = None, size: int = SHARD_SIZE, make: Callable[[Shard], str] = made) -> Fanout:
    """A run's fan-out onto the flow run's task runner: each shard made by `make` as a Prefect task, the shards'
    files in `location` (None: the run's own folder, which workers on this machine reach)."""
    return Fanout(partial(_make_all, make), location=location, size=size)


def _make_all(make: Callable[[Shard], str], shards: list[Shard]) -> None:
    """Make `shards` as Prefect tasks, all of them done before it returns; ShardFailed for the first that failed."""
    futures = task(make, name="shard", cache_policy=NO_CACHE, retries=RETRIES).map(shards)
    wait(futures)
    for shard, future in zip(shards, futures, strict=True):
        if not future.state.is_completed():
            raise ShardFailed(f"shard {shard.inputs} failed on the cluster after {RETRIES} retries: "
                              f"{future.state.message}; nothing was published")
