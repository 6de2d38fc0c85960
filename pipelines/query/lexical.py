"""Query: BM25 over chunk text from the postings the terms stage stored, as DuckDB's fts extension scores it;
a question reads the postings of its own words once, and ranks by a common word only its MAX_POSTINGS with the
highest impact (its term-frequency factor at a reference length), so that a chunk outside those is ranked
without that word; a chunk's own score counts all its postings, counted from its text.

A caller who may read every chunk (or any, in an index without scopes) reads each word's best postings as one
row (term_postings) and ranks them in the same statement, whatever the corpus's size; a scoped caller reads
them from chunk_terms into the temporary table bm25_postings, since which are best depends on what it may read.
In an index of found names, whose names are looked up in bm25_postings, it is made for every question.

A caller's BM25 statistics (chunks, average length, each word's chunk count) come from the chunks its scopes
may read alone, so that no score depends on text it may not read.

A question and the texts it scores are split and stemmed here, in Python, as the terms stage splits chunks in
SQL (db.bm25_tokens, DuckDB fts's stemmers): no statement a text. The stemmers are the same Snowball release as
DuckDB fts's (PyStemmer's pin); tests/test_terms.py checks both against DuckDB."""

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import Stemmer

from acervo.pipelines.db import Connection, load_fts, sql
from acervo.pipelines.names import UNSPACED, unmarked
from acervo.pipelines.query.scoring import PROFILE_RANK
from acervo.pipelines.stopwords.en import stop_words

BM25_DIGITS = 9  # decimals a BM25 score is rounded to: scores equal but for summation order compare equal
MAX_POSTINGS = 2000  # postings of one word a question reads at most, highest impact first (ties at the last kept)
IGNORED = re.compile(r"""[0-9!@#$%^&*()_+={}\[\]:;<>,.?~\\/|'"`\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40"""
                     r"""\uff5b-\uff65-]+""")  # what db.bm25_tokens turns into spaces (CJK punctuation too)
UNSPACED_RUN = re.compile(f"([{UNSPACED}]+)")  # db.bm25_tokens splits each such run into pairs of characters
SPACES = re.compile(r"[\t\n\f\r ]+")  # RE2's \s, which db.bm25_tokens splits at (no other space character)
OTHER_SPACES = re.compile(r"[\x0b\x1c-\x1f]")  # what str.split splits ASCII text at beside SPACES


def folded(text: str) -> str:
    """`text` as db.bm25_tokens reads it: every mark (Unicode category M) stripped, then lower case, a letter at
    a time (a final capital sigma becomes σ, as in DuckDB, not ς)."""
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFC", unmarked(unicodedata.normalize("NFD", text))).replace("Σ", "σ").lower()


def tokens(text: str) -> list[str]:
    """The BM25 words of `text` as db.bm25_tokens splits them (empty ones left out), stop words included: a run of
    characters of a script written without spaces (names.UNSPACED) as its overlapping pairs (a lone one as itself)."""
    kept = IGNORED.sub(" ", folded(text))
    if kept.isascii() and not OTHER_SPACES.search(kept):  # no unspaced script: str.split splits as SPACES does
        return kept.split()
    found = []
    for word in SPACES.split(UNSPACED_RUN.sub(r" \1 ", kept)):
        if len(word) > 1 and UNSPACED_RUN.fullmatch(word):
            found += [word[i:i + 2] for i in range(len(word) - 1)]
        elif word:
            found.append(word)
    return found


def stemmer(name: str) -> Callable[[list[str]], list[str]]:
    """The words' stems by the DuckDB fts stemmer `name` (none: the words as they are). PyStemmer's own cache is
    off: keeping it costs more than stemming again."""
    return list if name == "none" else Stemmer.Stemmer(name, 0).stemWords


def weight(df: int, n: int, tf: int, n_terms: int, avgdl: float) -> float:
    """A posting's BM25 weight, as db.bm25_weight computes it (the same operations, in the same order)."""
    return math.log10((n - df + 0.5) / (df + 0.5) + 1) * (tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * n_terms / avgdl)))


