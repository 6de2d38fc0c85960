"""A run ended by SIGINT, SIGTERM or SIGHUP unwinds like Ctrl-C, so its cleanup runs and its exit code says why.

Python turns SIGINT into KeyboardInterrupt but lets SIGTERM and SIGHUP (what `timeout`, systemd and a closed
terminal send) end the process at once, skipping every `finally` and exit handler: the staging file stays and,
off Linux, so does Prefect's temporary server. Here they raise `Stopped` instead.
"""

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class Stopped(BaseException):
    """SIGTERM or SIGHUP, raised like KeyboardInterrupt: not an Exception, so no error handler swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum: int, _frame: Any) -> None:
    """The handler of SIGTERM and SIGHUP."""
    raise Stopped(signum)


@contextmanager
def stopping_on_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise Stopped inside the block; the previous handlers come back after it."""
    signums = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    before = {signum: signal.signal(signum, _raise_stopped) for signum in signums}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def stopped(stop: KeyboardInterrupt | Stopped) -> int:
    """Say on stderr which signal stopped the run; its exit code, 128 + the signal's number."""
    signum = stop.signum if isinstance(stop, Stopped) else signal.SIGINT
    print(f"acervo: stopped by {signal.Signals(signum).name}", file=sys.stderr)
    return 128 + signum
