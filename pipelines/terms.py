"""Stage `terms`: the BM25 postings of every chunk (chunk_terms, chunk_lengths) and the words of every document
(document_words, word_documents), stored so that a query reads only the rows of its own words.

BM25 tokenises as DuckDB's fts extension does (bm25_tokens in sql/db.sql; in Python, as the query side splits
a question: chunk_terms), so that the stored postings score chunks as an fts index over them would. Words are
stemmed by the setting `stemmer`; with auto, by the corpus's language, read off how many documents use each
language's marker words (word_documents), so that the choice follows the corpus a rerun leaves, as a fresh
build's would; a change of stemmer makes every posting again.
Reruns touch only the postings of changed chunks; rows they append sit out of term order until RESORT_SHARE of
the postings are such, when the table is rewritten. Each word's best postings are kept as one row (term_postings),
so that a question reads a row a word, whatever the corpus's size; a rerun makes again those of the words whose
best postings it changed, and only counts the chunks of a word whose changes all fall below its best.
"""

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator
from itertools import pairwise
from typing import Any

from acervo.pipelines.db import Connection, sql
from acervo.pipelines.names import stem, word_stems, words
from acervo.pipelines.query.lexical import stemmer as stemmer_of
from acervo.pipelines.query.lexical import tokens
from acervo.pipelines.run import Run
from acervo.pipelines.runs import SKIPPED, Work
from acervo.pipelines.stopwords.en import stop_words

VERSION = "bm25-6"  # 6: Thai, Lao, Myanmar, Khmer split into pairs of letters, as Han is; document words without marks
READS = ("documents", "chunks")  # the stages whose tables this stage reads (its own aside)
REFERENCE_LENGTH = 50  # the chunk length (in BM25 words) a posting's impact is computed at: an order, not a score
RESORT_SHARE = 0.2  # postings appended out of term order, as a share of all, above which the table is rewritten
FETCH_ROWS = 10_000  # chunk texts read from DuckDB at a time while word lists are made
STEMMER = "terms_stemmer"  # index_state key: the stemmer of chunk_terms, which the query side stems questions with
MARKERS = {  # auto: the stemmer whose marker words (common function words of its language) the most documents use
    "porter": "the and of with that which this from was were",
    "portuguese": "que não uma com para pelo pela foi são dos das",
    "spanish": "el los las del una por con pero fue sus",
    "german": "der und den mit ist sich nicht auch eine wurde",
    "romanian": "și sau care din pentru fost sunt într către fiind",
    "turkish": "ve bir bu için ile olarak daha çok gibi olan",
    "russian": "и в не на что он с как это по",
    "greek": "και το να του η της με που την στο",
    "arabic": "في من على إلى أن التي الذي عن مع هذا",
    "hindi": "के में की है और से को का एक पर",
}  # on a tie (no document uses any), porter
BEST_POSTINGS = 2000  # postings of a word kept as its best (term_postings): what a question ranks a common word by
BEST_BATCH = 250_000  # postings of the words best_insert ranks in one statement (a range of words): its memory
MERGE_BATCH = 1_000_000  # stored and new postings of the words best_next merges in one statement (a range)
BEST = "term_postings"  # index_state key: BEST_POSTINGS as term_postings was made with (the query side reads it)
APPENDED = "terms_appended"  # index_state key: postings appended out of term order since the last rewrite


def run(run: Run, stemmer: str = "auto") -> Work:
    """Bring the postings and the document word lists in line with `chunks`, words stemmed by `stemmer` (a DuckDB
    fts stemmer, or auto); unchanged rows stay as they are."""
    con = run.con
    setting = f"{VERSION} stemmer={stemmer}"
    if run.unchanged(READS, "terms", setting):
        return SKIPPED
    full = run.get("terms") != setting
    with run.transaction():
        con.execute(sql("terms.stale"), {"full": full})
        con.execute(sql("terms.stale_documents"), {"full": full})
        _document_words(run)
        chosen = language_stemmer(con) if stemmer == "auto" else stemmer
        if chosen != run.get(STEMMER) and not full:
            full = True
            con.execute(sql("terms.stale"), {"full": full})
        con.execute(sql("terms.removed"), {"full": full})
        con.execute(sql("terms.delete_terms"))
        removed = len(con.execute(sql("terms.delete_lengths")).fetchall())
        con.execute(sql("terms.terms_next_table"))
        if run.fanout:
            run.spread("terms.shard_texts", postings_of, {"stemmer": chosen}, "chunk_terms_next")
        else:
            run.insert("chunk_terms_next", postings_of(_streamed(con.execute(sql("terms.todo_texts"))), chosen))
        con.execute(sql("terms.terms_next"))
        added = len(con.execute(sql("terms.insert_lengths")).fetchall())
        con.execute(sql("terms.postings_next"), {"length": REFERENCE_LENGTH})
        con.execute(sql("terms.insert_terms"))
        _best(con, full)
        run.put(BEST, str(BEST_POSTINGS))
        n_terms, n_chunks = con.execute(sql("terms.sizes")).fetchone()
        _appended(run, full, n_terms)
        run.put(STEMMER, chosen)
        run.put("terms", setting)
    return Work(n_chunks, n_chunks - added, added, removed, {"postings": n_terms})


def chunk_terms(text: str, stems: Callable[[list[str]], list[str]], stop: Collection[str]) -> Counter[str]:
    """The BM25 terms of a chunk's `text` with how often it uses each: its words (db.bm25_tokens) less the
    `stop` words, stemmed by `stems` (a word's stem counts its uses)."""
    counts = Counter(word for word in tokens(text) if word not in stop)
    found: Counter[str] = Counter()
    for term, count in zip(stems(list(counts)), counts.values(), strict=True):
        found[term] += count
    return found


