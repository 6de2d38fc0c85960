"""The `acervo` command line: help, exit codes, JSON output (the stages run without the Prefect engine here)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SAMPLE, SEED, write_jsonl
from flows.cli import main
from pipelines.db import connect


@pytest.mark.parametrize("verb", ["index", "stats", "runs"])
def test_every_verb_has_help(verb, capsys):
    with pytest.raises(SystemExit) as done:
        main([verb, "--help"])
    assert done.value.code == 0
    assert "--db" in capsys.readouterr().out


def test_index_then_stats_and_runs_as_json(tmp_path: Path, capsys):
    db = tmp_path / "i.duckdb"
    assert main(["index", str(SAMPLE), "--db", str(db), "--mentions", "titles", "--no-prefect", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["stats"]["tables"]["documents"] == 300 and summary["rejected"] == []
    assert main(["stats", "--db", str(db), "--json", "--top", "3"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert len(stats["largest_communities"]) == 3 and stats["levels"][0]["level"] == 0
    assert main(["runs", "--db", str(db), "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert runs[0]["status"] == "ok" and len(runs[0]["stages"]) == 8


def test_rejected_records_exit_2_unless_allowed(tmp_path: Path, capsys):
    src = write_jsonl(tmp_path / "d.jsonl", [{"doc_id": "a", "text": "Fine."}, {"doc_id": "b", "text": ""}])
    db = tmp_path / "i.duckdb"
    assert main(["index", str(src), "--db", str(db), "--no-prefect"]) == 2
    assert "d.jsonl:2: empty_text" in capsys.readouterr().err
    assert main(["index", str(src), "--db", str(db), "--no-prefect", "--allow-rejects"]) == 0


def test_bad_invocations_exit_2_with_a_message(tmp_path: Path, capsys):
    db = tmp_path / "i.duckdb"
    assert main(["index", str(tmp_path / "missing.jsonl"), "--db", str(db), "--no-prefect"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["index", str(SEED), "--db", str(db), "--mentions", "gazetteer", "--no-prefect"]) == 2
    assert main(["index", str(SEED), "--db", str(db), "--chunk-tokens", "3", "--no-prefect"]) == 2
    assert "chunk_tokens" in capsys.readouterr().err


def test_a_config_file_sets_the_settings_and_flags_override_it(tmp_path: Path, capsys):
    config = tmp_path / "acervo.toml"
    config.write_text('mentions = "titles"\nchunk_tokens = 64\nencoding = "o200k_base"\n', encoding="utf-8")
    db = tmp_path / "i.duckdb"
    assert main(["index", str(SAMPLE), "--db", str(db), "--config", str(config), "--chunk-tokens", "128",
                 "--no-prefect", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["stats"]["tables"]["chunks"] > 300
    con = connect(db, read_only=True)
    settings = json.loads(con.execute("select settings from index_runs").fetchone()[0])
    con.close()
    assert (settings["mentions"], settings["chunk_tokens"], settings["encoding"]) == ("titles", 128, "o200k_base")


def test_a_run_without_prefect_does_not_import_it(tmp_path: Path):
    """Prefect's import alone costs more than a small rerun: `--no-prefect` (cron, one-shot) must not pay it."""
    script = ("import sys\n"
              "from flows.cli import main\n"
              "code = main(['index', sys.argv[1], '--db', sys.argv[2], '--no-prefect', '--json'])\n"
              "sys.exit(code or ('prefect' in sys.modules and 7))\n")
    done = subprocess.run([sys.executable, "-c", script, str(SEED), str(tmp_path / "i.duckdb")],
                          cwd=Path(__file__).parent.parent, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
