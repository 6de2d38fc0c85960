"""Read-side summary of an index: row counts, communities per level, the largest communities, rejects."""

from typing import Any

from pipelines.db import Connection, rows


def summary(con: Connection, *, largest: int = 10) -> dict[str, Any]:
    """Counts per table (the index's, then the bookkeeping reruns keep), communities per level and the
    `largest` communities."""
    counts = rows(con, "stats_tables")
    return {
        "tables": {r["table_name"]: r["n_rows"] for r in counts if r["kind"] == "product"},
        "bookkeeping": {r["table_name"]: r["n_rows"] for r in counts if r["kind"] == "bookkeeping"},
        "levels": rows(con, "stats_levels"),
        "largest_communities": rows(con, "stats_largest", {"limit": largest}),
    }


def rejected(con: Connection) -> list[dict[str, Any]]:
    """Every rejected record, in input order."""
    return rows(con, "rejected_list")