def postings_of(texts: Iterable[tuple[str, str]], stemmer: str) -> Iterator[dict[str, Any]]:
    """A chunk_terms_next row for each chunk of `texts` (chunk_id, text): its terms, stemmed by `stemmer`, and how
    often it uses each (chunk_terms); a row a chunk, not a posting, costs less to write (a shard's work too)."""
    stems, stop = stemmer_of(stemmer), frozenset(stop_words())
    for chunk_id, text in texts:
        found = chunk_terms(text, stems, stop)
        yield {"chunk_id": chunk_id, "terms": list(found), "tfs": list(found.values())}


def _streamed(cursor: Connection) -> Iterator[tuple]:
    """The rows of `cursor`, read FETCH_ROWS at a time as they are used."""
    while rows := cursor.fetchmany(FETCH_ROWS):
        yield from rows


def _best(con: Connection, full: bool) -> None:
    """Make the best postings of the words this run touched (every word with `full`): only their chunk count where
    no posting at or above the cutoff of their stored best came or went (terms.best_counted); else from their
    stored best postings where those suffice (terms.best_next), else from all their postings (terms.best_insert);
    a range of words at a time, of about MERGE_BATCH stored and new postings (best_next) or BEST_BATCH postings
    (best_insert): their rows lie together in term_postings and their postings in chunk_terms, both stored in
    order of word, so that memory stays bounded whatever the corpus's size and each part reads only its blocks."""
    con.execute(sql("terms.best_touched"), {"full": full})
    con.execute(sql("terms.best_counted"))
    con.execute(sql("terms.best_next_table"))
    for first, following in _ranges(con, "terms.best_next_parts", {"batch": MERGE_BATCH}):
        con.execute(sql("terms.best_next"), {"limit": BEST_POSTINGS, "first": first, "next": following})
    con.execute(sql("terms.best_delete"), {"full": full})
    con.execute(sql("terms.best_merge"))
    for first, following in _ranges(con, "terms.best_parts", {"full": full, "batch": BEST_BATCH}):
        con.execute(sql("terms.best_insert"), {"full": full, "limit": BEST_POSTINGS, "first": first, "next": following})


def _ranges(con: Connection, ref: str, params: dict[str, Any]) -> Iterator[tuple[str, str | None]]:
    """Each part's words, from its first up to the next part's (None: the last), as the statement `ref` gives
    the parts' first words in order."""
    firsts = [first for (first,) in con.execute(sql(ref), params).fetchall()]
    return pairwise([*firsts, None])


def language_stemmer(con: Connection) -> str:
    """The stemmer of the language whose marker words (MARKERS) the documents use most, by the mean number of
    documents that use each (word_documents: every scope), all the markers read in one statement."""
    markers = marker_stems()
    every = sorted({w for stems in markers.values() for w in stems})
    counts = dict(con.execute(sql("terms.language_use"), {"words": every}).fetchall())
    return most_used({name: sum(counts.get(w, 0) for w in stems) / len(stems) for name, stems in markers.items()})


def marker_stems() -> dict[str, list[str]]:
    """Each stemmer's marker words (MARKERS) as word_documents holds them: their stems, each once."""
    return {name: sorted({stem(w) for w in words(markers)}) for name, markers in MARKERS.items()}


def most_used(used: dict[str, float]) -> str:
    """The stemmer whose markers are used most (`used`: how much, by stemmer); porter on a tie."""
    return max(used, key=lambda name: (used[name], name == "porter"))


def _appended(run: Run, full: bool, n_terms: int) -> None:
    """Count the postings this run appended out of term order; rewrite the table (of `n_terms` postings) in
    order past RESORT_SHARE."""
    new = run.con.execute(sql("terms.new_postings")).fetchone()[0]
    appended = 0 if full else int(run.get(APPENDED) or 0) + new
    if appended > RESORT_SHARE * n_terms:
        run.con.execute(sql("terms.resort"))
        appended = 0
    run.put(APPENDED, str(appended))


def _document_words(run: Run) -> None:
    """Make the word lists of the documents in terms_stale_documents again, and move word_documents by what changed."""
    con = run.con
    con.execute(sql("terms.document_words_next"))
    if run.fanout:
        run.spread("terms.shard_documents", word_lists, {}, "document_words_next")
    else:
        run.insert("document_words_next", word_lists(_streamed(con.execute(sql("terms.document_texts")))))
    con.execute(sql("terms.word_changes"))
    con.execute(sql("terms.apply_word_changes"))
    con.execute(sql("terms.delete_document_words"))
    con.execute(sql("terms.insert_document_words"))


def word_lists(texts: Iterable[tuple[str, str, str]]) -> Iterator[dict[str, Any]]:
    """One document_words row per document of `texts` (terms.document_texts rows: doc_id, scope, text, by
    document), made as they stream: one document's words are held at a time, not the corpus's (a shard's work
    too)."""
    doc_id, scope, found = None, None, set()
    for row_doc, row_scope, text in texts:
        if row_doc != doc_id:
            if doc_id is not None:
                yield {"doc_id": doc_id, "scope": scope, "words": sorted(found)}
            doc_id, scope, found = row_doc, row_scope, set()
        found.update(word_stems(text))
    if doc_id is not None:
        yield {"doc_id": doc_id, "scope": scope, "words": sorted(found)}
