"""Stage `entity_vectors`: an embedding of each entity's label and short answer, for vector seeds at query time.

Optional: it runs only with an embedder (settings embed_url / embed_model); without one, no vectors are kept.
"""

from acervo.pipelines import embeddings
from acervo.pipelines.embeddings import Embedder
from acervo.pipelines.run import Run
from acervo.pipelines.runs import Work
from acervo.pipelines.stage import Hashed, refresh

VERSION = "label-answer-1"  # what is embedded: "label: short answer"
READS = ("mentions", "entity_answers")  # the stages whose tables this stage reads (its own aside)
STAGE = Hashed("entity_vectors", READS, "entity_id", "vector_todo", "entities", optional=True)


def run(run: Run, *, embed: Embedder | None, model: str = "", batch: int = 64) -> Work:
    """Embed the entities whose label or short answer changed (every one after a change of model), and drop
    the vectors of vanished entities; drop every vector when `embed` is None.

    `model` names the embedding model: vectors made with another one are all made again.
    """
    setting = f"{VERSION}:{model}" if embed is not None else ""  # "": no embedder, so no vectors
    return refresh(run, STAGE, setting,
                   lambda run: embeddings.written(run, "entity_vectors", "entity_id", embed, batch))

