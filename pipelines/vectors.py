"""Stage `entity_vectors`: an embedding of each entity's label and short answer, for vector seeds at query time.

Optional: it runs only with an embedder (settings embed_url / embed_model); without one, no vectors are kept.
"""

from pipelines.db import sql
from pipelines.embeddings import Embedder, in_batches
from pipelines.run import Run
from pipelines.runs import SKIPPED, Work

VERSION = "label-answer-1"  # what is embedded: "label: short answer"
READS = ("mentions", "entity_answers")  # the stages whose tables this stage reads (its own aside)


def run(run: Run, *, embed: Embedder | None, model: str = "", batch: int = 64) -> Work:
    """Embed the entities whose label or short answer changed (every one after a change of model), and drop
    the vectors of vanished entities; drop every vector when `embed` is None.

    `model` names the embedding model: vectors made with another one are all made again.
    """
    con = run.con
    setting = f"{VERSION}:{model}" if embed is not None else ""  # "": no embedder, so no vectors
    if run.unchanged(READS, "entity_vectors", setting):
        return SKIPPED
    n_entities = con.execute(sql("entity_vectors.entities")).fetchone()[0]
    if embed is None:
        with run.transaction():
            removed = len(con.execute(sql("entity_vectors.delete_all")).fetchall())
            run.put("entity_vectors", setting)
        return Work(n_entities, 0, 0, removed)
    full = not run.logged or run.get("entity_vectors") != setting
    con.execute(sql("entity_vectors.todo"), {"full": full, "setting": setting})
    todo = con.execute(sql("entity_vectors.todo_rows")).fetchall()
    vectors = in_batches(embed, [text for _, text, _ in todo], batch)
    replaced = con.execute(sql("entity_vectors.replaced")).fetchone()[0]
    with run.transaction():
        deleted = con.execute(sql("entity_vectors.delete")).fetchone()[0]
        run.insert("entity_vectors", ({"entity_id": eid, "vector": vector, "input_hash": digest}
                                       for (eid, _, digest), vector in zip(todo, vectors, strict=True)))
        run.put("entity_vectors", setting)
    return Work(n_entities, n_entities - len(todo), len(todo), deleted - replaced)
