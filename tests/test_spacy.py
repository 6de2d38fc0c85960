"""Mentions mode `spacy`: candidates from a spaCy pipeline the user installed (skipped without spaCy).

The pipeline is a blank English one with an entity ruler, saved to a folder: real spaCy, no download.
"""

from pathlib import Path

import pytest

from acervo.flows.index import build
from acervo.pipelines.db import connect
from acervo.pipelines.run import Run
from acervo.pipelines.settings import Settings
from conftest import assert_like_fresh, write_jsonl

spacy = pytest.importorskip("spacy")

RECORDS = [
    {"doc_id": "1", "title": "Engines", "text": "Ada Lovelace wrote about the engine of Charles Babbage in 1843."},
    {"doc_id": "2", "title": "Notes", "text": "Charles Babbage and Ada Lovelace met at the Royal Society."},
    {"doc_id": "3", "title": "Society", "text": "The Royal Society kept the notes. Nothing else happened in 1843."}]


def pipeline(folder: Path, names: list[str]) -> Path:
    """A spaCy pipeline folder whose entity ruler knows `names` (and years, as DATE)."""
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "ORG", "pattern": n} for n in names] + [{"label": "DATE", "pattern": "1843"}])
    nlp.to_disk(folder)
    return folder


def test_spacy_entities_become_candidates_and_numbers_do_not(tmp_path: Path):
    model = pipeline(tmp_path / "pipe", ["Ada Lovelace", "Charles Babbage", "Royal Society"])
    con = connect()
    build(Run.alone(con), write_jsonl(tmp_path / "d.jsonl", RECORDS),
          Settings(mentions="spacy", spacy_model=str(model)))
    assert dict(con.execute("select entity_id, n_chunks from entities").fetchall()) == {
        "ada lovelace": 2, "charles babbage": 2, "royal society": 2}
    assert con.execute("select count(*) from edges").fetchone() == (6,)


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_new_pipeline_extracts_again_and_equals_a_fresh_build(tmp_path: Path):
    source = write_jsonl(tmp_path / "d.jsonl", RECORDS)
    con = connect()
    build(Run.alone(con), source,
          Settings(mentions="spacy", spacy_model=str(pipeline(tmp_path / "a", ["Ada Lovelace"]))))
    wider = Settings(mentions="spacy", spacy_model=str(pipeline(tmp_path / "b", ["Ada Lovelace", "Royal Society"])))
    build(Run.alone(con), source, wider)
    assert {e for (e,) in con.execute("select entity_id from entities").fetchall()} == {"ada lovelace",
                                                                                         "royal society"}
    assert_like_fresh(con, source, wider)


def test_a_missing_pipeline_is_a_clear_error(tmp_path: Path):
    with pytest.raises(ValueError, match="not installed"):
        build(Run.alone(connect()), write_jsonl(tmp_path / "d.jsonl", RECORDS),
              Settings(mentions="spacy", spacy_model=str(tmp_path / "nowhere")))
