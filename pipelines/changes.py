"""Run-scoped change log: the temporary table `changed` (kind, id) lists what this run's stages rewrote.

Later stages of the same run look only at what the log names, so a rerun's cost follows the change.
`build` opens the log and empties it at the end; a stage called on its own finds no open log and
checks everything, which gives the same rows, only slower.
"""

from collections.abc import Iterator
from contextlib import contextmanager, suppress

import duckdb

from pipelines.db import Connection, sql

_open: set[int] = set()  # connections with a run's log open: asked several times a stage, too often for a query


@contextmanager
def logged(con: Connection) -> Iterator[None]:
    """Keep a change log on `con` while the block runs."""
    con.execute("delete from changed")
    _open.add(id(con))
    try:
        yield
    except BaseException:
        with suppress(duckdb.Error):  # an aborted transaction refuses it, and its rollback clears the log
            con.execute("delete from changed")
        raise
    finally:
        _open.discard(id(con))
    con.execute("delete from changed")


def active(con: Connection) -> bool:
    """Whether a run's change log is open on `con`."""
    return id(con) in _open


def note(con: Connection, name: str, params: dict | None = None) -> None:
    """Run sql/<name>.sql, which logs ids into `changed`, when a log is open."""
    if active(con):
        con.execute(sql(name), params or {})
