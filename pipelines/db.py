"""The one place that knows where the SQL files live, how to open the index and how to hash."""

import importlib.util
import itertools
import json
import os
import re
import sys
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from functools import cache
from hashlib import sha256
from pathlib import Path
from typing import Any

import duckdb

PACKAGE = Path(__file__).resolve().parent
# Installed, the SQL files ship as pipelines/sql/ (pyproject.toml); in the repository they are its top-level sql/.
SQL_DIR = PACKAGE / "sql" if (PACKAGE / "sql").is_dir() else PACKAGE.parent / "sql"
Connection = duckdb.DuckDBPyConnection
BATCH = 10_000  # rows per line of a bulk-insert file

if importlib.util.find_spec("pandas") is None:
    # DuckDB's Python client imports pandas, if it can, on every execute with parameters; when pandas is
    # not installed each try searches sys.path again (0.15 ms; about 80 a rerun, 3% of one). Marked absent,
    # `import pandas` fails at once, as it would anyway.
    sys.modules.setdefault("pandas", None)


def connect(path: Path | str = ":memory:", *, read_only: bool = False) -> Connection:
    """Open an index database; a writable one gets every missing table created.

    A read-only one is a database of its own with the file attached: DuckDB's Python client hands every
    connect to a path the database already open at that path in the process, which after a publish is
    the replaced file; an attached file is opened anew, so each read-only connection reads the newest.
    """
    if read_only:
        con = duckdb.connect()
        attach(con, path, "idx", read_only=True)
        con.execute("use idx")
    else:
        con = duckdb.connect(str(path))
        con.execute(sql("schema"))
    con.execute(sql("session"))
    return con


def reader(path: Path | str) -> Connection:
    """A read-only connection to the index file `path`; ValueError, in one line, when the file is missing or is
    not an acervo index."""
    if not Path(path).is_file():
        raise ValueError(f"{path}: no such index file")
    try:
        con = connect(path, read_only=True)
    except duckdb.Error:
        raise ValueError(f"{path}: not an acervo index (not a DuckDB database file)") from None
    if not con.execute(sql("is_index")).fetchone()[0]:
        con.close()
        raise ValueError(f"{path}: not an acervo index (a DuckDB file without its tables)")
    return con


def attach(con: Connection, path: Path | str, name: str, *, read_only: bool = False) -> None:
    """Attach the DuckDB file at `path` to `con` as `name`. ATTACH is the one statement that takes no
    parameters, so the path goes in as a quoted literal."""
    literal = "'" + os.path.abspath(path).replace("'", "''") + "'"
    con.execute(f"attach {literal} as {name} (type duckdb{', read_only' if read_only else ''})")


@cache
def sql(ref: str) -> str:
    """The SQL that `ref` names: "file.name" is the `-- name: name` block of sql/file.sql, "file" the whole file."""
    file, _, name = ref.partition(".")
    if not name:
        return (SQL_DIR / f"{file}.sql").read_text(encoding="utf-8")
    try:
        return statements(file)[name]
    except KeyError:
        raise KeyError(f"sql/{file}.sql has no statement named {name!r}") from None


@cache
def statements(file: str) -> dict[str, str]:
    """The named statements of sql/<file>.sql: each starts at a `-- name: NAME` line and runs to the next one.

    The comment lines right after the name line say what the statement does; they stay in its text.
    """
    text = (SQL_DIR / f"{file}.sql").read_text(encoding="utf-8")
    blocks = re.split(r"^-- name: *([a-z_][a-z0-9_]*) *\n", text, flags=re.MULTILINE)
    found: dict[str, str] = {}
    for name, body in zip(blocks[1::2], blocks[2::2], strict=True):
        if name in found:
            raise ValueError(f"sql/{file}.sql names {name!r} twice")
        found[name] = body.strip() + "\n"
    return found


