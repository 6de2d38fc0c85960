"""Query lookups: the published index holds the indexes queries look rows up by, after a build and after a rerun,
and the statements that use them read only the rows of their keys, with the same results as a scan."""

import json
from itertools import groupby
from pathlib import Path

import pytest

from acervo.flows.index import publish
from acervo.pipelines.db import reader, sql
from acervo.pipelines.layout import EVIDENCE, document_of
from acervo.pipelines.query import lexical
from acervo.pipelines.query.context import Index
from acervo.pipelines.query.khop import listed
from acervo.pipelines.settings import Settings
from conftest import SAMPLE, write_jsonl

INDEXES = {("edges_src", "edges"), ("entity_aliases_words", "entity_aliases"),
           ("mentions_chunk", "mentions"), ("mentions_entity", "mentions"), ("term_postings_term", "term_postings")}


def indexes(db: Path) -> set[tuple[str, str]]:
    con = reader(db)
    try:
        return set(con.execute("select index_name, table_name from duckdb_indexes()").fetchall())
    finally:
        con.close()


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("lookups") / "sample.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles"))
    return db


def scans(index: Index, ref: str, params: dict) -> list[tuple[str, str, int]]:
    """(table, scan type, rows it returned) of each scan of an index table by the statement `ref` with `params`."""
    plan = json.loads(index.con.execute("explain (analyze, format json) " + sql(ref), params).fetchall()[0][1])
    found = []

    def walk(node: dict) -> None:
        info = node.get("extra_info", {})
        if info.get("Table", "").startswith("idx."):
            found.append((info["Table"].split(".")[-1], info["Type"].split()[0], node["operator_cardinality"]))
        for child in node.get("children", []):
            walk(child)
    walk(plan)
    return found


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_build_and_a_rerun_publish_the_lookup_indexes(tmp_path: Path):
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    db = tmp_path / "index.duckdb"
    publish(write_jsonl(tmp_path / "v1.jsonl", records), db, Settings(mentions="titles"))
    assert indexes(db) >= INDEXES
    records[0]["text"] += " A zebra crossed the xylophone."
    publish(write_jsonl(tmp_path / "v2.jsonl", records[1:]), db, Settings(mentions="titles"))
    assert indexes(db) >= INDEXES


def test_a_walk_and_a_name_lookup_read_only_the_rows_of_their_keys(sample_db: Path):
    with Index(sample_db) as index:
        src = [s for (s,) in index.con.execute("select distinct src from edges order by src limit 3").fetchall()]
        rows = index.con.execute(sql("query.neighbours"), {"ids": listed(src)}).fetchall()
        assert rows and {r[0] for r in rows} == set(src)
        assert scans(index, "query.neighbours", {"ids": listed(src)}) == [("edges", "Index", len(rows))]
        words = [w for (w,) in index.con.execute("select words from entity_aliases order by words limit 2").fetchall()]
        params = {"grams": listed([*words, "no such name"])}
        assert ("entity_aliases", "Index", 2) in scans(index, "query.seed_names", params)


def test_evidence_chunks_are_found_through_the_mentions_of_their_entities(sample_db: Path):
    with Index(sample_db) as index:
        ids = [e for (e,) in index.con.execute("select entity_id from entities order by n_chunks desc, entity_id "
                                               "limit 4").fetchall()]
        params = {"ids": listed(ids), "labels": None, "scopes": None, "per_entity": 2}
        rows = index.con.execute(sql("query.chunks"), params).fetchall()
        mentioned = index.con.execute("select entity_id, chunk_id from mentions where entity_id in ?",
                                      [ids]).fetchall()
        assert {(e, c) for e, c, *_ in rows} <= set(mentioned)
        assert {e for e, *_ in rows} == set(ids)
        kinds = {(table, kind) for table, kind, _ in scans(index, "query.chunks", params)}
        assert ("mentions", "Sequential") not in kinds and ("mentions", "Index") in kinds


def test_a_question_of_no_words_reads_no_postings_and_finds_nothing(sample_db: Path):
    with Index(sample_db) as index:
        search = index.searcher(None)
        assert search.of("1984? -- 2001!").terms == []
        assert lexical.top_chunks(search, "1984? -- 2001!") == []
        assert "" not in search.of("Who directed the film, in 1984?").terms


