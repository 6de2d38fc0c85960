"""Reindex nightly and on change: a served Prefect deployment, and a folder watcher.

`acervo schedule` (serve, here) needs a Prefect server (PREFECT_API_URL): its scheduler starts the cron runs and its
automations turn `acervo.documents.changed` events into runs. `watch` needs none: it polls the
source, waits for it to settle, and runs the incremental flow itself (or, with `emit`, only emits
the event for a served deployment to act on). Either, stopped by a signal, exits 128 + its number.
"""

import asyncio
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acervo.flows import startup

startup()  # before Prefect's first import, which reads its settings once

from prefect.events import DeploymentEventTrigger, emit_event  # noqa: E402
from prefect.runner import Runner  # noqa: E402

from acervo.flows.flow_run import index, on_cluster  # noqa: E402
from acervo.flows.server import prefect_api  # noqa: E402
from acervo.flows.signals import Stopped  # noqa: E402
from acervo.pipelines.settings import Requested, Settings  # noqa: E402

CHANGED = "acervo.documents.changed"
Snapshot = dict[str, tuple[int, int]]


def resource_id(source: Path) -> str:
    """The Prefect resource id of a document source, as events name it."""
    return f"acervo.source.{source.resolve()}"


def emit_changed(source: Path, changed: int) -> None:
    """Tell Prefect that documents under `source` changed."""
    with prefect_api():
        emit_event(event=CHANGED, resource={"prefect.resource.id": resource_id(source)}, payload={"changed": changed})


class Served(Runner):
    """Prefect's runner, remembering that SIGTERM stopped it, so that acervo exits 143: Prefect's own handler stops
    it gracefully (its flow runs cancelled, its schedules paused), then returns, or exits 0, as if it had ended."""

    terminated = False  # SIGTERM stopped it

    def handle_sigterm(self, *args: Any, **kwargs: Any) -> None:
        """Stop gracefully once started, remembering why; before then, or when already stopping, at once."""
        if not self.started or self.stopping or self._loop is None:
            raise Stopped(signal.SIGTERM)
        self.terminated = True
        super().handle_sigterm(*args, **kwargs)


def serve(source: Path, db: Path, settings: Requested, *, cron: str, name: str = "acervo-reindex") -> None:
    """Serve the index flow as a deployment: on `cron`, and on every change event for `source`; blocks until a
    signal stops it (Stopped, as flows.signals raises it for SIGINT and SIGHUP)."""
    runner = Served(name=name, limit=None)
    trigger = DeploymentEventTrigger(expect={CHANGED}, match={"prefect.resource.id": resource_id(source)})
    flow = on_cluster(Settings(**settings.given).workers)  # on the Dask cluster of the setting workers, if given
    runner.add_flow(flow, name=name, cron=cron, triggers=[trigger], parameters=parameters(source, db, settings))
    print(f"acervo serve: serving {index.name}/{name}: runs on {cron!r} and on {CHANGED} for {source}",
          file=sys.stderr, flush=True)
    asyncio.run(runner.start())
    if runner.terminated:
        raise Stopped(signal.SIGTERM)


def parameters(source: Path, db: Path, settings: Requested) -> dict[str, Any]:
    """The index flow's parameters as a deployment stores them: absolute paths, for a run started anywhere, and
    only the settings given, so that each served run keeps the index's others."""
    given = dict(settings.given)
    if given.get("gazetteer"):
        given["gazetteer"] = str(Path(given["gazetteer"]).resolve())
    return {"source": str(source.resolve()), "db": str(db.resolve()),
            "settings": settings.model_copy(update={"given": given}).model_dump(mode="json")}


def snapshot(source: Path) -> Snapshot:
    """(modification time, size) of every file under `source` (or of `source` itself)."""
    files = [source] if source.is_file() else sorted(p for p in source.rglob("*") if p.is_file())
    stats = {}
    for path in files:
        try:
            info = path.stat()
        except FileNotFoundError:
            continue
        stats[str(path)] = (info.st_mtime_ns, info.st_size)
    return stats


def changes(before: Snapshot, after: Snapshot) -> int:
    """How many files were added, removed or modified between two snapshots."""
    return len(before.keys() ^ after.keys()) + sum(1 for k in before.keys() & after.keys() if before[k] != after[k])


def watch(source: Path, *, on_change: Callable[[int], Any], interval: float = 2.0, debounce: float = 5.0,
          max_runs: int | None = None, initial: bool = True) -> int:
    """Call `on_change(n_files)` whenever `source` changed and then stayed still for `debounce` seconds.

    With `initial`, one call happens at start. Returns the number of calls when `max_runs` is reached.
    """
    runs = 0
    seen = snapshot(source)
    if initial:
        on_change(len(seen))
        runs += 1
    while max_runs is None or runs < max_runs:
        time.sleep(interval)
        now = snapshot(source)
        if now == seen:
            continue
        settled = time.monotonic() + debounce
        while time.monotonic() < settled:
            time.sleep(min(interval, debounce))
            latest = snapshot(source)
            if latest != now:
                now, settled = latest, time.monotonic() + debounce
        on_change(changes(seen, now))
        seen = now
        runs += 1
    return runs
