"""Query: the chunks closest in meaning to a question (the chunk vectors), and their fusion with BM25's.

An index built with an embedder holds a vector per chunk (pipelines.chunk_vectors); a reader holds them as
one matrix, read on first use (4 bytes per dimension per chunk), and scores a question against the rows its
scopes may read. A question's first hop then ranks the union of BM25's best chunks and the closest ones by
both scores, each scaled to 1 at its best (scoring.fused); the router calls a question unanswerable when even its
closest chunk is below the index's floor and its words do not answer it either (pipelines.query.router). The
packaged model's floor is calibrated on each index: how close its readable chunks come to questions about nothing
a collection is likely to hold (unrelated.txt). numpy is imported when the vectors are first read: a reader of an
index without them never pays for it.
"""

from pathlib import Path
from typing import TYPE_CHECKING

from acervo.pipelines.db import Connection, sql
from acervo.pipelines.query.scoring import FLOOR_QUANTILE, MEANING_LIMIT, SCORE_DIGITS, fused
from acervo.pipelines.query.seeds import Hit

if TYPE_CHECKING:
    import numpy as np

UNRELATED = Path(__file__).with_name("unrelated.txt")  # the calibrating questions, one a line ('#': a comment)
COLLECTION = Path(__file__).with_name("collection.txt")  # questions about a collection as a whole, the same way


class Vectors:
    """The index's chunk vectors, unit length, one row per chunk in id order, with each row's scope."""

    def __init__(self, con: Connection) -> None:
        import numpy as np

        rows = con.execute(sql("query.chunk_vectors")).fetchall()
        self.ids = [chunk_id for chunk_id, _, _ in rows]
        self.scopes = [scope for _, scope, _ in rows]
        self.matrix = _unit(np.array([vector for _, _, vector in rows], dtype=np.float32).reshape(len(rows), -1))
        self._rows: dict[tuple[str, ...], np.ndarray] = {}  # the rows each set of scopes may read

    def readable(self, scopes: list[str] | None) -> "np.ndarray | None":
        """The rows `scopes` may read (a document without scope, or with one of them); None: every row."""
        import numpy as np

        if scopes is None:
            return None
        allowed = tuple(sorted(set(scopes)))
        if allowed not in self._rows:
            self._rows[allowed] = np.array([i for i, s in enumerate(self.scopes) if s is None or s in allowed],
                                           dtype=np.int64)
        return self._rows[allowed]

    def closest(self, con: Connection, vector: list[float], scopes: list[str] | None, *,
                limit: int = MEANING_LIMIT) -> list[Hit]:
        """The `limit` readable chunks closest to `vector` by cosine (rounded to SCORE_DIGITS), then by id, as
        hits: chunk_id, doc_id, text, n_tokens, cosine."""
        import numpy as np

        rows = self.readable(scopes)
        matrix = self.matrix if rows is None else self.matrix[rows]
        if not len(matrix):
            return []
        asked = np.asarray(vector, dtype=np.float32)
        cosines = np.round(matrix @ (asked / (np.linalg.norm(asked) or 1.0)), SCORE_DIGITS)
        place = np.arange(len(matrix)) if rows is None else rows
        nearest = np.argsort(-cosines, kind="stable")[:limit]  # rows are in id order: ties go by id
        found = {self.ids[place[i]]: float(cosines[i]) for i in nearest}
        texts = {row[0]: row for row in con.execute(sql("query.chunk_rows"), {"ids": list(found)}).fetchall()}
        return [(*texts[chunk_id], score) for chunk_id, score in found.items()]

    def floor(self, unrelated: list[list[float]], scopes: list[str] | None) -> float:
        """The index's floor for the chunks `scopes` may read: the FLOOR_QUANTILE quantile of how close its closest
        readable chunk comes to each of the `unrelated` questions' vectors (1.0 when none is readable: nothing can
        answer)."""
        import numpy as np

        rows = self.readable(scopes)
        matrix = self.matrix if rows is None else self.matrix[rows]
        if not len(matrix):
            return 1.0
        closest = (matrix @ _unit(np.asarray(unrelated, dtype=np.float32)).T).max(axis=0)
        return round(float(np.quantile(closest, FLOOR_QUANTILE)), SCORE_DIGITS)


def unrelated() -> list[str]:
    """The calibrating questions (UNRELATED)."""
    return _listed(UNRELATED)


def collection() -> list[str]:
    """The questions about a collection as a whole (COLLECTION)."""
    return _listed(COLLECTION)


def _listed(path: Path) -> list[str]:
    """The questions of `path`, one a line, '#' lines left out."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


class Examples:
    """The questions about a collection (collection.txt) and the unrelated ones (unrelated.txt) as vectors, against
    which a question is told to ask about the collection as a whole (pipelines.query.router, rule 3)."""

    def __init__(self, collection: list[list[float]], unrelated: list[list[float]]) -> None:
        import numpy as np

        self.collection = _unit(np.asarray(collection, dtype=np.float32))
        self.centroids = _unit(np.stack([self.collection.mean(axis=0),
                                         _unit(np.asarray(unrelated, dtype=np.float32)).mean(axis=0)]))

    def compared(self, vector: list[float]) -> tuple[float, float]:
        """The cosine of `vector` to the closest question about a collection, and how much closer it is to their
        centroid than to the unrelated questions' (a nearest-centroid classifier), both rounded to SCORE_DIGITS."""
        import numpy as np

        asked = _unit(np.asarray(vector, dtype=np.float32))
        to_collection, to_unrelated = self.centroids @ asked
        return (round(float((self.collection @ asked).max()), SCORE_DIGITS),
                round(float(to_collection - to_unrelated), SCORE_DIGITS))


def _unit(rows: "np.ndarray") -> "np.ndarray":
    """`rows` (a vector, or a matrix of them) scaled to unit length; a zero vector stays as it is."""
    import numpy as np

    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0)


def scaled(hits: list[Hit]) -> dict[str, float]:
    """Each closest chunk's cosine scaled from 0 at the last one read to 1 at the best (cosines of one model
    crowd together: their spread, not their level, ranks)."""
    if not hits:
        return {}
    best, last = hits[0][-1], hits[-1][-1]
    span = best - last
    return {chunk_id: (score - last) / span if span > 0 else 1.0 for chunk_id, *_, score in hits}


def merged(lexical: list[Hit], near: list[Hit]) -> list[Hit]:
    """BM25's `lexical` hits and the `near` ones as one list of hits scored by scoring.fused, best first."""
    bm25 = {chunk_id: score / lexical[0][-1] for chunk_id, *_, score in lexical} if lexical else {}
    meaning = scaled(near)
    rows = {hit[0]: hit[:4] for hit in [*near, *lexical]}
    scored = [(*row, fused(bm25.get(chunk_id, 0.0), meaning.get(chunk_id, 0.0))) for chunk_id, row in rows.items()]
    return sorted(scored, key=lambda hit: (-hit[-1], hit[0]))
