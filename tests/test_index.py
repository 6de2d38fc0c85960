"""The whole pipeline: determinism, references, odd names, the published file, and each stage's own skip."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from acervo.flows.index import SMALL_CHANGE, build, publish
from acervo.pipelines import (
    answers,
    boilerplate,
    chunk_vectors,
    chunks,
    edges,
    reconfigure,
    reports,
    terms,
    vectors,
    written_answers,
    written_reports,
)
from acervo.pipelines.db import SQL_DIR, allocator_decay, connect, sql
from acervo.pipelines.run import Run
from acervo.pipelines.runs import StageResult
from acervo.pipelines.settings import Settings
from conftest import SAMPLE, SEED, assert_like_fresh, index_of, write_jsonl

TABLES = {
    "documents": "doc_id", "document_entities": "doc_id, label", "rejected": "source, line, reason, detail",
    "chunks": "chunk_id", "entities": "entity_id", "entity_aliases": "entity_id, alias",
    "mentions": "entity_id, chunk_id",
    "edges": "src, dst", "communities": "community_id", "community_members": "community_id, entity_id",
    "entity_answers": "entity_id", "community_reports": "community_id", "report_lines": "community_id, ord",
    "chunk_boilerplate": "chunk_id",
}


def dump(con) -> dict[str, list[tuple]]:
    return {t: con.execute(f"select * from {t} order by {order}").fetchall() for t, order in TABLES.items()}


def files(folder: Path) -> list[str]:
    """The files in `folder`, less the writer's lock file."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(".lock"))


def test_the_seed_corpus_gives_the_paper_s_counts(seed):
    counts = {t: seed.execute(f"select count(*) from {t}").fetchone()[0]
              for t in ("chunks", "entities", "edges", "communities")}
    assert counts == {"chunks": 11, "entities": 12, "edges": 34, "communities": 3}


@pytest.mark.slow  # seconds of indexing or waiting
def test_the_same_input_gives_identical_tables():
    assert dump(index_of(SAMPLE, mentions="titles")) == dump(index_of(SAMPLE, mentions="titles"))
    assert dump(index_of(SEED)) == dump(index_of(SEED))


def test_odd_entity_names_survive_every_table(tmp_path: Path):
    odd = ["A|B", "B", 'Say "hi"', "O'Brien", "🚀", "שלום", "x,y;z", "\\back\\slash"]
    path = write_jsonl(tmp_path / "d.jsonl", [
        {"doc_id": "1", "text": "First text.", "entities": odd[:4]},
        {"doc_id": "2", "text": "Second text.", "entities": odd[3:]},
        {"doc_id": "3", "text": "Third text.", "entities": ["A|B", "🚀"]}])
    con = index_of(path)
    labels = {label for (label,) in con.execute("select label from entities").fetchall()}
    assert labels == set(odd)
    members = {e for (e,) in con.execute("select entity_id from community_members").fetchall()}
    assert len(members) == len(odd)
    assert con.execute("select count(*) from entity_answers").fetchone()[0] == len(odd)
    assert ("a|b", "b") in con.execute("select src, dst from edges").fetchall()


@pytest.mark.slow  # seconds of indexing or waiting
def test_publish_replaces_the_index_atomically_and_leaves_no_staging_file(tmp_path: Path):
    db = tmp_path / "index.duckdb"
    publish(SEED, db, Settings())
    first = connect(db, read_only=True)
    assert first.execute("select count(*) from chunks").fetchone() == (11,)
    first.close()
    replaced = db.stat().st_ino
    publish(SAMPLE, db, Settings(mentions="titles"))
    assert files(tmp_path) == ["index.duckdb", "index.duckdb.spare"]  # the file replaced, for the next run
    assert (tmp_path / "index.duckdb.spare").stat().st_ino == replaced != db.stat().st_ino
    con = connect(db, read_only=True)
    assert con.execute("select count(*) from documents").fetchone() == (300,)
    assert con.execute("select status from index_runs").fetchall() == [("ok",), ("ok",)]
    stages = con.execute("select stage from run_stages where run_id = (select max(run_id) from index_runs) "
                         "order by ord").fetchall()
    assert [s for (s,) in stages] == ["documents", "chunks", "terms", "mentions", "edges", "communities",
                                      "boilerplate", "entity_answers", "community_reports", "written_reports",
                                      "written_answers", "entity_vectors", "chunk_vectors"]
    con.close()


