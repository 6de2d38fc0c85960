"""Stage `mentions`: given, gazetteer and titles modes -> entities, entity_aliases, mentions."""

import json
from pathlib import Path

import duckdb
import pytest

from acervo.flows.index import build, publish
from acervo.pipelines import chunks, documents, mentions
from acervo.pipelines.candidates import candidates
from acervo.pipelines.db import connect
from acervo.pipelines.matcher import Matcher
from acervo.pipelines.mentions.nlp import candidate_row
from acervo.pipelines.mentions.shared import MAX_PROBE_PASSES, chunk_places
from acervo.pipelines.query.context import Index
from acervo.pipelines.run import Run
from acervo.pipelines.settings import CANDIDATE_MODES, MentionSetting, Settings
from conftest import assert_like_fresh, write_jsonl


def prepare(con, tmp_path: Path, records: list[dict]) -> None:
    documents.run(Run.alone(con), write_jsonl(tmp_path / "docs.jsonl", records), max_bytes=100_000)
    chunks.run(Run.alone(con), encoding="cl100k_base", max_tokens=400)


def test_given_entities_attach_to_every_chunk_and_keep_the_most_common_spelling(con, tmp_path: Path):
    prepare(con, tmp_path, [
        {"doc_id": "a", "text": "One.", "entities": ["Contrato", "A|B"]},
        {"doc_id": "b", "text": "Two.", "entities": ["contrato"]},
        {"doc_id": "c", "text": "Three.", "entities": ["Contrato"]}])
    assert mentions.run(Run.alone(con), mode="given")[:3] == (3, 0, 6)  # 4 mentions, 2 entities
    assert con.execute("select entity_id, label, n_chunks from entities order by 1").fetchall() == [
        ("a|b", "A|B", 1), ("contrato", "Contrato", 3)]


def test_gazetteer_names_and_aliases_are_found_and_bad_lines_rejected(con, tmp_path: Path):
    prepare(con, tmp_path, [
        {"doc_id": "a", "text": "O Ministerio da Saude publicou. A OMS concorda."},
        {"doc_id": "b", "text": "Nada aqui."}])
    gaz = tmp_path / "names.jsonl"
    gaz.write_text("\n".join([
        json.dumps({"label": "Ministério da Saúde", "aliases": ["MS"]}),
        json.dumps({"label": "Organização Mundial da Saúde", "aliases": ["OMS", "bad\u0000alias"]}),
        "{not json",
        json.dumps({"label": "Unused"}),
        json.dumps({"label": "Lx", "aliases": "Lx"})]), encoding="utf-8")
    mentions.run(Run.alone(con), mode="gazetteer", gazetteer_path=gaz)
    assert con.execute("select entity_id, label from entities order by 1").fetchall() == [
        ("ministério da saúde", "Ministério da Saúde"),
        ("organização mundial da saúde", "Organização Mundial da Saúde")]
    assert con.execute("select line, reason from rejected order by line").fetchall() == [
        (2, "invalid_entity"), (3, "invalid_entity"), (5, "invalid_entity")]
    assert con.execute("select alias from entity_aliases where entity_id = 'organização mundial da saúde' "
                       "order by alias").fetchall() == [("OMS",), ("Organização Mundial da Saúde",)]


def test_a_plain_text_gazetteer_has_one_name_per_line(con, tmp_path: Path):
    prepare(con, tmp_path, [{"doc_id": "a", "text": "Bank of England and C++ and 🚀 Launch."}])
    gaz = tmp_path / "names.txt"
    gaz.write_text("Bank of England\nC++\n🚀 Launch\n\n", encoding="utf-8")
    mentions.run(Run.alone(con), mode="gazetteer", gazetteer_path=gaz)
    assert [e for (e,) in con.execute("select entity_id from entities order by 1").fetchall()] == [
        "bank of england", "c++", "🚀 launch"]


