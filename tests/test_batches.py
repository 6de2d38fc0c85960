"""A run's memory is set by settings, not the corpus: stages that work a batch at a time (documents, chunks, terms'
word lists, mentions' texts, answers' inputs and answers, reports) write the same tables whatever the batch size,
and DuckDB's own memory is bounded by ACERVO_MEMORY_LIMIT (spilling to disk past it)."""

import json
import re
from pathlib import Path

import duckdb
import pytest

from acervo.flows.cli import main
from acervo.flows.index import build
from acervo.pipelines import answers, chunks, documents, reports, stage, terms
from acervo.pipelines.db import MEMORY_LIMIT, MEMORY_VARIABLE, connect, sql
from acervo.pipelines.mentions import shared
from acervo.pipelines.run import Run
from acervo.pipelines.settings import Settings
from conftest import BOOKKEEPING, EQUAL, SAMPLE, assert_like_fresh, dump, write_jsonl

REPORTS = {"community_reports": "community_id", "report_lines": "community_id, ord"}
TITLES = Settings(mentions="titles")


def tables(source: Path, settings: Settings) -> dict[str, list[tuple]]:
    con = connect()
    try:
        build(Run.alone(con), source, settings)
        return dump(con, EQUAL | BOOKKEEPING | REPORTS)
    finally:
        con.close()


@pytest.fixture
def tiny_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of two rows, so that every batched stage runs many batches on the sample."""
    for module in (documents, chunks, answers, reports):
        monkeypatch.setattr(module, "BATCH", 2)
    monkeypatch.setattr(terms, "FETCH_ROWS", 2)
    monkeypatch.setattr(shared, "PAGE", 2)
    monkeypatch.setattr(stage, "RANGE", 2)


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_build_in_batches_of_two_writes_the_tables_of_one_batch(tiny_batches, monkeypatch: pytest.MonkeyPatch):
    small = tables(SAMPLE, TITLES)
    monkeypatch.undo()
    whole = tables(SAMPLE, TITLES)
    assert small == whole
    assert len(small["chunks"]) > 2 and len(small["entity_answers"]) > 2 and len(small["community_reports"]) > 2


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_rerun_in_batches_of_two_equals_a_fresh_build(tiny_batches, tmp_path: Path):
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    source = write_jsonl(tmp_path / "corpus.jsonl", records)
    con = connect()
    build(Run.alone(con), source, TITLES)
    records[0] = {**records[0], "text": records[0]["text"] + " An added sentence."}
    write_jsonl(source, records[1:] + [records[0]])
    build(Run.alone(con), source, TITLES)
    assert_like_fresh(con, source, TITLES)
    con.close()


@pytest.mark.slow  # seconds of indexing
def test_a_run_holds_duckdb_to_the_memory_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    con = connect(tmp_path / "default.duckdb")
    default = con.execute(sql("db.memory_limit")).fetchone()[0]
    con.close()
    monkeypatch.setenv(MEMORY_VARIABLE, "300MB")
    db = tmp_path / "index.duckdb"
    con = connect(db)
    assert con.execute(sql("db.memory_limit")).fetchone()[0] == "286.1 MiB" != default  # 300 MB in MiB
    con.close()
    plain = duckdb.connect()
    plain.execute(sql("db.set_memory_limit"), {"limit": MEMORY_LIMIT})
    assert default == plain.execute(sql("db.memory_limit")).fetchone()[0] != duckdb.connect().execute(
        sql("db.memory_limit")).fetchone()[0]  # the limit unset, not DuckDB's own default
    assert main(["index", str(SAMPLE), "--db", str(db), "--no-prefect", "--mentions", "titles"]) == 0


@pytest.mark.parametrize(("limit", "code", "said"), [
    ("lots", 2, rf"{MEMORY_VARIABLE}='lots'"),  # a value DuckDB cannot read
    ("16MB", 1, r"^acervo: OutOfMemory: stage \w+ needed more memory than DuckDB's limit for the run, 16MB, .*"
                r"--memory-limit"),  # a stage that needs more: after the progress of the stages that ran
])
def test_a_memory_limit_unreadable_or_too_small_is_said_in_one_line_and_the_index_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, limit: str, code: int, said: str):
    db = tmp_path / "index.duckdb"
    assert main(["index", str(SAMPLE), "--db", str(db), "--no-prefect", "--mentions", "given"]) == 0
    kept = db.read_bytes()
    monkeypatch.setenv(MEMORY_VARIABLE, "")  # what --memory-limit sets, restored after the test
    assert main(["index", str(SAMPLE), "--db", str(db), "--no-prefect", "--mentions", "titles",
                 "--reconfigure", "--memory-limit", limit]) == code
    err = capsys.readouterr().err
    assert re.search(said, err.splitlines()[-1])
    assert "SET memory_limit" not in err  # DuckDB's own advice names settings a user of acervo cannot reach
    assert db.read_bytes() == kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.duckdb", "index.duckdb.lock"]
