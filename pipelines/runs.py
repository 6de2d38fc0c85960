"""Stage ledger: one `index_runs` row per run and one `run_stages` row per stage, with counts and seconds.

A run that changed nothing writes no index file (pipelines.publish.unchanged): its rows wait beside the file
(`pending`) until the next run that publishes writes them in; `history` lists them meanwhile.
"""

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from acervo.pipelines import beside
from acervo.pipelines.db import Connection, rows, sql
from acervo.pipelines.run import Run


class Work(NamedTuple):
    """What a stage did: input rows read; output rows reused, recomputed and removed; stage details."""

    read: int
    reused: int
    recomputed: int
    removed: int = 0
    detail: dict[str, int] | None = None


LEDGER_FIELDS = {"run_id", "started_at", "finished_at", "status", "source", "settings", "n_rejected"}  # `ledger`'s run
SKIPPED = Work(0, 0, 0, 0, {"skipped": 1})  # what a stage returns when nothing it reads or is set with changed


@dataclass(frozen=True)
class StageResult:
    """A stage's work and how long it took."""

    stage: str
    work: Work
    seconds: float

    def row(self) -> dict[str, Any]:
        """The ledger row of this stage."""
        w = self.work
        return {"stage": self.stage, "rows_read": w.read, "rows_reused": w.reused, "rows_recomputed": w.recomputed,
                "rows_removed": w.removed, "detail": w.detail, "seconds": self.seconds}


def now() -> datetime:
    """The current UTC time, without tzinfo (DuckDB TIMESTAMP)."""
    return datetime.now(UTC).replace(tzinfo=None)


def ledger(con: Connection, *, run_id: str, started_at: datetime, source: str, settings: dict,
           stages: list[StageResult], status: str) -> dict[str, Any]:
    """A run's ledger rows, finished now, as JSON holds them: its index_runs row under "run" (with the
    rejected records `con` holds) and its run_stages rows under "stages"."""
    n_rejected = con.execute(sql("runs.rejected")).fetchone()[0]
    return {"run": {"run_id": run_id, "started_at": started_at.isoformat(), "finished_at": now().isoformat(),
                    "status": status, "source": source, "settings": json.dumps(settings, sort_keys=True, default=str),
                    "n_rejected": n_rejected},
            "stages": [{"run_id": run_id, "ord": i, **s.row()} for i, s in enumerate(stages, start=1)]}


def record(run: Run, *, run_id: str, started_at: datetime, source: str, settings: dict,
           stages: list[StageResult], status: str) -> None:
    """Write the run's ledger rows."""
    write(run, [ledger(run.con, run_id=run_id, started_at=started_at, source=source, settings=settings,
                       stages=stages, status=status)])


def write(run: Run, ledgers: list[dict[str, Any]]) -> None:
    """Write these ledgers (as `ledger` gives them) into the run's index; one already there is replaced."""
    with run.transaction():
        for found in ledgers:
            row = found["run"]
            run.con.execute(sql("runs.insert"), {**row, "started_at": datetime.fromisoformat(row["started_at"]),
                                                 "finished_at": datetime.fromisoformat(row["finished_at"])})
        run.insert("run_stages", (stage for found in ledgers for stage in found["stages"]), replace=True)


def pending_path(db: Path) -> Path:
    """Where the ledgers of runs that changed nothing wait beside the real index file `db`."""
    return db.with_name(f"{db.name}.runs")


def pending(db: Path, *, set_aside: bool = False) -> list[dict[str, Any]]:
    """The ledgers (as `ledger` gives them) waiting beside the real index file `db`, oldest first.

    A file there that is not a list of ledgers (empty, cut short, edited), or not acervo's own (a link, another
    name of a file, another user's: pipelines.beside), is not read: a warning names it, and a run (`set_aside`)
    renames it to <file>.damaged, so that one bad file never blocks a run. Its runs changed nothing in the index.
    """
    path = pending_path(db)
    try:
        fd = beside.open_own(path, os.O_RDONLY, owners=(os.geteuid(), os.stat(db).st_uid))
    except FileNotFoundError:
        return []
    except beside.Planted as err:
        return _damaged(path, err.why, set_aside)
    with os.fdopen(fd, "rb") as file:
        data = file.read()
    try:
        found = json.loads(data)
    except (ValueError, RecursionError):
        return _damaged(path, "empty" if not data.strip() else "not valid JSON", set_aside)
    if not isinstance(found, list) or not all(_a_ledger(item) for item in found):
        return _damaged(path, "not a list of run ledgers", set_aside)
    return found


def _a_ledger(item: Any) -> bool:
    """Whether `item` has a ledger's shape: a run row with its fields, and a list of stage rows."""
    return isinstance(item, dict) and isinstance(item.get("run"), dict) and isinstance(item.get("stages"), list) \
        and item["run"].keys() >= LEDGER_FIELDS and all(isinstance(stage, dict) for stage in item["stages"])


def _damaged(path: Path, why: str, set_aside: bool) -> list[dict[str, Any]]:
    """No pending ledgers: warn that the file at `path` is not read, and why; rename it to <file>.damaged when
    `set_aside`, so that the run's own ledger can take its place."""
    renamed = path.with_name(f"{path.name}.damaged") if set_aside else None
    if renamed:
        os.replace(path, renamed)
    beside.set_aside(path, f"the ledger of runs that changed nothing is {why}", renamed=renamed)
    return []


def history(con: Connection, *, limit: int = 20) -> list[dict]:
    """The latest runs, newest first, each with its settings and its stages (`detail` parsed, as
    `StageResult.row` gives it); those waiting beside the index file (`pending`) included."""
    found = rows(con, "runs.history", {"limit": limit})
    for run in found:
        run["settings"] = json.loads(run["settings"])
        for stage in run["stages"]:
            stage["detail"] = json.loads(stage["detail"]) if stage["detail"] else None
    (path,) = con.execute(sql("runs.file")).fetchone()
    known = {run["run_id"] for run in found}
    for waiting in pending(Path(os.path.realpath(path))) if path else []:
        row = waiting["run"]
        if row["run_id"] not in known:
            found.append({**row, "started_at": datetime.fromisoformat(row["started_at"]),
                          "finished_at": datetime.fromisoformat(row["finished_at"]),
                          "settings": json.loads(row["settings"]),
                          "stages": [{k: round(v, 3) if k == "seconds" else v for k, v in stage.items()
                                      if k not in ("run_id", "ord")} for stage in waiting["stages"]]})
    found.sort(key=lambda run: (run["started_at"], run["run_id"]), reverse=True)
    return found[:limit]