def test_titles_mode_links_documents_and_strips_disambiguation(con, tmp_path: Path):
    prepare(con, tmp_path, [
        {"doc_id": "1", "title": "Lee Hall (playwright)", "text": "Lee Hall wrote Billy Elliot."},
        {"doc_id": "2", "title": "Billy Elliot", "text": "A film written by Lee Hall."},
        {"doc_id": "3", "title": "Mercury (planet)", "text": "A planet."},
        {"doc_id": "4", "title": "Mercury (element)", "text": "Mercury is a metal."}])
    mentions.run(Run.alone(con), mode="titles")
    found = con.execute("select m.entity_id, c.doc_id from mentions m join chunks c using (chunk_id) "
                        "order by 2, 1").fetchall()
    assert found == [("billy elliot", "1"), ("lee hall (playwright)", "1"), ("billy elliot", "2"),
                     ("lee hall (playwright)", "2"), ("mercury (planet)", "3"), ("mercury (element)", "4")]


def test_changed_names_probe_the_same_chunks_whatever_the_batch(con, tmp_path: Path):
    names = ["Lee Hall", "Billy Elliot", "Mercury", "Bank of England", "C++", "Nowhere Else"]
    prepare(con, tmp_path, [{"doc_id": str(i), "title": name, "text": f"{name} met {names[i - 1]}."}
                            for i, name in enumerate(names)])
    mentions.run(Run.alone(con), mode="titles")  # fills chunk_folded, which the probe reads
    changed = {(name.lower(), name) for name in names}
    run = Run.alone(con)
    one_pass = mentions.touched(run, "titles", changed)
    assert len(one_pass) == len(names)
    assert mentions.touched(run, "titles", changed, batch=1) == one_pass
    assert mentions.touched(run, "titles", changed, batch=4) == one_pass


def test_more_changed_names_than_probe_passes_pay_for_match_every_chunk_again(con, tmp_path: Path):
    names = [f"Name{i}" for i in range(MAX_PROBE_PASSES + 1)]
    prepare(con, tmp_path, [{"doc_id": str(i), "title": name, "text": "Nothing named here." if i else f"{name}."}
                            for i, name in enumerate(names)])
    mentions.run(Run.alone(con), mode="titles")
    run = Run.alone(con)
    changed = {(name.lower(), name) for name in names}
    first = {cid for (cid,) in con.execute("select chunk_id from chunks where doc_id = '0'").fetchall()}
    assert mentions.touched(run, "titles", changed - {(names[-1].lower(), names[-1])}, batch=1) == first
    assert mentions.touched(run, "titles", changed, batch=2) == first
    every = {cid for (cid,) in con.execute("select chunk_id from chunks").fetchall()}
    assert len(every) == len(names)
    assert mentions.touched(run, "titles", changed, batch=1) == every


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_name_that_leaves_rematches_only_the_chunks_of_its_entity_and_uncovers_what_it_hid(tmp_path: Path):
    docs = write_jsonl(tmp_path / "docs.jsonl", [
        {"doc_id": "1", "text": "She moved to New York City in May."},
        {"doc_id": "2", "text": "New York is a state."},
        {"doc_id": "3", "text": "He ran the New York City Marathon."}])
    gazetteer = tmp_path / "names.txt"
    gazetteer.write_text("New York\nNew York City\nNew York City Marathon\n", encoding="utf-8")
    config = Settings(mentions="gazetteer", gazetteer=gazetteer)
    con = connect()
    build(Run.alone(con), docs, config)
    gazetteer.write_text("New York\nNew York City Marathon\n", encoding="utf-8")
    run = {s.stage: s.work for s in build(Run.alone(con), docs, config)}
    assert run["mentions"].detail["chunks_matched"] == 1  # doc 3 holds the gone name, but a longer one matched there
    found = con.execute("select c.doc_id, m.entity_id from mentions m join chunks c using (chunk_id) order by 1")
    assert found.fetchall() == [("1", "new york"), ("2", "new york"), ("3", "new york city marathon")]
    assert_like_fresh(con, docs, config)


