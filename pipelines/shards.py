"""A stage's per-document work in shards: its inputs written as Parquet files, each made into rows by a pure function
wherever a worker runs it (Fanout: e.g. Prefect tasks on a Dask cluster, flows.workers), the rows read back by the
single writer in one statement. Any sharding gives the same rows: each input key's rows depend on it alone.

A shard's files lie in the fan-out's `location`, which every worker and the writer reach (a shared folder, or an
fsspec URL such as s3://bucket/acervo), in a folder named after the index that each run empties before and after
it (`placed`), so that a failed run's shards go with the next run; by default in the run's own folder (workers on
this machine).
"""

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import duckdb

from acervo.pipelines import bulk
from acervo.pipelines.db import identifier, sql, tables
from acervo.pipelines.hashing import text_hash

Rows = Callable[..., Iterable[Mapping[str, Any]]]  # a shard's work: input rows and knobs in, row dicts out


@dataclass(frozen=True)
class Shard:
    """One shard: `work` (a module-level pure function: input rows and `knobs` in, row dicts out) over the rows of
    the Parquet file `inputs`, its rows written to the Parquet file `out` with the column `types` (DuckDB's)."""

    work: Rows
    knobs: Mapping[str, Any]
    inputs: str
    out: str
    types: Mapping[str, str]


@dataclass(frozen=True)
class Fanout:
    """How a run has its shards made: `make` makes every shard given (somewhere, e.g. on a cluster) or raises,
    `location` is where workers and the writer exchange the shards' files (None: the run's own folder), `size` is
    the input keys a shard holds."""

    make: Callable[[list[Shard]], None]
    location: str | None
    size: int


def rows(path: str) -> list[tuple]:
    """The rows of the Parquet file `path` (a shard's inputs, a file every shard reads), in order."""
    with duckdb.connect() as con:
        _filesystem(con, path)
        return con.execute(sql("shards.inputs"), {"path": path}).fetchall()


def made(shard: Shard) -> str:
    """Make one shard, on whichever worker runs it: read its inputs, run its work, write its rows; its `out`."""
    inputs = rows(shard.inputs)
    with duckdb.connect() as con:
        _filesystem(con, shard.out)
        fd, path = tempfile.mkstemp(prefix="acervo-shard-", suffix=".ndjson")
        try:
            with os.fdopen(fd, "wb") as out:
                n, longest, names = bulk.write_lines(out, shard.work(inputs, **shard.knobs))
            names = names or list(shard.types)
            columns = {name: f"{shard.types[name]}[]" for name in names}
            con.execute(sql("shards.write"), {"path": path, "longest": max(longest, 1), "columns": columns,
                                              "out": shard.out})
        finally:
            os.unlink(path)
    return shard.out


@contextmanager
def placed(fanout: Fanout | None, db: Path, folder: Path) -> Iterator[Fanout | None]:
    """`fanout` for a run on the index `db`, its shards in a folder of their own while the block runs, emptied before
    and removed after: under its location, named after the index's path; without one, `folder` (the run's)."""
    if fanout is None:
        yield None
        return
    if fanout.location is None:
        where = str(folder.resolve() / "shards")
    else:  # a path made absolute: the workers may start in another folder
        base = fanout.location if "://" in fanout.location else str(Path(fanout.location).resolve())
        where = f"{base.rstrip('/')}/acervo-{text_hash(str(db.resolve()))[:12]}"
    _remove(where)
    try:
        yield replace(fanout, location=where)
    finally:
        _remove(where)


def spread(con: duckdb.DuckDBPyConnection, fanout: Fanout, inputs: str, work: Rows, knobs: Mapping[str, Any],
           table: str, *, multiple: int = 1) -> list[str]:
    """Have `fanout` make the rows of `table` from those of the statement `inputs` (which makes the scratch relation
    shard_input: shard_key, seq and the work's input columns), `fanout.size` keys a shard (rounded up to a
    `multiple`: the work's own batches then fall as in one process), in a folder of its location (`placed`); the
    Parquet files of the rows, in shard order."""
    where = f"{fanout.location}/{table}-{uuid.uuid4().hex[:12]}"
    _filesystem(con, where)
    if "://" not in where:
        Path(where).mkdir(parents=True, mode=0o700)
    con.execute(sql(inputs))
    con.execute(sql("shards.number"), {"size": -(-fanout.size // multiple) * multiple})
    n = con.execute(sql("shards.count")).fetchone()[0]
    types = dict(con.execute(sql("bulk.columns"), {"table": identifier(table, tables())}).fetchall())
    shards = []
    for k in range(n):
        part = f"{where}/in-{k:05d}.parquet"
        con.execute(sql("shards.part"), {"k": k, "path": part})
        shards.append(Shard(work, dict(knobs), part, f"{where}/out-{k:05d}.parquet", types))
    con.execute(sql("shards.done"))
    if shards:
        fanout.make(shards)
    return [s.out for s in shards]


def shared(con: duckdb.DuckDBPyConnection, fanout: Fanout, ref: str, name: str) -> str:
    """Write what every shard of a stage reads (e.g. the dictionary names are matched with) by the statement `ref`,
    which copies it to the Parquet file $path, in the fan-out's location; that file's path."""
    path = f"{fanout.location}/{name}-{uuid.uuid4().hex[:12]}.parquet"
    _filesystem(con, path)
    if "://" not in path:
        Path(fanout.location).mkdir(parents=True, exist_ok=True, mode=0o700)
    con.execute(sql(ref), {"path": path})
    return path


def merge(con: duckdb.DuckDBPyConnection, table: str, paths: list[str], *, replace: bool = False) -> int:
    """Insert the rows of the shards' files `paths` into `table`, in shard order (with `replace`, a row replaces
    the stored one with its key); how many."""
    if not paths:
        return 0
    statement = sql("shards.merge").format(table=identifier(table, tables()), conflict="or replace" if replace else "")
    return con.execute(statement, {"paths": paths}).fetchone()[0]


def _filesystem(con: duckdb.DuckDBPyConnection, location: str) -> None:
    """Let DuckDB on `con` read and write `location` when it is an fsspec URL (s3://, gs://, ...): the protocol's
    fsspec filesystem registered with it; a plain path needs nothing."""
    protocol, found, _ = location.partition("://")
    if found and protocol != "file" and not con.filesystem_is_registered(protocol):
        import fsspec

        con.register_filesystem(fsspec.filesystem(protocol))


def _remove(where: str) -> None:
    """Remove the folder `where` (a path, or an fsspec URL) and what it holds, if it is there."""
    protocol, found, _ = where.partition("://")
    if not found:
        shutil.rmtree(where, ignore_errors=True)
        return
    import fsspec

    fs = fsspec.filesystem(protocol)
    if fs.exists(where):
        fs.rm(where, recursive=True)
