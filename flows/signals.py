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
        signum = received[0] if received else _terminated(err)
        if signum is not None:
            raise Stopped(signum) from err
        raise
    finally:
        for signum, previous in before.items():
            signal.signal(signum, previous)


def _terminated(err: BaseException) -> int | None:
    """The signal behind `err`, when Prefect's own handler (a flow run replaces ours with it) turned one into
    TerminationSignal and DuckDB or the engine into another error; None otherwise. Prefect is not imported."""
    termination = getattr(sys.modules.get("prefect.exceptions"), "TerminationSignal", None)
    seen: set[int] = set()
    cause: BaseException | None = err
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if termination is not None and isinstance(cause, termination):
            return cause.signal
        cause = cause.__cause__ or cause.__context__
    return None


def stopped(stop: KeyboardInterrupt) -> int:
    """Say on stderr which signal stopped the run; its exit code, 128 + the signal's number."""
    signum = stop.signum if isinstance(stop, Stopped) else signal.SIGINT
    print(f"acervo: stopped by {signal.Signals(signum).name}", file=sys.stderr)
    return 128 + signum
