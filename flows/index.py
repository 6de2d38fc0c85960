"""The index pipeline in one screen: a staging copy of the index, each stage in order, the run's ledger.

`publish` runs it as it is (a one-shot `acervo index`); flows.flow_run runs the same function as a Prefect flow
with each stage a Prefect task (scheduled and triggered runs). Each stage skips itself when nothing it reads
changed in this run and its settings are those stored (pipelines.run.Run.unchanged).
"""

import os
from collections.abc import Callable, Sequence
from contextlib import closing, nullcontext
from pathlib import Path
from time import perf_counter
from typing import Any

import duckdb

from acervo.pipelines import (
    answers,
    boilerplate,
    chunk_vectors,
    chunks,
    communities,
    documents,
    edges,
    mentions,
    reports,
    runs,
    terms,
    vectors,
    written_answers,
    written_reports,
)
from acervo.pipelines.db import MEMORY_VARIABLE, OutOfMemory, allocator_decay, memory_limit, one_thread
from acervo.pipelines.embeddings import PACKAGED, Embedder, openai_compatible, packaged
from acervo.pipelines.llm import Chat, Meter
from acervo.pipelines.llm import openai_compatible as chat_endpoint
from acervo.pipelines.publish import staging, unchanged, writing
from acervo.pipelines.reconfigure import built_with, mentions_chosen, resolve
from acervo.pipelines.run import Run
from acervo.pipelines.runs import StageResult, Work
from acervo.pipelines.settings import Requested, Settings
from acervo.pipelines.shards import Fanout, placed

Stage = Callable[..., Work]
Wrap = Callable[[Stage, str], Stage]
Progress = Callable[[StageResult], Any]
SMALL_CHANGE = 0.05  # a rerun that adds, edits or deletes fewer of the documents than this runs DuckDB on one thread,
# in one transaction (one checkpoint); a larger run commits after each stage, so memory holds one stage's work


def publish(source: Path | None, db: Path, settings: Settings | Requested, *, delete: Sequence[str] = (),
            fresh: bool = False, wait: float = 0.0, wrap: Wrap | None = None, progress: Progress | None = None,
            embed: Embedder | None = None, llm: Chat | None = None,
            fanout: Fanout | None = None) -> tuple[str, list[StageResult]]:
    """Update the index at `db` from `source` (or delete ids) on a staging copy that replaces `db` when done;
    a run that would change nothing leaves the file as it is (pipelines.publish.unchanged).
    `fanout` has the stages' per-document work made in shards elsewhere (pipelines.shards; flows.workers).

    `Requested` settings are resolved against those the index was built with, under the writer lock; a new index
    given no mentions mode gets the one its source calls for (pipelines.reconfigure.mentions_chosen).
    `llm` writes reports and answers (see `build`); a run it fails (pipelines.llm.Unavailable) publishes nothing.
    """
    started = runs.now()
    run_id = f"{started:%Y%m%dT%H%M%S%f}-{os.getpid()}"
    with writing(db, wait=wait, source=source, fresh=fresh) as index:
        if isinstance(settings, Requested):
            was = built_with(index)
            settings = resolve(was, mentions_chosen(source, settings, was)[0], fresh=fresh)[0]
        ledger = {"run_id": run_id, "started_at": started, "source": str(source or "delete"),
                  "settings": settings.model_dump(mode="json")}

        def probe(run: Run, documents: Stage) -> list[StageResult]:
            """Every stage on `run`, with `documents` for the documents stage."""
            return build(run, source, settings, delete=delete, embed=embed, llm=llm,
                         wrap=lambda fn, name: documents if name == "documents" else fn)

        same = None if fresh else unchanged(index, source, max_bytes=settings.max_document_bytes, probe=probe,
                                            ledger=ledger)
        if same is not None:
            for result in same if progress else ():
                progress(result)
            return run_id, same
        with staging(index, fresh=fresh) as run, placed(fanout, db, run.scratch) as run.fanout:
            stages = build(run, source, settings, delete=delete, wrap=wrap, progress=progress, embed=embed, llm=llm)
            runs.record(run, stages=stages, status="ok", **ledger)
    return run_id, stages