@dataclass
class Question:
    """A question's BM25 words, who may read which chunks, and those chunks' number and average length."""

    terms: list[str]
    scopes: list[str] | None
    n: int
    avgdl: float

    def weighed(self) -> dict[str, Any]:
        """The parameters that weigh its postings (lexical_best's, lexical_best_top's)."""
        return {"terms": self.terms, "n": self.n, "avgdl": self.avgdl}

    def params(self) -> dict[str, Any]:
        """lexical_postings' parameters for it."""
        return self.weighed() | {"scopes": self.scopes}


@dataclass
class Scores:
    """The BM25 state of one connection to an index: the question it holds now, the chunk count (df) of each
    of its words that has postings, and the temporary table bm25_postings where it is made."""

    con: Connection
    names: bool = False  # names are looked up in bm25_postings (pipelines.query.evidence): made with every question
    question: Question | None = field(default=None, init=False)
    holds: tuple[str, tuple[str, ...] | None, int | None] | None = field(default=None, init=False)
    ranked: tuple[int, list[tuple[str, str, str, int, float]]] | None = field(default=None, init=False)  # last `top`
    corpus: dict[tuple[str, ...] | None, tuple[int, float]] = field(default_factory=dict, init=False)
    df: dict[str, int] | None = field(default=None, init=False)  # the question's words with postings (None: unread)
    complete: set[str] = field(default_factory=set, init=False)  # words whose postings bm25_postings holds all
    made: bool = field(default=False, init=False)  # bm25_postings holds the question's postings
    stored: bool = field(default=False, init=False)  # term_postings holds MAX_POSTINGS best postings a word
    scoped: bool = field(default=False, init=False)  # some chunk has a scope

    def __post_init__(self) -> None:
        load_fts(self.con)
        self.stored, self.scoped, name = self.con.execute(sql("query.lexical_stored"),
                                                          {"limit": MAX_POSTINGS}).fetchone()
        self.stems = stemmer(name)
        self.stop = frozenset(stop_words())

    def terms(self, text: str) -> list[str]:
        """The distinct BM25 terms of `text` (a question, a name), as the terms stage stems a chunk's words."""
        return sorted(set(self.stems(tokens(text))))

    def of(self, question: str, scopes: list[str] | None, most: int | None = MAX_POSTINGS) -> Question:
        """`question` as BM25 reads it, bm25_postings holding the postings of its words in the chunks `scopes`
        may read, the `most` highest-impact of each word kept for ranking (None: all of them)."""
        key = (question, None if scopes is None else tuple(scopes), most)
        if key != self.holds or self.question is None:
            self.question = Question(self.terms(question), scopes, *self.corpus_of(scopes))
            self.made = not (most == MAX_POSTINGS and self.batched(scopes))
            self.df = None  # unmade, each word's best postings are a row of term_postings, read when needed
            if self.made:
                self.con.execute(sql("query.lexical_postings"), self.question.params() | {"limit": most})
                self.counted(self.con.execute(sql("query.lexical_terms_read")).fetchall())
            self.holds, self.ranked = key, None
        return self.question

    def counted(self, found: list[tuple[str, int, bool]]) -> None:
        """Hold the chunk count of each of the question's words that has postings, and whether bm25_postings
        holds (or would hold) all its postings: `found` rows (term, df, complete)."""
        self.df = {term: df for term, df, _ in found}
        self.complete = {term for term, _, complete in found if complete}

    def counts(self) -> dict[str, int]:
        """The chunk count of each of the question's words that has postings (read from term_postings where
        neither `of` nor `top` has read them)."""
        if self.df is None:
            self.counted(self.con.execute(sql("query.lexical_best_terms"), {"terms": self.question.terms}).fetchall())
        return self.df

    def top(self, limit: int) -> list[tuple[str, str, str, int, float]]:
        """lexical.top_chunks of the question held: from bm25_postings where it is made (or `names` will read
        it), else from term_postings; read once a question and limit (a global question's subject is ranked by
        the router, then by its reports)."""
        if self.ranked is None or self.ranked[0] != limit:
            self.ranked = limit, self._top(limit)
        return list(self.ranked[1])

    def _top(self, limit: int) -> list[tuple[str, str, str, int, float]]:
        """`top`'s statement."""
        if self.names:
            self.postings()
        if self.made:
            return self.con.execute(sql("query.lexical_top"), {"limit": limit, "digits": BM25_DIGITS}).fetchall()
        found = self.con.execute(sql("query.lexical_best_top"),
                                 self.question.weighed() | {"limit": limit, "digits": BM25_DIGITS}).fetchall()
        self.counted([(w["term"], w["df"], w["complete"]) for w in found[0][5]] if found else [])
        return [row[:5] for row in found]

    def best_top(self, terms: list[list[str]], limit: int,
                 scopes: list[str] | None) -> list[tuple[list[tuple], dict[str, int]]]:
        """For questions of the words `terms` (one list a question) asked by a caller who may read `scopes`: the
        `limit` best chunks of each (`top`'s rows) and the chunk count of each of its words that has postings.
        Where `batched`, one statement ranks them from term_postings (query.lexical_best_tops); else bm25_postings
        is made once for all their words (query.lexical_postings), which no question then holds, and one statement
        ranks them from it (query.lexical_tops)."""
        n, avgdl = self.corpus_of(scopes)
        params = {"questions": terms, "limit": limit, "digits": BM25_DIGITS}
        found: list[tuple[list[tuple], dict[str, int]]] = [([], {}) for _ in terms]
        if self.batched(scopes):
            rows = self.con.execute(sql("query.lexical_best_tops"), params | {"n": n, "avgdl": avgdl}).fetchall()
            for *hit, words, question in rows:
                hits, df = found[question - 1]
                hits.append(tuple(hit))
                df.update((w["term"], w["df"]) for w in words)
            return found
        every = sorted({term for asked in terms for term in asked})
        self.con.execute(sql("query.lexical_postings"), {"terms": every, "scopes": scopes, "n": n, "avgdl": avgdl,
                                                         "limit": MAX_POSTINGS})
        self.holds = None
        read = {term: df for term, df, _ in self.con.execute(sql("query.lexical_terms_read")).fetchall()}
        for asked, (_, df) in zip(terms, found, strict=True):
            df.update((term, read[term]) for term in sorted(asked) if term in read)
        for *hit, question in self.con.execute(sql("query.lexical_tops"), params).fetchall():
            found[question - 1][0].append(tuple(hit))
        return found

    def batched(self, scopes: list[str] | None) -> bool:
        """Whether a caller who may read `scopes` ranks by the stored best postings (term_postings): each word's best
        postings are stored and the caller may read every chunk."""
        return self.stored and (scopes is None or not self.scoped)

    def corpus_of(self, scopes: list[str] | None) -> tuple[int, float]:
        """The number and average BM25 length of the chunks `scopes` may read, read once."""
        key = None if scopes is None else tuple(scopes)
        if key not in self.corpus:
            self.corpus[key] = self.con.execute(sql("query.lexical_corpus"), {"scopes": scopes}).fetchone()
        return self.corpus[key]

    def postings(self) -> None:
        """Make bm25_postings hold the question's postings (its words' best ones) where `of` left it unmade."""
        if not self.made:
            self.con.execute(sql("query.lexical_best"), self.question.weighed())
            self.made = True

    def completed(self, terms: list[str]) -> None:
        """Add to bm25_postings the postings below their best of those of `terms` it does not hold whole (not
        kept for ranking), so that the chunks holding a name's words are all there."""
        self.postings()
        partial = [term for term in terms if term in self.counts() and term not in self.complete]
        if partial:
            self.con.execute(sql("query.lexical_complete"), {"terms": partial})
            self.complete.update(partial)

    def score(self, texts: dict[str, str], names: str) -> dict[str, tuple[float, float]]:
        """lexical.scores of the chunks `texts` (id: text) for the question held, split and stemmed here."""
        asked, named, df = self.question, set(self.terms(names)), self.counts()
        found = {}
        for chunk_id, text in texts.items():
            counts = Counter(word for word in tokens(text) if word not in self.stop)
            n_terms = sum(counts.values())
            tf: Counter[str] = Counter()
            for term, count in zip(self.stems(list(counts)), counts.values(), strict=True):
                if term in df:
                    tf[term] += count
            weights = {term: weight(df[term], asked.n, count, n_terms, asked.avgdl) for term, count in tf.items()}
            if weights:
                found[chunk_id] = (round(sum(weights.values()), BM25_DIGITS),
                                   round(sum(w for term, w in weights.items() if term not in named), BM25_DIGITS))
        return found


