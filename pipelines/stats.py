"""Read-side summary of an index: row counts, communities per level, the largest communities, rejects,
the settings it was built with, which document ids it holds."""

import json
from collections.abc import Sequence
from typing import Any

from pipelines.db import Connection, rows
from pipelines.mentions import require_decisions


def summary(con: Connection, *, largest: int = 10) -> dict[str, Any]:
    """Counts per table (the index's, then the bookkeeping reruns keep), communities per level and the
    `largest` communities."""
    require_decisions(con)
    counts = rows(con, "stats.tables")
    return {
        "tables": {r["table_name"]: r["n_rows"] for r in counts if r["kind"] == "product"},
        "bookkeeping": {r["table_name"]: r["n_rows"] for r in counts if r["kind"] == "bookkeeping"},
        "levels": rows(con, "stats.levels"),
        "largest_communities": rows(con, "stats.largest", {"limit": largest}),
    }


def rejected(con: Connection) -> list[dict[str, Any]]:
    """Every rejected record, in input order."""
    return rows(con, "stats.rejected")


def settings(con: Connection) -> dict[str, Any] | None:
    """The settings of the index's last run, as stored; None before any run."""
    found = rows(con, "stats.settings")
    return json.loads(found[0]["settings"]) if found else None


def documents_known(con: Connection, ids: Sequence[str]) -> list[str]:
    """Those of `ids` that name documents of the index."""
    return [r["doc_id"] for r in rows(con, "stats.documents_known", {"ids": list(ids)})]
