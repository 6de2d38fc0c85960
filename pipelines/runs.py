"""Stage ledger: one `index_runs` row per run and one `run_stages` row per stage, with counts and seconds."""

import json
from dataclasses import dataclass
from datetime import UTC, datetime
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


def record(run: Run, *, run_id: str, started_at: datetime, source: str, settings: dict,
           stages: list[StageResult], status: str) -> None:
    """Write the run's ledger rows."""
    con = run.con
    n_rejected = con.execute(sql("runs.rejected")).fetchone()[0]
    with run.transaction():
        con.execute(sql("runs.insert"), {
            "run_id": run_id, "started_at": started_at, "finished_at": now(), "status": status,
            "source": source, "settings": json.dumps(settings, sort_keys=True, default=str), "n_rejected": n_rejected})
        run.insert("run_stages", ({"run_id": run_id, "ord": i, **s.row()} for i, s in enumerate(stages, start=1)))


def history(con: Connection, *, limit: int = 20) -> list[dict]:
    """The latest runs, newest first, each with its settings and its stages (`detail` parsed, as
    `StageResult.row` gives it)."""
    found = rows(con, "runs.history", {"limit": limit})
    for run in found:
        run["settings"] = json.loads(run["settings"])
        for stage in run["stages"]:
            stage["detail"] = json.loads(stage["detail"]) if stage["detail"] else None
    return found
