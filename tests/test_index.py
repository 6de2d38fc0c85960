"""The whole pipeline: determinism, references, odd names, and the published file."""

import subprocess
import sys
from pathlib import Path

from conftest import SAMPLE, SEED, index_of, write_jsonl
from flows.build import publish
from pipelines.db import connect
from pipelines.settings import Settings

TABLES = {
    "documents": "doc_id", "document_entities": "doc_id, label", "rejected": "source, line, reason, detail",
    "chunks": "chunk_id", "entities": "entity_id", "entity_aliases": "entity_id, alias",
    "mentions": "entity_id, chunk_id",
    "edges": "src, dst", "communities": "community_id", "community_members": "community_id, entity_id",
    "entity_answers": "entity_id", "community_reports": "community_id", "report_lines": "community_id, ord",
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


def test_publish_replaces_the_index_atomically_and_leaves_no_staging_file(tmp_path: Path):
    db = tmp_path / "index.duckdb"
    publish(SEED, db, Settings())
    first = connect(db, read_only=True)
    assert first.execute("select count(*) from chunks").fetchone() == (11,)
    first.close()
    publish(SAMPLE, db, Settings(mentions="titles"))
    assert files(tmp_path) == ["index.duckdb"]
    con = connect(db, read_only=True)
    assert con.execute("select count(*) from documents").fetchone() == (300,)
    assert con.execute("select status from index_runs").fetchall() == [("ok",), ("ok",)]
    stages = con.execute("select stage from run_stages where run_id = (select max(run_id) from index_runs) "
                         "order by ord").fetchall()
    assert [s for (s,) in stages] == ["documents", "chunks", "mentions", "edges", "communities", "entity_answers",
                                      "community_reports", "entity_vectors"]
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


def test_a_killed_run_keeps_the_previous_index_readable(tmp_path: Path):
    db = tmp_path / "index.duckdb"
    publish(SEED, db, Settings())
    script = ("import os, sys\n"
              "from pathlib import Path\n"
              "from pipelines import edges\n"
              "from flows.build import publish\n"
              "from pipelines.settings import Settings\n"
              "edges.run = lambda con, **knobs: os._exit(9)\n"
              "publish(Path(sys.argv[1]), Path(sys.argv[2]), Settings(mentions='titles'))\n")
    done = subprocess.run([sys.executable, "-c", script, str(SAMPLE), str(db)], cwd=Path(__file__).parent.parent)
    assert done.returncode == 9
    con = connect(db, read_only=True)
    assert con.execute("select count(*) from documents").fetchone() == (11,)
    con.close()
    assert any(".staging-" in p.name for p in tmp_path.iterdir())
    publish(SAMPLE, db, Settings(mentions="titles"))
    assert files(tmp_path) == ["index.duckdb"]
