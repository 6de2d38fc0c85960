"""Query: a bounded pool of open indexes for a service, each switched to the newest published file before it
answers (publishing replaces the file by a rename: a new file, never a half-written one)."""

import asyncio
import os
import queue
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from acervo.pipelines.query.context import Index


class Busy(Exception):
    """No reader was free within the wait: the service is at its bound."""


class TooSlow(Exception):
    """A question took longer than its time: it was stopped inside DuckDB."""


class Readers:
    """`n` readers of the index at `db`; `reader()` lends one for a question, or raises Busy after `wait` s."""

    def __init__(self, db: Path, n: int) -> None:
        self.db = db
        self.free: queue.Queue[tuple[Index, tuple[int, int]]] = queue.Queue()
        for _ in range(n):
            self.free.put((Index(db), self.published()))

    def published(self) -> tuple[int, int]:
        """Which file is published at the path now (device, inode)."""
        found = os.stat(self.db)
        return found.st_dev, found.st_ino

    @contextmanager
    def reader(self, wait: float) -> Iterator[Index]:
        """A free reader of the file published now (reopened when a newer one was published since it opened)."""
        try:
            index, opened = self.free.get(timeout=wait)
        except queue.Empty:
            raise Busy(f"all readers busy for {wait} s") from None
        try:
            now = self.published()
            if now != opened:
                index.reopen()
                opened = now
            yield index
        finally:
            self.free.put((index, opened))

    def close(self) -> None:
        """Close every reader (those lent out are closed as they come back to a closed pool: not at all)."""
        while not self.free.empty():
            self.free.get_nowait()[0].close()


async def answered(readers: Readers, ask: Callable[[Index], Any], *, wait: float, timeout: float) -> Any:
    """`ask` on a free reader in a worker thread: Busy when none is free within `wait` s, TooSlow (the question
    interrupted in DuckDB) after `timeout` s; what `ask` raises otherwise passes through."""
    loop = asyncio.get_running_loop()
    lent = readers.reader(wait)
    index = await loop.run_in_executor(None, lent.__enter__)
    work = loop.run_in_executor(None, ask, index)
    try:
        return await asyncio.wait_for(asyncio.shield(work), timeout)
    except TimeoutError:
        index.con.interrupt()
        raise TooSlow(f"the question took more than {timeout} s") from None
    finally:
        await asyncio.gather(work, return_exceptions=True)
        lent.__exit__(None, None, None)
