"""Safe publishing: one writer at a time, a staging copy, and an atomic replace of the index file.

DuckDB lets one process write a file and locks every other process out of it, readers included.
So a run never writes the published file: it works on a copy and renames it over the original
only when complete, and readers holding the old file keep reading it. The file a publish replaces stays
beside the index as its spare, and the next run makes its copy from it by writing only what differs. A run
that would change nothing (`unchanged`, found from the published file read-only) writes no file at all.
"""

import fcntl
import glob
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from acervo.pipelines import runs
from acervo.pipelines.beside import Planted, keep_owner_and_mode, make_run_folder, open_own, run_folder, set_aside
from acervo.pipelines.db import Connection, OtherFormat, attach, close_reader, connect, reader, reading, sql
from acervo.pipelines.locks import OFD_SETLK, lock_file
from acervo.pipelines.run import Run
from acervo.pipelines.runs import StageResult, Work
from acervo.pipelines.sources import fingerprint

Stage = Callable[..., Work]  # a stage's run function

MAGIC = b"DUCK"  # what a DuckDB database file holds at byte 8
# A publish rewrites its file compactly when the blocks it wastes (free, or holding deleted rows) exceed this share
# of those holding live rows: the file stays within (1 + WASTE) times its data, and a compaction, which rewrites
# the live data, costs at most 1 / WASTE times the blocks the runs since the last one wasted. The blocks a rerun's
# checkpoint frees (an indexed table's index and last row group, rewritten whole) are reused by the next one's, so
# a bound of 1 keeps them as headroom instead of compacting at every small rerun.
WASTE = 1.0
SYNC_BYTES = 1 << 20  # a staging file made from the spare is compared with the index, and written, in pieces this size


class IndexBusy(RuntimeError):
    """Another run is writing the same index."""


class NotAnIndex(ValueError):
    """The path to write the index to holds something else (or the source): it is never overwritten."""


def check_target(db: Path, source: Path | None = None, *, fresh: bool = False) -> None:
    """Raise NotAnIndex unless `db` is new or an acervo index, and is not `source`: a run replaces `db`
    whole, so anything else there (the corpus, another program's database, an empty file) would be lost.
    An index of another format (pipelines.db.OtherFormat) is refused too, unless the run is `fresh`: it
    rebuilds the file from nothing."""
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
        close_reader(reader(db, any_format=fresh))
    except OtherFormat:
        raise
    except ValueError as err:
        raise NotAnIndex(f"{err}; it is left as it is: choose another --db") from None


@contextmanager
def writer_lock(db: Path, *, wait: float) -> Iterator[None]:
    """Hold the index's writer lock, waiting up to `wait` seconds for another run: a lock file beside the real
    file, and a lock on the index file itself, which every name of it (hard links) shares.

    The operating system releases the locks when their holder dies, so a killed run never blocks the next.
    A symbolic link and its target share one lock: the lock sits beside the real file. The lock file is
    opened without following a link (pipelines.beside): a link or another file's name in its place is refused.
    """
    db = real(db)
    deadline = time.monotonic() + wait
    with os.fdopen(open_own(db.with_name(f"{db.name}.lock"), os.O_RDWR, create=True), "r+") as handle:
        if not _flock(handle.fileno(), deadline):
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise IndexBusy(f"{db} is being reindexed by another run (pid {holder}); "
                            f"waited {wait:.0f} s, try again later or pass a longer --wait")
        with _file_locked(db, deadline, wait):
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


