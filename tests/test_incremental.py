"""Reruns recompute only what changed, and the result equals a fresh build of the same corpus."""

import json
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acervo.flows.index import build
from acervo.pipelines import documents, sources
from acervo.pipelines.db import connect
from acervo.pipelines.hashing import content_hash
from acervo.pipelines.query.context import Index
from acervo.pipelines.run import Run
from acervo.pipelines.settings import Settings
from conftest import SAMPLE, SEED, assert_like_fresh, examples, write_jsonl


def work(stages) -> dict[str, tuple]:
    return {s.stage: s.work[:4] for s in stages}


def seed_records() -> list[dict]:
    return [json.loads(line) for line in SEED.read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_rerun_without_change_recomputes_nothing(con, tmp_path: Path):
    build(Run.alone(con), SEED, Settings())
    again = build(Run.alone(con), SEED, Settings())
    assert all(w[2] == 0 and w[3] == 0 for w in work(again).values()), again
    assert again[0].work[:4] == (11, 11, 0, 0)  # the same source file: not even parsed
    assert all((s.work.detail or {}).get("skipped") == 1 for s in again[1:])  # nothing for the later stages to do
    records = seed_records()
    records[0], records[1] = records[1], records[0]  # same documents, other bytes: parsed, nothing recomputed
    shuffled = work(build(Run.alone(con), write_jsonl(tmp_path / "shuffled.jsonl", records), Settings()))
    assert all(w[2] == 0 and w[3] == 0 for w in shuffled.values()), shuffled
    assert shuffled["entity_answers"] == (0, 0, 0, 0)  # skipped as well: no document changed
    build(Run.alone(con), None, Settings(), delete=["d05"])
    build(Run.alone(con), SEED, Settings())  # the file the index was built from, after a delete: d05 comes back
    assert con.execute("select count(*) from documents where doc_id = 'd05'").fetchone() == (1,)
    assert_like_fresh(con, SEED, Settings())


@pytest.mark.slow  # seconds of indexing or waiting
def test_editing_d01_recomputes_only_what_cites_its_chunk(con, tmp_path: Path):
    records = seed_records()
    build(Run.alone(con), write_jsonl(tmp_path / "v1.jsonl", records), Settings())
    old_chunk = con.execute("select chunk_id from chunks where doc_id = 'd01'").fetchone()[0]
    touched = {e for (e,) in con.execute("select entity_id from mentions where chunk_id = ?", [old_chunk]).fetchall()}
    communities = {c for (c,) in con.execute("select community_id from community_members where entity_id in "
                                              "(select unnest(?))", [sorted(touched)]).fetchall()}
    stored = dict(con.execute("select entity_id, input_hash from entity_answers").fetchall())
    reports_before = dict(con.execute("select community_id, input_hash from community_reports").fetchall())
    records[0]["text"] = records[0]["text"].replace("30 dias", "45 dias")
    source = write_jsonl(tmp_path / "v2.jsonl", records)
    done = work(build(Run.alone(con), source, Settings()))
    assert done["documents"][2] == 1 and done["chunks"][2:] == (1, 1)
    answers = con.execute("select entity_id, input_hash from entity_answers").fetchall()
    changed = {e for e, h in answers if stored[e] != h}
    assert changed == touched == {"faturação", "prazo de pagamento"}
    assert done["entity_answers"][2] == len(touched)
    new_reports = {c for c, h in con.execute("select community_id, input_hash from community_reports").fetchall()
                   if reports_before.get(c) != h}
    assert new_reports == communities and done["community_reports"][2] == len(communities)
    assert_like_fresh(con, source, Settings())


@pytest.mark.slow  # seconds of indexing or waiting
def test_deleting_d05_removes_backup_and_its_edges(con, tmp_path: Path):
    build(Run.alone(con), SEED, Settings())
    build(Run.alone(con), None, Settings(), delete=["d05"])
    assert con.execute("select count(*) from entities where entity_id = 'backup'").fetchone() == (0,)
    assert con.execute("select count(*) from edges where 'backup' in (src, dst)").fetchone() == (0,)
    assert con.execute("select count(*) from entity_answers where entity_id = 'backup'").fetchone() == (0,)
    records = [r for r in seed_records() if r["doc_id"] != "d05"]
    assert_like_fresh(con, write_jsonl(tmp_path / "less.jsonl", records), Settings(), provenance=False)


NAMES = ["Alpha", "Beta Group", "Gamma", "Delta|Echo", "Ómega", "Beta", "Gammas"]
SENTENCES = [f"{a} works with {b}." for a in NAMES for b in NAMES if a != b] + [
    "Nothing to see here.", "Plain text.", "The Beta Group (BG) met.", "BG works with Gamma."]
docs = st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=4).map(" ".join)
titles = st.sampled_from(NAMES + ["Untitled", "Beta Group (band)"])
ops = st.lists(st.tuples(st.sampled_from(["edit", "add", "delete", "rename", "gazetteer"]), st.integers(0, 20),
                         docs, titles), min_size=1, max_size=5)