@dataclass(frozen=True)
class Searcher:
    """BM25 over the chunks `scopes` may read (None: all) of an open index."""

    scores: Scores
    scopes: list[str] | None = None

    def of(self, question: str) -> Question:
        """`question` as BM25 reads it, bm25_postings holding its postings."""
        return self.scores.of(question, self.scopes)


def searcher(index: Connection, scopes: list[str] | None = None, scores: Scores | None = None) -> Searcher:
    """BM25 over the chunks of `index` that `scopes` may read (None: all); `scores`: the connection's table
    of scores, when one is kept already (one per connection)."""
    return Searcher(scores or Scores(index), None if scopes is None else sorted(set(scopes)))


def top_chunks(search: Searcher, question: str, *, limit: int = 50,
               most: int | None = MAX_POSTINGS) -> list[tuple[str, str, str, int, float]]:
    """(chunk_id, doc_id, text, n_tokens, score) of the best BM25 matches for `question`, best first, among the
    `most` best postings of each of its words (None: exact BM25 over all of them)."""
    search.scores.of(question, search.scopes, most)
    return search.scores.top(limit)


def reach(search: Searcher, question: str, best: float, written: Callable[[str], bool]) -> float:
    """The share of the highest BM25 score `question` could get that its `best` chunk's score reaches (at most 1):
    `best` over the sum of the highest weights of its words that score (IDF times k1 + 1, what a word used without
    end in a chunk would weigh), stop words among them where their stem has postings, as BM25 ranks them. A word
    no readable chunk holds weighs the most a word can (its chunk count 0), so that what the corpus lacks counts
    against it, unless it is a stop word or the corpus has `written` it with other endings (its first letters: an
    inflection, a compound's head); 0 for a question with no such word."""
    asked = search.of(question)
    return reached(search.scores, question, asked.n, search.scores.counts(), best, written)


