"""Every stage in order, on a staging copy that replaces the index only when complete: the pipeline
without Prefect (flows.index wraps it in a flow), so that a plain run does not pay Prefect's import.
"""

import gc
import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from hashlib import sha256
from pathlib import Path
from time import perf_counter
from typing import Any

from pipelines import answers, chunks, communities, documents, edges, mentions, reports, runs, vectors
from pipelines.candidates import VERSION as CANDIDATES_VERSION
from pipelines.db import one_thread
from pipelines.embeddings import Embedder, openai_compatible
from pipelines.publish import staging
from pipelines.reconfigure import built_with, resolve, stored
from pipelines.run import Run
from pipelines.runs import StageResult, Work
from pipelines.settings import Requested, Settings

Stage = Callable[..., Work]
Wrap = Callable[[Stage, str], Stage]
Progress = Callable[[StageResult], Any]
SMALL_CHANGE = 0.05  # a rerun that adds, edits or deletes fewer of the documents than this runs DuckDB on one thread


def plain(fn: Stage, name: str) -> Stage:
    """A stage called as it is (benchmarks, tests of the pipeline without Prefect)."""
    return fn


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the run, then collect once.

    Stages allocate millions of short-lived, acyclic objects (rows, strings); with the collector on,
    each older-generation pass rescans the whole heap, which cost up to 0.1 s a stage here.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
        gc.collect()


def build(run: Run, source: Path | None, settings: Settings, *, delete: Sequence[str] = (),
          wrap: Wrap = plain, progress: Progress | None = None, embed: Embedder | None = None) -> list[StageResult]:
    """Run every stage over the run's index, in order; each recomputes only what its inputs changed.

    `embed` makes entity vectors with a function of the caller's; otherwise settings.embed_url names the
    endpoint, and with neither no vectors are kept.
    """
    if embed is None and settings.embed_url:
        embed = openai_compatible(settings.embed_url, settings.embed_model)
    with collector_paused(), run.logging():
        return _stages(run, source, settings, delete=delete, wrap=wrap, progress=progress, embed=embed)


def _stages(run: Run, source: Path | None, settings: Settings, *, delete: Sequence[str],
            wrap: Wrap, progress: Progress | None, embed: Embedder | None) -> list[StageResult]:
    """The stages in order (see `build`)."""
    done: list[StageResult] = []

    def step(name: str, fn: Stage, **knobs: Any) -> None:
        start = perf_counter()
        work = wrap(fn, name)(run, **knobs)
        done.append(StageResult(name, work, perf_counter() - start))
        if progress:
            progress(done[-1])

    step("documents", documents.run, source=source, max_bytes=settings.max_document_bytes, delete=delete)
    later: list[tuple[str, Stage, dict[str, Any]]] = [
        ("chunks", chunks.run, {"encoding": settings.encoding, "max_tokens": settings.chunk_tokens}),
        ("mentions", mentions.run, {"mode": settings.mentions, "gazetteer_path": settings.gazetteer,
                                    "nlp_min_chunks": settings.nlp_min_chunks, "nlp_max_share": settings.nlp_max_share,
                                    "spacy_model": settings.spacy_model, "window": settings.edge_window}),
        ("edges", edges.run, {"min_weight": settings.edge_min_weight, "top_k": settings.edge_rows}),
        ("communities", communities.run, {"max_size": settings.max_cluster_size, "max_levels": settings.max_levels,
                                          "seed": settings.seed, "resolution": settings.resolution}),
        ("entity_answers", answers.run, {"max_chars": settings.answer_max_chars}),
        ("community_reports", reports.run, {"max_lines": settings.report_max_lines,
                                            "n_evidence": settings.report_evidence}),
        ("entity_vectors", vectors.run, {"embed": embed, "model": settings.embed_model}),
    ]
    inputs = _inputs(settings, embed)
    if done[-1].work[2:4] == (0, 0) and run.get("inputs") == inputs:
        for name, _, _ in later:  # same documents, same settings: every later stage would find nothing to do
            done.append(StageResult(name, Work(0, 0, 0, 0, {"skipped": 1}), 0.0))
            if progress:
                progress(done[-1])
        return done
    small = done[-1].work.recomputed + done[-1].work.removed < SMALL_CHANGE * done[-1].work.read
    with one_thread(run.con) if small else nullcontext():
        for name, fn, knobs in later:
            step(name, fn, **knobs)
    run.put("inputs", inputs)
    return done


def publish(source: Path | None, db: Path, settings: Settings | Requested, *, delete: Sequence[str] = (),
            fresh: bool = False, wait: float = 0.0, wrap: Wrap = plain, progress: Progress | None = None,
            embed: Embedder | None = None) -> tuple[str, list[StageResult]]:
    """Update the index at `db` from `source` (or delete ids) on a staging copy that replaces `db` when done.

    `settings` are used as they are; `Requested` ones are resolved against the settings the index was built
    with (pipelines.reconfigure), under the writer lock so that no other run changes those meanwhile.
    """
    started = runs.now()
    run_id = f"{started:%Y%m%dT%H%M%S%f}-{os.getpid()}"
    with staging(db, fresh=fresh, wait=wait, source=source) as run:
        if isinstance(settings, Requested):
            settings = resolve(built_with(db) if fresh else stored(run.con), settings, fresh=fresh)[0]
        stages = build(run, source, settings, delete=delete, wrap=wrap, progress=progress, embed=embed)
        runs.record(run, run_id=run_id, started_at=started, source=str(source or "delete"),
                    settings=settings.model_dump(mode="json"), stages=stages, status="ok")
    return run_id, stages


def _inputs(settings: Settings, embed: Embedder | None) -> str:
    """What the stages after `documents` read besides the documents: the settings, the gazetteer's bytes,
    whether an embedder is given, and the versions of the generated texts. When neither these nor the
    documents changed, those stages are skipped."""
    gazetteer = settings.gazetteer
    digest = sha256(gazetteer.read_bytes()).hexdigest() if gazetteer and gazetteer.is_file() else ""
    versions = [CANDIDATES_VERSION, mentions.VERSION, answers.VERSION, reports.VERSION, vectors.VERSION]
    return json.dumps({"settings": settings.model_dump(mode="json"), "gazetteer": digest,
                       "embed": embed is not None, "versions": versions}, sort_keys=True)
