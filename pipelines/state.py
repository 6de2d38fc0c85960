"""The settings an index's stored rows were computed with (table index_state), as a reader sees them."""

from pipelines.db import Connection, sql


def get(con: Connection, key: str) -> str | None:
    """The value stored under `key`, or None."""
    return dict(con.execute(sql("run.state")).fetchall()).get(key)
