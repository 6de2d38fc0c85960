"""Stage terms: the stored BM25 postings score as DuckDB's fts extension does, the document word lists count
each word once per document, and reruns keep both equal to a fresh build."""

import json
from pathlib import Path

import duckdb
import pytest
from hypothesis import given
from hypothesis import strategies as st

from acervo.flows.index import build
from acervo.pipelines import terms
from acervo.pipelines.db import EXTENSION, connect, load_fts, sql
from acervo.pipelines.names import word_stems
from acervo.pipelines.query import lexical
from acervo.pipelines.query.evidence import named_chunks
from acervo.pipelines.query.words import Words
from acervo.pipelines.run import Run
from acervo.pipelines.settings import Settings, Stemmer
from acervo.pipelines.stopwords.en import stop_words
from conftest import SAMPLE, assert_like_fresh, write_jsonl

DATA = Path(__file__).parent / "data"
FIXTURES = ("2wiki_sample.jsonl", "2wiki_sample_questions.jsonl", "seed_corpus.jsonl", "offtopic_questions.jsonl")

QUESTIONS = ["Who directed the film?", "Where was the director of the film born?", "When did the queen die?",
             "Which country is Teutberga from, and was she a queen?", "xylophone", "the of and"]


def full(found: dict[str, tuple[float, float]]) -> dict[str, float]:
    """Each chunk's BM25 score from lexical.scores; with no names given, its score beyond them is the same."""
    assert all(score == beyond for score, beyond in found.values())
    return {chunk_id: score for chunk_id, (score, _) in found.items()}


def texts(rows: list[tuple[str, str]], ids: list[str]) -> dict[str, str]:
    """The text of each chunk of `ids`, from `rows` (chunk_id, text)."""
    return {chunk_id: text for chunk_id, text in rows if chunk_id in ids}


def fts_top(rows: list[tuple[str, str]], question: str, limit: int) -> list[tuple[str, float]]:
    """The best `limit` chunks for `question` by an fts index over `rows` (chunk_id, text), as acervo rounds."""
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    con.load_extension(str(EXTENSION))
    con.execute("create table c (chunk_id varchar, text varchar)")
    con.executemany("insert into c values (?, ?)", rows)
    con.execute("pragma create_fts_index('c', 'chunk_id', 'text')")
    found = con.execute("select chunk_id, round(fts_main_c.match_bm25(chunk_id, ?), ?) as s from c "
                        "where s is not null order by s desc, chunk_id limit ?",
                        [question, lexical.BM25_DIGITS, limit]).fetchall()
    con.close()
    return found


@pytest.fixture(scope="module")
def scoped(tmp_path_factory) -> duckdb.DuckDBPyConnection:
    """The sample corpus indexed with every third document in scope 'a' and every third in scope 'b'."""
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    for i, record in enumerate(records):
        record["scope"] = [None, "a", "b"][i % 3]
    con = connect()
    build(Run.alone(con), write_jsonl(tmp_path_factory.mktemp("terms") / "scoped.jsonl", records), Settings())
    yield con
    con.close()


@pytest.mark.slow  # seconds of indexing
@pytest.mark.parametrize("scopes", [None, ["a"], ["a", "b"]])
def test_stored_postings_rank_and_score_as_an_fts_index_over_the_readable_chunks(scoped, scopes):
    rows = scoped.execute("select c.chunk_id, c.text from chunks c join documents d using (doc_id) "
                          "where ?::varchar[] is null or d.scope is null or list_contains(?::varchar[], d.scope) "
                          "order by c.chunk_id", [scopes, scopes]).fetchall()
    search = lexical.searcher(scoped, scopes)
    for question in QUESTIONS:
        stored = [(chunk_id, score) for chunk_id, *_, score in lexical.top_chunks(search, question, limit=20)]
        assert stored == fts_top(rows, question, 20), question
    some = [chunk_id for chunk_id, _ in fts_top(rows, QUESTIONS[0], 5)]
    assert full(lexical.scores(search, QUESTIONS[0], texts(rows, some))) == dict(fts_top(rows, QUESTIONS[0], 5))


