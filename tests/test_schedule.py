"""Nightly and on change: `acervo watch` reindexes a folder when it settles, and `acervo schedule` runs the
flow on its cron schedule and on change events, against the session's real Prefect server on loopback."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acervo.pipelines.db import connect
from acervo.pipelines.reconfigure import STAGES
from conftest import SEED

pytestmark = pytest.mark.slow  # watch and schedule in subprocesses, a Prefect server

ROOT = Path(__file__).parent.parent


def acervo(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "acervo.flows", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def test_watch_reindexes_when_the_folder_changes_and_settles(tmp_path: Path):
    docs, db = tmp_path / "docs", tmp_path / "docs.duckdb"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nAlpha works with Beta.", encoding="utf-8")
    watcher = acervo("watch", "--source", str(docs), "--db", str(db), "--interval", "0.2", "--debounce", "0.6",
                     "--max-runs", "2", "--no-prefect")
    lines = []
    while not any("published" in line for line in lines):
        lines.append(watcher.stdout.readline())
        assert lines[-1], "".join(lines)
    (docs / "b.md").write_text("# Beta\n\nBeta is a group.", encoding="utf-8")
    out, _ = watcher.communicate(timeout=120)
    assert watcher.returncode == 0, "".join(lines) + out
    assert "1 file(s) changed" in out
    con = connect(db, read_only=True)
    assert con.execute("select count(*) from index_runs").fetchone() == (2,)
    assert con.execute("select doc_id from documents order by 1").fetchall() == [("a.md",), ("b.md",)]
    con.close()


SERVED = """
import json, subprocess, sys, time
from pathlib import Path
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

source, db, deadline = sys.argv[1], sys.argv[2], time.monotonic() + 240
wanted = Path(source).resolve()
with get_client(sync_client=True) as client:
    def ours():
        return [d for d in client.read_deployments() if Path(d.parameters.get("source", "")).resolve() == wanted]
    while not (mine := ours()):
        assert time.monotonic() < deadline, "no deployment"
        time.sleep(0.2)
    deployment = mine[0]
    emitted = subprocess.run([sys.executable, "-m", "acervo.flows", "watch", "--source", source, "--db", db, "--emit",
                              "--max-runs", "1"], capture_output=True, text=True, timeout=120)
    while True:
        runs = [r for r in client.read_flow_runs() if r.deployment_id == deployment.id and r.state_name == "Completed"]
        if runs:
            break
        assert time.monotonic() < deadline, "no completed run"
        time.sleep(0.2)
    artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(
        any_=[runs[0].id])))
    print(json.dumps({"name": deployment.name, "cron": [s.schedule.cron for s in deployment.schedules],
                      "completed": len(runs), "parameters": deployment.parameters, "watch": emitted.stderr,
                      "artifacts": [a.key for a in artifacts]}))
"""


def test_serve_runs_on_a_change_event_and_keeps_a_cron_schedule(prefect_server, tmp_path: Path):
    """Served with paths relative to where it starts, the deployment stores them absolute; `watch --emit`
    sends the event that starts the run, and says so."""
    source, db = tmp_path / "seed.jsonl", tmp_path / "served.duckdb"
    shutil.copyfile(SEED, source)
    relative = [os.path.relpath(p, ROOT) for p in (source, db)]
    served = acervo("schedule", "--source", relative[0], "--db", relative[1], "--cron", "0 3 * * *", env=prefect_server)
    try:
        done = subprocess.run([sys.executable, "-c", SERVED, *relative], cwd=ROOT, env=prefect_server,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads(done.stdout.splitlines()[-1])
        assert (result["name"], result["cron"]) == ("acervo-reindex", ["0 3 * * *"])
        stored = result["parameters"]
        assert (stored["source"], stored["db"]) == (str(source.resolve()), str(db.resolve()))
        assert f"emitted acervo.documents.changed for {relative[0]}" in result["watch"]
        assert result["artifacts"] == ["acervo-index-run"]
    finally:
        served.terminate()
        served.communicate(timeout=60)
    con = connect(db, read_only=True)
    assert con.execute("select count(*) from edges").fetchone() == (34,)
    assert con.execute("select count(*) from run_stages").fetchone() == (len(STAGES) * result["completed"],)
    con.close()
