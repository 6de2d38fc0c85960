"""Stage ledger: one `index_runs` row per run and one `run_stages` row per stage, with counts and seconds."""

import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from pipelines.db import Connection, insert, rows, sql, transaction


@dataclass(frozen=True)
class StageResult:
    """What one stage read and wrote, and how long it took."""

    stage: str
    rows_in: int
    rows_out: int
    seconds: float


def now() -> datetime:
    """The current UTC time, without tzinfo (DuckDB TIMESTAMP)."""
    return datetime.now(UTC).replace(tzinfo=None)


def record(con: Connection, *, run_id: str, started_at: datetime, source: str, settings: dict,
           stages: list[StageResult], status: str) -> None:
    """Write the run's ledger rows."""
    n_rejected = con.execute("select count(*) from rejected").fetchone()[0]
    with transaction(con):
        con.execute(sql("insert_index_run"), {
            "run_id": run_id, "started_at": started_at, "finished_at": now(), "status": status,
            "source": source, "settings": json.dumps(settings, sort_keys=True, default=str), "n_rejected": n_rejected})
        insert(con, "run_stages", ({"run_id": run_id, "ord": i, **asdict(s)} for i, s in enumerate(stages, start=1)))


def history(con: Connection, *, limit: int = 20) -> list[dict]:
    """The latest runs, newest first, each with its stages."""
    return rows(con, "runs", {"limit": limit})
