"""Many rows into DuckDB in one statement: bulk inserts through a JSON-lines file, and ids bound as one JSON array."""

import itertools
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from acervo.pipelines.db import Connection, identifier, sql, tables

BATCH = 10_000  # rows per line of a bulk-insert file


def insert(con: Connection, table: str, rows: Iterable[Mapping[str, Any]], *, folder: Path | None = None,
           replace: bool = False) -> int:
    """Bulk-insert `rows` (dicts with the same keys, columns of `table`); return how many were written.
    With `replace`, a row replaces the stored one with its key.

    Rows travel through a temporary file (in `folder`, else the system's temporary folder) that DuckDB
    reads in one statement, typed from the table's own columns (`insert_sql`): parameter binding and
    executemany cost far more a row. Each line holds up to BATCH rows as one JSON object of column lists,
    which encodes faster than an object per row.
    DuckDB's JSON reader is told the longest line in bytes, from which it sizes its read buffer: a fixed
    large bound made every insert flush DuckDB's allocator, so the statements after it page-faulted
    their memory in again.
    """
    fd, path = tempfile.mkstemp(prefix=f"acervo-{table}-", suffix=".ndjson", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            n, longest, names = write_lines(out, rows)
        if n:
            statement, columns = insert_sql(con, table, names, replace=replace)
            con.execute(statement, {"path": path, "longest": longest, "columns": columns})
    finally:
        os.unlink(path)
    return n


def write_lines(out: BinaryIO, rows: Iterable[Mapping[str, Any]]) -> tuple[int, int, list[str]]:
    """Write `rows` (dicts with the same keys) to `out` as lines of BATCH rows, each one JSON object of column
    lists; how many rows, the longest line in bytes, and the column names (none without rows)."""
    n = longest = 0
    names: list[str] = []
    rows = iter(rows)
    while batch := list(itertools.islice(rows, BATCH)):
        names = names or list(batch[0])
        line = json.dumps({k: [row[k] for row in batch] for k in names}, ensure_ascii=False).encode()
        out.write(line)
        out.write(b"\n")
        n += len(batch)
        longest = max(longest, len(line) + 1)
    return n, longest, names


def insert_sql(con: Connection, table: str, names: list[str], *, replace: bool = False) -> tuple[str, dict[str, str]]:
    """The statement `bulk.insert` for `table` and the type of each of the columns `names` as a list, from the
    catalog (a temporary table's too); ValueError for a table or column that does not exist."""
    types = dict(con.execute(sql("bulk.columns"), {"table": table}).fetchall()) if table in tables() else {}
    unknown = [name for name in names if name not in types]
    if not types or unknown:
        raise ValueError(f"table {table!r} has no column {unknown[0]!r}" if types else f"no table {table!r}")
    statement = sql("bulk.insert").format(table=identifier(table, tables()), conflict="or replace" if replace else "")
    return statement, {name: f"{types[name]}[]" for name in names}


def ids(con: Connection, ref: str, ids: Iterable[str]) -> int:
    """Run the statement `ref`, which makes a stage's scratch relation of `ids` (bound as one JSON array `$ids`),
    for set-based SQL over them; return how many.

    One JSON array binds faster than a list parameter and costs less than a bulk-insert file (`insert`) for
    the few hundred ids a rerun has.
    """
    ids = list(ids)
    con.execute(sql(ref), {"ids": json.dumps(ids, ensure_ascii=False)})
    return len(ids)
