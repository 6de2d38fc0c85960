"""Prefect's temporary server as acervo's own child: it ends with acervo and never holds acervo's output.

Without PREFECT_API_URL, Prefect starts a local server in a subprocess that inherits stdout and stderr and
outlives a parent killed by a signal, so whoever reads acervo's output waits for it forever. acervo starts
that same server itself, from the main thread, before the first flow run (`flows.flow_run.ensure_temporary_server`):
its output goes to PREFECT_HOME/temporary-server.log, and on Linux PR_SET_PDEATHSIG has the kernel send it
SIGTERM when acervo dies, even by SIGKILL. Elsewhere (macOS) it is stopped at exit, which `flows.signals` makes
happen on SIGINT, SIGTERM and SIGHUP too; after a SIGKILL there it stays up, but holds none of acervo's output.
"""

import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import prefect
from prefect.server.api.server import SubprocessASGIServer
from prefect.settings import get_current_settings

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def log_path() -> Path:
    """Where the temporary server writes its output: a file in PREFECT_HOME."""
    return get_current_settings().home / "temporary-server.log"


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


class TemporaryServer(SubprocessASGIServer):
    """The server Prefect starts when no API URL is configured, started the same way but tied to acervo.

    Prefect keeps one such server per process: made first, this one is the one all of Prefect's clients use.
    """

    def start(self, timeout: int | None = None) -> None:
        """Start it and wait until it answers; a failure names the log that says why."""
        try:
            super().start(timeout)
        except RuntimeError as err:
            raise RuntimeError(f"{err} See {log_path()}") from err

    def _run_uvicorn_command(self) -> subprocess.Popen[Any]:
        """Prefect's own command for its temporary server: no stdin, output to the log, tied to acervo's life, and
        in a process group of its own, so that a terminal's Ctrl-C or `timeout` reaches acervo alone, which then
        reports the run's end to the server before stopping it."""
        log = log_path()
        log.parent.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "uvicorn", "--app-dir", str(prefect.__module_path__.parent), "--factory",
                   "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(self.port),
                   "--log-level", "error", "--lifespan", "on"]
        env = {**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1",
               **get_current_settings().to_environment_variables(exclude_unset=True)}
        with log.open("ab") as out:
            return subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    process_group=0 if os.name == "posix" else None, preexec_fn=_die_with_parent())