def rows(con: Connection, name: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The result of sql/<name>.sql as a list of dicts keyed by column name."""
    cur = con.execute(sql(name), dict(params or {}))
    columns = [d[0] for d in cur.description]
    return [dict(zip(columns, row, strict=True)) for row in cur.fetchall()]


@contextmanager
def transaction(con: Connection) -> Iterator[Connection]:
    """Commit on success, roll back on any error (a stage's transaction: pipelines.run.Run.transaction)."""
    con.begin()
    try:
        yield con
    except BaseException:
        con.rollback()
        raise
    con.commit()


@contextmanager
def one_thread(con: Connection) -> Iterator[None]:
    """DuckDB on one thread for the block, then on as many as before.

    A small rerun's statements each touch a few hundred rows: a second thread adds partitioning and
    hand-over to every join and aggregate and gains nothing (2Wiki, 1% changed: 10% faster on one
    thread; 5 copies of it: the same).
    """
    was = con.execute("select current_setting('threads')").fetchone()[0]
    con.execute("set threads = 1")
    try:
        yield
    finally:
        with suppress(duckdb.Error):  # an aborted transaction refuses it; the error that aborted it is the one to raise
            con.execute("set threads = $n", {"n": was})


def insert(con: Connection, table: str, rows: Iterable[Mapping[str, Any]], *, folder: Path | None = None) -> int:
    """Bulk-insert `rows` (dicts with the same keys) through sql/insert_<table>.sql; return how many were written.

    Rows travel through a temporary file (in `folder`, else the system's temporary folder) that DuckDB
    reads in one statement: parameter binding and executemany cost milliseconds a row, this costs
    microseconds. Each line holds up to BATCH rows as one JSON object of column lists, which encodes
    several times faster than an object per row.
    DuckDB's JSON reader is told the longest line in bytes, from which it sizes its read buffer: a fixed
    1 GB bound made every insert flush DuckDB's allocator, so the statements after it page-faulted
    their memory in again (figures in the README).
    """
    fd, path = tempfile.mkstemp(prefix=f"acervo-{table}-", suffix=".ndjson", dir=folder)
    n = longest = 0
    try:
        with os.fdopen(fd, "wb") as out:
            rows = iter(rows)
            while batch := list(itertools.islice(rows, BATCH)):
                line = json.dumps({k: [row[k] for row in batch] for k in batch[0]}, ensure_ascii=False).encode()
                out.write(line)
                out.write(b"\n")
                n += len(batch)
                longest = max(longest, len(line) + 1)
        if n:
            con.execute(sql(f"insert_{table}"), {"path": path, "longest": longest})
    finally:
        os.unlink(path)
    return n


def keys(con: Connection, kind: str, ids: Iterable[str]) -> int:
    """Fill the temporary table `keys` with `ids` under `kind`, for set-based SQL over them.

    The ids travel as one JSON array: a list parameter costs about 90 microseconds a value to bind, and
    a bulk-insert file (`insert`) about a millisecond more than this for the few hundred ids a rerun has.
    """
    con.execute("delete from keys where kind = ?", [kind])
    ids = list(ids)
    if ids:
        con.execute(sql("insert_keys"), {"kind": kind, "ids": json.dumps(ids, ensure_ascii=False)})
    return len(ids)


def content_hash(*parts: str) -> str:
    """A stable sha256 of `parts`, each length-prefixed (`framed`) so that no choice of text can collide."""
    return sha256(b"".join(map(framed, parts))).hexdigest()


def framed(part: str) -> bytes:
    """`part` as content_hash hashes it: its length in UTF-8 bytes, a colon, and those bytes."""
    data = part.encode("utf-8")
    return b"%d:%b" % (len(data), data)


def text_hash(text: str) -> str:
    """sha256 of `text` in Unicode NFC: every change a quoted sentence could show changes it."""
    return sha256(unicodedata.normalize("NFC", text).encode("utf-8")).hexdigest()