def test_a_common_word_is_read_down_to_its_best_postings_and_given_chunks_keep_their_whole_score(
        scoped, monkeypatch):
    monkeypatch.setattr(lexical, "MAX_POSTINGS", 3)
    rows = scoped.execute("select chunk_id, text from chunks order by chunk_id").fetchall()
    question = "Who directed the film?"
    best = dict(scoped.execute(
        "select chunk_id, impact from chunk_terms where term = 'film' order by impact desc, chunk_id").fetchall())
    cutoff = sorted(best.values(), reverse=True)[2]
    read = {chunk_id for chunk_id, impact in best.items() if impact >= cutoff}
    assert 3 <= len(read) < len(best)
    found = lexical.top_chunks(lexical.searcher(scoped), question, limit=50)
    directed = {c for (c,) in scoped.execute("select chunk_id from chunk_terms where term = 'direct'").fetchall()}
    assert {chunk_id for chunk_id, *_ in found} <= read | directed
    exact = dict(fts_top(rows, question, 1000))
    some = sorted(best)[:10]
    assert full(lexical.scores(lexical.searcher(scoped), question, texts(rows, some))) == {c: exact[c] for c in some}


def test_each_word_s_best_postings_are_one_stored_row_that_ranks_as_reading_every_posting(monkeypatch):
    monkeypatch.setattr(terms, "BEST_POSTINGS", 3)
    monkeypatch.setattr(lexical, "MAX_POSTINGS", 3)
    con = connect()
    build(Run.alone(con), SAMPLE, Settings())
    stored, scanned = lexical.Scores(con), lexical.Scores(con)
    scanned.stored = False  # as a scoped caller reads: every posting of its words, from chunk_terms
    assert stored.stored and not stored.scoped
    rows = con.execute("select chunk_id, text from chunks order by chunk_id").fetchall()
    for question in QUESTIONS:
        by_row = lexical.top_chunks(lexical.searcher(con, None, stored), question, limit=20, most=3)
        by_scan = lexical.top_chunks(lexical.searcher(con, None, scanned), question, limit=20, most=3)
        assert by_row == by_scan, question
    question = "Who directed the film?"
    lexical.top_chunks(lexical.searcher(con, None, scanned), question, limit=5, most=3)
    every = named_chunks(lexical.searcher(con, None, scanned), ("film",), most=1000)
    lexical.top_chunks(lexical.searcher(con, None, stored), question, limit=5, most=3)
    film = {c for (c,) in con.execute("select chunk_id from chunk_terms where term = 'film'").fetchall()}
    assert len(film) > 3 and "film" in stored.counts() and "film" not in stored.complete  # stops at its best postings
    assert len(every) > 3 and named_chunks(lexical.searcher(con, None, stored), ("film",), most=1000) == every
    assert "film" in stored.complete  # the rest read when a name asks
    exact = dict(fts_top(rows, question, 1000))
    some = sorted(film)[:10]
    assert full(lexical.scores(lexical.searcher(con, None, stored), question, texts(rows, some))) == {
        c: exact[c] for c in some}
    con.close()


def test_a_document_counts_once_for_each_word_it_uses_among_the_documents_a_caller_may_read(scoped):
    texts: dict[str, tuple[str | None, set[str]]] = {}
    rows = scoped.execute("select doc_id, d.scope, c.text from chunks c join documents d using (doc_id)").fetchall()
    for doc_id, scope, text in rows:
        texts.setdefault(doc_id, (scope, set()))[1].update(word_stems(text))
    for scopes in (None, ["b"]):
        readable = [w for scope, w in texts.values() if scopes is None or scope is None or scope in scopes]
        stats = Words(scoped, scopes, list)
        assert stats.n_documents == len(readable)
        for word in ("born", "film", "queen", "zzzzz", "the"):
            assert stats.count(word[:5]) == sum(word[:5] in w for w in readable), (scopes, word)


@pytest.mark.slow  # seconds of indexing or waiting
def test_reruns_append_postings_then_rewrite_them_in_term_order_and_stay_equal_to_a_fresh_build(
        con, tmp_path: Path, monkeypatch):
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    build(Run.alone(con), write_jsonl(tmp_path / "v1.jsonl", records), Settings())
    assert con.execute("select value from index_state where key = ?", [terms.APPENDED]).fetchone() == ("0",)
    records[0]["text"] += " A zebra crossed the xylophone."
    source = write_jsonl(tmp_path / "v2.jsonl", records[1:] + records[:1])
    build(Run.alone(con), source, Settings())
    appended = int(con.execute("select value from index_state where key = ?", [terms.APPENDED]).fetchone()[0])
    assert appended > 0
    assert_like_fresh(con, source, Settings())
    monkeypatch.setattr(terms, "RESORT_SHARE", 0.0)
    records[1]["text"] += " Another zebra."
    source = write_jsonl(tmp_path / "v3.jsonl", records)
    build(Run.alone(con), source, Settings())
    assert con.execute("select value from index_state where key = ?", [terms.APPENDED]).fetchone() == ("0",)
    con.execute("set threads = 1")  # one thread reads the table in its stored order
    stored = con.execute("select term, -impact from chunk_terms").fetchall()
    assert stored == sorted(stored)
    assert_like_fresh(con, source, Settings())


