"""Evidence ranked through the graph in an index of found names: names written verbatim, documents that open
with them, bridges to the entities their chunks link to the question, and scopes on every step."""

from pathlib import Path

import pytest

from acervo.flows.index import publish
from acervo.pipelines.names import words
from acervo.pipelines.query import lexical
from acervo.pipelines.query.context import Index
from acervo.pipelines.query.evidence import named_chunks, opens, written
from acervo.pipelines.query.local import links
from acervo.pipelines.query.seeds import names
from acervo.pipelines.settings import Settings
from conftest import write_jsonl

QUESTION = "What nationality is the director of film Blood Street?"
DISTRACTORS = [  # BM25's favourites for QUESTION: its common words, many times, and no name of it
    {"doc_id": f"d{i}", "title": f"Review {i}",
     "text": f"The director of the film spoke about nationality. Every film director has a nationality, and the "
             f"director of a street film in part {i} said nationality shapes film. Blood on the street, film "
             f"after film."}
    for i in range(6)]
RECORDS = [
    {"doc_id": "blood", "title": "Blood Street",
     "text": "Blood Street is a 1988 action film directed by Leo Fong. It was shot in Arkansas in one summer."},
    {"doc_id": "fong", "title": "Leo Fong",
     "text": "Leo Fong (born 1928) is an American martial artist and actor. Leo Fong grew up in Arkansas."},
    {"doc_id": "arkansas", "title": "Arkansas", "text": "Arkansas is a state in the South of the United States."},
    *DISTRACTORS]


def documents(context) -> list[str]:
    """The documents a context cites, in order, once each."""
    return list(dict.fromkeys(ref.rsplit("#", 1)[0] for block in context.blocks for ref in block.refs))


WOLF = [  # mode titles: a seed's father, a text that only repeats the seed's name, a text of the question's words
    {"doc_id": "wolf", "title": "Konrad Wolf",
     "text": "Konrad Wolf was an East German film director. He was the son of writer Friedrich Wolf."},
    {"doc_id": "friedrich", "title": "Friedrich Wolf (writer)",
     "text": "Friedrich Wolf was a doctor and a writer. He served as an ambassador to Poland."},
    {"doc_id": "steiner", "title": "Rudolf Steiner (film director)",
     "text": "Rudolf Steiner is a producer. Steiner studied at the Konrad Wolf academy, the Konrad Wolf film "
             "school of Konrad Wolf's city."},
    {"doc_id": "alina", "title": "Alina Levshin",
     "text": "Alina Levshin is an actress. Her country of birth is Ukraine; she moved to another country."},
    *DISTRACTORS[:2]]


def built(tmp_path_factory, records: list[dict], mentions: str) -> Path:
    """An index of `records` with names found in mode `mentions`."""
    folder = tmp_path_factory.mktemp(mentions)
    db = folder / f"{mentions}.duckdb"
    publish(write_jsonl(folder / "d.jsonl", records), db, Settings(mentions=mentions))
    return db


@pytest.fixture(scope="module")
def titles_db(tmp_path_factory) -> Path:
    return built(tmp_path_factory, WOLF, "titles")


@pytest.fixture(scope="module")
def nlp_db(tmp_path_factory) -> Path:
    return built(tmp_path_factory, RECORDS, "nlp")


def test_a_question_s_names_are_its_capitalised_sequences_its_first_word_tried_with_and_without():
    assert names(QUESTION) == [(("blood", "street"),)]
    assert names("Blood Street was directed by whom?") == [(("blood", "street"), ("street",))]
    assert names("Are Marufabad and Nasamkhrali in the same country?") == [
        (("are", "marufabad"), ("marufabad",)), (("nasamkhrali",),)]
    assert names("Which film came first, The Last Coupon or Dogs?") == [(("last", "coupon"),), (("dogs",),)]
    assert names("Quem inventou o logaritmo?") == []  # a lone capital that only starts the sentence
    assert names("what is this") == []


def test_a_name_is_written_when_its_words_come_together_and_opens_a_text_with_a_middle_name():
    tokens = words("Blood Street is a film")
    assert written(tokens, ("blood", "street")) and not written(tokens, ("street", "blood"))
    assert not written(tokens, ("blood", "film"))
    nolan = words("Christopher Edward Nolan (born 30 July 1970) is an English film director")
    assert opens(nolan, ("christopher", "nolan")) and not written(nolan, ("christopher", "nolan"))
    assert opens(words('Robert "Throb" Young (1964 - 2014)'), ("robert", "young"))  # punctuation aside
    assert opens(words("The Heinkel HD 23 was a fighter"), ("heinkel", "hd", "23"))
    assert not opens(nolan, ("nolan", "christopher"))  # in order
    assert not opens(words("Leo Smith met Tom Fong in 1990"), ("leo", "fong"))  # too far apart
    assert not opens(words("In 1990 the film Blood Street opened"), ("blood", "street"))  # not at the start


