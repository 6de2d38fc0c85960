"""Prefect's temporary server as acervo's own child: it ends with acervo and never holds acervo's output.

A flow run needs a Prefect API. Where Prefect's settings name none, acervo starts one itself, with Prefect's own
command `prefect server start` on a free loopback port, and names it in PREFECT_API_URL before Prefect is imported
(Prefect reads its settings once, when first imported; where it was imported already, the runs are wrapped in its
`temporary_settings`). The server reads no stdin and writes to PREFECT_HOME/temporary-server.log; it runs in a
process group of its own, so that a terminal's Ctrl-C or `timeout` reaches acervo alone, which reports the run's
end to the server before stopping it at exit (`flows.signals` makes SIGINT, SIGTERM and SIGHUP exit too). On Linux
PR_SET_PDEATHSIG has the kernel send it SIGTERM when acervo dies, even by SIGKILL; elsewhere (macOS) a SIGKILLed
acervo leaves it running, holding none of acervo's output.
"""

import atexit
import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext, suppress
from pathlib import Path
from typing import Any

import httpx

from acervo.flows import api_named, startup

startup()  # PREFECT_HOME and the startup timeout, before they are read here

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
STOP_SECONDS = 5  # how long the server may take to shut down before it is killed
_running: dict[str, subprocess.Popen[bytes]] = {}  # the API URL of the server started here -> its process


def log_path() -> Path:
    """Where the temporary server writes its output: a file in PREFECT_HOME."""
    return Path(os.environ["PREFECT_HOME"]) / "temporary-server.log"


def prefect_api() -> AbstractContextManager[Any]:
    """A block whose flow runs and events reach a Prefect API: the one Prefect's settings name, else acervo's
    temporary server, started at the first call; best entered before Prefect is imported."""
    url = started()
    if url is None or "prefect" not in sys.modules:
        return nullcontext()
    from prefect.settings import PREFECT_API_URL, get_current_settings, temporary_settings

    if get_current_settings().api.url == url:
        return nullcontext()
    return temporary_settings(updates={PREFECT_API_URL: url})


def started() -> str | None:
    """The API URL of acervo's temporary server, started now (once, until exit) and named in PREFECT_API_URL;
    None where Prefect's settings name an API server."""
    if _running:
        return next(iter(_running))
    if api_named():
        return None
    port, log = _free_port(), log_path()
    url = f"http://127.0.0.1:{port}/api"
    print(f"acervo: Starting temporary server for Prefect on {url}, its output in {log}", file=sys.stderr,
          flush=True)
    process = _spawned(port, log)
    try:
        _answering(url, process, log)
    except BaseException:
        _stop(process)
        raise
    atexit.register(_stop, process)
    _running[url] = process
    os.environ["PREFECT_API_URL"] = url
    return url


def _free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spawned(port: int, log: Path) -> subprocess.Popen[bytes]:
    """`prefect server start` on loopback's `port`, without its UI: no stdin, its output appended to `log`, in a
    process group of its own, tied to acervo's life, and (-P) with no module of the working folder in its way."""
    command = [sys.executable, "-P", "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port),
               "--no-ui", "--log-level", "ERROR"]
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                process_group=0 if os.name == "posix" else None, preexec_fn=_die_with_parent())


def _answering(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Wait until the server at `url` answers its health check; raise, naming `log`, where it exits first or stays
    silent for PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS."""
    seconds = float(os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"])
    deadline = time.monotonic() + seconds
    with httpx.Client(trust_env=False, timeout=10) as client:  # loopback: never through a proxy
        while time.monotonic() < deadline:
            with suppress(httpx.TransportError):
                if client.get(f"{url}/health").is_success:
                    return
            with suppress(subprocess.TimeoutExpired):
                code = process.wait(timeout=0.1)
                raise RuntimeError(f"Prefect's temporary server exited with code {code} before answering; see {log}")
    raise RuntimeError(f"Prefect's temporary server did not answer within {seconds:g} s; see {log}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server, killing it if it has not ended STOP_SECONDS after SIGTERM."""
    process.terminate()
    try:
        process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _die_with_parent() -> Callable[[], None] | None:
    """A preexec_fn that has the kernel SIGTERM the child when this thread ends; None off Linux or off the main
    thread (the signal follows the thread that forked, and only the main thread lives as long as the process)."""
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(1)

    return preexec
