"""Stage `chunk_vectors`: an embedding of each chunk's text, for finding evidence by meaning at query time.

Optional: it runs only with an embedder (settings embed_url, or embed_model "multilingual-e5-small" for the
packaged model); without one, no vectors are kept. A chunk is embedded again only when its content hash or
the model changed, so a rerun's cost follows the edited chunks.
"""

from acervo.pipelines import embeddings
from acervo.pipelines.db import sql
from acervo.pipelines.embeddings import Embedder
from acervo.pipelines.run import Run
from acervo.pipelines.runs import Work
from acervo.pipelines.stage import Hashed, refresh

VERSION = "chunk-text-1"  # what is embedded: the chunk's text as stored
READS = ("chunks",)  # the stages whose tables this stage reads (its own aside)
STAGE = Hashed("chunk_vectors", READS, "chunk_id", "chunk_vector_todo", "chunks", optional=True)


def run(run: Run, *, embed: Embedder | None, model: str = "", batch: int = 32) -> Work:
    """Embed the chunks whose text or model changed, and drop the vectors of vanished chunks; drop every
    vector when `embed` is None."""
    setting = f"{VERSION}:{model}" if embed is not None else ""  # "": no embedder, so no vectors
    return refresh(run, STAGE, setting, lambda run: _write(run, embed, batch))


def _write(run: Run, embed: Embedder, batch: int) -> int:
    """Write the vectors of the todo's chunks: here, or with the run's fan-out on the workers, a shard a whole
    number of batches (so that each batch holds what it holds here)."""
    knobs = {"embed": embed, "key": "chunk_id", "batch": batch}
    if run.fanout:
        return run.spread("chunk_vectors.shard_todo", embeddings.rows, knobs, "chunk_vectors", multiple=batch)
    todo = run.con.execute(sql("chunk_vectors.todo_rows")).fetchall()
    return run.insert("chunk_vectors", embeddings.rows(todo, **knobs))
