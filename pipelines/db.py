"""The one place that knows where the SQL files live and how to open the index."""

import ctypes
import fcntl
import importlib.util
import os
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import duckdb_extension_fts

from acervo.pipelines.locks import OFD_SETLK, hold, lock_file, names, release

if importlib.util.find_spec("pandas") is None:
    # DuckDB's Python client tries to import pandas on every execute with parameters; where it is not installed
    # each try searches sys.path again. Marked absent, `import pandas` fails at once, as it would anyway.
    sys.modules.setdefault("pandas", None)

# The SQL files: the repository's top-level sql/, installed as the package acervo.sql (pyproject.toml).
SQL_DIR = Path(importlib.util.find_spec("acervo.sql").submodule_search_locations[0])
Connection = duckdb.DuckDBPyConnection
MEMORY_VARIABLE = "ACERVO_MEMORY_LIMIT"  # environment variable: DuckDB's memory limit for a run, e.g. 4GB
MEMORY_LIMIT = "640MB"  # that limit when the variable is unset
READER_CACHE_MB = 64  # table blocks a reader keeps cached, above the lookup-index nodes DuckDB cannot evict
# The block size of the index files acervo makes (DuckDB's is 256 KB). A question reads a few rows here and there: a
# smaller block caches less beside them, and a string column's block holds fewer rows, which DuckDB decodes
# from the block's start to fetch one of them. A file keeps the block size it was made with; see publish.staging.
BLOCK_SIZE = 16_384
ATTACHED = frozenset({"idx", "wasteful", "compact"})  # the names a file is attached as (`attach`)
KEYS = frozenset({"entity_id", "community_id", "chunk_id"})  # the id columns of the stages of pipelines.stage
# The format of the index files this acervo reads and writes (index_state format, sql/schema.sql): a change of the
# schema that an older file cannot be read or updated with raises it, and a file of another format is refused.
FORMAT = 2  # 2: chunk_sentences and chunk_boilerplate (stage boilerplate)
HOLD_TRIES = 10  # a reader tries this many times to hold the file it attaches, as publishes replace it
# DuckDB's fts extension (its stemmer) ships inside the duckdb-extension-fts package, pinned to DuckDB's own
# version, so nothing is downloaded (pipelines.terms and pipelines.query.lexical load it).
EXTENSION = (Path(duckdb_extension_fts.__file__).parent / "extensions" / f"v{duckdb.__version__}"
             / "fts.duckdb_extension")


def connect(path: Path | str = ":memory:", *, read_only: bool = False) -> Connection:
    """Open an index database; a writable one gets every missing table created, and a new file BLOCK_SIZE blocks
    and the index format FORMAT.

    A read-only one is a database of its own with the file attached: DuckDB's Python client hands every
    connect to a path the database already open at that path in the process, which after a publish is
    the replaced file; an attached file is opened anew, so each read-only connection reads the newest.
    """
    if read_only:
        con = duckdb.connect()
        _attach_held(con, path)
        con.execute(sql("db.use"))
    else:
        con = duckdb.connect(str(path), config={"default_block_size": str(BLOCK_SIZE)})
        if str(path) != ":memory:":
            limit_memory(con)
        con.execute(sql("schema"))
        con.execute(sql("db.stamp"), {"format": str(FORMAT)})
    con.execute(sql("session"))
    return con


def _attach_held(con: Connection, path: Path | str) -> None:
    """Attach the index file at `path` read-only to `con` as idx, holding a shared lock on that very file until
    the connection is closed (`close_reader`) or dropped: a run then never makes it its staging file
    (pipelines.publish). DuckDB's own lock would not do: closing any other descriptor of the file in the
    reader's process (another connection to it) releases it. Where the path names another file once attached
    (a publish in between), it tries again; without OFD_SETLK, or a file it cannot open, it only attaches."""
    for _ in range(HOLD_TRIES if OFD_SETLK is not None else 0):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:  # DuckDB says why, as it would without the lock
            break
        try:
            if lock_file(fd, fcntl.F_RDLCK) and names(path, fd):
                attach(con, path, "idx", read_only=True)
                if names(path, fd):  # held throughout, the file cannot have left the path and come back
                    hold(con, fd)
                    return
                con.execute(sql("db.detach"))
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    attach(con, path, "idx", read_only=True)


