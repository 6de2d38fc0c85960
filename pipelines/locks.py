"""Locks on open files, tied to the open file rather than the process, and descriptors held for an object's life:
how a reader keeps the index file it reads from becoming a run's staging file (pipelines.db, pipelines.publish)."""

import fcntl
import os
import struct
import weakref
from pathlib import Path

OFD_SETLK = getattr(fcntl, "F_OFD_SETLK", None)  # Linux's lock on an open file, not on a process (None elsewhere)
# holder -> what closes the descriptor holding its file's lock (once: when called, or when the holder is dropped)
_HOLDS: "weakref.WeakKeyDictionary[object, weakref.finalize]" = weakref.WeakKeyDictionary()


def lock_file(fd: int, kind: int) -> bool:
    """Take the lock `kind` (fcntl.F_RDLCK, F_WRLCK) on the whole file open on `fd`, tied to that open file, not
    to the process (OFD_SETLK); False where another holds a conflicting one, DuckDB's own lock included."""
    try:
        fcntl.fcntl(fd, OFD_SETLK, struct.pack("hhqqi4x", kind, os.SEEK_SET, 0, 0, 0))
    except OSError:
        return False
    return True


def names(path: Path | str, fd: int) -> bool:
    """Whether `path` names the file open on `fd`."""
    return os.path.samestat(os.fstat(fd), os.stat(path))


def hold(holder: object, fd: int) -> None:
    """Keep `fd` (and the lock taken on it) open while `holder` lives: closed when it is dropped or `release`d."""
    _HOLDS[holder] = weakref.finalize(holder, os.close, fd)


def release(holder: object) -> None:
    """Close the descriptor `hold` keeps for `holder` now, releasing its lock; nothing where it keeps none."""
    close = _HOLDS.pop(holder, None)
    if close is not None:
        close()
