"""Query: BM25 over chunk text with DuckDB's fts extension, loaded from the duckdb-extension-fts package.

The extension file ships inside that PyPI package (pinned to DuckDB's own version), so nothing is
downloaded; autoloading and autoinstalling are turned off so DuckDB never tries the network.
"""

from pathlib import Path

import duckdb
import duckdb_extension_fts

from pipelines.db import Connection, insert, sql
from pipelines.query.scoring import PROFILE_RANK

PACKAGE = Path(duckdb_extension_fts.__file__).parent
EXTENSION = PACKAGE / "extensions" / f"v{duckdb.__version__}" / "fts.duckdb_extension"
BM25_THREADS = 1  # one thread sums each chunk's per-term scores in one order, so ties stay ties in every run
BM25_DIGITS = 9  # decimals a BM25 score is rounded to: scores equal but for summation order compare equal


def searcher(index: Connection, scopes: list[str] | None = None) -> Connection:
    """An in-memory connection holding a BM25 index over the chunks of `index` that `scopes` may read
    (None: all); forbidden text is never copied into it."""
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    con.load_extension(str(EXTENSION))
    con.execute(sql("db.set_threads"), {"n": BM25_THREADS})
    con.execute(sql("query.lexical_table"))
    rows = index.execute(sql("query.lexical_source"), {"scopes": scopes}).fetchall()
    insert(con, "search_chunks", ({"chunk_id": c, "doc_id": d, "text": t, "n_tokens": n} for c, d, t, n in rows))
    con.execute(sql("query.lexical_build"))
    return con


def top_chunks(con: Connection, question: str, *, limit: int = 50) -> list[tuple[str, str, str, int, float]]:
    """(chunk_id, doc_id, text, n_tokens, score) of the best BM25 matches for `question`, best first."""
    return con.execute(sql("query.lexical_top"), {"q": question, "limit": limit, "digits": BM25_DIGITS}).fetchall()


def scores(con: Connection, question: str, chunk_ids: list[str]) -> dict[str, float]:
    """BM25 score of each of `chunk_ids` for `question` (chunks with no query term are left out)."""
    found = con.execute(sql("query.lexical_scores"), {"q": question, "ids": chunk_ids, "digits": BM25_DIGITS})
    return dict(found.fetchall())


def matches(con: Connection, question: str, chunk_ids: set[str]) -> dict[str, float]:
    """BM25 score of each of `chunk_ids` for `question`, scaled so that the best is 1."""
    found = scores(con, question, sorted(chunk_ids))
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