def reached(scores: Scores, question: str, n: int, df: dict[str, int], best: float,
            written: Callable[[str], bool]) -> float:
    """`reach` from the chunk count `df` of each of `question`'s words that has postings, among `n` chunks."""
    kept = [word for word in tokens(question) if word not in scores.stop]
    lacking: dict[str, list[str]] = {}
    for word, term in zip(kept, scores.stems(kept), strict=True):
        if term not in df:
            lacking.setdefault(term, []).append(word)
    most = (sum(highest(df[term], n) for term in scores.terms(question) if term in df)
            + sum(highest(0, n) for words in lacking.values() if not any(map(written, words))))
    return best / most if most > 0 else 0.0


def highest(df: int, n: int) -> float:
    """The most a word of `df` of `n` chunks can weigh in a chunk's BM25 score (`weight` as its uses grow)."""
    return math.log10((n - df + 0.5) / (df + 0.5) + 1) * 2.2


def scores(search: Searcher, question: str, texts: dict[str, str], names: str = "") -> dict[str, tuple[float, float]]:
    """BM25 score of each chunk of `texts` (chunk id: text, chunks the caller may read) for `question`, from all
    its postings (chunks with no query term are left out), and its score from the question's words that the
    text `names` does not hold."""
    search.of(question)
    return search.scores.score(texts, names)


def matches(search: Searcher, question: str, texts: dict[str, str],
            names: str = "") -> tuple[dict[str, float], dict[str, float]]:
    """BM25 score of each chunk of `texts` for `question`, and for what it asks beyond the text `names` (the
    names it gives: a chunk that only repeats them says nothing of what is asked about them), each scaled so
    that the best is 1."""
    found = scores(search, question, texts, names)
    return _scaled({c: score for c, (score, _) in found.items()}), _scaled({c: b for c, (_, b) in found.items()})


def _scaled(found: dict[str, float]) -> dict[str, float]:
    """Scores divided by the best (left as they are when every one is 0)."""
    best = max(found.values(), default=0.0) or 1.0
    return {chunk_id: score / best for chunk_id, score in found.items()}


def scaled(hits: list[tuple]) -> dict[str, float]:
    """Each hit's BM25 score scaled so that the best is 1."""
    best = hits[0][-1] if hits else 1.0
    return {chunk_id: score / best for chunk_id, *_, score in hits}


def profile(hits: list[tuple]) -> float | None:
    """The search profile: best BM25 score over the PROFILE_RANK-th (peaked > 1, flat near 1), or None."""
    last = PROFILE_RANK - 1
    return round(hits[0][-1] / hits[last][-1], 2) if len(hits) >= PROFILE_RANK and hits[last][-1] > 0 else None
