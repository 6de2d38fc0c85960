"""No process outlives its run: whatever signal ends `acervo index`, Prefect's temporary server ends with it and
nothing holds the caller's output open; `acervo watch` and `acervo schedule` stopped by a signal exit quietly, 128 +
its number; `acervo schedule` without a Prefect API refuses and starts nothing."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import httpx
import pytest

from acervo.pipelines.reconfigure import STAGES
from conftest import SEED

ROOT = Path(__file__).parent.parent

pytestmark = [pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds processes in /proc"),
              pytest.mark.slow]  # signals to real subprocesses and a Prefect server: the full run (.ci/run)


def session(sid: int) -> list[int]:
    """The pids of the live processes (zombies aside) whose session is `sid`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _ppid, _pgrp, session_id = stat.read_text().rsplit(")", 1)[1].split()[:4]
        except OSError:  # it ended while we looked
            continue
        if state != "Z" and int(session_id) == sid:
            found.append(int(stat.parent.name))
    return found


def open_files(pid: int) -> set[str]:
    """What the process `pid` has open (pipes as pipe:[inode]); nothing once it has ended."""
    found = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            found.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
    except OSError:  # it ended while we looked
        pass
    return found


def until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    """Wait until `condition()` holds; fail naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what} after {seconds} s"
        time.sleep(0.05)


class Output:
    """A pipe read to its end by a thread: the text so far, and whether its end was reached."""

    def __init__(self, pipe: IO[str]) -> None:
        self.text = ""
        self.reader = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self.reader.start()

    def _read(self, pipe: IO[str]) -> None:
        for line in pipe:
            self.text += line

    def closed_within(self, seconds: float) -> bool:
        self.reader.join(seconds)
        return not self.reader.is_alive()


def acervo(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """`acervo ARGS` in a session of its own, so that all it starts can be found (and killed) by session."""
    return subprocess.Popen([sys.executable, "-m", "acervo.flows", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def kill_session(run: subprocess.Popen) -> None:
    """Whatever the test left of `run`'s session, killed."""
    for pid in session(run.pid):
        os.kill(pid, signal.SIGKILL)
    run.wait()


# SIGTERM as `kill` or systemd's KillMode=mixed send it, SIGKILL as the OOM killer does, and SIGINT to the whole
# process group, as a terminal sends Ctrl-C.
@pytest.mark.parametrize("signum, group", [(signal.SIGTERM, False), (signal.SIGKILL, False), (signal.SIGINT, True)],
                         ids=["SIGTERM", "SIGKILL", "SIGINT-to-the-group"])
def test_no_process_outlives_an_index_run_ended_by_a_signal(tmp_path: Path, signum: signal.Signals, group: bool):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env["PREFECT_HOME"] = str(tmp_path / "prefect-home")
    run = acervo("index", str(SEED), "--db", str(tmp_path / "seed.duckdb"), "--prefect", env=env)
    out, err = Output(run.stdout), Output(run.stderr)
    try:
        until(lambda: "Beginning flow run" in err.text or run.poll() is not None, 300, "the flow run to begin")
        assert run.poll() is None, err.text[-2000:]
        assert len(session(run.pid)) > 1, "the temporary server is not in the run's session"
        output = {os.readlink(f"/proc/{run.pid}/fd/{fd}") for fd in (1, 2)}
        for pid in set(session(run.pid)) - {run.pid}:
            assert not output & open_files(pid), f"process {pid} holds the run's stdout or stderr"
        (os.killpg if group else os.kill)(run.pid, signum)
        code = run.wait(timeout=60)
        until(lambda: not session(run.pid), 60, f"the run's processes to end: {session(run.pid)}")
        assert out.closed_within(30) and err.closed_within(30), "something still holds the run's stdout or stderr"
    finally:
        kill_session(run)
    assert code == (-signum if signum == signal.SIGKILL else 128 + signum), err.text[-2000:]
    if signum != signal.SIGKILL:
        assert f"acervo: stopped by {signum.name}" in err.text