def close_reader(con: Connection) -> None:
    """Close a read-only connection (`connect`) and release the lock it holds on its index file."""
    con.close()
    release(con)


class OutOfMemory(RuntimeError):
    """A stage needed more memory than DuckDB's limit for the run (memory_limit) lets it hold or spill."""


def memory_limit() -> str:
    """DuckDB's memory limit for a run: MEMORY_VARIABLE (what --memory-limit sets), else MEMORY_LIMIT."""
    return os.environ.get(MEMORY_VARIABLE) or MEMORY_LIMIT


def limit_memory(con: Connection) -> None:
    """Bound what DuckDB holds in memory on `con` (memory_limit): past it, it spills to a folder beside the
    file (<file>.tmp) instead of growing with the corpus. ValueError for a value it cannot read."""
    limit = memory_limit()
    try:
        con.execute(sql("db.set_memory_limit"), {"limit": limit})
    except duckdb.Error:
        con.close()
        raise ValueError(f"{MEMORY_VARIABLE}={limit!r}: not a memory size (e.g. 512MB, 2GB)") from None


def allocator_decay(ms: int) -> int | None:
    """Make DuckDB's allocator (jemalloc, linked into DuckDB on Linux) keep the pages its statements free for
    `ms` milliseconds before it gives them back to the system (dirty and muzzy pages, in every arena and those to
    come), and return what it kept them for until now; None, changing nothing, where DuckDB has no such
    allocator. DuckDB keeps them a second, for reuse; a large run gives them back at once (flows.index)."""
    mallctl = _mallctl()
    if mallctl is None:
        return None
    was, size = ctypes.c_ssize_t(), ctypes.c_size_t(ctypes.sizeof(ctypes.c_ssize_t))
    if mallctl(b"arenas.dirty_decay_ms", ctypes.byref(was), ctypes.byref(size), None, 0) != 0:
        return None
    arenas, size = ctypes.c_uint(), ctypes.c_size_t(ctypes.sizeof(ctypes.c_uint))
    mallctl(b"arenas.narenas", ctypes.byref(arenas), ctypes.byref(size), None, 0)
    value = ctypes.c_ssize_t(ms)
    for scope in ["arenas", *(f"arena.{i}" for i in range(arenas.value))]:
        for kind in ("dirty", "muzzy"):  # an arena not yet in use refuses: it takes the arenas' value when made
            mallctl(f"{scope}.{kind}_decay_ms".encode(), None, None, ctypes.byref(value), ctypes.sizeof(value))
    return was.value


@cache
def _mallctl() -> Any:
    """jemalloc's control function inside DuckDB's library (prefixed duckdb_je_), or None where it has none."""
    library = sys.modules.get("_duckdb")
    try:
        mallctl = ctypes.CDLL(library.__file__).duckdb_je_mallctl if library else None
    except (OSError, AttributeError):
        return None
    if mallctl is not None:
        mallctl.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p,
                            ctypes.c_size_t]
        mallctl.restype = ctypes.c_int
    return mallctl


def load_fts(con: Connection) -> None:
    """Load the fts extension (its stemmer, `stem`) and the bm25_tokens and bm25_weight macros (sql/db.sql)
    into `con`."""
    con.load_extension(str(EXTENSION))
    con.execute(sql("db.bm25_tokens"))
    con.execute(sql("db.bm25_weight"))


class OtherFormat(ValueError):
    """An index file of another index format than FORMAT: it is read and updated by no other, only rebuilt."""