def test_a_failed_run_keeps_the_previous_index(tmp_path: Path):
    db = tmp_path / "index.duckdb"
    publish(SEED, db, Settings())
    try:
        publish(SEED, db, Settings(mentions="gazetteer"))
    except ValueError as err:
        assert "gazetteer" in str(err)
    con = connect(db, read_only=True)
    assert con.execute("select count(*) from entities").fetchone() == (12,)
    con.close()
    assert files(tmp_path) == ["index.duckdb"]


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_killed_run_keeps_the_previous_index_readable(tmp_path: Path):
    db = tmp_path / "index.duckdb"
    publish(SEED, db, Settings())
    script = ("import os, sys\n"
              "from pathlib import Path\n"
              "from acervo.pipelines import edges\n"
              "from acervo.flows.index import publish\n"
              "from acervo.pipelines.settings import Settings\n"
              "edges.run = lambda con, **knobs: os._exit(9)\n"
              "publish(Path(sys.argv[1]), Path(sys.argv[2]), Settings(mentions='titles'))\n")
    done = subprocess.run([sys.executable, "-c", script, str(SAMPLE), str(db)], cwd=Path(__file__).parent.parent)
    assert done.returncode == 9
    con = connect(db, read_only=True)
    assert con.execute("select count(*) from documents").fetchone() == (11,)
    con.close()
    assert any(".staging-" in p.name for p in tmp_path.iterdir())
    publish(SAMPLE, db, Settings(mentions="titles"))
    assert files(tmp_path) == ["index.duckdb", "index.duckdb.spare"]


def embed_one(texts: list[str]) -> list[list[float]]:
    """A stand-in embedder: one coordinate, the text's length."""
    return [[float(len(t))] for t in texts]


# stage: (its function, its knobs as the default settings give them, the same with one setting changed)
DEFAULTS = Settings()
STAGE_RUNS = {  # terms and boilerplate have no settings: none to change
    "terms": (terms.run, {}, {}),
    "boilerplate": (boilerplate.run, {}, {}),
    "chunks": (chunks.run, {"encoding": DEFAULTS.encoding, "max_tokens": DEFAULTS.chunk_tokens},
               {"max_tokens": DEFAULTS.chunk_tokens + 1}),
    "edges": (edges.run, {"min_weight": DEFAULTS.edge_min_weight, "top_k": DEFAULTS.edge_rows}, {"min_weight": 2}),
    "entity_answers": (answers.run, {"max_chars": DEFAULTS.answer_max_chars}, {"max_chars": 100}),
    "community_reports": (reports.run, {"max_lines": DEFAULTS.report_max_lines,
                                        "n_evidence": DEFAULTS.report_evidence}, {"n_evidence": 1}),
    "entity_vectors": (vectors.run, {"embed": None, "model": DEFAULTS.embed_model}, {"embed": embed_one}),
    "chunk_vectors": (chunk_vectors.run, {"embed": None, "model": DEFAULTS.embed_model}, {"embed": embed_one}),
}  # the written stages, which need a model to do anything: tests/test_written.py
READS = {"terms": terms.READS, "chunks": chunks.READS, "edges": edges.READS, "entity_answers": answers.READS,
         "boilerplate": boilerplate.READS,
         "community_reports": reports.READS, "entity_vectors": vectors.READS, "chunk_vectors": chunk_vectors.READS}
SKIPPED = {"skipped": 1}


