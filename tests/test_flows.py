"""The Prefect flow, end to end, against the session's Prefect server; and the CLI's runs: flow runs with a server
configured, with Prefect's temporary server when asked, and plain stages when neither."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterFlowRunId,
    ArtifactFilterKey,
    FlowRunFilter,
    FlowRunFilterId,
)

from conftest import SEED, wait_for
from flows.flow_run import index
from pipelines.db import connect

ROOT = Path(__file__).parent.parent


def test_the_flow_runs_each_stage_as_a_task_and_publishes_its_summary(prefect_api, tmp_path: Path):
    db = tmp_path / "seed.duckdb"
    state = index(SEED, db, return_state=True)
    summary, run = state.result(), state.state_details.flow_run_id
    assert [s["stage"] for s in summary["stages"]] == [
        "documents", "chunks", "terms", "mentions", "edges", "communities", "entity_answers",
        "community_reports", "written_reports", "written_answers", "entity_vectors",
        "chunk_vectors"]
    con = connect(db, read_only=True)
    assert con.execute("select count(*) from run_stages where run_id = ?", [summary["run_id"]]).fetchone() == (12,)
    con.close()
    stages = {"documents", "chunks", "edges", "communities", "entity_answers", "community_reports"}
    with get_client(sync_client=True) as client:
        key = ArtifactFilter(key=ArtifactFilterKey(any_=["acervo-index-run"]), flow_run_id=ArtifactFilterFlowRunId(
            any_=[run]))
        artifacts = client.read_artifacts(artifact_filter=key)

        def tasks() -> set[str]:
            runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run])))
            return {t.name.rsplit("-", 1)[0] for t in runs}

        wait_for(lambda: stages <= tasks(), timeout=60, what="the server to record the flow's task runs")
    assert artifacts and artifacts[0].type == "table"


def without_server(tmp_path: Path) -> dict[str, str]:
    """The environment of a process with no Prefect server configured and a Prefect home of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    return env | {"PREFECT_HOME": str(tmp_path / "prefect-home")}


def acervo(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """`acervo ARGS` run to its end; fails the test on a non-zero exit."""
    done = subprocess.run([sys.executable, "-m", "flows", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def flow_run_of(run_id: str) -> tuple[str, int]:
    """The state of the Prefect flow run whose table artifact describes acervo's run `run_id`, and its rows."""
    with get_client(sync_client=True) as client:
        artifacts = [a for a in client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(
            any_=["acervo-index-run"]))) if (a.description or "").startswith(f"acervo index run {run_id} ")]
        assert len(artifacts) == 1 and artifacts[0].type == "table", artifacts
        run = client.read_flow_run(artifacts[0].flow_run_id)
    return run.state_name, len(json.loads(artifacts[0].data))


def ledger(db: Path, run_id: str) -> int:
    """How many stages the index's ledger holds for `run_id`."""
    con = connect(db, read_only=True)
    try:
        return con.execute("select count(*) from run_stages where run_id = ?", [run_id]).fetchone()[0]
    finally:
        con.close()


def test_a_one_shot_run_with_no_server_configured_calls_the_stages_without_prefect(tmp_path: Path):
    """Without a Prefect API a one-shot run is no flow run: no temporary server, nothing in Prefect's home."""
    env, db = without_server(tmp_path), tmp_path / "seed.duckdb"
    done = acervo("index", str(SEED), "--db", str(db), "--json", env=env)
    summary = json.loads(done.stdout)
    assert summary["stats"]["tables"]["edges"] == 34 and ledger(db, summary["run_id"]) == 12
    assert "temporary server" not in done.stderr and "flow run" not in done.stderr
    assert not (Path(env["PREFECT_HOME"]) / "prefect.db").exists()


def test_a_one_shot_run_with_no_server_configured_reads_prefects_settings_only(tmp_path: Path):
    """Deciding that a run is no flow run reads Prefect's settings; its engine and server are never imported."""
    script = ("import sys\n"
              "from flows.cli import main\n"
              "code = main(['index', sys.argv[1], '--db', sys.argv[2], '--json'])\n"
              "engine = [m for m in ('prefect.flows', 'prefect.server.api.server') if m in sys.modules]\n"
              "sys.exit(code or ('prefect.settings' not in sys.modules and 'no settings read') or engine or 0)\n")
    done = subprocess.run([sys.executable, "-c", script, str(SEED), str(tmp_path / "i.duckdb")], cwd=ROOT,
                          env=without_server(tmp_path), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_cli_runs_the_flow_with_no_server_configured_when_asked(tmp_path: Path):
    env, db = without_server(tmp_path), tmp_path / "seed.duckdb"
    done = acervo("index", str(SEED), "--db", str(db), "--json", "--prefect", env=env)
    summary = json.loads(done.stdout)
    assert summary["stats"]["tables"]["edges"] == 34 and ledger(db, summary["run_id"]) == 12
    assert "Starting temporary server" in done.stderr
    assert "Finished in state Completed()" in done.stderr


def test_a_one_shot_run_with_a_server_configured_is_a_flow_run_with_its_artifact(prefect_api, prefect_server,
                                                                                  tmp_path: Path):
    db = tmp_path / "seed.duckdb"
    summary = json.loads(acervo("index", str(SEED), "--db", str(db), "--json", env=prefect_server).stdout)
    assert flow_run_of(summary["run_id"]) == ("Completed", 12)
    assert ledger(db, summary["run_id"]) == 12


def test_a_watch_run_is_a_flow_run_with_its_artifact(prefect_api, prefect_server, tmp_path: Path):
    """A run `acervo watch` triggers is a Prefect flow run by default."""
    docs, db = tmp_path / "docs", tmp_path / "docs.duckdb"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nAlpha works with Beta.", encoding="utf-8")
    done = acervo("watch", "--source", str(docs), "--db", str(db), "--max-runs", "1", env=prefect_server)
    run_id = re.search(r"acervo watch: run (\S+) published", done.stderr).group(1)
    assert flow_run_of(run_id) == ("Completed", 12)
    assert ledger(db, run_id) == 12