FLOW_RUN = """
import json, os, sys, time
from pathlib import Path
if sys.argv[3] == "prefect-first":  # its settings read before the server starts
    from prefect.settings import get_current_settings
    assert get_current_settings().api.url is None
from acervo.flows.cli import main
from acervo.pipelines.reconfigure import STAGES
code = main(["index", sys.argv[1], "--db", sys.argv[2], "--json", "--prefect"])
from prefect.events.worker import EventsWorker
from prefect.logging.handlers import APILogWorker
from prefect.client.orchestration import get_client
from prefect.settings import PREFECT_API_URL, temporary_settings
APILogWorker.drain_all()
EventsWorker.drain_all()
children = []  # the live processes this one started
for stat in Path("/proc").glob("[0-9]*/stat"):
    try:
        state, ppid = stat.read_text().rsplit(")", 1)[1].split()[:2]
    except OSError:
        continue
    if state != "Z" and int(ppid) == os.getpid():
        children.append(stat.parent.name)
with temporary_settings(updates={PREFECT_API_URL: os.environ["PREFECT_API_URL"]}), get_client(sync_client=True) as c:
    deadline = time.monotonic() + 60  # the server records task runs from their events, a moment later
    while len(c.read_task_runs()) < len(STAGES) and time.monotonic() < deadline:
        time.sleep(0.1)
    found = {"flow_runs": [r.state_name for r in c.read_flow_runs()], "task_runs": len(c.read_task_runs()),
             "logs": [log.message for log in c.read_logs()]}
Path(sys.argv[4]).write_text(json.dumps({"code": code, "url": os.environ["PREFECT_API_URL"], "children": children,
                                         **found}))
"""


