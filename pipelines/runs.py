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

from pipelines.db import Connection, rows, sql
from pipelines.run import Run


class Work(NamedTuple):
    """What a stage did: input rows read; output rows reused, recomputed and removed; stage details."""

    read: int
    reused: int
    recomputed: int
    removed: int = 0
    detail: dict[str, int] | None = None


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


def pending(db: Path) -> list[dict[str, Any]]:
    """The ledgers (as `ledger` gives them) waiting beside the real index file `db`, oldest first."""
    path = pending_path(db)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


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
