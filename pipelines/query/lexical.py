"""Query: BM25 over chunk text from the postings the terms stage stored, as DuckDB's fts extension scores it;
a question reads the postings of its own words once (bm25_postings), and ranks by a common word only its
MAX_POSTINGS with the highest impact (its term-frequency factor at a reference length), so that a chunk outside
those is ranked without that word; a chunk's own score counts all its postings, read from its text.

A caller who may read every chunk (or any, in an index without scopes) reads each word's best postings as one
row (term_postings), whatever the corpus's size; a scoped caller reads them from chunk_terms, since which are
best depends on what it may read.

A caller's BM25 statistics (chunks, average length, each word's chunk count) come from the chunks its scopes
may read alone, so that no score depends on text it may not read.
"""

from dataclasses import dataclass, field
from typing import Any

from pipelines.db import Connection, load_fts, sql, stop_words
from pipelines.query.scoring import PROFILE_RANK

BM25_DIGITS = 9  # decimals a BM25 score is rounded to: scores equal but for summation order compare equal
MAX_POSTINGS = 2000  # postings of one word a question reads at most, highest impact first (ties at the last kept)


@dataclass
class Question:
    """A question's BM25 words, who may read which chunks, and those chunks' number and average length."""

    terms: list[str]
    scopes: list[str] | None
    n: int
    avgdl: float

    def params(self) -> dict[str, Any]:
        """lexical_postings' parameters for it."""
        return {"terms": self.terms, "scopes": self.scopes, "n": self.n, "avgdl": self.avgdl}


@dataclass
class Scores:
    """The temporary table bm25_postings of one connection to an index, and the question it holds now."""

    con: Connection
    question: Question | None = field(default=None, init=False)
    holds: tuple[str, tuple[str, ...] | None, int | None] | None = field(default=None, init=False)
    corpus: dict[tuple[str, ...] | None, tuple[int, float]] = field(default_factory=dict, init=False)
    stored: bool = field(default=False, init=False)  # term_postings holds MAX_POSTINGS best postings a word
    scoped: bool = field(default=False, init=False)  # some chunk has a scope

    def __post_init__(self) -> None:
        load_fts(self.con)
        self.con.execute(sql("query.stop_words"), {"stop": list(stop_words())})
        self.stored, self.scoped = self.con.execute(sql("query.lexical_stored"), {"limit": MAX_POSTINGS}).fetchone()

    def of(self, question: str, scopes: list[str] | None, most: int | None = MAX_POSTINGS) -> Question:
        """`question` as BM25 reads it, bm25_postings holding the postings of its words in the chunks `scopes`
        may read, the `most` highest-impact of each word kept for ranking (None: all of them)."""
        key = (question, None if scopes is None else tuple(scopes), most)
        if key != self.holds or self.question is None:
            if key[1] not in self.corpus:
                self.corpus[key[1]] = self.con.execute(sql("query.lexical_corpus"), {"scopes": scopes}).fetchone()
            words = [term for (term,) in self.con.execute(sql("query.lexical_terms"), {"q": question}).fetchall()]
            self.question = Question(words, scopes, *self.corpus[key[1]])
            if most == MAX_POSTINGS and self.stored and (scopes is None or not self.scoped):
                self.con.execute(sql("query.lexical_best_terms"), {"terms": words})
                self.con.execute(sql("query.lexical_best"), {"n": self.question.n, "avgdl": self.question.avgdl})
            else:
                self.con.execute(sql("query.lexical_postings"), self.question.params() | {"limit": most})
                self.con.execute(sql("query.lexical_terms_read"))
            self.holds = key
        return self.question


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
    return search.scores.con.execute(sql("query.lexical_top"), {"limit": limit, "digits": BM25_DIGITS}).fetchall()


def scores(search: Searcher, question: str, chunk_ids: list[str], names: str = "") -> dict[str, tuple[float, float]]:
    """BM25 score of each of `chunk_ids` for `question`, from all their postings (chunks with no query term are
    left out), and its score from the question's words that the text `names` does not hold."""
    asked = search.of(question)
    found = search.scores.con.execute(sql("query.lexical_scores"), {"ids": chunk_ids, "digits": BM25_DIGITS,
                                                                    "scopes": asked.scopes, "n": asked.n,
                                                                    "avgdl": asked.avgdl, "names": names})
    return {chunk_id: (score, beyond) for chunk_id, score, beyond in found.fetchall()}


def matches(search: Searcher, question: str, chunk_ids: set[str],
            names: str = "") -> tuple[dict[str, float], dict[str, float]]:
    """BM25 score of each of `chunk_ids` for `question`, and for what it asks beyond the text `names` (the
    names it gives: a chunk that only repeats them says nothing of what is asked about them), each scaled so
    that the best is 1."""
    found = scores(search, question, sorted(chunk_ids), names)
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