@pytest.mark.slow  # seconds of indexing or waiting
@pytest.mark.parametrize("stage", sorted(STAGE_RUNS))
def test_a_stage_is_skipped_when_nothing_it_reads_changed_and_runs_when_one_input_did(stage):
    fn, knobs, changed_knobs = STAGE_RUNS[stage]
    run = Run.alone(connect())
    build(run, SEED, DEFAULTS)
    with run.logging():
        assert fn(run, **knobs).detail == SKIPPED
        run.changed = set(reconfigure.STAGES) - set(READS[stage]) - {stage}  # what it does not read
        assert fn(run, **knobs).detail == SKIPPED
        for read in READS[stage]:
            run.changed = {read}
            assert fn(run, **knobs).detail != SKIPPED, read
        run.changed = set()
        assert fn(run, **knobs).detail == SKIPPED
        if changed_knobs:
            assert fn(run, **{**knobs, **changed_knobs}).detail != SKIPPED
    assert fn(Run.alone(run.con), **knobs).detail != SKIPPED  # on its own, a stage checks everything


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_rerun_with_one_setting_changed_runs_the_stages_it_reaches_and_skips_the_others(con):
    build(Run.alone(con), SEED, DEFAULTS)
    done = {s.stage: s.work for s in build(Run.alone(con), SEED, Settings(report_evidence=1))}
    assert {name for name, w in done.items() if (w.detail or {}).get("skipped")} == {
        "chunks", "terms", "mentions", "edges", "communities", "boilerplate", "entity_answers", "written_reports",
        "written_answers", "entity_vectors", "chunk_vectors"}  # the written stages, never given a model: nothing to do
    assert done["written_reports"].detail == done["written_answers"].detail == {"skipped": 1, "no_model": 1}
    assert done["community_reports"].recomputed > 0
    assert_like_fresh(con, SEED, Settings(report_evidence=1))


def test_every_table_a_stage_reads_is_its_own_or_one_of_a_stage_it_names_in_reads():
    """The stages' SQL is all in sql/<stage>.sql: every table it reads from belongs to the stage or to one in READS
    (scratch and temporary tables aside), so that a change upstream is never skipped."""
    owner = {"documents": "documents", "document_entities": "documents", "rejected": "documents", "chunks": "chunks",
             "chunk_terms": "terms", "chunk_lengths": "terms", "document_words": "terms", "word_documents": "terms",
             "entities": "mentions", "entity_aliases": "mentions", "names": "mentions", "mentions": "mentions",
             "edges": "edges", "communities": "communities", "community_members": "communities",
             "entity_answers": "entity_answers", "community_reports": "community_reports",
             "report_lines": "community_reports", "entity_vectors": "entity_vectors",
             "chunk_vectors": "chunk_vectors",
             "written_reports": "written_reports", "written_answers": "written_answers",
             "chunk_sentences": "boilerplate", "chunk_boilerplate": "boilerplate"}
    written = {"written_reports": written_reports.READS, "written_answers": written_answers.READS}
    for stage, reads in (READS | written).items():
        text = (SQL_DIR / f"{stage}.sql").read_text(encoding="utf-8")
        tables = set(re.findall(r"\b(?:from|join)\s+([a-z_]+)", text)) & owner.keys()
        assert {owner[t] for t in tables} - {stage} == set(reads), stage


def test_a_stage_s_sql_reads_only_stored_tables_the_change_log_and_relations_its_own_file_makes():
    """No hidden input: besides the index's tables and the run's change log (`changed`), every relation a stage's
    statements read is made by a named statement of the same file (its scratch relations, its CTEs)."""
    stored = set(re.findall(r"create table (?:if not exists )?([a-z_]+)", (SQL_DIR / "schema.sql").read_text()))
    scratch = set()
    for stage in [*READS, "documents", "mentions", "communities", "written_reports", "written_answers"]:
        text = re.sub(r"--[^\n]*", "", (SQL_DIR / f"{stage}.sql").read_text(encoding="utf-8"))
        made = set(re.findall(r"create or replace temp (?:table|macro) ([a-z_]+)", text))
        ctes = set(re.findall(r"(?:with|recursive|,)\s+([a-z_]+)(?:\([a-z_, ]+\))? as (?:materialized )?\(", text))
        read = set(re.findall(r"(?<!distinct )\b(?:from|join|into|update|using)\s+([a-z_]{2,})\b(?!\s*\()", text))
        fts = {r for r in read if r.startswith("fts_main_")}  # the schema of an fts index the stage made
        assert read - stored - made - ctes - fts - {"changed", "set"} == set(), stage
        scratch |= made
    assert {"chunks_split", "edges_sources", "mentions_matched", "names_next", "community_region"} <= scratch


