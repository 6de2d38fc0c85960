"""Evidence ranked through the graph in an index of found names: names written verbatim, documents that open
with them, bridges to the entities their chunks link to the question, and scopes on every step."""

from pathlib import Path

import pytest

from conftest import write_jsonl
from flows.index import publish
from pipelines.query import lexical
from pipelines.query.context import Index
from pipelines.query.evidence import names, opens, written
from pipelines.query.local import links
from pipelines.settings import Settings
from pipelines.text import words

QUESTION = "What nationality is the director of film Blood Street?"
DISTRACTORS = [  # BM25's favourites for QUESTION: its common words, many times, and no name of it
    {"doc_id": f"d{i}", "title": f"Review {i}",
     "text": f"The director of the film spoke about nationality. Every film director has a nationality, and the "
             f"director of a street film in part {i} said nationality shapes film. Blood on the street, film "
             f"after film."}
    for i in range(6)]
RECORDS = [
    {"doc_id": "blood", "title": "Blood Street",
     "text": "Blood Street is a 1988 action film directed by Leo Fong. It was shot in Los Angeles in one summer."},
    {"doc_id": "fong", "title": "Leo Fong",
     "text": "Leo Fong (born 1928) is an American martial artist and actor. Leo Fong grew up in Arkansas."},
    {"doc_id": "arkansas", "title": "Arkansas", "text": "Arkansas is a state in the South of the United States."},
    *DISTRACTORS]


def documents(context) -> list[str]:
    """The documents a context cites, in order, once each."""
    return list(dict.fromkeys(ref.rsplit("#", 1)[0] for block in context.blocks for ref in block.refs))


@pytest.fixture(scope="module")
def nlp_db(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("evidence")
    db = folder / "nlp.duckdb"
    publish(write_jsonl(folder / "d.jsonl", RECORDS), db, Settings(mentions="nlp"))
    return db


def test_a_question_s_names_are_its_capitalised_sequences_without_its_first_word():
    assert names(QUESTION) == [("blood", "street")]
    assert names("Are Marufabad and Nasamkhrali in the same country?") == [("marufabad",), ("nasamkhrali",)]
    assert names("Which film came first, The Last Coupon or Dogs?") == [("last", "coupon"), ("dogs",)]
    assert names("Quem inventou o logaritmo?") == []  # a capital that only starts the sentence
    assert names("what is this") == []


def test_a_name_is_written_when_its_words_come_together_and_opens_a_text_with_words_between():
    tokens = words("Blood Street is a film")
    assert written(tokens, ("blood", "street")) and not written(tokens, ("street", "blood"))
    assert not written(tokens, ("blood", "film"))
    nolan = words("Christopher Edward Nolan (born 30 July 1970) is an English film director")
    assert opens(nolan, ("christopher", "nolan")) and not written(nolan, ("christopher", "nolan"))
    assert not opens(nolan, ("nolan", "christopher"))  # in order
    assert not opens(nolan, ("christopher", "director"))  # beyond the opening


def test_a_bridge_reaches_the_director_s_own_document_that_bm25_ranks_below_the_distractors(nlp_db):
    with Index(nlp_db) as index:
        bm25 = lexical.top_chunks(index.searcher(None), QUESTION, limit=5, most=None)
        assert "fong" not in [doc for _, doc, *_ in bm25[:4]]  # on words alone, Leo Fong's document is far down
        context = index.query(QUESTION, budget=4000, direct=False)
    assert context.route == "local", context.reason
    assert documents(context)[:2] == ["blood", "fong"]  # the named film first, then its director's document
    assert "arkansas" not in documents(context)[:3]  # an entity the linking sentence does not name stays back


def test_a_name_in_one_chunk_only_leads_although_it_is_no_entity(tmp_path: Path):
    records = [{"doc_id": "aas", "title": "Aas Ka Panchhi", "text": "Aas Ka Panchhi is a 1961 Hindi movie."},
               {"doc_id": "phool", "title": "Phoolwari", "text": "Phoolwari is a 1946 Indian film in Hindi."},
               *[{"doc_id": f"f{i}", "title": f"Film {i}",
                  "text": f"Which film was released first? The first film released in {1950 + i} was a Hindi film, "
                          f"released first in Bombay, and the film was released first again."} for i in range(6)]]
    db = tmp_path / "nlp.duckdb"
    publish(write_jsonl(tmp_path / "d.jsonl", records), db, Settings(mentions="nlp"))
    question = "Which film was released first, Aas Ka Panchhi or Phoolwari?"
    with Index(db) as index:
        seeds = index.query(question, budget=4000).seeds
        assert "phoolwari" not in seeds and "aas ka panchhi" not in seeds  # each in one chunk: no entity
        assert set(documents(index.query(question, budget=4000, direct=False))[:2]) == {"aas", "phool"}


def test_a_bridge_never_reaches_a_document_the_caller_may_not_read(tmp_path: Path):
    records = [dict(r, scope="private") if r["doc_id"] == "fong" else r for r in RECORDS]
    records.append({"doc_id": "fong2", "title": "Kung Fu", "scope": "private",
                    "text": "Kung Fu films made Leo Fong known in Arkansas."})
    db = tmp_path / "nlp.duckdb"
    publish(write_jsonl(tmp_path / "d.jsonl", records), db, Settings(mentions="nlp"))
    with Index(db) as index:
        readable = {d for (d,) in index.con.execute("select doc_id from documents where scope is null").fetchall()}
        everything = index.query(QUESTION, budget=4000, direct=False)
        public = index.query(QUESTION, budget=4000, direct=False, scopes=["public"])
    assert documents(everything)[:2] == ["blood", "fong"]
    assert documents(public)[0] == "blood" and set(documents(public)) <= readable


def test_a_linking_sentence_links_the_name_nearest_to_the_question_s_words_closest():
    text = ("Me and Bobby McGee is a song written by Kris Kristofferson and Fred Foster, first performed by "
            "Roger Miller.")
    linked = links("Who is the child of the performer of song Me And Bobby Mcgee?", ["Me and Bobby McGee"], [text],
                   {"fred": "Fred Foster", "roger": "Roger Miller", "kris": "Kris Kristofferson", "none": "Elvis"})
    assert linked["roger"] > linked["fred"] > 0 and "none" not in linked
    assert links("What is it?", [], [text], {"fred": "Fred Foster"}) == {}  # nothing asked beyond stop words