def reader(path: Path | str, *, any_format: bool = False) -> Connection:
    """A read-only connection to the index file `path`; ValueError, in one line, when the file is missing or is
    not an acervo index, and OtherFormat when it is one of another format (unless `any_format`)."""
    if not Path(path).is_file():
        raise ValueError(f"{path}: no such index file")
    try:
        con = connect(path, read_only=True)
    except duckdb.Error:
        raise ValueError(f"{path}: not an acervo index (not a DuckDB database file)") from None
    if not con.execute(sql("db.is_index")).fetchone()[0]:
        close_reader(con)
        raise ValueError(f"{path}: not an acervo index (a DuckDB file without its tables)")
    found = con.execute(sql("db.format")).fetchone()[0]
    if found != str(FORMAT) and not any_format:
        close_reader(con)
        raise OtherFormat(f"{path} is index format {found}, this acervo reads and writes format {FORMAT}: "
                          f"rebuild it with `acervo index SOURCE --db {path} --fresh`")
    return con


@contextmanager
def reading(path: Path | str, *, any_format: bool = False) -> Iterator[Connection]:
    """A read-only connection to the index file `path` (`reader`) for a block, closed with its lock after it."""
    con = reader(path, any_format=any_format)
    try:
        yield con
    finally:
        close_reader(con)


def attach(con: Connection, path: Path | str, name: str, *, read_only: bool = False) -> None:
    """Attach the DuckDB file at `path` to `con` as `name` (one of ATTACHED). ATTACH is the one statement that
    takes no parameters, so the path goes in as a quoted literal."""
    literal = "'" + os.path.abspath(path).replace("'", "''") + "'"
    con.execute(sql("db.attach").format(path=literal, name=identifier(name, ATTACHED),
                                        read_only=", read_only" if read_only else ""))


def identifier(name: str, allowed: frozenset[str]) -> str:
    """`name`, to be formatted into a statement as an identifier, once found in the fixed list `allowed`
    (ATTACHED, KEYS, `tables()`); ValueError otherwise: values are bound as parameters, never formatted."""
    if name not in allowed:
        raise ValueError(f"{name!r} is not a name acervo's statements use")
    return name


@cache
def tables() -> frozenset[str]:
    """The tables sql/ creates, the index's and the runs' scratch relations: the only table names formatted into a
    statement (`identifier`)."""
    made = re.compile(r"^\s*create\s+(?:or\s+replace\s+)?(?:temp\s+|temporary\s+)?table\s+(?:if\s+not\s+exists\s+)?"
                      r"([a-z_][a-z0-9_]*)\b", re.IGNORECASE | re.MULTILINE)
    return frozenset(name for path in SQL_DIR.glob("*.sql") for name in made.findall(path.read_text(encoding="utf-8")))


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


def execute(con: Connection, ref: str, params: Mapping[str, Any] | None = None) -> Connection:
    """Run the statement `ref` (see `sql`) with `params`; ValueError for one it does not name as $name, which is a
    mistake to report, not a value to drop."""
    given = dict(params or {})
    if unnamed := sorted(given.keys() - parameters(ref)):
        raise ValueError(f"statement {ref} names no parameter ${unnamed[0]} (it names "
                         f"{', '.join(sorted(parameters(ref))) or 'none'})")
    return con.execute(sql(ref), given)


@cache
def parameters(ref: str) -> frozenset[str]:
    """The $parameters the statement `ref` names outside its comments."""
    return frozenset(re.findall(r"\$([a-z_][a-z0-9_]*)", re.sub(r"--[^\n]*", "", sql(ref))))


def rows(con: Connection, ref: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The result of the statement `ref` (see `sql`) as a list of dicts keyed by column name."""
    cur = con.execute(sql(ref), dict(params or {}))
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
    hand-over to every join and aggregate and gains nothing.
    """
    was = con.execute(sql("db.threads")).fetchone()[0]
    con.execute(sql("db.set_threads"), {"n": 1})
    try:
        yield
    finally:
        with suppress(duckdb.Error):  # an aborted transaction refuses it; the error that aborted it is the one to raise
            con.execute(sql("db.set_threads"), {"n": was})