def scratch_read(run: Run, source: Path, settings: Settings, **reads: tuple[str, dict]) -> dict[str, list[tuple]]:
    """Build on `run`, and run each of `reads` (a statement and its parameters) on the terms stage's scratch tables
    once it is done, before the run drops them: name -> rows."""
    seen: dict[str, list[tuple]] = {}

    def wrap(fn, name):
        def stage(stage_run: Run, **knobs):
            work = fn(stage_run, **knobs)
            if name == "terms":
                seen.update({k: stage_run.con.execute(q, p).fetchall() for k, (q, p) in reads.items()})
            return work
        return stage
    build(run, source, settings, wrap=wrap)
    return seen


@pytest.mark.slow  # seconds of indexing or waiting
def test_best_postings_made_a_range_of_words_at_a_time_equal_those_made_at_once(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(terms, "BEST_POSTINGS", 3)
    whole = connect()
    build(Run.alone(whole), SAMPLE, Settings())
    monkeypatch.setattr(terms, "BEST_BATCH", 200)  # postings a part: dozens of parts over the sample
    monkeypatch.setattr(terms, "MERGE_BATCH", 200)
    parted = connect()
    parts = (sql("terms.best_parts"), {"full": True, "batch": 200})
    firsts = [f for (f,) in scratch_read(Run.alone(parted), SAMPLE, Settings(), firsts=parts)["firsts"]]
    assert len(firsts) > 20 and firsts == sorted(set(firsts))  # ranges of words, in order, each its own
    rows = "select term, df, postings, cutoff, n_postings from term_postings order by term"
    assert parted.execute(rows).fetchall() == whole.execute(rows).fetchall()
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    records = [{**r, "text": r["text"] + " Film after film."} if i % 7 == 0 else r for i, r in enumerate(records)]
    source = write_jsonl(tmp_path / "v2.jsonl", records[3:])
    read = scratch_read(Run.alone(parted), source, Settings(), firsts=(sql("terms.best_next_parts"), {"batch": 200}))
    firsts = [f for (f,) in read["firsts"]]
    assert len(firsts) > 5 and firsts == sorted(set(firsts))  # the rerun's words made from their rows, by ranges
    assert_like_fresh(parted, source, Settings())
    whole.close()
    parted.close()


@pytest.mark.slow  # seconds of indexing or waiting
def test_reruns_make_a_word_s_best_postings_from_its_stored_ones_where_they_suffice_and_equal_a_fresh_build(
        con, tmp_path: Path, monkeypatch):
    monkeypatch.setattr(terms, "BEST_POSTINGS", 3)
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    build(Run.alone(con), write_jsonl(tmp_path / "v1.jsonl", records), Settings())
    best = con.execute("select df, [p.chunk_id for p in postings] from term_postings where term = 'film'").fetchone()
    assert best[0] > len(best[1]) >= 3  # a common word keeps its best postings only
    gone = {chunk_id.split("#")[0] for chunk_id in best[1]}  # its best chunks' documents go; a new one praises films
    records = [r for r in records if r["doc_id"] not in gone]
    records.append({"doc_id": "new", "title": "Films", "text": "Film after film after film: a film."})
    source = write_jsonl(tmp_path / "v2.jsonl", records)
    made = dict(scratch_read(Run.alone(con), source, Settings(), made=("select term, exact from best_next", {}))
                ["made"])
    assert made["film"] is False and any(made.values())  # read whole again; the rarer words from their rows
    assert_like_fresh(con, source, Settings())
    records.append({"doc_id": "newer", "title": "More films", "text": "Film, film, film and film."})
    source = write_jsonl(tmp_path / "v3.jsonl", records)
    film = ("select exact from best_next where term = 'film'", {})
    read = scratch_read(Run.alone(con), source, Settings(), film=film)
    assert read["film"] == [(True,)]  # its row sufficed
    assert_like_fresh(con, source, Settings())


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_rerun_only_counts_the_chunks_of_a_word_whose_changes_all_fall_below_its_best_postings(
        con, tmp_path: Path, monkeypatch):
    monkeypatch.setattr(terms, "BEST_POSTINGS", 3)
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    long = " ".join(f"word{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(150))  # one film in many words
    records.append({"doc_id": "aside", "title": "Aside", "text": f"{long} and a film."})
    build(Run.alone(con), write_jsonl(tmp_path / "v1.jsonl", records), Settings())
    before = con.execute("select df, postings, cutoff from term_postings where term = 'film'").fetchone()
    for changed in (records[:-1], records[:-1] + [{**records[-1], "doc_id": "aside2"}]):  # its chunk goes, comes
        source = write_jsonl(tmp_path / "v.jsonl", changed)
        counted = ("select counted from best_touched where term = 'film'", {})
        assert scratch_read(Run.alone(con), source, Settings(), counted=counted)["counted"] == [(True,)]
        after = con.execute("select df, postings, cutoff from term_postings where term = 'film'").fetchone()
        assert after[1:] == before[1:] and after[0] == before[0] - (changed == records[:-1])
        assert_like_fresh(con, source, Settings())


LANGUAGE_SAMPLES = DATA / "language_samples.jsonl"


def samples(language: str) -> list[dict]:
    """The short documents written in `language` (tests/data/language_samples.jsonl), as corpus records."""
    rows = [json.loads(line) for line in LANGUAGE_SAMPLES.read_text(encoding="utf-8").splitlines()]
    return [{k: v for k, v in r.items() if k != "language"} for r in rows if r["language"] == language]


PORTUGUESE = samples("portuguese")
LANGUAGES = [  # a language's stemmer, questions, and a word only that stemmer takes to a document of its samples
    ("portuguese", ("Quem introduziu os logaritmos?", "Quais informações os dados produzem?", "rios ibéricos"),
     ("nasceu", "rio")),  # "nasce"
    ("spanish", ("¿Quién escribió Don Quijote?", "¿Cuál es la cordillera más larga?", "universidades"),
     ("fundaron", "uba")),  # "fundada"
    ("german", ("Wer hat den Buchdruck erfunden?", "Welcher Fluss mündet in die Nordsee?", "Kölner Dom"),
     ("kirchen", "dom")),  # "Kirche"
]


XQUAD = [json.loads(line) for line in (DATA / "xquad_languages.jsonl").read_text(encoding="utf-8").splitlines()]
TESLA = {"romanian": "În ce an a murit Tesla?", "turkish": "Tesla hangi yıl ölmüştür?",  # XQuAD's, in each language
         "russian": "В каком году умер Тесла?", "greek": "Ποια χρονιά πέθανε ο Τέσλα;",
         "arabic": "في أي سنة توفي تسلا؟", "hindi": "टेस्ला की मृत्यु किस वर्ष हुई?"}


def fts_ranked(con, question: str, stemmer: str) -> list[tuple[str, float]]:
    """fts_top over the chunks of `con`, with an fts index made with `stemmer`."""
    rows = con.execute("select chunk_id, text from chunks order by chunk_id").fetchall()
    fts = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    fts.load_extension(str(EXTENSION))
    fts.execute("create table c (chunk_id varchar, text varchar)")
    fts.executemany("insert into c values (?, ?)", rows)
    fts.execute(f"pragma create_fts_index('c', 'chunk_id', 'text', stemmer='{stemmer}')")
    found = fts.execute("select chunk_id, round(fts_main_c.match_bm25(chunk_id, ?), ?) as s from c "
                        "where s is not null order by s desc, chunk_id", [question, lexical.BM25_DIGITS]).fetchall()
    fts.close()
    return found


def stemmer_of(con) -> str:
    """The stemmer the terms stage stored."""
    return con.execute("select value from index_state where key = ?", [terms.STEMMER]).fetchone()[0]


@pytest.mark.parametrize(("language", "questions", "inflected"), LANGUAGES, ids=[lang for lang, *_ in LANGUAGES])
def test_auto_stems_a_corpus_in_its_language_and_questions_as_its_chunks(con, tmp_path: Path, language, questions,
                                                                          inflected):
    build(Run.alone(con), write_jsonl(tmp_path / "corpus.jsonl", samples(language)), Settings())
    assert stemmer_of(con) == language
    search = lexical.searcher(con)
    for question in questions:
        stored = [(chunk_id, score) for chunk_id, *_, score in lexical.top_chunks(search, question, limit=20)]
        assert stored == fts_ranked(con, question, language), question
    word, doc_id = inflected
    chunk = con.execute("select chunk_id from chunks where doc_id = ?", [doc_id]).fetchone()[0]
    assert lexical.top_chunks(search, word, limit=1)[0][0] == chunk  # the same stem in its language
    assert fts_ranked(con, word, "porter") == []  # not in English's


@pytest.mark.parametrize("language", TESLA)
def test_auto_reads_the_language_of_two_xquad_paragraphs_and_ranks_as_fts_with_its_stemmer(con, tmp_path: Path,
                                                                                             language):
    records = [{k: v for k, v in r.items() if k != "language"} for r in XQUAD if r["language"] == language]
    build(Run.alone(con), write_jsonl(tmp_path / "corpus.jsonl", records), Settings())
    assert stemmer_of(con) == language
    stored = [(chunk_id, score) for chunk_id, *_, score in lexical.top_chunks(lexical.searcher(con), TESLA[language],
                                                                              limit=20)]
    words = " ".join(lexical.tokens(TESLA[language]))  # fts would match a text's empty word to the "?" left out
    assert stored == fts_ranked(con, words, language)
    assert stored[0][0].startswith("a03-p0#")  # the paragraph on Tesla


def test_a_text_holds_a_question_s_word_that_it_writes_with_the_article_the_arabic_stemmer_takes_off(
        con, tmp_path: Path):
    records = [{k: v for k, v in r.items() if k != "language"} for r in XQUAD if r["language"] == "arabic"]
    build(Run.alone(con), write_jsonl(tmp_path / "corpus.jsonl", records), Settings())
    text = con.execute("select text from chunks where doc_id = 'a03-p0'").fetchone()[0]
    question = "ما نجاح مشاريع تسلا؟"  # how successful were Tesla's projects? The text writes "النجاح", the success
    by_stem, by_letters = Words(con, None, lexical.stemmer(stemmer_of(con))), Words(con, None, list)
    assert by_letters.uncovered(question, [text]) == ["نجاح"]
    assert by_stem.uncovered(question, [text]) == []
    assert by_stem.coverage(question, text) == 1.0 > by_letters.coverage(question, text)
    assert by_stem.held(["النجاح"], ["نجاح"]) == ["النجاح"]  # the article on the question's side, too


@pytest.mark.parametrize("stemmer", ["porter", "portuguese", "spanish", "german", "russian", "greek", "hindi"])
def test_a_stemmer_that_takes_only_endings_off_leaves_words_compared_by_their_first_letters(con, stemmer):
    stats, letters = Words(con, None, lexical.stemmer(stemmer)), Words(con, None, list)
    asked = ["turning", "brown", "setting", "trends", "году", "χρονια", "मतय"]  # folded, as words() gives them
    said = ["turns", "browns", "sets", "trend", "года", "χρονιεσ", "मतय"]
    assert stats.held(asked, said) == letters.held(asked, said) == ["brown", "trends", "χρονια", "मतय"]


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_rerun_that_changes_the_corpus_s_language_or_the_stemmer_setting_stems_every_chunk_again(
        con, tmp_path: Path):
    english = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    build(Run.alone(con), write_jsonl(tmp_path / "en.jsonl", english), Settings())
    assert stemmer_of(con) == "porter"
    source = write_jsonl(tmp_path / "pt.jsonl", english[:2] + [
        dict(r, doc_id=f"{r['doc_id']}{i}") for i in range(len(english)) for r in PORTUGUESE])
    build(Run.alone(con), source, Settings())
    assert stemmer_of(con) == "portuguese"
    assert_like_fresh(con, source, Settings())
    spanish = Settings(stemmer="spanish")
    build(Run.alone(con), source, spanish)
    assert stemmer_of(con) == "spanish"
    assert_like_fresh(con, source, spanish)


@pytest.fixture(scope="module")
def fts() -> duckdb.DuckDBPyConnection:
    """A connection with the fts extension and db.bm25_tokens loaded."""
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    load_fts(con)
    yield con
    con.close()


def fixture_texts() -> list[str]:
    """Every text and question of the bundled fixtures (English and Portuguese)."""
    records = [json.loads(line) for name in FIXTURES
               for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r[key] for r in records for key in ("title", "text", "question") if isinstance(r.get(key), str)]


def duckdb_tokens(fts: duckdb.DuckDBPyConnection, texts: list[str]) -> list[list[str]]:
    """Each text's words as the terms stage splits it in SQL (db.bm25_tokens), empty ones left out."""
    rows = fts.execute("select list_filter(bm25_tokens(t), w -> w <> '') from unnest($t::varchar[]) "
                       "with ordinality as u(t, i) order by i", {"t": texts}).fetchall()
    return [words for (words,) in rows]


def test_the_query_side_splits_texts_as_the_terms_stage_does_in_sql(fts):
    texts = fixture_texts() + ["ΟΔΟΣ Ålborg naïve İstanbul ﬁx a\x0bb c\xa0d e\tf 3.5-inch O'Brien's “quoted” x_y"]
    assert [lexical.tokens(t) for t in texts] == duckdb_tokens(fts, texts)
    assert lexical.tokens("ΟΔΟΣ naïve a\x0bb") == ["οδοσ", "naive", "a\x0bb"]  # capital sigma, marks, no \v split


@given(st.text(st.characters(exclude_categories=["Cs", "Co", "Cn"], exclude_characters="\x00"), max_size=60))
def test_any_text_splits_in_python_as_db_bm25_tokens_splits_it(fts, text):
    # a text with a NUL is no chunk (the documents stage rejects it), and DuckDB's strip_accents stops there
    assert lexical.tokens(text) == duckdb_tokens(fts, [text])[0]


def test_text_without_spaces_between_words_splits_into_pairs_of_characters(fts):
    text = "北京大学是中国的大学。我在iPhone手机上看「日本語のテキスト」、中 a"
    assert lexical.tokens(text) == ["北京", "京大", "大学", "学是", "是中", "中国", "国的", "的大", "大学", "我在",
                                    "iphone", "手机", "机上", "上看", "日本", "本語", "語の", "のテ", "テキ", "キス",
                                    "スト", "中", "a"]
    assert lexical.tokens(text) == duckdb_tokens(fts, [text])[0]


@given(st.text(st.sampled_from(list("北京大学中国のテキスト語、。「」！ ab1-\tภาษาไทยกิ๑ฯ\u0e48")), max_size=40))
def test_any_mix_of_han_kana_thai_and_latin_splits_in_python_as_in_sql(fts, text):
    assert lexical.tokens(text) == duckdb_tokens(fts, [text])[0]


@pytest.mark.parametrize("name", [s for s in Stemmer.__args__ if s != "auto"])
def test_the_query_side_stems_every_word_as_duckdb_fts_stems_it(fts, name):
    words = sorted({w for t in fixture_texts() for w in lexical.tokens(t)})
    expected = [s for (s,) in fts.execute("select stem(w, $name) from unnest($w::varchar[]) with ordinality as "
                                          "u(w, i) order by i", {"w": words, "name": name}).fetchall()]
    assert lexical.stemmer(name)(words) == expected


def test_a_chunk_s_terms_are_its_words_less_stop_words_stemmed_and_counted_without_a_database():
    found = terms.chunk_terms("The runners ran; a runner RUNS, and running is the run.", lexical.stemmer("porter"),
                              frozenset(["the", "a", "and", "is"]))
    assert found == {"runner": 2, "ran": 1, "run": 3}
    unspaced = terms.chunk_terms("北京大学 the", lexical.stemmer("none"), frozenset(["the"]))
    assert unspaced == {"北京": 1, "京大": 1, "大学": 1}
    assert terms.chunk_terms("the of 42", lexical.stemmer("porter"), frozenset(["the", "of"])) == {}


def test_a_chunk_s_terms_in_python_equal_those_the_fts_extension_s_tokens_and_stemmer_give(fts):
    stop, texts = frozenset(stop_words()), fixture_texts()
    rows = fts.execute(  # every text's terms and counts in one statement, by the text's place in the list
        "with words as (select i, unnest(bm25_tokens(t)) as w from unnest($t::varchar[]) with ordinality as u(t, i)) "
        "select i, stem(w, 'porter') as term, count(*)::integer from words "
        "where w <> '' and w not in (select unnest($stop::varchar[])) group by all",
        {"t": texts, "stop": sorted(stop)}).fetchall()
    expected: list[dict[str, int]] = [{} for _ in texts]
    for i, term, n in rows:
        expected[i - 1][term] = n
    assert [terms.chunk_terms(text, lexical.stemmer("porter"), stop) for text in texts] == expected
