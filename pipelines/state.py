"""The settings each stage's stored rows were computed with (table index_state), to detect a change."""

from collections.abc import Iterator
from contextlib import contextmanager

from pipelines.db import Connection

_held: dict[int, dict[str, str]] = {}  # connection id -> the table, while a run holds it: read once, not per get


@contextmanager
def held(con: Connection) -> Iterator[None]:
    """Read index_state once and answer `get` from memory while the block runs (all writes go through `put`)."""
    _held[id(con)] = dict(con.execute("select key, value from index_state").fetchall())
    try:
        yield
    finally:
        _held.pop(id(con), None)


def get(con: Connection, key: str) -> str | None:
    """The value stored under `key`, or None."""
    table = _held.get(id(con))
    if table is not None:
        return table.get(key)
    row = con.execute("select value from index_state where key = ?", [key]).fetchone()
    return row[0] if row else None


def put(con: Connection, key: str, value: str) -> None:
    """Store `value` under `key`; an unchanged value is left as it is (DuckDB's insert-or-replace costs
    2-3 ms; an update or an insert, a read too, about 0.5)."""
    was = get(con, key)
    if was != value:
        if was is None:
            con.execute("insert into index_state values (?, ?)", [key, value])
        else:
            con.execute("update index_state set value = ? where key = ?", [value, key])
        if id(con) in _held:
            _held[id(con)][key] = value
