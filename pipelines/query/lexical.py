"""Query: BM25 over chunk text from the postings the terms stage stored (chunk_terms), as DuckDB's fts
extension scores it; a question reads only the postings of its own words.

A caller's BM25 statistics (chunks, average length, each word's chunk count) come from the chunks its scopes
may read alone, so that no score depends on text it may not read.
"""

from dataclasses import dataclass, field

from pipelines.db import Connection, load_fts, sql
from pipelines.query.scoring import PROFILE_RANK

BM25_DIGITS = 9  # decimals a BM25 score is rounded to: scores equal but for summation order compare equal


@dataclass
class Scores:
    """The temporary table bm25_scores of one connection to an index, and the question and scopes it holds now."""

    con: Connection
    holds: tuple[str, tuple[str, ...] | None] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        load_fts(self.con)

    def of(self, question: str, scopes: list[str] | None) -> Connection:
        """The connection, its bm25_scores holding the BM25 score of each chunk `scopes` may read that holds a
        word of `question`."""
        key = (question, None if scopes is None else tuple(scopes))
        if key != self.holds:
            words = [term for (term,) in self.con.execute(sql("query.lexical_terms"), {"q": question}).fetchall()]
            self.con.execute(sql("query.lexical_postings"), {"terms": words, "scopes": scopes})
            self.con.execute(sql("query.lexical_scores_table"), {"scopes": scopes, "digits": BM25_DIGITS})
            self.holds = key
        return self.con


@dataclass(frozen=True)
class Searcher:
    """BM25 over the chunks `scopes` may read (None: all) of an open index."""

    scores: Scores
    scopes: list[str] | None = None

    def of(self, question: str) -> Connection:
        """The connection, its bm25_scores holding `question`'s scores."""
        return self.scores.of(question, self.scopes)


def searcher(index: Connection, scopes: list[str] | None = None, scores: Scores | None = None) -> Searcher:
    """BM25 over the chunks of `index` that `scopes` may read (None: all); `scores`: the connection's table
    of scores, when one is kept already (one per connection)."""
    return Searcher(scores or Scores(index), None if scopes is None else sorted(set(scopes)))


def top_chunks(search: Searcher, question: str, *, limit: int = 50) -> list[tuple[str, str, str, int, float]]:
    """(chunk_id, doc_id, text, n_tokens, score) of the best BM25 matches for `question`, best first."""
    return search.of(question).execute(sql("query.lexical_top"), {"limit": limit}).fetchall()


def scores(search: Searcher, question: str, chunk_ids: list[str]) -> dict[str, float]:
    """BM25 score of each of `chunk_ids` for `question` (chunks with no query term are left out)."""
    return dict(search.of(question).execute(sql("query.lexical_scores"), {"ids": chunk_ids}).fetchall())


def matches(search: Searcher, question: str, chunk_ids: set[str]) -> dict[str, float]:
    """BM25 score of each of `chunk_ids` for `question`, scaled so that the best is 1."""
    found = scores(search, question, sorted(chunk_ids))
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
