"""Stage `chunk_vectors`: an embedding of each chunk's text, for finding evidence by meaning at query time.

Optional: it runs only with an embedder (settings embed_url, or embed_model "multilingual-e5-small" for the
packaged model); without one, no vectors are kept. A chunk is embedded again only when its content hash or
the model changed, so a rerun's cost follows the edited chunks.
"""

from pipelines.db import sql
from pipelines.embeddings import Embedder, in_batches
from pipelines.run import Run
from pipelines.runs import SKIPPED, Work

VERSION = "chunk-text-1"  # what is embedded: the chunk's text as stored
READS = ("chunks",)  # the stages whose tables this stage reads (its own aside)


def run(run: Run, *, embed: Embedder | None, model: str = "", batch: int = 32) -> Work:
    """Embed the chunks whose text or model changed, and drop the vectors of vanished chunks; drop every
    vector when `embed` is None."""
    con = run.con
    setting = f"{VERSION}:{model}" if embed is not None else ""  # "": no embedder, so no vectors
    if run.unchanged(READS, "chunk_vectors", setting):
        return SKIPPED
    n_chunks = con.execute(sql("chunk_vectors.chunks")).fetchone()[0]
    if embed is None:
        with run.transaction():
            removed = len(con.execute(sql("chunk_vectors.delete_all")).fetchall())
            run.put("chunk_vectors", setting)
        return Work(n_chunks, 0, 0, removed)
    todo = con.execute(sql("chunk_vectors.todo"), {"setting": setting}).fetchall()
    vectors = in_batches(embed, [text for _, text, _ in todo], batch)
    with run.transaction():
        removed = con.execute(sql("chunk_vectors.delete_gone")).fetchone()[0]
        con.execute(sql("chunk_vectors.delete_stale"), {"ids": [chunk_id for chunk_id, _, _ in todo]})
        run.insert("chunk_vectors", ({"chunk_id": chunk_id, "vector": vector, "input_hash": digest}
                                      for (chunk_id, _, digest), vector in zip(todo, vectors, strict=True)))
        run.put("chunk_vectors", setting)
    return Work(n_chunks, n_chunks - len(todo), len(todo), removed)
