"""Stage `boilerplate`: a sentence many documents write is kept out of short answers and report lines, stays
searchable, and a rerun that makes it boilerplate (or no longer) equals a fresh build."""

from pathlib import Path

import pytest

from acervo.flows.index import build, publish
from acervo.pipelines.db import connect
from acervo.pipelines.layout import sentence_key, sentence_keys
from acervo.pipelines.query import lexical
from acervo.pipelines.query.context import Index
from acervo.pipelines.run import Run
from acervo.pipelines.settings import Settings
from conftest import assert_like_fresh, write_jsonl

GREETING = "The Atlas of Cities is a guide edited by Maria Costa."  # every city page opens with it
CITIES = {"Lisbon": "Lisbon is the capital of Portugal, on the Tagus.",
          "Porto": "Porto is known for its bridges over the Douro.",
          "Braga": "Braga is one of the oldest cities of Portugal."}
NOTICE = "This memo is confidential and for the atlas staff only."  # what the secret memos open with
HISTORY = ("Maria Costa founded the Atlas of Cities in Porto in 1990, after years of mapping the north. "
           "The Atlas of Cities is now read in many countries.")


def corpus(path: Path, cities: dict[str, str]) -> Path:
    """City pages (ids a1, a2...) that open with GREETING, and the atlas's history (z9), last by id."""
    pages = [{"doc_id": f"a{i}", "title": city, "text": f"{GREETING} {text}"}
             for i, (city, text) in enumerate(sorted(cities.items()), start=1)]
    return write_jsonl(path, [*pages, {"doc_id": "z9", "title": "History", "text": HISTORY}])


def settings(tmp_path: Path) -> Settings:
    gazetteer = tmp_path / "names.txt"
    gazetteer.write_text("Atlas of Cities\nMaria Costa\n", encoding="utf-8")
    return Settings(mentions="gazetteer", gazetteer=gazetteer)


def answers(con) -> dict[str, str]:
    return dict(con.execute("select e.label, a.answer from entity_answers a join entities e using (entity_id)")
                .fetchall())


def test_a_sentence_three_documents_write_is_no_answer_nor_report_line_but_is_still_found(tmp_path: Path):
    con = connect()
    build(Run.alone(con), corpus(tmp_path / "c.jsonl", CITIES), settings(tmp_path))
    found = answers(con)
    assert found["Atlas of Cities"] != GREETING and found["Maria Costa"] != GREETING, found
    reports = [r for (r,) in con.execute("select report from community_reports").fetchall()]
    assert reports and not any(GREETING in r for r in reports), reports
    assert con.execute("select count(*) from chunk_boilerplate").fetchone()[0] == len(CITIES)
    search = lexical.searcher(con)
    best = lexical.top_chunks(search, "a guide edited by Maria Costa", limit=3)
    assert best and best[0][1].startswith("a"), best  # still searchable: a city page's chunk leads


@pytest.mark.slow  # seconds of indexing
def test_two_documents_writing_a_sentence_is_no_boilerplate_and_a_third_makes_it_so_as_a_fresh_build(tmp_path):
    config = settings(tmp_path)
    two = dict(list(CITIES.items())[:2])
    con = connect()
    build(Run.alone(con), corpus(tmp_path / "two.jsonl", two), config)
    assert con.execute("select count(*) from chunk_boilerplate").fetchone()[0] == 0  # a quote twice is content
    assert answers(con)["Atlas of Cities"] == GREETING  # the first city page's chunk, its defining sentence
    three = corpus(tmp_path / "three.jsonl", CITIES)
    build(Run.alone(con), three, config)
    assert answers(con)["Atlas of Cities"] != GREETING
    assert_like_fresh(con, three, config)
    build(Run.alone(con), corpus(tmp_path / "two.jsonl", two), config)  # and back
    assert answers(con)["Atlas of Cities"] == GREETING
    assert_like_fresh(con, tmp_path / "two.jsonl", config)


def test_a_sentence_s_key_ignores_case_accents_and_punctuation():
    assert sentence_key("Thank you!") == sentence_key("  thank YOU.") != sentence_key("Thank you all.")
    assert sentence_key("Obrigado, então.") == sentence_key("obrigado entao")
    assert sentence_key("—!") == ""
    assert sentence_keys("Hi. Hi! Bye.") == [sentence_key("hi")] * 2 + [sentence_key("bye")]


def test_a_scoped_caller_s_boilerplate_is_what_its_readable_documents_write(tmp_path: Path):
    pages = [{"doc_id": f"a{i}", "title": city, "text": f"{GREETING} {text}"}
             for i, (city, text) in enumerate(sorted(CITIES.items()), start=1)]
    secret = [{"doc_id": f"s{i}", "title": f"Memo {i}", "scope": "secret",
               "text": f"{NOTICE} Memo {i} lists the rooms of the atlas office in Porto."} for i in range(2)]
    shared = [{**page, "text": f"{page['text']} {NOTICE}"} for page in pages[:1]]  # one readable page writes it
    db = tmp_path / "s.duckdb"
    publish(write_jsonl(tmp_path / "s.jsonl", [*shared, *pages[1:], *secret]), db, settings(tmp_path))
    with Index(db) as index:
        unscoped = {k for (k,) in index.con.execute("select distinct unnest(sentences) from chunk_boilerplate")
                    .fetchall()}
        assert unscoped == {sentence_key(GREETING), sentence_key(NOTICE)}  # three documents write each
        assert index.view(["public"]).boilerplate == {sentence_key(GREETING)}  # the notice: one readable page
        assert index.view(["secret"]).boilerplate == {sentence_key(GREETING), sentence_key(NOTICE)}