def test_a_bridge_reaches_the_director_s_own_document_that_bm25_ranks_below_the_distractors(nlp_db):
    with Index(nlp_db) as index:
        bm25 = lexical.top_chunks(index.searcher(None), QUESTION, limit=5, most=None)
        assert "fong" not in [doc for _, doc, *_ in bm25[:4]]  # on words alone, Leo Fong's document is far down
        context = index.query(QUESTION, budget=4000, direct=False)
    assert context.route == "local", context.reason
    cited = documents(context)
    assert cited[0] == bm25[0][1]  # BM25's best chunk leads every route's units
    assert [d for d in cited if d != bm25[0][1]][:2] == ["blood", "fong"]  # the named film, then its director's
    # Arkansas is mentioned by the same chunk, in a sentence that holds nothing the question asks
    assert "arkansas" in cited and cited.index("arkansas") > cited.index("fong")
    # the route's own units score at most 1, as local units do (a mixed route's reports lead them); BM25's best, 1 more
    assert sorted(b.score for b in context.blocks if b.kind != "instruction")[-2:] == [1.0, 2.0]


def test_a_document_that_opens_with_a_name_leads_those_that_mention_it(tmp_path: Path):
    records = [{"doc_id": "aas", "title": "Aas Ka Panchhi", "text": "Aas Ka Panchhi is a 1961 Hindi movie."},
               {"doc_id": "phool", "title": "Phoolwari", "text": "Phoolwari is a 1946 Indian film in Hindi."},
               {"doc_id": "songs", "title": "Songs",
                "text": "Which film was released first? Songs of Phoolwari were released first, the film later."},
               *[{"doc_id": f"f{i}", "title": f"Film {i}",
                  "text": f"Which film was released first? The first film released in {1950 + i} was a Hindi film "
                          f"with Panchhi, released first in Bombay, and the film was released first again."}
                 for i in range(6)]]
    db = tmp_path / "nlp.duckdb"
    publish(write_jsonl(tmp_path / "d.jsonl", records), db, Settings(mentions="nlp"))
    question = "Which film was released first, Aas Ka Panchhi or Phoolwari?"
    with Index(db) as index:
        bm25 = [doc for _, doc, *_ in lexical.top_chunks(index.searcher(None), question, limit=3, most=None)]
        assert bm25[:2] != ["aas", "phool"] and set(bm25[:2]) != {"aas", "phool"}
        context = index.query(question, budget=4000, direct=False)
    assert "phoolwari" not in context.seeds and "aas ka panchhi" not in context.seeds  # one chunk each: no entity
    assert set(documents(context)[:2]) == {"aas", "phool"}  # each opens with its name; "songs" only mentions one


def test_a_name_held_by_too_many_chunks_finds_none(nlp_db):
    with Index(nlp_db) as index:
        search = index.searcher(None)
        search.of(QUESTION)  # the question's readable postings, which names are read from
        assert [row[0].split("#")[0] for row in named_chunks(search, ("blood", "street"))] == ["blood"]
        assert len(named_chunks(search, ("film",))) == 7  # "film" is in seven chunks
        assert named_chunks(search, ("film",), most=6) == []


@pytest.mark.slow  # seconds of indexing
def test_a_scoped_caller_ranks_as_an_index_of_its_readable_documents_alone(tmp_path: Path):
    private = [{"doc_id": "remake", "title": "Remake", "scope": "private",
                "text": "Blood Street was remade in 2001 by Leo Fong, who directed the film street by street."},
               {"doc_id": "fong2", "title": "Kung Fu", "scope": "private",
                "text": "Kung Fu films made Leo Fong known in Arkansas, where the director lived."}]
    both, alone = tmp_path / "both.duckdb", tmp_path / "alone.duckdb"
    publish(write_jsonl(tmp_path / "both.jsonl", RECORDS + private), both, Settings(mentions="nlp"))
    publish(write_jsonl(tmp_path / "alone.jsonl", RECORDS), alone, Settings(mentions="nlp"))
    with Index(both) as index:
        everything = index.query(QUESTION, budget=4000, direct=False)
        scoped = index.query(QUESTION, budget=4000, direct=False, scopes=["public"])
    with Index(alone) as index:
        readable = index.query(QUESTION, budget=4000, direct=False)
    assert {"remake", "fong2"} & set(documents(everything))
    assert (scoped.route, scoped.reason, scoped.seeds) == (readable.route, readable.reason, readable.seeds)
    assert [(b.kind, b.text, b.refs, b.score) for b in scoped.blocks] == [
        (b.kind, b.text, b.refs, b.score) for b in readable.blocks]


