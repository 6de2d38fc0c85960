"""A run ended by SIGINT, SIGTERM or SIGHUP unwinds like Ctrl-C, so its cleanup runs and its exit code says why.

Python lets SIGTERM and SIGHUP (what `timeout`, systemd and a closed terminal send) end the process at once,
skipping every `finally` and exit handler: the staging file stays and, off Linux, so does Prefect's temporary
server. Here all three raise `Stopped`, a KeyboardInterrupt, so whatever cleans up after Ctrl-C (Prefect's
engine included) cleans up after them too. A signal that was ignored when acervo started (nohup) stays ignored.
"""

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

NAMES = ("SIGINT", "SIGTERM", "SIGHUP")


class Stopped(KeyboardInterrupt):
    """The run was asked to stop by the signal `signum`."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextmanager
def stopping_on_signals() -> Iterator[None]:
    """Inside the block SIGINT, SIGTERM and SIGHUP raise Stopped; so does an error that follows one (DuckDB turns
    an interrupt into RuntimeError). The previous handlers come back after the block."""
    received = []

    def handler(signum: int, _frame: Any) -> None:
        received.append(signum)
        raise Stopped(signum)

    signums = [getattr(signal, name) for name in NAMES if hasattr(signal, name)]
    before = {s: signal.getsignal(s) for s in signums if signal.getsignal(s) not in (signal.SIG_IGN, None)}
    for signum in before:
        signal.signal(signum, handler)
    try:
        yield
    except Exception as err:
        if received:
            raise Stopped(received[0]) from err
        raise
    finally:
        for signum, previous in before.items():
            signal.signal(signum, previous)


def stopped(stop: KeyboardInterrupt) -> int:
    """Say on stderr which signal stopped the run; its exit code, 128 + the signal's number."""
    signum = stop.signum if isinstance(stop, Stopped) else signal.SIGINT
    print(f"acervo: stopped by {signal.Signals(signum).name}", file=sys.stderr)
    return 128 + signum