@contextmanager
def _file_locked(db: Path, deadline: float, wait: float) -> Iterator[None]:
    """Hold a lock on the index file `db` itself (none when it is new): a run on another name of the same file
    (a hard link) takes another lock file, but this lock is the file's own."""
    try:
        fd = os.open(db, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        yield
        return
    try:
        if not _flock(fd, deadline):
            raise IndexBusy(f"{db} is being reindexed by another run, through another name of the same file (a "
                            f"hard link); waited {wait:.0f} s, try again later or pass a longer --wait")
        yield
    finally:
        os.close(fd)  # which releases the lock


def _flock(fd: int, deadline: float) -> bool:
    """Take an exclusive lock on the file open on `fd`, trying until `deadline` (time.monotonic); False if another
    holds it then."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.2)


def real(db: Path) -> Path:
    """The file `db` names once every symbolic link is followed: the one to lock, copy and replace."""
    return Path(os.path.realpath(db))


def _remove_abandoned_staging(db: Path) -> None:
    """Delete what killed runs left beside `db`: run folders (and the staging files of older versions) named
    after the run's process, which no longer exists or is this one (which has none yet)."""
    for path in db.parent.glob(f"{glob.escape(db.name)}.staging-*"):
        pid = re.fullmatch(r"(\d+)(\..*)?", path.name.removeprefix(f"{db.name}.staging-"))
        if pid and (int(pid[1]) == os.getpid() or not _alive(int(pid[1]))):
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


class Changed(Exception):
    """A stage of a probe (Probe) has something to do."""


class Probe(Run):
    """A run over the published file, read-only, that stops at the first stage with anything to do: every stage
    after documents asks `unchanged` before it reads or writes anything else."""

    def unchanged(self, reads: Iterable[str], key: str, setting: str) -> bool:
        if super().unchanged(reads, key, setting):
            return True
        raise Changed(key)


@contextmanager
def writing(db: Path, *, wait: float = 0.0, source: Path | None = None, fresh: bool = False) -> Iterator[Path]:
    """Hold the writer lock of the index `db` for a run, and give the real file's path (`real`).

    `db` must be new or an acervo index of this format (unless the run is `fresh`), and not the `source` the run
    reads (NotAnIndex, OtherFormat, before anything changes). What killed runs left beside it is removed first;
    then the run's own folder is made (pipelines.beside.run_folder), and removed with all it holds when the block
    ends.
    """
    db = real(db)
    db.parent.mkdir(parents=True, exist_ok=True)
    with writer_lock(db, wait=wait):
        check_target(db, source, fresh=fresh)
        _remove_abandoned_staging(db)
        folder = make_run_folder(db)
        try:
            yield db
        finally:
            _remove(folder)


def unchanged(db: Path, source: Path | None, *, max_bytes: int, probe: Callable[[Run, Stage], list[StageResult]],
              ledger: dict[str, Any]) -> list[StageResult] | None:
    """The stage results of a run that changes nothing in the published index `db`, found from the file
    read-only, its ledger rows left to wait beside it (`defer`); None, and nothing done, when the run would
    change anything (or cannot tell without running).

    Nothing changes when the run's settings are those of the index's last run, `source` is the very JSONL file
    the index was last built from (the documents stage's fingerprint, with `max_bytes`), and every stage skips:
    `probe` runs them on a Probe, with the documents stage it is given. `ledger`: the arguments of runs.ledger but
    the stages and status. Called under the writer lock (`writing`).
    """
    if source is None or not source.is_file() or not db.is_file():
        return None
    with reading(db) as con:
        built_from, n_documents, last = con.execute(sql("publish.last_run")).fetchone()
        if last is None or json.loads(last) != ledger["settings"]:
            return None

        def documents(run: Run, **knobs: Any) -> Work:
            """The documents stage where the source may be the file the index was last built from."""
            if fingerprint(source, max_bytes) != built_from:
                raise Changed("source")
            return Work(n_documents, n_documents, 0, 0)

        try:
            stages = probe(Probe.alone(con), documents)
        except (Changed, duckdb.InvalidInputException):  # a stage that asks no `unchanged` tried to write
            return None
        defer(db, runs.ledger(con, stages=stages, status="ok", **ledger))
        return stages


def waste(con: Connection) -> tuple[float, float]:
    """The blocks of the database file open on `con` that hold live rows, and those it wastes: the free ones
    and, estimated per table, the share of its blocks holding deleted rows.

    DuckDB keeps a deleted row in its row group until its vacuum merges row groups at a checkpoint, which it
    never does in a table with an index; only a compaction removes them there.
    """
    used, free = con.execute(sql("publish.blocks")).fetchone()
    dead = 0.0
    for table, stored in con.execute(sql("publish.tables")).fetchall():
        if stored:
            live = con.execute(sql("publish.live_rows"), {"table": table}).fetchone()[0]
            blocks = con.execute(sql("publish.table_blocks"), {"table": table}).fetchone()[0]
            dead += blocks * (stored - live) / stored
    return used - dead, free + dead


def defer(db: Path, ledger: dict[str, Any]) -> None:
    """Keep the ledger rows of a run that changed nothing beside the index `db` (runs.pending), for the next
    run that publishes to write into the file: rewriting the file for them would be the copy avoided.

    The list is written whole in the run's folder, flushed to disk, and renamed over the last one, so a kill
    or a crash leaves one or the other.
    """
    path = run_folder(db) / "runs"
    with path.open("w", encoding="utf-8") as file:
        file.write(json.dumps([*runs.pending(db, set_aside=True), ledger]))
        file.flush()
        os.fsync(file.fileno())
    os.replace(path, runs.pending_path(db))


@contextmanager
def staging(db: Path, *, fresh: bool = False) -> Iterator[Run]:
    """A run on a writable copy of the index file `db` (empty when `fresh` or new) that replaces `db` atomically
    if the block succeeds; inside `writing`, whose path it takes.

    The copy is made from the spare, the file the last publish replaced, where no reader holds it (only the
    pieces that differ are written); else it is a whole copy. The replaced file becomes the next spare. The
    ledger rows of runs that changed nothing since the last publish (runs.pending) go into the copy with the
    run's own; `fresh` starts a new ledger, without them. The copy is compacted (`_compact`) before it replaces
    `db` when it wastes too many blocks (WASTE), and gets the owner, group and permissions of the file it
    replaces. A crash or kill leaves `db` untouched and the run's folder behind, which the next run removes. When
    `db` is a symbolic link, its target is updated and the link stays.
    """
    folder = run_folder(db)  # made by `writing`; the staging file, its log and spill files, and the rows go in it
    path, rows = folder / "staging.duckdb", folder / "rows"
    if db.exists() and not fresh and not _from_spare(db, path):
        shutil.copyfile(db, path)
    with connect(path) as con:
        rows.mkdir()
        run = Run.alone(con, scratch=rows)
        with run.transaction():
            if not fresh:
                runs.write(run, runs.pending(db, set_aside=True))
            yield run
        con.execute(sql("publish.checkpoint"))
    with connect(path, read_only=True) as con:  # measured as a reader finds the file, once its writer has closed it
        live, wasted = waste(con)
    if wasted > WASTE * live:
        _compact(path)
    keep_owner_and_mode(db, path)
    _keep_spare(db)
    os.replace(path, db)
    runs.pending_path(db).unlink(missing_ok=True)  # a kill before this: the next run writes them again, once


def spare_path(db: Path) -> Path:
    """Where the file the last publish replaced waits beside the real index file `db`, for the next run."""
    return db.with_name(f"{db.name}.spare")


def _keep_spare(db: Path) -> None:
    """Keep the index file `db`, about to be replaced, as the spare (a second name for it, not a copy), where the
    next run can tell whether a reader still holds it (OFD_SETLK); elsewhere, or on a file system without hard
    links, remove any spare instead. A kill between the two renames leaves a spare that is the index itself,
    which `_from_spare` does not use."""
    spare = spare_path(db)
    if OFD_SETLK is None or not db.exists():
        _remove(spare)
        return
    link = run_folder(db) / "spare"
    try:
        os.link(db, link)
        os.replace(link, spare)  # a rename replaces what is there, a link or a file, never writing through it
    except OSError:
        _remove(spare)


def _set_aside_planted(spare: Path, err: Planted, db: Path) -> None:
    """Warn that the spare was not used, unless it is only a second name of the index `db`: what a kill between
    a publish's two renames leaves (`_keep_spare`)."""
    try:
        if spare.samefile(db):
            return
    except OSError:
        pass
    set_aside(spare, f"the spare (the index a publish replaced) is {err.why}")


def _from_spare(db: Path, path: Path) -> bool:
    """Make `path` a byte copy of the index `db` from its spare, writing only the pieces that differ (`_sync`);
    False, and the spare left alone, where there is none, it is `db` itself, or a reader holds it: a reader
    that opened the index before the last publish reads that file, which must not change under it. acervo's
    readers hold a lock on it (pipelines.db.connect), as do DuckDB's own in other processes. A spare that is not
    the index's own file (pipelines.beside.open_own) is set aside with a warning and never written through."""
    spare = spare_path(db)
    if OFD_SETLK is None:
        return False
    try:
        fd = open_own(spare, os.O_RDWR, owners=(os.stat(db).st_uid,))
    except Planted as err:  # a link, another name of a file (the index's own, after a kill), another's file
        _set_aside_planted(spare, err, db)
        return False
    except OSError:  # none, or not ours to open
        return False
    try:
        if not lock_file(fd, fcntl.F_WRLCK):  # refused while a reader holds the file (pipelines.db.connect)
            return False
        os.replace(spare, path)  # held until the copy is made: no reader can take it then
        _sync(db, fd)
        return True
    finally:
        os.close(fd)  # which releases the lock, before DuckDB takes its own


def _sync(db: Path, fd: int) -> None:
    """Make the file open on `fd` a byte copy of the file `db`: its length, then each piece of SYNC_BYTES that
    differs, written whole."""
    with db.open("rb") as source:
        size = os.fstat(source.fileno()).st_size
        os.ftruncate(fd, size)
        for at in range(0, size, SYNC_BYTES):
            piece = os.pread(source.fileno(), SYNC_BYTES, at)
            if os.pread(fd, SYNC_BYTES, at) != piece:  # bytes with bytes: a memoryview would compare item by item
                left, to = memoryview(piece), at
                while left:
                    written = os.pwrite(fd, left, to)
                    left, to = left[written:], to + written


def _compact(path: Path) -> None:
    """Rewrite the database file at `path` without its free blocks and deleted rows, with this version's keys and
    block size (pipelines.db.BLOCK_SIZE).

    A checkpoint writes every changed row group to free blocks before it frees the old ones, and DuckDB never
    gives the space back; the next checkpoints reuse it. The new file gets the schema's tables, keys and
    indexes (sql/schema.sql), and the rows of `path`'s index_state (its format among them); a table the schema
    lacks keeps its own definition, and an index the schema lacks is built again.
    """
    compact = Path(f"{path}.compact")
    connect(compact).close()
    with duckdb.connect() as con:
        attach(con, path, "wasteful", read_only=True)
        attach(con, compact, "compact")
        con.execute(sql("publish.use_compact"))
        con.execute(sql("publish.unstamp"))
        for (definition,) in con.execute(sql("publish.unknown_tables")).fetchall():
            con.execute(definition)
        con.execute(sql("publish.compact"))
        for (definition,) in con.execute(sql("publish.unknown_indexes")).fetchall():
            con.execute(definition)
    os.replace(compact, path)