def test_a_linking_sentence_links_the_name_nearest_to_the_question_s_words_closest():
    text = ("Me and Bobby McGee is a song written by Kris Kristofferson and Fred Foster, first performed by "
            "Roger Miller.")
    linked = links("Who is the child of the performer of song Me And Bobby Mcgee?", ["Me and Bobby McGee"], [text],
                   {"fred": "Fred Foster", "roger": "Roger Miller", "kris": "Kris Kristofferson", "none": "Elvis"})
    assert linked["roger"] > linked["fred"] > 0 and "none" not in linked
    assert links("What is it?", [], [text], {"fred": "Fred Foster"}) == {}  # nothing asked beyond stop words
    # a question's word inside the name links nothing by itself
    assert links("Which song is it?", [], ["The Song Company met Bob."], {"s": "The Song Company"}) == {"s": 0.0}


def test_a_neighbour_is_linked_by_its_short_name_and_only_by_sentences_about_the_seed():
    own = "Konrad Wolf was an East German film director. He was the son of writer Friedrich Wolf."
    question = "Which country is Konrad Wolf's father from?"
    # the neighbour is read by its short name, "Friedrich Wolf"
    assert links(question, ["Konrad Wolf"], [own], {"f": "Friedrich Wolf (writer)"})["f"] > 0
    # another document's sentence about its own subject links nothing to the seed, unless it names the seed
    steiner = "Rudolf Steiner was the son of a miller. He studied at the Konrad Wolf Film Academy."
    assert links(question, ["Konrad Wolf"], [], {"s": "Rudolf Steiner"}, elsewhere=[steiner]) == {}
    assert links(question, ["Konrad Wolf"], [steiner], {"s": "Rudolf Steiner"})["s"] > 0  # as the seed's own text
    named = "Rudolf Steiner, son of Konrad Wolf, was born in Potsdam."
    assert links(question, ["Konrad Wolf"], [], {"s": "Rudolf Steiner"}, elsewhere=[named])["s"] > 0
    # elsewhere, a seed is named by its whole label: a short form there may be another film of that name
    joffe = "Roland Joffe is a director, known for The Mission."
    assert links("Who is the director of The Mission (1983 film)?", ["The Mission (1983 film)"], [],
                 {"r": "Roland Joffe"}, elsewhere=[joffe]) == {}


def test_a_chunk_s_match_beyond_the_question_s_names_leaves_out_the_words_of_those_names(titles_db):
    with Index(titles_db) as index:
        texts = dict(index.con.execute("select chunk_id, text from chunks order by chunk_id").fetchall())
        chunk_ids = list(texts)
        question = "Which country is Konrad Wolf's father from?"
        full, beyond = lexical.matches(index.searcher(None), question, texts, "Konrad Wolf")
    by_doc = {cid.rsplit("#", 1)[0]: cid for cid in chunk_ids}
    assert full[by_doc["steiner"]] > 0 and beyond[by_doc["steiner"]] == 0  # it holds the name and nothing asked
    assert beyond[by_doc["alina"]] > 0  # "country" is asked beyond the name
    assert max(beyond.values()) == 1.0 and max(full.values()) == 1.0


def test_a_seed_s_father_ranks_second_over_texts_that_only_repeat_the_seed_s_name(titles_db):
    with Index(titles_db) as index:
        context = index.query("Which country is Konrad Wolf's father from?", budget=4096)
        bm25 = lexical.top_chunks(index.searcher(None), "Which country is Konrad Wolf's father from?", limit=1)
    found = documents(context)
    assert found[0] == bm25[0][1]  # BM25's best chunk leads; then the seed's own document and its father's
    assert [d for d in found if d != bm25[0][1]][:2] == ["wolf", "friedrich"]


def test_a_sentence_states_a_kin_or_spouse_relation_in_its_own_words():
    text = "Lothair II was the son of Lothair I and Ermengarde of Tours. He met Pope Nicholas I in Rome."
    labels = {"father": "Lothair I", "mother": "Ermengarde of Tours", "pope": "Pope Nicholas I"}
    for question in ("When did Lothair II's mother die?", "Quando morreu a mãe de Lothair II?"):
        linked = links(question, ["Lothair II"], [text], labels)
        assert linked["mother"] > linked["pope"] and linked["father"] > linked["pope"], (question, linked)
    married = "Katherine Mansfield married John Middleton Murry in 1918. She knew Virginia Woolf."
    linked = links("Why did John Middleton Murry's wife die?", ["John Middleton Murry"], [married],
                   {"k": "Katherine Mansfield", "v": "Virginia Woolf"})
    assert linked["k"] > linked["v"]