@pytest.mark.parametrize("order", ["acervo-first", "prefect-first"])
def test_a_flow_run_without_an_api_reaches_acervos_own_server_which_ends_with_it(tmp_path: Path, order: str):
    """Without a configured API a flow run starts one server, acervo's child, writing to PREFECT_HOME: its flow
    run, task runs and logs reach it, and it is gone when acervo ends; also where Prefect was imported first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env["PREFECT_HOME"] = str(tmp_path / "prefect-home")
    found_file = tmp_path / "found.json"
    run = subprocess.Popen([sys.executable, "-c", FLOW_RUN, str(SEED), str(tmp_path / "seed.duckdb"), order,
                            str(found_file)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, start_new_session=True)
    try:
        out, err = run.communicate(timeout=600)
        until(lambda: not session(run.pid), 60, f"the run's processes to end: {session(run.pid)}")
    finally:
        kill_session(run)
    assert run.returncode == 0, err[-3000:]
    found = json.loads(found_file.read_text(encoding="utf-8"))
    assert found["code"] == 0 and json.loads(out)["stages"], err[-3000:]
    assert err.count("Starting temporary server") == 1 and "acervo: Starting temporary server" in err, err[-3000:]
    assert len(found["children"]) == 1, found["children"]  # acervo's server, and no other of Prefect's own
    assert found["flow_runs"] == ["Completed"] and found["task_runs"] == len(STAGES), found
    assert "Finished in state Completed()" in found["logs"], found["logs"]
    assert found["url"] in (tmp_path / "prefect-home" / "temporary-server.log").read_text(encoding="utf-8")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_watch_stopped_by_a_signal_exits_quietly(tmp_path: Path, signum: signal.Signals):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nAlpha works with Beta.", encoding="utf-8")
    watcher = acervo("watch", "--source", str(docs), "--db", str(tmp_path / "docs.duckdb"), "--interval", "0.2",
                     "--debounce", "0.6", "--no-prefect")
    err = Output(watcher.stderr)
    try:
        until(lambda: "published" in err.text or watcher.poll() is not None, 120, "the first run to publish")
        watcher.send_signal(signum)
        code = watcher.wait(timeout=60)
        assert err.closed_within(30)
    finally:
        kill_session(watcher)
    assert "Traceback" not in err.text, err.text
    assert code == 128 + signum, err.text
    assert err.text.rstrip().endswith(f"acervo: stopped by {signum.name}"), err.text


def test_schedule_without_a_prefect_api_refuses_in_one_line_and_starts_nothing(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env["PREFECT_HOME"] = str(tmp_path / "prefect-home")  # no profile of the user's names a server
    served = acervo("schedule", "--source", str(SEED), "--db", str(tmp_path / "served.duckdb"), env=env)
    try:
        out, err = served.communicate(timeout=60)
        left = session(served.pid)
    finally:
        kill_session(served)
    assert served.returncode == 2, err
    assert out == "" and len(err.splitlines()) == 1 and "PREFECT_API_URL" in err, err
    assert left == []
    assert not (tmp_path / "served.duckdb").exists()


def polled(api: str, name: str) -> bool:
    """Whether the deployment named `name` is ready on the Prefect API at `api`: a runner polls it for runs."""
    found = httpx.post(f"{api}/deployments/filter", json={"deployments": {"name": {"any_": [name]}}}, timeout=10)
    return found.is_success and [d["status"] for d in found.json()] == ["READY"]


def test_schedule_stopped_by_sigterm_exits_143_and_leaves_no_process(prefect_server: dict[str, str], tmp_path: Path):
    name = "acervo-sigterm-test"  # a deployment of its own on the session's server
    served = acervo("schedule", "--source", str(SEED), "--db", str(tmp_path / "served.duckdb"), "--name", name,
                    env=prefect_server)
    out, err = Output(served.stdout), Output(served.stderr)
    try:
        until(lambda: served.poll() is not None or polled(prefect_server["PREFECT_API_URL"], name), 120,
              "the deployment to be served")
        assert served.poll() is None, err.text[-2000:]
        served.send_signal(signal.SIGTERM)
        code = served.wait(timeout=60)
        until(lambda: not session(served.pid), 60, f"serve's processes to end: {session(served.pid)}")
        assert out.closed_within(30) and err.closed_within(30), "something still holds schedule's stdout or stderr"
    finally:
        kill_session(served)
    assert code == 128 + signal.SIGTERM, err.text[-2000:]
    assert "Traceback" not in err.text, err.text
    assert err.text.rstrip().endswith("acervo: stopped by SIGTERM"), err.text


def test_an_error_that_follows_a_signal_is_a_stop():
    from acervo.flows.signals import Stopped, stopping_on_signals

    with pytest.raises(Stopped) as stop, stopping_on_signals():
        try:
            os.kill(os.getpid(), signal.SIGINT)
            signal.pause()  # the handler raises here
        except KeyboardInterrupt as err:  # as DuckDB does: an interrupted query raises its own RuntimeError
            raise RuntimeError("Query interrupted") from err
    assert stop.value.signum == signal.SIGINT
    assert isinstance(stop.value.__cause__, RuntimeError)


def test_an_error_that_follows_prefects_own_termination_signal_is_a_stop():
    from prefect.exceptions import TerminationSignal

    from acervo.flows.signals import Stopped, stopping_on_signals

    with pytest.raises(Stopped) as stop, stopping_on_signals():
        try:  # a flow run's SIGTERM handler is Prefect's: it raises TerminationSignal where the query runs
            raise TerminationSignal(signal.SIGTERM)
        except TerminationSignal as err:
            raise RuntimeError("Query interrupted") from err
    assert stop.value.signum == signal.SIGTERM
    with pytest.raises(RuntimeError), stopping_on_signals():  # an error no signal caused stays what it is
        raise RuntimeError("disk full")


def test_a_signal_ignored_at_start_stays_ignored():
    from acervo.flows.signals import stopping_on_signals

    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as nohup starts a command
    try:
        with stopping_on_signals():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGHUP, before)
