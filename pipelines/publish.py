"""Safe publishing: one writer at a time, a staging copy, and an atomic replace of the index file.

DuckDB lets one process write a file and locks every other process out of it, readers included.
So a run never writes the published file: it works on a copy and renames it over the original
only when complete, and readers holding the old file keep reading it.
"""

import fcntl
import glob
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipelines.db import Connection, connect, transaction


class IndexBusy(RuntimeError):
    """Another run is writing the same index."""


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
    """Delete staging files that killed runs left beside `db` (their process no longer exists)."""
    for path in db.parent.glob(f"{glob.escape(db.name)}.staging-*"):
        pid = path.name.removesuffix(".wal").rsplit("-", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
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
def staging(db: Path, *, fresh: bool = False, wait: float = 0.0) -> Iterator[Connection]:
    """A writable copy of `db` (empty when `fresh` or new) that replaces `db` atomically if the block succeeds.

    A crash or kill leaves `db` untouched and a staging file behind, which the next run removes. When `db`
    is a symbolic link, its target is updated and the link stays.
    """
    db = real(db)
    db.parent.mkdir(parents=True, exist_ok=True)
    with writer_lock(db, wait=wait):
        _remove_abandoned_staging(db)
        path = db.with_name(f"{db.name}.staging-{os.getpid()}")
        try:
            if db.exists() and not fresh:
                shutil.copyfile(db, path)
            con = connect(path)
            try:
                with transaction(con):
                    yield con
                con.execute("checkpoint")
            finally:
                con.close()
            os.replace(path, db)
        finally:
            path.unlink(missing_ok=True)
            Path(f"{path}.wal").unlink(missing_ok=True)