@pytest.mark.slow  # seconds of indexing or waiting
def test_titles_mode_a_title_documents_share_names_each_document_apart(con, tmp_path: Path):
    records = [
        {"doc_id": "r1", "title": "REGULAMENTO_GERAL", "text": "O aluno pode trancar a matrícula."},
        {"doc_id": "r2", "title": "REGULAMENTO_GERAL", "text": "O aluno pode pedir exercícios domiciliares."},
        {"doc_id": "u1", "title": "UFMS", "text": "A UFMS fica em Campo Grande; ver REGULAMENTO_GERAL."}]
    prepare(con, tmp_path, records)
    mentions.run(Run.alone(con), mode="titles")
    # the shared title names neither document, so no text links to it either
    assert con.execute("select entity_id, label, n_chunks from entities order by 1").fetchall() == [
        ("regulamento_geral (r1)", "REGULAMENTO_GERAL (r1)", 1),
        ("regulamento_geral (r2)", "REGULAMENTO_GERAL (r2)", 1), ("ufms", "UFMS", 1)]
    config = Settings(mentions="titles")
    fresh = connect()
    source = write_jsonl(tmp_path / "src.jsonl", records)
    build(Run.alone(fresh), source, config)
    for step in (records[1:], records):  # the title stops and starts being shared
        source = write_jsonl(tmp_path / "src.jsonl", step)
        build(Run.alone(fresh), source, config)
        assert_like_fresh(fresh, source, config)
    assert ("regulamento_geral (r2)",) in fresh.execute("select entity_id from entities").fetchall()
    build(Run.alone(fresh), write_jsonl(tmp_path / "src.jsonl", records[1:]), config)
    assert fresh.execute("select entity_id, n_chunks from entities order by 1").fetchall() == [
        ("regulamento_geral", 2), ("ufms", 1)]  # alone, the title names its document, and u1's text names it


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_rerun_skips_mentions_until_a_table_or_a_setting_it_reads_changes(tmp_path: Path):
    docs = write_jsonl(tmp_path / "docs.jsonl", [
        {"doc_id": "1", "text": "Lee Hall wrote Billy Elliot."}, {"doc_id": "2", "text": "Billy Elliot is a film."}])
    gazetteer = tmp_path / "names.txt"
    gazetteer.write_text("Lee Hall\nBilly Elliot\n", encoding="utf-8")
    config = Settings(mentions="gazetteer", gazetteer=gazetteer)
    con = connect()
    build(Run.alone(con), docs, config)
    knobs = {"mode": "gazetteer", "gazetteer_path": gazetteer}
    run = Run.alone(con)
    with run.logging():
        assert mentions.run(run, **knobs).detail == {"skipped": 1}
        run.changed |= {"edges", "communities"}  # stages it does not read
        assert mentions.run(run, **knobs).detail == {"skipped": 1}
        for stage in mentions.READS:
            run.changed = {stage}
            assert mentions.run(run, **knobs).detail != {"skipped": 1}
        run.changed = set()
        assert mentions.run(run, **knobs, window="sentence").detail != {"skipped": 1}
    gazetteer.write_text("Lee Hall\nBilly Elliot\nFilm\n", encoding="utf-8")  # same path, other bytes
    done = {s.stage: s.work for s in build(Run.alone(con), docs, config)}
    assert done["mentions"].detail != {"skipped": 1} and done["mentions"].recomputed > 0
    assert ("film",) in con.execute("select entity_id from entities").fetchall()
    done = {s.stage: s.work for s in build(Run.alone(con), docs, config.model_copy(update={"edge_min_weight": 2}))}
    assert done["mentions"].detail == {"skipped": 1} and done["edges"].detail != {"skipped": 1}
    assert_like_fresh(con, docs, config.model_copy(update={"edge_min_weight": 2}))


def test_the_modes_that_extract_candidates_are_those_the_query_side_checks_names_against():
    assert {mode for mode, spec in mentions.MODES.items() if spec.extractor} == set(CANDIDATE_MODES)


def test_a_rerun_that_skips_mentions_keeps_the_gazetteer_s_rejected_lines(con, tmp_path: Path):
    records = [{"doc_id": "a", "text": "Ada Lovelace wrote notes."}, {"doc_id": "b", "text": "Nothing here."},
               {"text": "no doc_id: rejected by the documents stage"}]
    gaz = tmp_path / "names.txt"
    gaz.write_text("Ada Lovelace\nbad\u0000name\n", encoding="utf-8")
    config = Settings(mentions="gazetteer", gazetteer=gaz)
    build(Run.alone(con), write_jsonl(tmp_path / "v1.jsonl", records), config)
    before = con.execute("select source, line, reason from rejected order by all").fetchall()
    assert {source for source, _, _ in before} == {str(gaz), str(tmp_path / "v1.jsonl")}
    done = {s.stage: s.work for s in build(Run.alone(con), write_jsonl(tmp_path / "v1.jsonl", records[::-1]),
                                                 config)}
    assert done["mentions"].detail == {"skipped": 1}  # only lines moved: nothing mentions reads changed
    after = con.execute("select source, line, reason from rejected order by all").fetchall()
    assert {(s, r) for s, _, r in after} == {(s, r) for s, _, r in before}