def test_an_entity_s_stored_evidence_is_its_best_mentioned_chunks_read_through_its_key(sample_db: Path):
    with Index(sample_db) as index:
        ids = [e for (e,) in index.con.execute("select entity_id from entities order by entity_id").fetchall()]
        ranked = index.con.execute(sql("query.chunks"), {"ids": listed(ids), "labels": None, "scopes": None,
                                                         "per_entity": EVIDENCE}).fetchall()
        stored = dict(index.con.execute("select entity_id, evidence from entity_answers").fetchall())
        assert {eid: [c for _, c, *_ in rows] for eid, rows in groupby(ranked, key=lambda r: r[0])} == stored
        assert max(map(len, stored.values())) == EVIDENCE
        few = ids[:4]
        rows = index.con.execute(sql("query.entity_evidence"), {"ids": listed(few)}).fetchall()
        assert [(e, c) for e, _, _, _, c, _ in rows] == [(e, c) for e in few for c in stored[e]]
        assert {kind for _, kind, _ in scans(index, "query.entity_evidence", {"ids": listed(few)})} == {"Index"}


def test_whole_documents_are_read_with_their_chunk_ids_by_the_ids_chunk_ids_name_and_only_their_rows(sample_db: Path):
    with Index(sample_db) as index:
        first = index.con.execute("select chunk_id from chunks order by chunk_id limit 3").fetchall()
        chunk_ids = [c for (c,) in first]
        doc_ids = list(dict.fromkeys(document_of(c) for c in chunk_ids))
        stored = index.con.execute("select doc_id from chunks where chunk_id in (select unnest($ids)) "
                                   "order by chunk_id", {"ids": chunk_ids}).fetchall()
        assert doc_ids == list(dict.fromkeys(d for (d,) in stored))
        params = {"doc_ids": doc_ids, "scopes": None}
        docs = index.con.execute(sql("query.documents"), params).fetchall()
        assert [d[0] for d in docs] == sorted(doc_ids) and all(set(chunk_ids) & set(d[4]) for d in docs)
        split = index.con.execute("select doc_id, list(chunk_id order by ord) from chunks where doc_id in "
                                  "(select unnest($ids)) group by doc_id order by doc_id", {"ids": doc_ids}).fetchall()
        assert [(d[0], d[4]) for d in docs] == split
        assert scans(index, "query.documents", params) == [("documents", "Index", len(doc_ids))]


def test_a_caller_who_may_read_every_chunk_reads_reports_and_chunk_texts_without_the_scope_joins(sample_db: Path):
    with Index(sample_db) as index:
        top = [c for (c,) in index.con.execute("select community_id from communities where level = 0 "
                                               "order by community_id").fetchall()]
        for ids in (top, top[:2]):
            params = {"ids": listed(ids), "level": 0, "scopes": None}
            scoped = index.con.execute(sql("query.reports"), params).fetchall()
            unscoped = index.con.execute(sql("query.reports_unscoped"), {"ids": listed(ids)}).fetchall()
            assert scoped and [r[:7] + r[8:] for r in unscoped] == [r[:7] + r[8:] for r in scoped]
            assert {r[7] for r in unscoped} == {None}  # no answers: only a scoped caller's lines are rewritten
            tables = {table for table, _, _ in scans(index, "query.reports_unscoped", {"ids": listed(ids)})}
            assert "documents" not in tables and "chunks" not in tables
        every = index.con.execute(sql("query.reports"), {"ids": None, "level": 0, "scopes": None}).fetchall()
        assert {r[0] for r in every} == set(top)
        weights = dict(index.con.execute("select community_id, weight from communities where level = 0").fetchall())
        heaviest = [c for (c,) in index.con.execute(sql("query.heaviest_communities"), {"level": 0, "limit": 2})
                    .fetchall()]
        assert len(top) > 2 and heaviest == sorted(top, key=lambda c: (-weights[c], c))[:2]  # an overview's bound
        chunk_ids = [c for (c,) in index.con.execute("select chunk_id from chunks order by chunk_id").fetchall()]
        params = {"ids": listed([*chunk_ids[::7], "no such chunk"])}
        texts = index.con.execute(sql("query.chunk_texts_unscoped"), params).fetchall()
        scoped = index.con.execute(sql("query.chunk_texts"), params | {"scopes": None}).fetchall()
        assert sorted(texts) == sorted(scoped)
        assert len(texts) == len(chunk_ids[::7])
        assert {table for table, _, _ in scans(index, "query.chunk_texts_unscoped", params)} == {"chunks"}


def test_a_question_s_best_chunks_are_read_once_and_read_again_for_another_question(sample_db: Path):
    with Index(sample_db) as index:
        search = index.searcher(None)
        first = lexical.top_chunks(search, "Who directed the film Polish-Russian War?", limit=10)
        again = lexical.top_chunks(search, "Who directed the film Polish-Russian War?", limit=10)
        assert again == first and again is not first  # the caller may change its list
        assert search.scores.ranked is not None and search.scores.ranked[1] == first  # held, not read again
        other = lexical.top_chunks(search, "Which country is Lothair II from?", limit=10)
        assert other != first
        assert lexical.top_chunks(search, "Who directed the film Polish-Russian War?", limit=3) == first[:3]