def build(run: Run, source: Path | None, s: Settings, *, delete: Sequence[str] = (), wrap: Wrap | None = None,
          progress: Progress | None = None, embed: Embedder | None = None,
          llm: Chat | None = None) -> list[StageResult]:
    """Run every stage over the run's index, in order; each recomputes only what its inputs changed.

    `embed` makes entity and chunk vectors (else s.embed_url names an endpoint, or s.embed_model the packaged
    model, which makes chunk vectors only; with none of them, no vectors are kept).
    `llm` writes reports and answers with verified citations (else s.llm_url names an endpoint; with
    neither, none are kept), under one budget and concurrency limit for the run (settings llm_*).
    """
    model = s.embed_model  # in each vector's hash: another model, or the packaged one, makes them all again
    if embed is None and s.embed_url:
        embed = openai_compatible(s.embed_url, s.embed_model)
    elif embed is None and s.embed_model == PACKAGED:
        embed, model = packaged(), f"packaged:{PACKAGED}"
    # the packaged model's entity vectors would seed a question ahead of its words, and worse: chunks only
    seeding = None if s.embed_model == PACKAGED and not s.embed_url else embed
    if llm is None and s.llm_url:
        llm = chat_endpoint(s.llm_url, s.llm_model, timeout=s.llm_timeout)
    meter = None if llm is None else Meter(llm, max_calls=s.llm_max_calls, max_tokens=s.llm_max_tokens,
                                           concurrency=s.llm_concurrency)
    stage = Stages(run, wrap, progress)
    with run.logging(), closing(stage):
        stage("documents", documents.run, source=source, max_bytes=s.max_document_bytes, delete=delete,
              gazetteer=s.gazetteer)
        with one_thread(run.con) if stage.small_change() else nullcontext():
            stage("chunks", chunks.run, encoding=s.encoding, max_tokens=s.chunk_tokens)
            stage("terms", terms.run, stemmer=s.stemmer)
            stage("mentions", mentions.run, mode=s.mentions, gazetteer_path=s.gazetteer,
                  nlp_min_chunks=s.nlp_min_chunks, nlp_max_share=s.nlp_max_share, spacy_model=s.spacy_model,
                  window=s.edge_window)
            stage("edges", edges.run, min_weight=s.edge_min_weight, top_k=s.edge_rows)
            stage("communities", communities.run, max_size=s.max_cluster_size, max_levels=s.max_levels, seed=s.seed,
                  resolution=s.resolution)
            stage("boilerplate", boilerplate.run)
            stage("entity_answers", answers.run, max_chars=s.answer_max_chars)
            stage("community_reports", reports.run, max_lines=s.report_max_lines, n_evidence=s.report_evidence)
            stage("written_reports", written_reports.run, llm=meter, model=s.llm_model)  # fewer, worth more
            stage("written_answers", written_answers.run, llm=meter, model=s.llm_model)
            stage("entity_vectors", vectors.run, embed=seeding, model=model)
            stage("chunk_vectors", chunk_vectors.run, embed=embed, model=model)
    return stage.done


class Stages:
    """Calls each stage on the run (through `wrap`, e.g. as a Prefect task), times it, records what it changed
    in `run.changed` for the stages that read it, and reports it to `progress`."""

    def __init__(self, run: Run, wrap: Wrap | None, progress: Progress | None) -> None:
        self.run, self.wrap, self.progress = run, wrap, progress
        self.done: list[StageResult] = []
        self.decay: int | None = None  # how long DuckDB's allocator kept freed pages before this run changed it

    def close(self) -> None:
        """Give DuckDB's allocator back the setting it had before the run."""
        if self.decay is not None:
            allocator_decay(self.decay)
            self.decay = None

    def __call__(self, name: str, fn: Stage, **knobs: Any) -> None:
        start = perf_counter()
        before = self.run.scratch_tables()
        try:
            work = (self.wrap(fn, name) if self.wrap else fn)(self.run, **knobs)
        except duckdb.OutOfMemoryException:
            raise OutOfMemory(f"stage {name} needed more memory than DuckDB's limit for the run, {memory_limit()}, "
                              f"lets it hold or spill to disk: run again with a larger --memory-limit (or "
                              f"{MEMORY_VARIABLE}); nothing was published") from None
        self.run.drop_scratch(self.run.scratch_tables() - before)
        if not _small(self.done[0].work if self.done else work):
            self.run.commit()  # what the stage wrote leaves memory; the next checkpoint writes it to the file
            if self.decay is None:  # and DuckDB gives back what its statements free at once, for the rest of the run
                self.decay = allocator_decay(0)
        if work.recomputed or work.removed:
            self.run.changed.add(name)
        self.done.append(StageResult(name, work, perf_counter() - start))
        if self.progress:
            self.progress(self.done[-1])

    def small_change(self) -> bool:
        """Whether the documents stage changed fewer than SMALL_CHANGE of the documents: a few hundred rows a
        statement, where a second DuckDB thread adds hand-over and gains nothing."""
        return _small(self.done[0].work)


def _small(documents: Work) -> bool:
    """Whether the documents stage's `documents` work changed fewer than SMALL_CHANGE of the documents read."""
    return documents.recomputed + documents.removed < SMALL_CHANGE * documents.read
