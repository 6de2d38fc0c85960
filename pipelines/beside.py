"""The files acervo keeps beside an index (lock, spare, ledger, a run's folder), opened without following links.

Whoever can create a file in the index's folder could put a link, or another name of some file (a hard link),
where acervo keeps one of its own; a run, often as root from cron, would then write through it. So each name is
opened with O_NOFOLLOW and checked on the open descriptor: a link, anything but a plain file, a file with other
names, or one of another owner is refused (Planted), never written or read through. What a run writes goes in
a folder only its user can enter (`run_folder`), made anew by each run.
"""

import errno
import os
import stat
import warnings
from contextlib import suppress
from pathlib import Path


class Planted(ValueError):
    """Something that is not acervo's own file sits where acervo keeps one beside an index: `why` says what."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path}: {why}, where acervo keeps a file of its own: refused, never written or read "
                         f"through; remove it")
        self.path, self.why = path, why


class SetAside(UserWarning):
    """A file beside an index was not used (planted or damaged); the run went on without it."""


FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK  # never through a link; a FIFO opens at once and is refused


def open_own(path: Path, flags: int, *, owners: tuple[int, ...] | None = None, create: bool = False) -> int:
    """A descriptor on the file acervo keeps at `path` (created, mode 0600 less the umask, when `create`), opened
    with `flags` but never through a link; Planted when a link, no plain file, a file with other names or (with
    `owners`) one owned by none of those user ids is there. FileNotFoundError when there is none to open."""
    try:
        fd = os.open(path, flags | FLAGS | (os.O_CREAT if create else 0), 0o600)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW's answer for a link
            raise Planted(path, "a symbolic link") from None
        if err.errno in (errno.EISDIR, errno.ENXIO):  # a folder, a socket
            raise Planted(path, "not a plain file") from None
        raise
    found = os.fstat(fd)
    why = (None if stat.S_ISREG(found.st_mode) else "not a plain file")
    why = why or (f"a file with {found.st_nlink} names (hard links)" if found.st_nlink != 1 else None)
    why = why or (f"owned by user {found.st_uid}" if owners is not None and found.st_uid not in owners else None)
    if why:
        os.close(fd)
        raise Planted(path, why)
    return fd


def set_aside(path: Path, why: str, *, renamed: Path | None = None) -> None:
    """Warn (SetAside) that the file at `path` is not used, and why (and where it went, when `renamed`)."""
    moved = f"; renamed to {renamed.name}" if renamed else ""
    warnings.warn(f"{path}: {why}: not used{moved}, the run goes on without it", SetAside, stacklevel=3)


def run_folder(db: Path) -> Path:
    """The folder of this process's run on the index `db`: its staging file, DuckDB's write-ahead log and spill
    files, bulk-insert files and the ledger it writes, where nobody else can put a name."""
    return db.with_name(f"{db.name}.staging-{os.getpid()}")


def make_run_folder(db: Path) -> Path:
    """Make this process's run folder (`run_folder`), mode 0700; FileExistsError when something is there."""
    folder = run_folder(db)
    os.mkdir(folder, 0o700)  # never through a link: mkdir fails on any name already there
    return folder


def keep_owner_and_mode(replaced: Path, path: Path) -> None:
    """Give the file at `path`, about to replace `replaced`, that file's owner, group and permission bits: a
    publish must not widen who may read an index, nor hand it to the runner. An owner or group the runner may
    not give (not root) stays the runner's; the permission bits are set in every case."""
    try:
        was = os.stat(replaced)
    except FileNotFoundError:
        return
    now = os.stat(path)
    if (now.st_uid, now.st_gid) != (was.st_uid, was.st_gid):
        try:
            os.chown(path, was.st_uid, was.st_gid)
        except PermissionError:
            with suppress(PermissionError):  # a group the runner belongs to, else the runner's own
                os.chown(path, -1, was.st_gid)
    os.chmod(path, stat.S_IMODE(was.st_mode))