def test_titles_mode_a_title_with_a_control_character_names_nothing_and_is_rejected(con, tmp_path: Path):
    records = [{"doc_id": "a", "title": "Evil\u001b]0;PWNED\u0007", "text": "Alpha works with Beta."},
               {"doc_id": "b", "title": "Nul\u0000Title", "text": "Beta met Alpha."},
               {"doc_id": "c", "title": "Beta", "text": "Beta is a group."}]
    config = Settings(mentions="titles")
    source = write_jsonl(tmp_path / "docs.jsonl", records)
    build(Run.alone(con), source, config)
    assert con.execute("select label from entities").fetchall() == [("Beta",)]
    assert con.execute("select count(*) from mentions where entity_id not in (select entity_id from entities)"
                       ).fetchone() == (0,)
    why = "contains a control character (NUL included)"
    rejected = "select source, line, doc_id, reason, detail from rejected order by line"
    assert con.execute(rejected).fetchall() == [
        (str(source), 1, "a", "invalid_entity", f"title 'Evil\\x1b]0;PWNED\\x07' {why}"),
        (str(source), 2, "b", "invalid_entity", f"title 'Nul\\x00Title' {why}")]
    build(Run.alone(con), write_jsonl(source, records[::-1]), config)  # read again, the lines moved
    assert [row[1:3] for row in con.execute(rejected).fetchall()] == [(2, "b"), (3, "a")]
    assert_like_fresh(con, source, config)


def test_a_chunk_s_mentions_are_the_windows_that_name_each_entity_without_a_database():
    matcher = Matcher([("Bank of England", "bank of england"), ("London", "london"), ("Paris", "paris")])
    text = "The Bank of England is in London.\n\nParis is not. London again."
    assert chunk_places(matcher, text, "paragraph") == {"bank of england": (0,), "london": (0, 1), "paris": (1,)}
    assert chunk_places(matcher, text, "sentence") == {"bank of england": (0,), "london": (0, 2), "paris": (1,)}
    assert chunk_places(matcher, text, "chunk") == dict.fromkeys(["bank of england", "london", "paris"], ())
    assert chunk_places(matcher, "the bank of england\ue000london", "sentence") == {
        "bank of england": (0,), "london": (0,)}  # a text holding the window mark is split window by window


def test_a_chunk_s_candidate_row_comes_from_its_text_title_and_extractor_output_without_a_database():
    text = "The World Health Organization (WHO) met. The Organization met in Geneva, and the WHO agreed."
    row = candidate_row("d#1", text, "Geneva", ["Geneva"], candidates(text))
    assert row["chunk_id"] == "d#1" and row["title"] == "Geneva"
    assert [n["name"] for n in row["names"]][0] == "Geneva"  # the title's names first, each once
    assert len({n["entity_id"] for n in row["names"]}) == len(row["names"])
    assert {"entity_id": "world health organization", "name": "World Health Organization"} in row["names"]
    assert row["acronyms"] == [{"acronym": "who", "expansion": "world health organization"}]
    assert {"word": "organization", "lower": 0, "mid": 0, "other": 2} in row["words"]
    assert "geneva" in row["mid_names"] and "world health organization" not in row["mid_names"]


def test_the_stored_mentions_setting_is_json_the_query_side_reads_the_mode_from(tmp_path: Path):
    docs = write_jsonl(tmp_path / "docs.jsonl", [
        {"doc_id": str(i), "text": f"Lee Hall wrote Billy Elliot. Newcastle saw it {i} times."} for i in range(3)])
    db = tmp_path / "index.duckdb"
    publish(docs, db, Settings(mentions="nlp", edge_window="sentence"))
    with duckdb.connect(str(db), read_only=True) as con:
        stored = con.execute("select value from index_state where key = 'mentions'").fetchone()[0]
    setting = MentionSetting.model_validate_json(stored)
    assert setting.rule == ("nlp", "nlp", "sentence") and not setting.recheck
    with Index(db) as index:
        assert index.mode == "nlp" and index.checked