@pytest.mark.slow  # seconds of indexing or waiting
@settings(max_examples=examples(0.3), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(docs, titles), min_size=1, max_size=6), ops, st.sampled_from(["titles", "gazetteer", "nlp"]),
       st.sampled_from([1, 2]), st.sampled_from(["chunk", "sentence"]))
def test_any_sequence_of_changes_equals_a_fresh_build(tmp_path_factory, start, changes, mode, min_chunks, window):
    tmp = tmp_path_factory.mktemp("inc")
    records = [{"doc_id": f"d{i}", "title": t, "text": text} for i, (text, t) in enumerate(start)]
    gazetteer = tmp / "names.txt"
    names = set(NAMES[:3])
    gazetteer.write_text("\n".join(sorted(names)), encoding="utf-8")
    config = Settings(mentions=mode, gazetteer=gazetteer, chunk_tokens=16, nlp_min_chunks=min_chunks,
                      edge_window=window)
    con = connect()
    build(Run.alone(con), write_jsonl(tmp / "src.jsonl", records), config)
    next_id = len(records)
    for op, i, text, title in changes:
        if op == "edit" and records:
            records[i % len(records)]["text"] = text
        elif op == "add":
            records.append({"doc_id": f"d{next_id}", "title": title, "text": text})
            next_id += 1
        elif op == "delete" and len(records) > 1:
            records.pop(i % len(records))
        elif op == "rename" and records:
            records[i % len(records)]["title"] = title
        elif op == "gazetteer":
            names ^= {NAMES[i % len(NAMES)]}
            gazetteer.write_text("\n".join(sorted(names)), encoding="utf-8")
        source = write_jsonl(tmp / "src.jsonl", records)
        build(Run.alone(con), source, config)
        assert_like_fresh(con, source, config)
    con.close()


@pytest.mark.slow  # seconds of indexing or waiting
def test_nlp_a_name_entering_or_leaving_the_dictionary_rematches_the_chunks_whose_title_names_it(tmp_path: Path):
    config = Settings(mentions="nlp", nlp_min_chunks=2)
    records = [{"doc_id": "d0", "title": "Zeta Corp", "text": "Nothing to see here."}]
    con = connect()
    for step in (records, [*records, {"doc_id": "d1", "title": "Other", "text": "Zeta Corp hires."}], records):
        source = write_jsonl(tmp_path / "src.jsonl", step)
        build(Run.alone(con), source, config)
        assert_like_fresh(con, source, config)
    con.close()


@pytest.mark.slow  # seconds of indexing or waiting
def test_nlp_an_entity_that_leaves_is_rematched_where_a_plural_named_it(tmp_path: Path):
    config = Settings(mentions="nlp", nlp_min_chunks=2)
    both = [{"doc_id": "d0", "title": "One", "text": "Alpha works with Gamma."},
            {"doc_id": "d1", "title": "Two", "text": "Beta works with Gammas."}]
    con = connect()
    for step in (both, both[1:]):  # without d0, "Gammas" is no plural of a candidate, and seen once: no entity
        source = write_jsonl(tmp_path / "src.jsonl", step)
        build(Run.alone(con), source, config)
        assert_like_fresh(con, source, config)
    assert con.execute("select count(*) from mentions where entity_id = 'gamma'").fetchone() == (0,)
    con.close()


