"""The Prefect flow, end to end, against the session's Prefect server; and the CLI with Prefect's own temporary
server."""

import json
import os
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
from flows.index import index
from pipelines.db import connect

ROOT = Path(__file__).parent.parent


def test_the_flow_runs_each_stage_as_a_task_and_publishes_its_summary(prefect_api, tmp_path: Path):
    db = tmp_path / "seed.duckdb"
    state = index(SEED, db, return_state=True)
    summary, run = state.result(), state.state_details.flow_run_id
    assert [s["stage"] for s in summary["stages"]] == [
        "documents", "chunks", "mentions", "edges", "communities", "entity_answers", "community_reports",
        "entity_vectors"]
    con = connect(db, read_only=True)
    assert con.execute("select count(*) from run_stages where run_id = ?", [summary["run_id"]]).fetchone() == (8,)
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


def test_the_cli_runs_the_flow_with_no_server_configured(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env["PREFECT_HOME"] = str(tmp_path / "prefect-home")
    db = tmp_path / "seed.duckdb"
    done = subprocess.run([sys.executable, "-m", "flows", "index", str(SEED), "--db", str(db), "--json"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["stats"]["tables"]["edges"] == 34
    assert "Starting temporary server" in done.stderr