def test_the_bulk_insert_types_rows_from_the_table_s_own_columns_and_names_a_wrong_one(con):
    run = Run.alone(con)
    rows = [{"chunk_id": "c#1", "title": "T", "names": [{"entity_id": "a", "name": "A"}], "acronyms": [],
             "words": [{"word": "a", "lower": 1, "mid": 0, "other": 2}], "mid_names": ["a"]}]
    assert run.insert("chunk_candidates", rows) == 1
    assert run.insert("chunk_candidates", [{**rows[0], "title": "U"}], replace=True) == 1
    assert con.execute("select * from chunk_candidates").fetchall() == [
        ("c#1", "U", [{"entity_id": "a", "name": "A"}], [], [{"word": "a", "lower": 1, "mid": 0, "other": 2}],
         ["a"])]
    con.execute(sql("documents.places"))  # a scratch relation
    assert run.insert("places", [{"doc_id": "d", "source": "s", "line": 3, "record_hash": None}]) == 1  # temporary
    assert con.execute("select * from places").fetchall() == [("d", "s", 3, None)]
    with pytest.raises(ValueError, match="no column 'colour'"):
        run.insert("places", [{"doc_id": "d", "colour": "red"}])
    with pytest.raises(ValueError, match="no table 'nowhere'"):
        run.insert("nowhere", [{"a": 1}])


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_large_run_commits_after_each_stage_a_small_one_once_and_no_stage_leaves_scratch_tables(tmp_path: Path):
    """A build, or a rerun that changes SMALL_CHANGE of the documents or more, commits what each stage wrote (so
    DuckDB frees it), where a small rerun keeps one transaction, which publishing commits and checkpoints once;
    either way a stage's scratch tables are dropped when it is done."""
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    con = connect(tmp_path / "index.duckdb")
    run = Run.alone(con)
    session = run.scratch_tables()
    seen: dict[str, int] = {}

    def committed(result: StageResult) -> None:
        """Chunks another connection of the database sees (only what is committed) once a stage is done."""
        seen[result.stage] = con.cursor().execute("select count(*) from chunks").fetchone()[0]
        assert run.scratch_tables() == session, result.stage

    with run.transaction():
        build(run, write_jsonl(tmp_path / "v1.jsonl", records), DEFAULTS, progress=committed)
    built = seen["chunks"]
    assert seen["documents"] == 0 and built > 0 and seen["community_reports"] == built
    added = {"doc_id": "zz-new", "title": "Xylophone Quarry", "text": "Xylophone Quarry is a quarry. It holds stones."}
    assert SMALL_CHANGE * len(records) > 1
    rerun = Run.alone(con)
    with rerun.transaction():
        build(rerun, write_jsonl(tmp_path / "v2.jsonl", [*records, added]), DEFAULTS, progress=committed)
    assert seen["chunks"] == seen["community_reports"] == built  # nothing committed before the end
    assert con.cursor().execute("select count(*) from chunks").fetchone()[0] == built + 1


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_large_run_has_duckdb_give_back_freed_memory_at_once_and_then_restores_its_allocator(tmp_path: Path):
    """From the first stage of a large run on, DuckDB's allocator gives back the pages its statements free at once
    (it keeps them a second: a build's memory grew by what each stage freed); a small rerun leaves it alone."""
    def peek() -> int | None:
        """The allocator's setting, left as it was."""
        was = allocator_decay(0)
        if was is not None:
            allocator_decay(was)
        return was

    before = peek()
    assert before is not None or not sys.platform.startswith("linux"), (
        "DuckDB's library no longer exports jemalloc's duckdb_je_mallctl: pipelines.db.allocator_decay changes "
        "nothing, and a large run keeps what its statements free")
    if before is None:
        pytest.skip("this DuckDB has no jemalloc (only its Linux builds do)")
    con, seen = connect(tmp_path / "index.duckdb"), []
    build(Run.alone(con), SAMPLE, DEFAULTS, progress=lambda result: seen.append(peek()))
    assert before > 0 and set(seen) == {0} and peek() == before
    seen.clear()
    build(Run.alone(con), SAMPLE, DEFAULTS, progress=lambda result: seen.append(peek()))
    assert set(seen) == {before} and peek() == before
