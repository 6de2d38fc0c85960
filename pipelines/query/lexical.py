"""Query: BM25 over chunk text with DuckDB's fts extension, loaded from the duckdb-extension-fts package.

The extension file ships inside that PyPI package (pinned to DuckDB's own version), so nothing is
downloaded; autoloading and autoinstalling are turned off so DuckDB never tries the network.
"""

from pathlib import Path

import duckdb
import duckdb_extension_fts

from pipelines.db import Connection, insert, sql

PACKAGE = Path(duckdb_extension_fts.__file__).parent
EXTENSION = PACKAGE / "extensions" / f"v{duckdb.__version__}" / "fts.duckdb_extension"


def searcher(index: Connection, scopes: list[str] | None = None) -> Connection:
    """An in-memory connection holding a BM25 index over the chunks of `index` that `scopes` may read
    (None: all); forbidden text is never copied into it."""
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    con.load_extension(str(EXTENSION))
    con.execute(sql("lexical_table"))
    rows = index.execute(sql("lexical_source"), {"scopes": scopes}).fetchall()
    insert(con, "search_chunks", ({"chunk_id": c, "doc_id": d, "text": t, "n_tokens": n} for c, d, t, n in rows))
    con.execute(sql("lexical_build"))
    return con


def top_chunks(con: Connection, question: str, *, limit: int = 50) -> list[tuple[str, str, str, int, float]]:
    """(chunk_id, doc_id, text, n_tokens, score) of the best BM25 matches for `question`, best first."""
    return con.execute(sql("lexical_top"), {"q": question, "limit": limit}).fetchall()


def scores(con: Connection, question: str, chunk_ids: list[str]) -> dict[str, float]:
    """BM25 score of each of `chunk_ids` for `question` (chunks with no query term are left out)."""
    return dict(con.execute(sql("lexical_scores"), {"q": question, "ids": chunk_ids}).fetchall())
