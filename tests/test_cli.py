"""The `acervo` command line: help, exit codes, JSON output (the stages run without the Prefect engine here)."""

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from acervo.flows.cli import main
from acervo.pipelines.db import connect
from acervo.pipelines.reconfigure import STAGES, built_with
from conftest import SAMPLE, SEED, write_jsonl


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
    assert runs[0]["status"] == "ok" and len(runs[0]["stages"]) == len(STAGES)


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
    assert main(["index", str(SEED), "--db", str(db), "--no-prefect"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f'next: acervo query "QUESTION" --db {db}  (or acervo serve ' \
                                                      f'--db {db})'
    assert main(["query", "--db", str(db)]) == 2
    assert capsys.readouterr().err == "acervo: give a QUESTION or --questions FILE\n"
    assert main(["query", "What?", "--questions", str(SEED), "--db", str(db)]) == 2
    assert capsys.readouterr().err == "acervo: give a QUESTION or --questions FILE, not both\n"
    for option in ("--hops", "--cap"):
        with pytest.raises(SystemExit) as refused:
            main(["query", "What?", "--db", str(db), option, "-1"])
        said = capsys.readouterr().err
        assert refused.value.code == 2 and f"Invalid value for {option!r}: Input should be greater" in said


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
              "from acervo.flows.cli import main\n"
              "code = main(['index', sys.argv[1], '--db', sys.argv[2], '--no-prefect', '--json'])\n"
              "sys.exit(code or ('prefect' in sys.modules and 7))\n")
    done = subprocess.run([sys.executable, "-c", script, str(SEED), str(tmp_path / "i.duckdb")],
                          cwd=Path(__file__).parent.parent, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("acervo: "), err
    assert "Exception" not in err and "Error:" not in err and "http" not in err, err
    return err


def test_a_missing_or_foreign_db_is_bad_input_in_one_line(tmp_path: Path, capsys):
    questions = write_jsonl(tmp_path / "q.jsonl", [{"question": "Who?", "supporting_doc_ids": []}])
    junk = tmp_path / "notes.txt"
    junk.write_text("not a database\n", encoding="utf-8")
    foreign = tmp_path / "other.duckdb"
    duckdb.connect(str(foreign)).close()
    for db, says in [(tmp_path / "missing.duckdb", "no such index file"), (junk, "not an acervo index"),
                     (foreign, "not an acervo index")]:
        for verb in (["query", "Who?"], ["stats"], ["runs"], ["eval", str(questions)]):
            assert main([*verb, "--db", str(db)]) == 2, verb
            assert says in one_line_error(capsys), verb
    assert not (tmp_path / "missing.duckdb").exists()


def test_an_invalid_setting_names_it_and_what_it_allows(tmp_path: Path, capsys):
    db = tmp_path / "i.duckdb"
    assert main(["index", str(SEED), "--db", str(db), "--chunk-tokens", "-5", "--no-prefect"]) == 2
    assert "chunk_tokens = -5: input should be greater than or equal to 16" in one_line_error(capsys)
    config = tmp_path / "acervo.toml"
    for text, says in [('encoding = "latin1"\n', "encoding = 'latin1': input should be 'cl100k_base' or 'o200k_base'"),
                       ("colour = 1\n",
                        "unknown setting 'colour' (settings: encoding, chunk_tokens, stemmer, mentions"),
                       ("chunk_tokens = \n", f"{config}: invalid TOML")]:
        config.write_text(text, encoding="utf-8")
        assert main(["index", str(SEED), "--db", str(db), "--config", str(config), "--no-prefect"]) == 2
        assert says in one_line_error(capsys)
    assert not db.exists()


@pytest.mark.slow  # seconds of indexing
def test_deleting_an_unknown_id_says_so(tmp_path: Path, capsys):
    db = tmp_path / "i.duckdb"
    assert main(["index", str(SEED), "--db", str(db), "--no-prefect"]) == 0
    known = connect(db, read_only=True)
    doc_id, n_docs = known.execute("select min(doc_id), count(*) from documents").fetchone()
    known.close()
    before = db.read_bytes()
    capsys.readouterr()
    assert main(["delete", "nope", "also-nope", "--db", str(db), "--no-prefect"]) == 2
    assert "not in the index, nothing to delete: also-nope, nope" in one_line_error(capsys)
    assert db.read_bytes() == before
    assert main(["delete", doc_id, "nope", "--db", str(db), "--no-prefect", "--json"]) == 0
    captured = capsys.readouterr()
    assert "not in the index, nothing to delete: nope\n" in captured.err
    assert json.loads(captured.out)["stats"]["tables"]["documents"] == n_docs - 1


def test_a_budget_below_the_instruction_or_above_a_context_s_most_is_refused(tmp_path: Path, capsys):
    from acervo.pipelines import tokens
    from acervo.pipelines.query.context import INSTRUCTIONS, MAX_BUDGET, Index

    db = tmp_path / "i.duckdb"
    assert main(["index", str(SEED), "--db", str(db), "--no-prefect"]) == 0
    least = tokens.count(INSTRUCTIONS, "cl100k_base")
    capsys.readouterr()
    assert main(["query", "Who founded Acme?", "--db", str(db), "--budget", str(least - 1)]) == 2
    assert f"give at least {least} (--budget)" in one_line_error(capsys)
    with Index(db) as index:
        assert index.min_budget == least
        with pytest.raises(ValueError, match=f"at least {least}"):
            index.query("Who founded Acme?", budget=least - 1)
        assert index.query("Who founded Acme?", budget=least).budget["spent"] <= least
        with pytest.raises(ValueError, match=f"give at most {MAX_BUDGET}"):
            index.query("Who founded Acme?", budget=MAX_BUDGET + 1)
    assert main(["query", "Who founded Acme?", "--db", str(db), "--budget", "1000000"]) == 2
    assert f"give at most {MAX_BUDGET} (--budget)" in one_line_error(capsys)


def test_a_setting_without_a_hand_written_flag_reaches_the_index(tmp_path: Path, capsys):
    db = tmp_path / "i.duckdb"
    assert main(["index", str(SEED), "--db", str(db), "--seed", "7", "--max-levels", "3", "--no-prefect",
                 "--json"]) == 0
    con = connect(db, read_only=True)
    settings = json.loads(con.execute("select settings from index_runs").fetchone()[0])
    con.close()
    assert (settings["seed"], settings["max_levels"]) == (7, 3)


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_new_index_without_mentions_gets_the_mode_its_source_calls_for_and_says_why(tmp_path: Path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in {"a.md": "The Acme Widget ships with Acme Cloud.", "b.md": "Acme Cloud runs the Acme Widget.",
                       "c.txt": "Nothing but Acme Cloud here, and the Acme Widget."}.items():
        (docs / name).write_text(text, encoding="utf-8")
    untitled = write_jsonl(tmp_path / "u.jsonl", [{"doc_id": "x", "text": "Acme Cloud."}])
    for source, mode in ((docs, "nlp"), (SAMPLE, "titles"), (SEED, "given"), (untitled, "nlp")):
        db = tmp_path / f"{source.stem}.duckdb"
        assert main(["index", str(source), "--db", str(db), "--no-prefect", "--json"]) == 0
        captured = capsys.readouterr()
        assert json.loads(captured.out)["mentions_chosen"]["mode"] == mode
        assert f"acervo: mentions {mode}: " in captured.err
        assert built_with(db).mentions == mode
    assert main(["index", str(docs), "--db", str(tmp_path / "docs.duckdb"), "--no-prefect", "--json"]) == 0
    again = capsys.readouterr()
    assert "mentions_chosen" not in json.loads(again.out) and "acervo: mentions" not in again.err  # the index's own
    con = connect(tmp_path / "docs.duckdb", read_only=True)
    try:
        assert con.execute("select count(*) from entities").fetchone()[0] > 0  # a folder gets a graph
    finally:
        con.close()
