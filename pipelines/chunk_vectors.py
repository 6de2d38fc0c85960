"""Stage `chunk_vectors`: an embedding of each chunk's text, for finding evidence by meaning at query time.

Optional: it runs only with an embedder (settings embed_url, or embed_model "multilingual-e5-small" for the
packaged model); without one, no vectors are kept. A chunk is embedded again only when its content hash or
the model changed, so a rerun's cost follows the edited chunks.
"""

from acervo.pipelines import embeddings
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
    return refresh(run, STAGE, setting, lambda run: embeddings.written(run, "chunk_vectors", "chunk_id", embed, batch))

