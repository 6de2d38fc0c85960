"""The Prefect flow, end to end, against the session's Prefect server; and the CLI's runs: flow runs with a server
configured, with Prefect's temporary server when asked, and plain stages when neither."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterFlowRunId,
    ArtifactFilterKey,
    FlowRunFilter,
    FlowRunFilterId,
)

from acervo.flows.flow_run import index
from acervo.pipelines.db import connect
from acervo.pipelines.reconfigure import STAGES
from conftest import SEED, wait_for

pytestmark = pytest.mark.slow  # Prefect flow runs against the session's Prefect server, acervo in subprocesses

ROOT = Path(__file__).parent.parent


def test_the_flow_runs_each_stage_as_a_task_and_publishes_its_summary(prefect_api, tmp_path: Path):
    db = tmp_path / "seed.duckdb"
    state = index(SEED, db, return_state=True)
    summary, run = state.result(), state.state_details.flow_run_id
    assert [s["stage"] for s in summary["stages"]] == [
        "documents", "chunks", "terms", "mentions", "edges", "communities", "boilerplate", "entity_answers",
        "community_reports", "written_reports", "written_answers", "entity_vectors",
        "chunk_vectors"]
    con = connect(db, read_only=True)
    counted = con.execute("select count(*) from run_stages where run_id = ?", [summary["run_id"]]).fetchone()
    assert counted == (len(STAGES),)
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
    done = subprocess.run([sys.executable, "-m", "acervo.flows", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
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
    assert summary["stats"]["tables"]["edges"] == 34 and ledger(db, summary["run_id"]) == len(STAGES)
    assert "temporary server" not in done.stderr and "flow run" not in done.stderr
    assert not (Path(env["PREFECT_HOME"]) / "prefect.db").exists()


def test_a_one_shot_run_with_no_server_configured_imports_no_prefect(tmp_path: Path):
    """With plain settings (no API URL, no profile naming one), deciding that a run is no flow run reads them
    without Prefect, whose import alone costs seconds: no Prefect module is imported at all."""
    script = ("import sys\n"
              "from acervo.flows.cli import main\n"
              "code = main(['index', sys.argv[1], '--db', sys.argv[2], '--json'])\n"
              "sys.exit(code or [m for m in sys.modules if m.split('.')[0] == 'prefect'][:3] or 0)\n")
    done = subprocess.run([sys.executable, "-c", script, str(SEED), str(tmp_path / "i.duckdb")], cwd=ROOT,
                          env=without_server(tmp_path), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


PROFILES = {  # profiles.toml text -> whether its active profile names an API server
    None: False,  # no file: Prefect's default profile
    'active = "mine"\n[profiles.mine]\nPREFECT_API_URL = "http://127.0.0.1:9/api"\n': True,
    'active = "mine"\n[profiles.mine]\nPREFECT_LOGGING_LEVEL = "INFO"\n': False,
    'active = "gone"\n[profiles.mine]\nPREFECT_API_URL = "http://127.0.0.1:9/api"\n': False,
    'active = "mine"\n[profiles.mine]\nPREFECT_API_URL = " "\n': True,  # Prefect strips no value
    'active = "mine"\n[profiles.mine]\nPREFECT_API_URL = 1\n': None,  # not a string: Prefect decides (and fails)
    'active = "mine"\n[profiles.mine]\nPREFECT_API = \'{"url": "http://127.0.0.1:9/api"}\'\n': None,  # JSON
    'active = "mine"\n[profiles.mine\n': None,  # not TOML: Prefect decides
}


def test_whether_settings_name_a_server_is_read_as_prefect_reads_it(tmp_path: Path):
    """flows.api_url_named answers as Prefect's own settings do, for each profiles file and API variable, and
    leaves to Prefect (None) what it does not read itself; each case in a process of its own."""
    script = ("import json, warnings\n"
              "warnings.simplefilter('ignore')\n"
              "from acervo.flows import api_url_named\n"
              "fast = api_url_named()\n"
              "try:\n"
              "    from prefect.settings import get_current_settings\n"
              "    prefect = bool(get_current_settings().api.url)\n"
              "except Exception as error:  # an unreadable profiles file: Prefect's own error\n"
              "    prefect = type(error).__name__\n"
              "print(json.dumps([fast, prefect]))\n")
    cases = [(text, {}, want) for text, want in PROFILES.items()]
    cases += [(None, {"PREFECT_API_URL": "http://127.0.0.1:9/api"}, True), (None, {"PREFECT_API_URL": ""}, False),
              (None, {"prefect_api_url": "http://127.0.0.1:9/api"}, None),  # Prefect reads names in any case
              (None, {"prefect_api_url": "", "PREFECT_API_URL": "http://127.0.0.1:9/api"}, None),  # which wins?
              (None, {"PREFECT_API": '{"url": "http://127.0.0.1:9/api"}'}, None)]
    for i, (text, variables, want) in enumerate(cases):
        env = without_server(tmp_path / str(i)) | variables
        Path(env["PREFECT_HOME"]).mkdir(parents=True)
        if text is not None:
            (Path(env["PREFECT_HOME"]) / "profiles.toml").write_text(text, encoding="utf-8")
        done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        fast, prefect = json.loads(done.stdout.splitlines()[-1])
        assert fast == want and (fast is None or fast == prefect), (text, variables, fast, prefect)


def test_settings_prefect_reads_from_the_working_folder_are_left_to_prefect(tmp_path: Path):
    """A prefect.toml, PREFECT_ variables in .env or a [tool.prefect] table where acervo runs may name a server:
    then Prefect reads the settings itself."""
    env = without_server(tmp_path)
    for name, text in (("prefect.toml", "[api]\nurl = 'http://127.0.0.1:9/api'\n"),
                       (".env", "PREFECT_API_URL=http://127.0.0.1:9/api\n"),
                       ("pyproject.toml", "[tool.prefect.api]\nurl = 'http://127.0.0.1:9/api'\n")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / name).write_text(text, encoding="utf-8")
        done = subprocess.run([sys.executable, "-c", "from acervo.flows import api_url_named; print(api_url_named())"],
                              cwd=folder, env=env | {"PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                              timeout=60)
        assert done.stdout.strip() == "None", (name, done.stderr[-2000:])


def test_the_cli_runs_the_flow_with_no_server_configured_when_asked(tmp_path: Path):
    env, db = without_server(tmp_path), tmp_path / "seed.duckdb"
    done = acervo("index", str(SEED), "--db", str(db), "--json", "--prefect", env=env)
    summary = json.loads(done.stdout)
    assert summary["stats"]["tables"]["edges"] == 34 and ledger(db, summary["run_id"]) == len(STAGES)
    assert "Starting temporary server" in done.stderr
    assert "Finished in state Completed()" in done.stderr


def test_a_one_shot_run_with_a_server_configured_is_a_flow_run_with_its_artifact(prefect_api, prefect_server,
                                                                                  tmp_path: Path):
    db = tmp_path / "seed.duckdb"
    summary = json.loads(acervo("index", str(SEED), "--db", str(db), "--json", env=prefect_server).stdout)
    assert flow_run_of(summary["run_id"]) == ("Completed", len(STAGES))
    assert ledger(db, summary["run_id"]) == len(STAGES)


def test_a_watch_run_is_a_flow_run_with_its_artifact(prefect_api, prefect_server, tmp_path: Path):
    """A run `acervo watch` triggers is a Prefect flow run by default."""
    docs, db = tmp_path / "docs", tmp_path / "docs.duckdb"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nAlpha works with Beta.", encoding="utf-8")
    done = acervo("watch", "--source", str(docs), "--db", str(db), "--max-runs", "1", env=prefect_server)
    run_id = re.search(r"acervo watch: run (\S+) published", done.stderr).group(1)
    assert flow_run_of(run_id) == ("Completed", len(STAGES))
    assert ledger(db, run_id) == len(STAGES)
