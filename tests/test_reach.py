"""The lexical floors an index without a model calibrates on the questions about nothing (meaning.unrelated): for a
name, how much of the BM25 score its words could get a question's best chunk reaches (pipelines.query.lexical.reach),
against the index's own floor (Index.reach_floor); for words, the share of a question's information its best chunks
hold (Words.calibrate)."""

import json
from pathlib import Path

import numpy as np
import pytest
from test_context import RULES

from acervo.flows.index import publish
from acervo.pipelines.query import lexical
from acervo.pipelines.query.context import Index
from acervo.pipelines.query.meaning import unrelated
from acervo.pipelines.query.router import Reach, route
from acervo.pipelines.query.scoring import REACH_QUANTILE
from acervo.pipelines.query.seeds import Seed
from acervo.pipelines.query.words import MIN_COVERAGE
from acervo.pipelines.settings import Settings
from conftest import DATA, SAMPLE, write_jsonl


def test_reach_is_the_best_score_over_the_most_its_words_could_get_and_a_word_written_otherwise_is_not_lacking(
        tmp_path: Path):
    db = tmp_path / "rules.duckdb"
    publish(write_jsonl(tmp_path / "rules.jsonl", RULES), db, Settings())
    with Index(db, reach_floor=0.0) as index:
        best = index.top("aproveitamento", None)[0][-1]
        assert index.reach("aproveitamento", None) == pytest.approx(best / lexical.highest(1, 5))  # in 1 of 5 chunks
        asked = index.reach("solicitar aproveitamento", None)
        assert 0 < asked < 1
        assert index.reach("solicitar aproveitamento zumbido", None) < asked  # a word the corpus lacks counts against
        # a word no chunk holds, but whose first letters the corpus writes (a compound, another ending), does not
        assert index.reach("solicitar aproveitamento aprovxyz", None) == pytest.approx(asked)
        assert index.reach("bolo cenoura", None) == 0.0


def test_reach_is_at_most_1_where_a_stop_word_s_stem_has_postings(tmp_path: Path):
    records = [*RULES, {"doc_id": "r6", "title": "Fives", "text": "Fives is a game played against a wall, in fives."}]
    db = tmp_path / "fives.duckdb"
    publish(write_jsonl(tmp_path / "fives.jsonl", records), db, Settings(stemmer="porter"))
    with Index(db, reach_floor=0.0) as index:
        assert "five" in index.searcher(None).scores.stop  # a stop word, whose stem "fives" gives postings
        for question in ("five", "five wall", "Who plays five of fives?", "fives"):
            assert 0 < index.reach(question, None) <= 1, question


def test_a_name_is_no_answer_below_the_lexical_floor_and_words_still_decide_for_a_question_that_names_none():
    backup = [Seed("backup", "Backup", 1)]
    low = route("how do I reverse a Backup?", backup, reach=Reach(0.1, 0.2))
    assert low.route == "none" and low.seeds == ()
    assert low.reason.startswith("names Backup, but its best matching chunk reaches 10% of the BM25 score")
    assert "below the index's floor (20%" in low.reason
    assert route("what keeps Backup safe?", backup, reach=Reach(0.3, 0.2)).route == "local"
    wider = route("what is the broader context of Backup?", backup, reach=Reach(0.1, 0.2))
    assert wider.route == "mixed"  # it asks about more than one chunk can hold: rule 1, which the floor does not judge
    assert route("where is the CBC?", [], by_name=["CBC"], reach=Reach(0.1, 0.2)).route == "none"
    assert route("where is the CBC?", [], by_name=["CBC"], reach=Reach(0.3, 0.2)).route == "local"
    words = route("what keeps copies safe?", [], by_words=[Seed("rede", "Rede", 1)], reach=Reach(0.0, 0.2))
    assert words.route == "local"  # no name: the lexical floor of rules 5 and 7 decides, not this one


