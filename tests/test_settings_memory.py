"""An index remembers its settings: reruns, deletes and watches without settings flags use the index's own,
and a run that would change them says what changes and what it recomputes, and needs --reconfigure."""

import json
import shutil
from hashlib import sha256
from pathlib import Path

import pytest

from acervo.flows.cli import main
from acervo.pipelines.db import connect
from acervo.pipelines.reconfigure import STAGES, recomputes
from acervo.pipelines.runs import history
from conftest import SAMPLE


def index(db: Path, *flags: str) -> int:
    return main(["index", str(SAMPLE), "--db", str(db), "--no-prefect", *flags])


def table(db: Path, name: str) -> int:
    con = connect(db, read_only=True)
    try:
        return con.execute(f"select count(*) from {name}").fetchone()[0]
    finally:
        con.close()


def ledger(db: Path) -> int:
    """How many runs the index's ledger lists, those that changed nothing and wait beside the file included."""
    con = connect(db, read_only=True)
    try:
        return len(history(con, limit=1000))
    finally:
        con.close()


def last_settings(db: Path) -> dict:
    con = connect(db, read_only=True)
    try:
        return json.loads(con.execute("select settings from index_runs order by started_at desc limit 1").fetchone()[0])
    finally:
        con.close()


def digest(db: Path) -> str:
    return sha256(db.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """An index of the 2Wiki sample built with --mentions titles (copied, never changed)."""
    db = tmp_path_factory.mktemp("built") / "wiki.duckdb"
    assert index(db, "--mentions", "titles") == 0
    assert table(db, "entities") > 0
    return db


@pytest.fixture
def titles(built: Path, tmp_path: Path) -> Path:
    """A copy of `built` of the test's own."""
    db = tmp_path / "wiki.duckdb"
    shutil.copyfile(built, db)
    return db


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_rerun_and_a_delete_without_flags_keep_the_index_settings(titles: Path, capsys):
    entities, edges = table(titles, "entities"), table(titles, "edges")
    assert index(titles) == 0
    assert (table(titles, "entities"), table(titles, "edges")) == (entities, edges)
    assert main(["delete", "2w00005", "--db", str(titles), "--no-prefect"]) == 0
    assert 0 < table(titles, "entities") <= entities and table(titles, "communities") > 0
    assert last_settings(titles)["mentions"] == "titles"
    assert "setting" not in capsys.readouterr().err


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_changed_setting_is_refused_without_reconfigure_and_changes_nothing(titles: Path, capsys):
    before, runs = digest(titles), table(titles, "index_runs")
    capsys.readouterr()
    assert index(titles, "--chunk-tokens", "128") == 2
    err = capsys.readouterr().err
    assert "chunk_tokens: 400 -> 128 (recomputes chunks, terms, mentions, edges, communities, boilerplate, " \
           "entity_answers, community_reports, written_reports, written_answers, entity_vectors, chunk_vectors)" in err
    assert "--reconfigure" in err
    assert digest(titles) == before and table(titles, "index_runs") == runs
    assert main(["delete", "2w00005", "--db", str(titles), "--mentions", "given", "--no-prefect"]) == 2
    assert "mentions: 'titles' -> 'given'" in capsys.readouterr().err and digest(titles) == before

    chunks = table(titles, "chunks")
    assert index(titles, "--chunk-tokens", "128", "--reconfigure") == 0
    assert "setting chunk_tokens: 400 -> 128" in capsys.readouterr().err
    assert table(titles, "chunks") > chunks and table(titles, "entities") > 0
    assert (last_settings(titles)["chunk_tokens"], last_settings(titles)["mentions"]) == (128, "titles")
    assert index(titles) == 0  # the new settings are now the index's own
    assert last_settings(titles)["chunk_tokens"] == 128


@pytest.mark.slow  # seconds of indexing
def test_the_same_settings_given_again_need_no_reconfigure(titles: Path):
    assert index(titles, "--mentions", "titles", "--chunk-tokens", "400") == 0


def test_a_config_file_that_differs_is_refused_too(titles: Path, tmp_path: Path, capsys):
    config = tmp_path / "acervo.toml"
    config.write_text('mentions = "titles"\nreport_max_lines = 5\n', encoding="utf-8")
    before = digest(titles)
    assert index(titles, "--config", str(config)) == 2
    assert "report_max_lines: 12 -> 5 (recomputes community_reports, written_reports)" in capsys.readouterr().err
    assert digest(titles) == before
    assert index(titles, "--config", str(config), "--reconfigure") == 0
    assert last_settings(titles)["report_max_lines"] == 5


@pytest.mark.parametrize("setting", ['report_max_lines = 5', 'answer_max_chars = 100', 'seed = 7',
                                     'edge_min_weight = 2', 'edge_window = "sentence"'])
def test_a_change_recomputes_nothing_outside_the_stages_it_names(titles: Path, tmp_path: Path, setting: str):
    config = tmp_path / "acervo.toml"
    config.write_text(setting + "\n", encoding="utf-8")
    assert index(titles, "--config", str(config), "--reconfigure") == 0
    named = recomputes([setting.split(" = ")[0]])
    con = connect(titles, read_only=True)
    work = dict(con.execute("select stage, rows_recomputed + rows_removed from run_stages where run_id = "
                            "(select run_id from index_runs order by started_at desc limit 1)").fetchall())
    con.close()
    assert any(work[s] for s in named)
    assert {s: work[s] for s in STAGES if s not in named and s != "documents"} == \
           {s: 0 for s in STAGES if s not in named and s != "documents"}


@pytest.mark.slow  # seconds of indexing or waiting
def test_fresh_reuses_the_index_settings_and_takes_the_flags_given(titles: Path, capsys):
    entities = table(titles, "entities")
    assert index(titles, "--fresh") == 0
    assert table(titles, "entities") == entities and last_settings(titles)["mentions"] == "titles"
    capsys.readouterr()
    assert index(titles, "--fresh", "--chunk-tokens", "128") == 0
    assert "setting chunk_tokens: 400 -> 128" in capsys.readouterr().err
    assert (last_settings(titles)["chunk_tokens"], last_settings(titles)["mentions"]) == (128, "titles")


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_new_index_uses_the_defaults_and_the_flags(tmp_path: Path):
    db = tmp_path / "new.duckdb"
    connect(db).close()  # an index without runs is new
    assert index(db, "--chunk-tokens", "128") == 0
    assert (last_settings(db)["chunk_tokens"], last_settings(db)["mentions"]) == (128, "titles")  # chosen: titled


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_gazetteer_path_is_the_same_file_however_spelt(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("names.txt").write_text("Wrong Turn 3\nDeclan O'Brien\n", encoding="utf-8")
    Path("other.txt").write_text("Wrong Turn 3\n", encoding="utf-8")
    db = tmp_path / "g.duckdb"
    assert index(db, "--mentions", "gazetteer", "--gazetteer", "names.txt") == 0
    before = ledger(db)
    assert index(db, "--gazetteer", "./names.txt") == 0
    assert index(db, "--mentions", "gazetteer", "--gazetteer", str(tmp_path / "names.txt")) == 0
    assert ledger(db) == before + 2 and last_settings(db)["gazetteer"] == "names.txt"
    capsys.readouterr()
    assert index(db, "--gazetteer", "other.txt") == 2
    assert "gazetteer: 'names.txt' -> 'other.txt'" in capsys.readouterr().err


def test_runs_and_stats_show_the_settings(titles: Path, capsys):
    capsys.readouterr()
    assert main(["runs", "--db", str(titles), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["settings"]["mentions"] == "titles"
    assert main(["runs", "--db", str(titles)]) == 0
    assert "settings: mentions=titles (others default)" in capsys.readouterr().out
    assert main(["stats", "--db", str(titles), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert (stats["settings"]["mentions"], stats["settings"]["chunk_tokens"]) == ("titles", 400)
    assert main(["stats", "--db", str(titles)]) == 0
    assert "settings: mentions=titles (others default)" in capsys.readouterr().out


def test_watch_keeps_the_index_settings_and_refuses_a_change(titles: Path, capsys):
    watch = ["watch", "--source", str(SAMPLE), "--db", str(titles), "--max-runs", "1", "--interval", "0.1",
             "--debounce", "0.1", "--no-prefect"]
    before, entities = digest(titles), table(titles, "entities")
    assert main([*watch, "--chunk-tokens", "128"]) == 2
    assert "chunk_tokens: 400 -> 128" in capsys.readouterr().err and digest(titles) == before
    assert main(watch) == 0
    assert "published" in capsys.readouterr().err
    assert table(titles, "entities") == entities and last_settings(titles)["mentions"] == "titles"


def test_what_each_setting_recomputes():
    assert recomputes(["encoding"]) == list(STAGES[1:])
    assert recomputes(["embed_model"]) == ["entity_vectors", "chunk_vectors"]
    assert recomputes(["max_levels", "report_evidence"]) == ["communities", "community_reports", "written_reports"]