@pytest.mark.slow  # seconds of indexing
def test_a_white_space_edit_keeps_answers_verbatim_and_equal_to_a_fresh_build(con, tmp_path: Path):
    records = seed_records()
    build(Run.alone(con), write_jsonl(tmp_path / "v1.jsonl", records), Settings())
    records[9]["text"] = records[9]["text"].replace("O consentimento precisa", "O  consentimento  precisa")
    source = write_jsonl(tmp_path / "v2.jsonl", records)
    build(Run.alone(con), source, Settings())
    answer, text = con.execute("select a.answer, c.text from entity_answers a join chunks c on c.chunk_id = "
                               "a.evidence_ref where a.entity_id = 'consentimento'").fetchone()
    assert answer in text and "O  consentimento" in answer
    assert_like_fresh(con, source, Settings())


def test_a_small_rerun_runs_duckdb_on_one_thread_and_gives_the_threads_back(con, tmp_path: Path):
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    assert len(records) > 20  # one edited document is under 5% of them
    build(Run.alone(con), SAMPLE, Settings(mentions="titles"))
    records[0] = {**records[0], "text": records[0]["text"] + " One more sentence."}
    con.execute("set threads = 3")
    seen = []
    build(Run.alone(con), write_jsonl(tmp_path / "edited.jsonl", records), Settings(mentions="titles"),
          progress=lambda s: seen.append((s.stage, con.execute("select current_setting('threads')").fetchone()[0])))
    assert seen[0] == ("documents", 3) and all(n == 1 for _, n in seen[1:]), seen
    assert con.execute("select current_setting('threads')").fetchone()[0] == 3


def test_an_error_in_a_small_rerun_is_raised_as_it_is(con, tmp_path: Path):
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    build(Run.alone(con), SAMPLE, Settings(mentions="titles"))
    records[0] = {**records[0], "text": records[0]["text"] + " One more sentence."}

    def failing(fn, name):  # the edges stage aborts the run's transaction, as a bug would
        if name != "edges":
            return fn
        return lambda run, **knobs: run.con.execute("insert into documents select * from documents limit 1")

    run = Run.alone(con)
    with pytest.raises(duckdb.ConstraintException), run.transaction():
        build(run, write_jsonl(tmp_path / "edited.jsonl", records), Settings(mentions="titles"), wrap=failing)
    assert con.execute("select count(*) from documents").fetchone()[0] == len(records)  # rolled back whole


