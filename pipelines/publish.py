"""Safe publishing: one writer at a time, a staging copy, and an atomic replace of the index file.

DuckDB lets one process write a file and locks every other process out of it, readers included.
So a run never writes the published file: it works on a copy and renames it over the original
only when complete, and readers holding the old file keep reading it.
"""

import fcntl
import glob
import os
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from pipelines.db import attach, connect, reader, sql
from pipelines.run import Run

MAGIC = b"DUCK"  # what a DuckDB database file holds at byte 8
WASTE = 0.5  # a run rewrites its file compactly when a checkpoint left more free blocks than this share of the used


class IndexBusy(RuntimeError):
    """Another run is writing the same index."""


class NotAnIndex(ValueError):
    """The path to write the index to holds something else (or the source): it is never overwritten."""


def check_target(db: Path, source: Path | None = None) -> None:
    """Raise NotAnIndex unless `db` is new or an acervo index, and is not `source`: a run replaces `db`
    whole, so anything else there (the corpus, another program's database, an empty file) would be lost."""
    db = real(db)
    if source is not None and real(source) == db:
        raise NotAnIndex(f"{db}: the index file cannot be the source it indexes; choose another --db")
    if not db.exists():
        return
    if not db.is_file():
        raise NotAnIndex(f"{db}: not a file; choose another --db")
    with db.open("rb") as handle:
        head = handle.read(12)
    if head[8:12] != MAGIC:
        what = "an empty file" if not head else "not a DuckDB file"
        raise NotAnIndex(f"{db}: {what}, so not an acervo index; it is left as it is: choose another --db")
    try:
        reader(db).close()
    except ValueError as err:
        raise NotAnIndex(f"{err}; it is left as it is: choose another --db") from None


@contextmanager
def writer_lock(db: Path, *, wait: float) -> Iterator[None]:
    """Hold the index's writer lock (a lock file beside it), waiting up to `wait` seconds for another run.

    The operating system releases the lock when its holder dies, so a killed run never blocks the next.
    A symbolic link and its target share one lock: the lock sits beside the real file.
    """
    db = real(db)
    lock = db.with_name(f"{db.name}.lock")
    with lock.open("a+") as handle:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    handle.seek(0)
                    holder = handle.read().strip() or "unknown"
                    raise IndexBusy(f"{db} is being reindexed by another run (pid {holder}); "
                                    f"waited {wait:.0f} s, try again later or pass a longer --wait") from None
                time.sleep(0.2)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


def real(db: Path) -> Path:
    """The file `db` names once every symbolic link is followed: the one to lock, copy and replace."""
    return Path(os.path.realpath(db))


def _remove_abandoned_staging(db: Path) -> None:
    """Delete what killed runs left beside `db`: staging files and their companions named after the run's
    process, which no longer exists."""
    for path in db.parent.glob(f"{glob.escape(db.name)}.staging-*"):
        pid = re.fullmatch(r"(\d+)(\..*)?", path.name.removeprefix(f"{db.name}.staging-"))
        if pid and not _alive(int(pid[1])):
            _remove(path)


def _remove(path: Path) -> None:
    """Delete the file or folder at `path`, if there is one."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    """Whether a process with this id exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def staging(db: Path, *, fresh: bool = False, wait: float = 0.0, source: Path | None = None) -> Iterator[Run]:
    """A run on a writable copy of `db` (empty when `fresh` or new) that replaces `db` atomically if the block succeeds.

    `db` must be new or an acervo index, and not the `source` the run reads (NotAnIndex, before anything changes).
    A crash or kill leaves `db` untouched and a staging file behind, which the next run removes. When `db`
    is a symbolic link, its target is updated and the link stays.
    """
    db = real(db)
    db.parent.mkdir(parents=True, exist_ok=True)
    with writer_lock(db, wait=wait):
        check_target(db, source)
        _remove_abandoned_staging(db)
        path = db.with_name(f"{db.name}.staging-{os.getpid()}")
        rows = Path(f"{path}.rows")  # the run's bulk-insert files, removed with the staging file
        try:
            if db.exists() and not fresh:
                shutil.copyfile(db, path)
            con = connect(path)
            try:
                rows.mkdir(exist_ok=True)
                run = Run.alone(con, scratch=rows)
                with run.transaction():
                    yield run
                con.execute(sql("publish.checkpoint"))
                used, free = con.execute(sql("publish.blocks")).fetchone()
            finally:
                con.close()
            if free > WASTE * used:
                _compact(path)
            os.replace(path, db)
        finally:
            for leftover in (path, Path(f"{path}.wal"), Path(f"{path}.compact"), rows):
                _remove(leftover)


def _compact(path: Path) -> None:
    """Rewrite the database file at `path` without its free blocks.

    A checkpoint writes every changed row group to free blocks before it frees the old ones, so a
    rerun's copy of the index grows by what it rewrote, and DuckDB never gives the space back.
    """
    compact = Path(f"{path}.compact")
    con = duckdb.connect()
    try:
        attach(con, path, "wasteful", read_only=True)
        attach(con, compact, "compact")
        con.execute(sql("publish.compact"))
    finally:
        con.close()
    os.replace(compact, path)
