"""Stage `chunks`: token-bounded chunks on paragraph boundaries, with content hashes."""

import hashlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acervo.pipelines import chunks, documents, layout, tokens
from acervo.pipelines.chunks import split
from acervo.pipelines.run import Run
from acervo.pipelines.sentences import sentences
from conftest import examples, write_jsonl

SENTENCE = "A renovação automática vale quando não há recusa."


def count(text: str) -> int:
    return tokens.count(text)


def test_a_short_document_is_one_chunk_with_the_sha256_of_its_normalised_text(con, tmp_path: Path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"doc_id": "d1", "text": SENTENCE}])
    documents.run(Run.alone(con), path, max_bytes=10_000)
    assert chunks.run(Run.alone(con), encoding="cl100k_base", max_tokens=400)[:4] == (1, 0, 1, 0)
    chunk_id, ord_, n_tokens, content_hash = con.execute(
        "select chunk_id, ord, n_tokens, content_hash from chunks").fetchone()
    assert (ord_, n_tokens) == (0, 13)
    assert content_hash == hashlib.sha256(SENTENCE.encode()).hexdigest()
    assert chunk_id.startswith("d1#")
    assert con.execute("select n_tokens, n_chunks from documents").fetchone() == (13, 1)


def test_o200k_counts_differently_and_is_selectable(con, tmp_path: Path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"doc_id": "d1", "text": SENTENCE}])
    documents.run(Run.alone(con), path, max_bytes=10_000)
    chunks.run(Run.alone(con), encoding="o200k_base", max_tokens=400)
    assert con.execute("select n_tokens from chunks").fetchone() == (11,)


def test_paragraphs_stay_whole_when_they_fit():
    paragraphs = [f"Paragraph {i} says something about topic {i}. It has a second sentence." for i in range(12)]
    parts = split("\n\n".join(paragraphs), count, max_tokens=60)
    assert all(count(p) <= 60 for p in parts)
    assert [q for p in parts for q in p.split("\n\n")] == paragraphs


def test_a_local_edit_changes_few_chunks():
    paragraphs = [f"Section {i}: the clause number {i} governs case {i * 7} of the contract." for i in range(200)]
    before = split("\n\n".join(paragraphs), count, max_tokens=120)
    paragraphs[100] = "Section 100: this clause was rewritten entirely, with new words and a longer explanation."
    after = split("\n\n".join(paragraphs), count, max_tokens=120)
    changed = set(after) - set(before)
    assert len(before) > 20
    assert len(changed) <= 3


def test_sentences_are_spans_of_the_text():
    text = "O prazo é de 30 dias. A fatura é emitida!  Linha sem ponto\nOutra? Sim."
    assert [text[a:b] for a, b in sentences(text)] == [
        "O prazo é de 30 dias.", "A fatura é emitida!", "Linha sem ponto", "Outra?", "Sim."]


def test_a_stop_after_an_initial_or_abbreviation_ends_no_sentence():
    text = "J. R. R. Tolkien wrote it. Dr. Smith agreed, see Fig. 3 there. Born c. 1900 in St. Louis! Call a_. Then x."
    assert [text[a:b] for a, b in sentences(text)] == [
        "J. R. R. Tolkien wrote it.", "Dr. Smith agreed, see Fig. 3 there.", "Born c. 1900 in St. Louis!",
        "Call a_.", "Then x."]


@settings(max_examples=examples(0.6))
@given(st.lists(st.text(min_size=1, max_size=300), min_size=1, max_size=8), st.integers(16, 80))
def test_every_chunk_fits_the_budget_and_no_text_is_lost(paras, limit):
    text = "\n\n".join(paras)
    parts = split(text, count, max_tokens=limit)
    assert all(count(p) <= limit for p in parts)
    assert "".join("".join(p.split()) for p in parts) == "".join(text.split())


@pytest.mark.parametrize("doc_id", ["2w00523", "doc#7", "a#b#c", "x~3"])
def test_a_chunk_id_names_its_document_even_one_whose_id_holds_the_separator(doc_id: str):
    assert layout.document_of(chunks.chunk_id(doc_id, "0" * 64, 2)) == doc_id


def test_a_document_s_chunk_rows_come_from_its_text_alone_without_a_database():
    text = "# Intro\n\nOne two three four five.\n\nSix seven.\n\n# Body\n\nSix seven."
    words = lambda part: len(part.split())  # noqa: E731 - a count of literal words, no encoding
    parts = chunks.located(text, words, max_tokens=6)
    rows = chunks.document_chunks("d1", text, None, parts, words)
    assert [(r["ord"], r["text"], r["n_tokens"], r["locator"]) for r in rows] == [
        (0, "# Intro", 2, "Intro"), (1, "One two three four five.", 5, "Intro"), (2, "Six seven.", 2, "Intro"),
        (3, "# Body\n\nSix seven.", 4, "Body")]  # a content-defined cut after the first "Six seven."
    assert rows[2]["content_hash"] == hashlib.sha256(b"Six seven.").hexdigest()
    assert rows[2]["chunk_id"] == chunks.chunk_id("d1", rows[2]["content_hash"], 0)
    assert {r["doc_id"] for r in rows} == {"d1"}
    paged = chunks.document_chunks("d1", "a\n\nb", [0, 2], [("a", 0), ("b", 3)], words)
    assert [r["locator"] for r in paged] == ["page 1", "page 2"]
    twice = chunks.document_chunks("d2", "x\n\nx", None, [("x", 0), ("x", 3)], words)
    assert twice[0]["chunk_id"] != twice[1]["chunk_id"]  # a repeated text is a second chunk of its own


def test_counts_in_shares_keep_each_text_in_its_place():
    texts = [f"text {i} " * (i % 7) for i in range(101)]  # more texts than shares, empty ones among them
    assert tokens.counts(texts) == [tokens.count(t) for t in texts]
    assert tokens.counts([]) == []