def test_the_floor_is_the_unrelated_questions_reach_and_refuses_a_name_taken_for_an_answer(tmp_path: Path):
    db = tmp_path / "sample.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles"))
    with Index(db) as index:
        expected = float(np.quantile([index.reach(q, None) for q in unrelated()], REACH_QUANTILE))
        assert index.reach_floor(None) == pytest.approx(expected, abs=1e-6)
        paris = index.query("Qual a melhor época para visitar Paris com crianças?", budget=512)
        assert paris.route == "none" and paris.blocks == [] and paris.reason.startswith("names Paris")
        assert "below the index's floor" in paris.reason
        answered = index.query("When did Lothair Ii's mother die?", budget=512)
        assert answered.route == "local" and answered.blocks
    with Index(db, reach_floor=0.0) as index:  # no floor: the name decides
        assert index.query("Qual a melhor época para visitar Paris com crianças?", budget=512).route == "local"


@pytest.mark.parametrize("scopes", [None, ["a"]])  # from term_postings; from bm25_postings, made once for all
def test_questions_ranked_in_one_statement_rank_as_each_asked_alone(tmp_path: Path, scopes: list[str] | None):
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    for place, record in enumerate(records):
        record["scope"] = "a" if place % 2 else "b"
    db = tmp_path / "sample.duckdb"
    publish(write_jsonl(tmp_path / "scoped.jsonl", records), db, Settings(mentions="nlp"))
    with Index(db) as index:
        scores = index.searcher(scopes).scores
        questions = [*unrelated()[:12], "When did Lothair Ii's mother die?", "zumbido xyzzy", "the of and"]
        batch = scores.best_top([scores.terms(q) for q in questions], 5, scopes)
        assert [bool(hits) for hits, _ in batch][-2:] == [False, False]  # no word with postings: no chunk
        assert sum(bool(hits) for hits, _ in batch) >= 5
        for question, (hits, df) in zip(questions, batch, strict=True):
            assert hits == lexical.top_chunks(index.searcher(scopes), question, limit=5), question
            assert df == scores.counts(), question


@pytest.mark.slow  # seconds of indexing
def test_a_scoped_caller_s_floors_are_those_of_an_index_of_the_documents_it_may_read(tmp_path: Path):
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    for place, record in enumerate(records):
        record["scope"] = "a" if place % 2 else "b"
    scoped = tmp_path / "scoped.duckdb"
    publish(write_jsonl(tmp_path / "scoped.jsonl", records), scoped, Settings(mentions="titles"))
    alone = tmp_path / "alone.duckdb"
    publish(write_jsonl(tmp_path / "alone.jsonl", [r for r in records if r["scope"] == "a"]), alone,
            Settings(mentions="titles"))
    with Index(scoped) as index, Index(alone) as own:
        assert index.reach_floor(["a"]) == pytest.approx(own.reach_floor(None), abs=1e-6)
        assert index.reach_floor(["a"]) != index.reach_floor(["b"])
        assert index.word_stats(["a"]).floor == pytest.approx(own.word_stats(None).floor, abs=1e-9)
        assert index.word_stats(["a"]).floor != index.word_stats(["b"]).floor


def _records(name: str) -> list[dict]:
    """The records of tests/data/NAME."""
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow  # seconds of indexing and 261 questions
def test_on_a_corpus_in_a_language_the_unrelated_questions_are_not_asked_in_the_calibrated_floor_lets_its_answers_in(
        tmp_path: Path):
    db = tmp_path / "ru.duckdb"
    publish(DATA / "xquad_ru_sample.jsonl", db, Settings(mentions="nlp"))
    questions = _records("xquad_ru_sample_questions.jsonl")
    off_topic = [r["question"] for name in ("offtopic_questions.jsonl", "offtopic_named.jsonl") for r in _records(name)]
    with Index(db) as index:
        stats = index.word_stats(None)
        found = [index.coverage(q, None, stats) for q in unrelated()]
        assert stats.floor == max(found) < MIN_COVERAGE  # none of them is asked in Russian
        answered = {r["id"]: index.query(r["question"]) for r in questions}
        refused = [r for r in questions if answered[r["id"]].route == "none"]
        assert len(refused) <= 0.06 * len(questions)  # 27% on a fixed floor: inflected words hold less of a question
        gold = [r for r in questions if any(ref.startswith(f"{r['supporting_doc_ids'][0]}#")
                                            for block in answered[r["id"]].blocks for ref in block.refs)]
        assert len(gold) >= 0.9 * len(questions)
        given = [q for q in off_topic if index.query(q).route != "none"]
        assert given == ["How much is a Tesla home charger installation?"]  # the corpus has a paragraph on Tesla
