"""Nightly and on change: `acervo watch` reindexes a folder when it settles, and `acervo serve` runs the
flow on its cron schedule and on change events, against the session's real Prefect server on loopback."""

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import SEED
from pipelines.db import connect

ROOT = Path(__file__).parent.parent


def acervo(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "flows", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
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
import json, sys, time
from pathlib import Path
from prefect.client.orchestration import get_client
from flows.schedule import emit_changed

source, deadline = Path(sys.argv[1]).resolve(), time.monotonic() + 240
with get_client(sync_client=True) as client:
    def ours():
        return [d for d in client.read_deployments() if Path(d.parameters.get("source", "")).resolve() == source]
    while not (mine := ours()):
        assert time.monotonic() < deadline, "no deployment"
        time.sleep(0.2)
    deployment = mine[0]
    emit_changed(source, 1)
    while True:
        runs = [r for r in client.read_flow_runs() if r.deployment_id == deployment.id and r.state_name == "Completed"]
        if runs:
            break
        assert time.monotonic() < deadline, "no completed run"
        time.sleep(0.2)
    print(json.dumps({"name": deployment.name, "cron": [s.schedule.cron for s in deployment.schedules],
                      "completed": len(runs)}))
"""


def test_serve_runs_on_a_change_event_and_keeps_a_cron_schedule(prefect_server, tmp_path: Path):
    source, db = tmp_path / "seed.jsonl", tmp_path / "served.duckdb"
    shutil.copyfile(SEED, source)
    served = acervo("serve", "--source", str(source), "--db", str(db), "--cron", "0 3 * * *", env=prefect_server)
    try:
        done = subprocess.run([sys.executable, "-c", SERVED, str(source)], cwd=ROOT, env=prefect_server,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        assert '"cron": ["0 3 * * *"]' in done.stdout and '"name": "acervo-reindex"' in done.stdout
    finally:
        served.terminate()
        served.communicate(timeout=60)
    con = connect(db, read_only=True)
    assert con.execute("select count(*) from edges").fetchone() == (34,)
    con.close()