@pytest.mark.slow  # seconds of indexing or waiting
def test_lines_that_moved_are_renumbered_as_a_fresh_build_numbers_them(con, tmp_path: Path):
    """A deletion near the top moves every later record; a record moved to the end, and one rewritten with
    other bytes but the same content, take the other path: every line must still be the fresh build's."""
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    source = write_jsonl(tmp_path / "corpus.jsonl", records)
    build(Run.alone(con), source, Settings(mentions="titles"))
    reordered = {k: records[50][k] for k in reversed(list(records[50]))}  # same document, other bytes
    records = records[1:50] + [reordered] + records[51:120] + records[121:] + [records[120]]
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    stages = build(Run.alone(con), source, Settings(mentions="titles"))
    assert work(stages)["documents"] == (len(records), len(records), 0, 1)  # nothing recomputed but the deletion
    assert con.execute("select line from documents where doc_id = ?", [records[-1]["doc_id"]]).fetchone() == (
        len(records),)
    assert_like_fresh(con, source, Settings(mentions="titles"))


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_scope_or_metadata_that_becomes_empty_reruns_like_a_fresh_build(tmp_path: Path):
    """null, "" and a value are three scopes (a scoped query reads a document without scope, not one scoped
    ""); null and {} two metadata; and metadata keep their keys' order: a rerun must see each change."""
    records = seed_records()
    records[2]["metadata"] = {"b": 1, "a": 2}
    db, fresh = tmp_path / "rerun.duckdb", tmp_path / "fresh.duckdb"
    con = connect(db)
    build(Run.alone(con), write_jsonl(tmp_path / "v1.jsonl", records), Settings())
    records[0]["scope"] = ""
    records[1]["metadata"] = {}
    records[2]["metadata"] = {"a": 2, "b": 1}
    source = write_jsonl(tmp_path / "v2.jsonl", records)
    assert work(build(Run.alone(con), source, Settings()))["documents"] == (11, 8, 3, 0)
    assert_like_fresh(con, source, Settings())
    assert con.execute("select doc_id, scope, metadata from documents where doc_id in ('d01', 'd02', 'd03') "
                       "order by doc_id").fetchall() == [("d01", "", None), ("d02", None, "{}"),
                                                         ("d03", None, '{"a":2,"b":1}')]
    con.close()
    built = connect(fresh)
    build(Run.alone(built), source, Settings())
    built.close()
    question = "Qual é o prazo de pagamento padrão?"
    with Index(db) as rerun, Index(fresh) as anew:
        for scopes in (["tenant"], [""], None):
            assert rerun.query(question, scopes=scopes).to_dict() == anew.query(question, scopes=scopes).to_dict()
        assert "30 dias" not in rerun.query(question, scopes=["tenant"]).text  # d01 is scoped "" now
        assert "30 dias" in rerun.query(question, scopes=[""]).text
    con = connect(db)
    records[0]["scope"], records[1]["metadata"] = None, None
    source = write_jsonl(tmp_path / "v3.jsonl", records)
    assert work(build(Run.alone(con), source, Settings()))["documents"] == (11, 9, 2, 0)
    assert_like_fresh(con, source, Settings())
    con.close()


def test_a_document_hash_tells_none_from_empty_and_keeps_the_hash_of_either_without_them():
    doc = sources.Document("a", "T", "x", "s.jsonl", 1, ("E",))
    assert documents.doc_hash(doc) == content_hash("T", "x", '["E"]', "", "")  # an index built before keeps it
    valued = replace(doc, scope="s", metadata={"a": 1, "b": [2]})
    assert documents.doc_hash(valued) == content_hash("T", "x", '["E"]', "s", '{"a": 1, "b": [2]}')
    assert len({documents.doc_hash(replace(doc, scope=s, metadata=m)) for s in (None, "") for m in (None, {})}) == 4


@pytest.mark.slow  # seconds of indexing or waiting
def test_mentions_stored_by_another_version_get_every_chunk_folded_and_alias_tokenised_again(con):
    build(Run.alone(con), SAMPLE, Settings(mentions="titles"))
    stored = json.loads(con.execute("select value from index_state where key = 'mentions'").fetchone()[0])
    con.execute("update index_state set value = $v where key = 'mentions'",  # as an earlier release stored it
                {"v": json.dumps(stored | {"version": "decisions-0", "title_tokens": "0"})})
    con.execute("update entity_aliases set words = 'tokens' || chr(31) || 'of an older tokeniser'")
    con.execute("update chunk_folded set folded = 'text folded by an older release'")
    assert con.execute("select count(*) from chunk_folded").fetchone()[0] > 0
    build(Run.alone(con), SAMPLE, Settings(mentions="titles"))
    assert_like_fresh(con, SAMPLE, Settings(mentions="titles"))


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_new_version_of_the_mentions_stage_writes_every_alias_with_its_tokens_as_a_fresh_build(con):
    build(Run.alone(con), SAMPLE, Settings(mentions="titles"))
    con.execute("update index_state set value = 'an older version' where key = 'mentions'")
    build(Run.alone(con), SAMPLE, Settings(mentions="titles"))
    assert con.execute("select count(*) from entity_aliases where words is null").fetchone() == (0,)
    assert_like_fresh(con, SAMPLE, Settings(mentions="titles"))
