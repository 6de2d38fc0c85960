"""Query-time assembly for context assemblers: question in, routed and token-budgeted context out.

    from acervo.pipelines.query.context import Index
    with Index("acervo.duckdb") as index:
        context = index.query("Who directed Wrong Turn 3?", budget=1024)
        print(context.to_json())

Every block cites chunk ids only (a report id is never a citation): in its text as short labels ([c1], the
context's `labels` maps them back) or, with cite="ids", as the ids themselves; and only chunks the caller's
scopes allow are ever read: the scope filter sits inside the SQL that reads text. A scoped caller also
sees entities, labels, edges and answers as an index of only the documents it may read would hold them
(a `View`), so that no field of its result depends on what it may not read; communities alone are the
whole corpus's (a report shows only the lines of members the caller sees, under their labels).
"""

import json
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import duckdb

from acervo.pipelines import tokens
from acervo.pipelines.db import READER_CACHE_MB, Connection, close_reader, reader, sql
from acervo.pipelines.embeddings import PACKAGED, Embedder, EmbeddingError, packaged
from acervo.pipelines.layout import document_of
from acervo.pipelines.names import words
from acervo.pipelines.query import evidence, labels, lexical, local, meaning, reports, router, scoring, seeds
from acervo.pipelines.query import prune as pruning
from acervo.pipelines.query.budget import INSTRUCTION, Selection, Unit, chunk, key, select, sliced
from acervo.pipelines.query.fusion import fused
from acervo.pipelines.query.khop import Neighbours, held, stored
from acervo.pipelines.query.router import Decision, route
from acervo.pipelines.query.scoring import (
    CHUNK_SLICE,
    DIRECT_SLACK,
    GRAPH_SLICE,
    LEXICAL_LIMIT,
    LEXICAL_SEED_CHUNKS,
    REACH_QUANTILE,
    SCORE_DIGITS,
    VECTOR_FLOOR,
)
from acervo.pipelines.query.seeds import Hit, Seed, SeedFinder, View
from acervo.pipelines.query.words import Words, stem
from acervo.pipelines.settings import CANDIDATE_MODES, EdgeSetting, MentionSetting, Settings

Mode = Literal["priority", "sliced"]
Forced = Literal["local", "global", "mixed"]  # a route the caller chooses over the router's
Cite = Literal["labels", "ids"]  # how a block's text cites a chunk: a short label ([c1]) or its id
Pruner = Callable[[str, Selection], pruning.Pruned]  # question and chosen selection in, what pruning kept out
PRUNE_TOP = pruning.KEEP_TOP  # blocks after the instruction a pruned context keeps whatever their grade
PRUNE_THRESHOLD = pruning.THRESHOLD  # the least grade a pruned context keeps a block for
COUNTED = 4096  # texts whose token counts a process remembers (blocks and documents: a few MB)
READER_THREADS = 1  # DuckDB threads of a query connection: its statements are small, a second thread costs more CPU
PINNED_STEP_MB = 16  # how far the lookup-index nodes a reader loaded may grow before its memory limit follows them
PINNED_EVERY = 16  # questions between two readings of those nodes' memory (a reading costs about a statement)
MAX_BUDGET = 131_072  # tokens one context may hold: the largest window of the models an assembler feeds
INSTRUCTIONS = ("Answer only from the context below. Cite the labels in brackets after each claim. "
                "If the context does not answer the question, say so.")


@dataclass(frozen=True)
class Block:
    """One block of context, in order: its kind, text, cited chunk ids, score and token cost."""

    kind: str
    text: str
    refs: list[str]
    score: float
    tokens: int


@dataclass
class Context:
    """What an assembler gets back for one question."""

    question: str
    route: str
    reason: str
    blocks: list[Block]
    budget: dict[str, Any]
    refused: list[list[str]] = field(default_factory=list)  # [kind, id] of each candidate block left out
    seeds: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)  # each short label the text cites -> its chunk id
    pruned: dict[str, Any] | None = None  # what pruning dropped and why (pipelines.query.prune), when it ran

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON shape: route, reason, blocks, budget, refused, labels (and question, seeds), and
        `pruned` only when pruning ran."""
        shape = asdict(self)
        if self.pruned is None:
            del shape["pruned"]
        return shape

    def to_json(self) -> str:
        """`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @property
    def text(self) -> str:
        """The blocks joined, ready to paste into a prompt."""
        return "\n\n".join(b.text for b in self.blocks)


class Index:
    """An open index (read-only) for answering many questions in one process.

    It keeps reading the file it opened, whole and unchanged, while runs publish newer ones (a new Index
    reads the newest); `reopen` switches it to the newest published index.
    """

    def __init__(self, db: Path | str, *, embed: Embedder | None = None, vector_floor: float | None = None,
                 meaning_floor: float | None = None, reach_floor: float | None = None,
                 cache_mb: int | None = READER_CACHE_MB) -> None:
        """Open `db` read-only and load the names that seed questions; budgets count tokens in the
        encoding the index was built with. With `embed` (the model the index's vectors were made with: an
        index made with the packaged model uses it unasked), a question that names no entity is also seeded
        by the entities closest to it in meaning (`vector_floor`: their least cosine, where the index holds entity
        vectors), and its first hop
        ranks chunks by meaning too; a question is unanswerable when its closest chunk's cosine is below
        `meaning_floor` and its words do not answer it either (None: no floor, except the packaged model's,
        calibrated on the index: `floor`). Without a floor for meaning, a question that names something is
        unanswerable when its best BM25 chunk reaches less of the score its words could get than `reach_floor`
        (None: calibrated on the index, `reach_floor`; 0: no floor).
        `cache_mb`: the megabytes of table blocks DuckDB keeps cached for questions, above the lookup-index nodes
        they loaded, which it cannot evict (None: DuckDB's own limit, most of the machine's memory).
        ValueError when `db` is missing or not an index."""
        self.db = db
        self.cache_mb = cache_mb
        self._embedder = embed  # kept by each opening whose index holds vectors
        self._model: Embedder | None = None  # the packaged model, for an index made with it
        self._floors = (vector_floor, meaning_floor)
        self._reach_floor = reach_floor
        self._open()

    def _open(self) -> None:
        """Connect to the index file published now and load what queries need from it."""
        self.con: Connection = reader(self.db)
        self.con.execute(sql("db.set_threads"), {"n": READER_THREADS})
        self._pinned: int | None = None  # the lookup-index megabytes the memory limit was last set above
        self._own_limit = self.con.execute(sql("db.memory_limit")).fetchone()[0]  # given back to a starved question
        self._questions = 0  # questions asked since the connection opened
        self.settings = dict(self.con.execute(sql("query.settings")).fetchall())  # what the index was built with
        self.encoding = self.settings.get("encoding") or "cl100k_base"
        built = self.con.execute(sql("query.built_with")).fetchone()
        # a scoped caller's answers are chosen again among its readable chunks, as the answer stage chose them
        built_with = Settings.of_run(json.loads(built[0])) if built else Settings()
        self._meaning(built_with)
        self.answer_max_chars = built_with.answer_max_chars
        self.min_chunks = built_with.nlp_min_chunks  # a found name's fewest chunks
        self.written = _written_kinds(self.con)  # "answer", "report": the written texts the index holds
        self._views: dict[tuple[str, ...], View] = {}  # what each set of scopes sees, made on first use
        self._words: dict[tuple[str, ...] | None, Words] = {}  # word statistics per set of scopes
        self._reach: dict[tuple[str, ...] | None, float] = {}  # the lexical floor per set of scopes
        # Names the nlp and spacy modes found are candidates, often partial ("Midnight" for "A Midnight
        # Romance"), not curated titles or gazetteer entries: in such an index a seed is trusted as far
        # as its evidence matches the question, and BM25's best chunks compete on their own.
        stored = self.settings.get("mentions")
        self.mode = MentionSetting.model_validate_json(stored).mode if stored else ""
        self.checked = self.mode in CANDIDATE_MODES
        self._scores = lexical.Scores(self.con, names=self.checked)  # the last question's BM25 scores
        self.seeds = SeedFinder(self.con, capitals=self.checked)

    def _meaning(self, built_with: Settings) -> None:
        """The question embedder and floors of this opening: the caller's, or the packaged model's when the
        index was made with it; `embed` only with entity vectors, `meaning` only with chunk vectors."""
        embedder, (vector_floor, meaning_floor) = self._embedder, self._floors
        entity, chunk = _has_vectors(self.con, "entity_vectors"), _has_vectors(self.con, "chunk_vectors")
        self.calibrated = not built_with.embed_url and built_with.embed_model == PACKAGED and (entity or chunk)
        if self.calibrated and embedder is None:
            self._model = self._model or _packaged()  # loaded once, whatever the reopenings
            embedder = self._model
        self.vector_floor = VECTOR_FLOOR if vector_floor is None else vector_floor
        self.meaning_floor = meaning_floor
        self._calibration: dict[tuple[str, ...] | None, float] = {}  # the packaged model's floor per set of scopes
        self._unrelated: list[list[float]] | None = None  # the unrelated questions' vectors, embedded on first use
        self._examples: meaning.Examples | None = None  # the questions about a collection and the unrelated ones
        self.embed = embedder if entity else None
        self.meaning = embedder if chunk else None
        self._asked: tuple[str, Any] | None = None  # the last question and its vector
        self._near: tuple[Any, list[Hit]] | None = None  # the last question and scopes, and their closest chunks
        self._vectors: meaning.Vectors | None = None  # the chunk vectors, read on first use

    def vector(self, question: str) -> list[float]:
        """The question's embedding (the last question's is kept: routing and ranking both use it)."""
        if self._asked is None or self._asked[0] != question:
            embedder = self.meaning or self.embed
            assert embedder is not None
            self._asked = (question, embedder([question])[0])
        return self._asked[1]

    def closest(self, question: str, scopes: list[str] | None) -> list[Hit]:
        """The readable chunks closest in meaning to `question` (none without chunk vectors), best first; the
        last question's are kept."""
        if not self.meaning:
            return []
        asked = (question, None if scopes is None else tuple(sorted(set(scopes))))
        if self._near is None or self._near[0] != asked:
            self._near = (asked, self.vectors().closest(self.con, self.vector(question), scopes))
        return self._near[1]

    def vectors(self) -> meaning.Vectors:
        """The chunk vectors, read on first use."""
        if self._vectors is None:
            self._vectors = meaning.Vectors(self.con)
        return self._vectors

    def floor(self, scopes: list[str] | None) -> float | None:
        """The cosine below which a question's closest chunk says no text readable by `scopes` is about it: the
        caller's `meaning_floor`, else the packaged model's, calibrated on the chunks `scopes` may read
        (meaning.Vectors.floor: the unrelated questions, embedded once per opening); None: no floor."""
        if not self.meaning or (self.meaning_floor is None and not self.calibrated):
            return None
        if self.meaning_floor is not None:
            return self.meaning_floor
        allowed = None if scopes is None else tuple(sorted(set(scopes)))
        if allowed not in self._calibration:
            self._calibration[allowed] = self.vectors().floor(self._unrelated_vectors(), scopes)
        return self._calibration[allowed]

    def _unrelated_vectors(self) -> list[list[float]]:
        """The unrelated questions' vectors (meaning.unrelated), embedded once per opening: the floor's calibration
        and the questions about a collection both read them."""
        if self._unrelated is None:
            assert self.meaning is not None
            self._unrelated = self.meaning(meaning.unrelated())
        return self._unrelated

    def reach_floor(self, scopes: list[str] | None) -> float:
        """The lexical floor for the chunks `scopes` may read: the caller's `reach_floor`, else the REACH_QUANTILE
        quantile of how much of the BM25 score they could get the unrelated questions' best readable chunks reach
        (lexical.reach), read once per opening and set of scopes (`_calibrate`)."""
        if self._reach_floor is not None:
            return self._reach_floor
        self.word_stats(scopes)
        return self._reach[None if scopes is None else tuple(sorted(set(scopes)))]

    def reach(self, question: str, scopes: list[str] | None) -> float:
        """How much of the BM25 score its words could get `question`'s best readable chunk reaches (lexical.reach):
        a word the readable documents write with other endings (its first letters) is not one they lack."""
        stats, hits = self.word_stats(scopes), self.top(question, scopes)
        return lexical.reach(self.searcher(scopes), question, hits[0][-1] if hits else 0.0, stats.written)

    def _closeness(self, question: str, scopes: list[str] | None, floor: float, stats: Words) -> router.Closeness:
        """The cosine of the chunk closest to `question` beside the index's `floor`, with the most of its
        information one of its best BM25 chunks holds (`coverage`) and, with the packaged model, how it
        compares with the questions about a collection and the unrelated ones (meaning.Examples: router rule 3)."""
        near = self.closest(question, scopes)
        held = self.coverage(question, scopes, stats)
        best = near[0][-1] if near else 0.0
        if not self.calibrated:  # questions about a collection are told apart with the packaged model only
            return router.Closeness(best, floor, held)
        if self._examples is None:
            self._examples = meaning.Examples(self.meaning(meaning.collection()), self._unrelated_vectors())
        return router.Closeness(best, floor, held, *self._examples.compared(self.vector(question)))

    def _first(self, question: str, scopes: list[str] | None, hits: list[Hit] | None) -> list[Hit]:
        """The first hop's chunks: BM25's best, with those closest in meaning when the index has chunk vectors."""
        hits = self.top(question, scopes) if hits is None else hits
        return meaning.merged(hits, self.closest(question, scopes)) if self.meaning else hits

    def reopen(self) -> None:
        """Read the index published last from now on: close this one and open the file at the path again."""
        self.close()
        self._open()

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections and release the index file."""
        close_reader(self.con)

    def searcher(self, scopes: list[str] | None) -> lexical.Searcher:
        """BM25 over the chunks `scopes` may read."""
        return lexical.searcher(self.con, scopes, self._scores)

    def word_stats(self, scopes: list[str] | None) -> Words:
        """How many of the documents `scopes` may read use each word (read from the index as words are asked), and
        the lexical floors, calibrated on the unrelated questions once per opening (`_calibrate`)."""
        allowed = None if scopes is None else tuple(sorted(set(scopes)))
        if allowed not in self._words:
            stats = Words(self.con, None if allowed is None else list(allowed), self._scores.stems)
            self._calibrate(scopes, allowed, stats)
            self._words[allowed] = stats  # kept once calibrated: a question that fails before calibrates again
        return self._words[allowed]

    def _calibrate(self, scopes: list[str] | None, allowed: tuple[str, ...] | None, stats: Words) -> None:
        """Both lexical floors for the chunks `scopes` may read, from one search of each unrelated question: the
        reach floor (`reach_floor`) and the words' (Words.calibrate: the most of their information one of their
        best chunks holds)."""
        questions = meaning.unrelated()
        stats.load(stem(w) for q in questions for w in words(q))  # their words' counts in one statement
        found = self._unrelated_found(questions, scopes, stats)
        self._reach[allowed] = round(_quantile([reached for reached, _ in found], REACH_QUANTILE), SCORE_DIGITS)
        stats.calibrate(held for _, held in found)

    def _unrelated_found(self, questions: list[str], scopes: list[str] | None,
                         stats: Words) -> list[tuple[float, float]]:
        """Each of `questions`' reach and coverage, their searches made together (lexical.Scores.best_top)."""
        scores = self._scores
        n = scores.corpus_of(scopes)[0]
        ranked = scores.best_top([scores.terms(q) for q in questions], LEXICAL_SEED_CHUNKS, scopes)
        return [(lexical.reached(scores, q, n, df, hits[0][-1] if hits else 0.0, stats.written),
                 max((stats.coverage(q, text) for _, _, text, *_ in hits), default=0.0))
                for q, (hits, df) in zip(questions, ranked, strict=True)]

    def coverage(self, question: str, scopes: list[str] | None, stats: Words) -> float:
        """The most of `question`'s information (Words.coverage) one of its best readable BM25 chunks holds (0 when
        none is readable)."""
        hits = self.top(question, scopes)[:LEXICAL_SEED_CHUNKS]
        return max((stats.coverage(question, text) for _, _, text, *_ in hits), default=0.0)

    def view(self, scopes: list[str] | None) -> View | None:
        """What `scopes` may see of the graph, made on first use (None: unscoped, the whole index)."""
        if scopes is None:
            return None
        allowed = tuple(sorted(set(scopes)))
        if allowed not in self._views:
            self._views[allowed] = seeds.view(self.con, list(allowed), checked=self.checked, mode=self.mode,
                                              edges=EdgeSetting.model_validate_json(self.settings.get("edges") or "{}"),
                                              min_chunks=self.min_chunks)
        return self._views[allowed]

    def graph(self) -> Neighbours:
        """The index's edges, read for each frontier of a walk (nothing held in memory)."""
        return stored(self.con)

    def top(self, question: str, scopes: list[str] | None) -> list[Hit]:
        """The best LEXICAL_LIMIT readable chunks for `question` by BM25 (query.lexical_top rows), best first."""
        return lexical.top_chunks(self.searcher(scopes), question, limit=LEXICAL_LIMIT)

    def by_vector(self, question: str, scopes: list[str] | None) -> list[tuple[Seed, float]]:
        """The entities closest in meaning to `question` (cosine of the vectors, at least the floor), with
        their similarity; none without an embedder. A scoped caller gets only entities it sees, as it
        labels and counts them."""
        if self.embed is None:
            return []
        return seeds.by_vector(self.con, self.vector(question), scopes, floor=self.vector_floor,
                               view_of=self.view(scopes))

    def count(self, text: str) -> int:
        """Tokens of `text` in the index's encoding (remembered: a block is counted again as the selection
        tries it, and the same chunks return in later questions)."""
        return _count(text, self.encoding)

    @property
    def min_budget(self) -> int:
        """The least budget a query accepts: what the instruction, which every context starts with, costs."""
        return self.count(INSTRUCTIONS)

    def query(self, question: str, *, budget: int = 2048, scopes: list[str] | None = None, hops: int = 2,
              cap: int | None = 8, mode: Mode = "priority", direct: bool = True, prune: pruning.Grader | None = None,
              keep_top: int = PRUNE_TOP, threshold: int = PRUNE_THRESHOLD, cite: Cite = "labels",
              route: Forced | None = None) -> Context:
        """Route `question` and assemble its context within `budget` tokens.

        `scopes`: None reads every document; a list reads documents without scope or with one of them.
        `hops`, `cap`: the walk from the seeds (each entity's `cap` strongest edges), in an index of curated
        names; an index of found names ranks its evidence through the graph instead (pipelines.query.evidence).
        `direct`: when the documents the context draws on fit the budget with slack, return them whole.
        `prune`: a grader (pipelines.query.prune) that grades the chosen blocks (whole documents too), keeping
        the first `keep_top` and those graded at least `threshold`, each with the blocks it hangs from. The
        budget report stays that of the selection before pruning (what the budget bought); `pruned` holds the
        tokens after, each dropped block with its grade and why, and the calls and model tokens pruning spent.
        `cite`: "labels" writes each cited chunk as a short label, numbered in reading order (`Context.labels`
        maps them back to chunk ids); "ids" writes the chunk ids themselves. Blocks are chosen as they are written.
        `route`: the caller's route (local, global or mixed) instead of the router's, with the entities the
        question names as its seeds; the reason says so, and what the router would have chosen.
        ValueError for a budget below `min_budget`, which the instruction alone would overspend, or above
        MAX_BUDGET.
        """
        if budget < self.min_budget:
            raise ValueError(f"a budget of {budget} tokens is below the instruction's cost: give at least "
                             f"{self.min_budget} (--budget)")
        if budget > MAX_BUDGET:
            raise ValueError(f"a budget of {budget} tokens is above the most one context may hold: give at most "
                             f"{MAX_BUDGET} (--budget)")
        return self._bounded(lambda: self._query(question, budget, scopes, hops, cap, mode, direct,
                                                 self._pruner(prune, keep_top, threshold), cite, route))

    def _bounded(self, ask: Callable[[], Context]) -> Context:
        """`ask` within the reader's memory bound (`_bound`); one that needs more memory than the bound leaves is
        asked again under DuckDB's own limit, so that the bound never fails a question."""
        self._bound()
        try:
            return ask()
        except duckdb.OutOfMemoryException:
            self.con.execute(sql("db.set_memory_limit"), {"limit": self._own_limit})
            self._pinned = None
            return ask()

    def _bound(self) -> None:
        """Hold DuckDB's memory to `cache_mb` above what it cannot evict (query.pinned_memory: the lookup-index nodes
        questions loaded, kept until the connection closes), read every PINNED_EVERY questions and followed by
        steps of PINNED_STEP_MB: what the reader caches of the tables stays bounded whatever the corpus's size. A
        limit DuckDB cannot reach yet (its blocks in use) is tried again at the next question."""
        self._questions += 1
        if self.cache_mb is None or (self._pinned is not None and self._questions % PINNED_EVERY):
            return
        pinned = self.con.execute(sql("query.pinned_memory")).fetchone()[0] // 2**20
        if self._pinned is None or pinned > self._pinned:
            try:
                self.con.execute(sql("db.set_memory_limit"), {"limit": f"{pinned + PINNED_STEP_MB + self.cache_mb}MiB"})
                self._pinned = pinned + PINNED_STEP_MB
            except duckdb.OutOfMemoryException:
                self._pinned = None

    def _query(self, question: str, budget: int, scopes: list[str] | None, hops: int, cap: int | None, mode: Mode,
               direct: bool, pruner: Pruner | None, cite: Cite, forced: Forced | None = None) -> Context:
        """`query`'s work, its arguments checked."""
        view = self.view(scopes)
        decision, hits = self._route(question, scopes, view)
        if forced is not None:
            decision = Decision(forced, f"{forced}, as the caller asked (the router chose {decision.route}: "
                                        f"{decision.reason})", decision.seeds)
        if decision.route == "none":
            texts = [text for _, _, text, *_ in (self.top(question, scopes) if hits is None else hits)]
            missing = self.word_stats(scopes).uncovered(question, texts[:LEXICAL_SEED_CHUNKS])
            said = f"; the best matching text holds none of {', '.join(map(repr, missing))}" if missing else ""
            nothing = Decision("none", decision.reason + f" (no context: nothing was found{said})", decision.seeds)
            return _context(question, nothing, Selection([], [], budget), {}, [], pruner)
        instruction = Unit(INSTRUCTION, key(INSTRUCTION, ""), INSTRUCTIONS, (), 1.0)
        seed_ids = [s.entity_id for s in decision.seeds]
        hits = self.top(question, scopes) if hits is None else hits
        lexical_units = [chunk(chunk_id, text, 0.0) for chunk_id, _, text, *_ in hits]  # BM25's, best first
        units = fused(decision.route, self._units(question, decision, hits, scopes, view, hops=hops, cap=cap),
                      lexical_units)
        chosen, named = self._cited(units, lambda written: self._chosen(instruction, written, mode, budget), cite)
        whole = self._direct(chosen, instruction, budget, scopes, cite) if direct and seed_ids else None
        if whole:
            decision = Decision(decision.route, decision.reason + "; its documents fit the budget whole",
                                decision.seeds)
            return _context(question, decision, *whole, seed_ids, pruner)
        return _context(question, decision, chosen, named, seed_ids, pruner)

    @staticmethod
    def _pruner(grader: pruning.Grader | None, keep_top: int, threshold: int) -> Pruner | None:
        """`grader` with its settings, as `_context` prunes a selection (None: no pruning)."""
        if grader is None:
            return None
        return lambda question, chosen: pruning.prune(question, chosen, grader, keep_top=keep_top,
                                                      threshold=threshold)

    def _route(self, question: str, scopes: list[str] | None, view: View | None) -> tuple[Decision, list[Hit] | None]:
        """The route of `question` (pipelines.query.router) from the entities it names and, when it names
        none, from what the entity vectors and the best BM25 chunks find; with the BM25 hits read for it."""
        stats = self.word_stats(scopes)
        stats.load(stem(w) for w in words(question))
        named = seeds.named(self.seeds if view is None else view.seeds, question, stats, checked=self.checked)
        hits = None
        if any(seeds.lower_case(question, s) for s in named):  # a common word, or a title written as one?
            hits = self.top(question, scopes)
            named = [s for s in named if not seeds.lower_case(question, s) or seeds.supported(question, s.label, hits)]
        share = stats.share if stats.n_documents >= router.MIN_DOCUMENTS else None
        closeness, floor = None, self.floor(scopes)
        # without a floor for meaning, a name is no answer: the lexical floor, read before the question's own
        # search (the calibration searches too)
        lexical_floor = self.reach_floor(scopes) if floor is None else None
        if floor is not None:  # meaning and words held may refuse a question whatever it names
            hits = self.top(question, scopes) if hits is None else hits
            closeness = self._closeness(question, scopes, floor, stats)
        decision = route(question, named, share=share, closeness=closeness if named else None,
                         reach=self._reach_of(question, scopes, lexical_floor) if named else None)
        if decision.route != "none" or named:
            return decision, hits
        hits = self.top(question, scopes) if hits is None else hits
        covered = seeds.covered(question, hits, stats)
        by_name = seeds.by_name(question, hits, stats)
        decision = route(question, named, by_vector=self.by_vector(question, scopes),
                         by_words=seeds.by_words(self.con, question, hits, view, stats), by_name=by_name,
                         by_chunks=len(covered), profile=lexical.profile(hits), share=share,
                         closeness=closeness, about=self._about(question, scopes, stats),
                         reach=self._reach_of(question, scopes, lexical_floor) if by_name else None)
        return decision, hits

    def _reach_of(self, question: str, scopes: list[str] | None, lexical_floor: float | None) -> router.Reach | None:
        """`question`'s reach beside the lexical floor, for a question that names something (None: the index has
        a floor for meaning instead)."""
        return None if lexical_floor is None else router.Reach(self.reach(question, scopes), lexical_floor)

    def _about(self, question: str, scopes: list[str] | None, stats: Words) -> tuple[str, int] | None:
        """A question that asks about many of what the collection's text says (router.asks_many): its subject
        (router.subject) and how many documents hold one of the best BM25 chunks for it that passes the lexical
        floor for it (router rule 3); None for any other question."""
        if not router.asks_many(question):
            return None
        subject = router.subject(question)
        held = {doc for _, doc, text, _, _ in (self.top(subject, scopes) if subject else [])
                if stats.matches(subject, text)}
        return subject, len(held)

    def _units(self, question: str, decision: Decision, hits: list[Hit] | None, scopes: list[str] | None,
               view: View | None, *, hops: int, cap: int | None) -> list[Unit]:
        """The candidate units of a routed question: in an index of found names, its evidence ranked through
        the graph (pipelines.query.evidence); otherwise its seeds' local context (or, seeded by no entity, the
        first hop's chunks alone: BM25's best, and the closest in meaning with chunk vectors); then for a global
        or mixed route the community reports."""
        units: list[Unit] = []
        seed_ids = [s.entity_id for s in decision.seeds]
        if decision.route in ("local", "mixed"):
            hits = self._first(question, scopes, hits)
        if self.checked and decision.route in ("local", "mixed"):  # found names: ranked through the graph
            units += evidence.units(self.con, self.searcher(scopes), question, hits, seed_ids, scopes, view,
                                    max_chars=self.answer_max_chars, written_rows="answer" in self.written)
        elif seed_ids:
            graph = self.graph() if view is None else held(view.graph)
            units += local.units(self.con, self.searcher(scopes), question, seed_ids, scopes, hits or [],
                                 graph, view, hops=hops, cap=cap, checked=self.checked,
                                 max_chars=self.answer_max_chars, written_rows="answer" in self.written)
        elif decision.route == "local":  # a name the text uses, no entity: the best BM25 chunks alone
            scaled = lexical.scaled(hits or [])
            units += [chunk(chunk_id, text, scaled[chunk_id]) for chunk_id, _, text, *_ in hits or []]
        if decision.route in ("global", "mixed"):
            units += self._reports(question, decision.route, seed_ids, scopes, view)
        return units

    def _reports(self, question: str, route_: str, seed_ids: list[str], scopes: list[str] | None,
                 view: View | None) -> list[Unit]:
        """The report units: a mixed route's seeds' communities (the collection's, when they are in none),
        leading its entities' evidence; a global route's, or a mixed one's without seeds, the collection's, those
        that its subject's best BM25 chunks fall in first, with those chunks."""
        written = "report" in self.written
        if route_ != "mixed" or not seed_ids:
            subject = router.subject(question)
            hits = self.top(subject, scopes) if subject else []
            read = self._scores.question.n if hits and self._scores.question else 0
            return reports.units(self.con, question, scopes, None, view, written_rows=written, hits=hits,
                                 n_chunks=read)
        ids = [c for (c,) in self.con.execute(sql("query.communities_of"), {"ids": seed_ids}).fetchall()]
        found = (reports.units(self.con, question, scopes, ids, view, written_rows=written)
                 or reports.units(self.con, question, scopes, None, view, written_rows=written))
        return [replace(u, score=scoring.mixed(u.score)) for u in found]

    def _chosen(self, instruction: Unit, units: list[Unit], mode: Mode, budget: int) -> Selection:
        """The units that enter `budget` after the instruction: the best first (mode priority), or each kind
        within its slice (sliced)."""
        if mode == "sliced":
            groups = [(GRAPH_SLICE, [u for u in units if u.kind in ("answer", "relation", "report")]),
                      (CHUNK_SLICE, [u for u in units if u.kind == "chunk"])]
            return sliced([instruction], groups, budget=budget, count=self.count)
        return select([instruction, *units], budget=budget, count=self.count)

    def _cited(self, units: list[Unit], choose: Callable[[list[Unit]], Selection],
               cite: Cite) -> tuple[Selection, dict[str, str]]:
        """What `choose` picks among `units` written as they will be cited (`cite`: short labels, numbered
        again in reading order once chosen, or chunk ids), with the label -> chunk id map of what it cites."""
        if cite != "labels":
            return choose(units), {}
        written, numbers = labels.candidates(units)
        return labels.renumbered(choose(written), {u.key: u for u in units}, numbers, self.count)

    def _direct(self, chosen: Selection, instruction: Unit, budget: int, scopes: list[str] | None,
                cite: Cite) -> tuple[Selection, dict[str, str]] | None:
        """The documents the chosen fragments come from, whole, when they fit the budget with slack, each headed
        by its title and the chunks it holds (cited as `cite` says); with the label -> chunk id map."""
        refs = list(dict.fromkeys(r for u in chosen.units for r in u.refs))
        ids = list(dict.fromkeys(document_of(r) for r in refs))
        docs = self.con.execute(sql("query.documents"), {"doc_ids": ids, "scopes": scopes}).fetchall()
        if not docs or sum(d[3] for d in docs) > DIRECT_SLACK * budget:  # stored sizes: no tokenizing to refuse
            return None
        first = {cid: i for i, cid in enumerate(refs)}
        docs.sort(key=lambda d: min(first.get(c, len(first)) for c in d[4]))
        units = [Unit("document", key("document", d), f"# {title} {' '.join(f'[{c}]' for c in chunk_ids)}\n{text}",
                      tuple(chunk_ids), scoring.document(i))
                 for i, (d, title, text, _, chunk_ids) in enumerate(docs)]
        found, named = self._cited(units, lambda written: select([instruction, *written], budget=budget,
                                                                 count=self.count), cite)
        if found.refused or found.spent > DIRECT_SLACK * budget:  # every document, within the slack
            return None
        return found, named


def _context(question: str, decision: Decision, chosen: Selection, named: dict[str, str], seed_ids: list[str],
             pruner: Pruner | None = None) -> Context:
    """The selection as a Context, pruned by `pruner` when given (the budget report stays the selection's), with
    the labels of `named` (label -> chunk id) that its blocks write."""
    seeds_in = sum(1 for u in chosen.units if u.kind == "answer")  # each relation hangs from one of them
    report = {"total": chosen.total, "spent": chosen.spent, "by_kind": chosen.by_kind,
              "truncation_rate": round(chosen.truncation_rate, 4), "components": seeds_in}
    refused = [json.loads(k) for k in chosen.refused]
    pruned = pruner(question, chosen) if pruner else None
    kept = pruned.kept if pruned else chosen
    blocks = [Block(u.kind, u.text, list(u.refs), u.score, n) for u, n in zip(kept.units, kept.tokens, strict=True)]
    return Context(question, decision.route, decision.reason, blocks, report, refused, seed_ids,
                   labels.kept(kept.units, named), pruned.report() if pruned else None)


def _quantile(values: list[float], q: float) -> float:
    """The `q` quantile of `values`, interpolated between the two nearest (numpy's default), without numpy: a
    reader of an index without vectors never loads it."""
    ordered = sorted(values)
    place = (len(ordered) - 1) * q
    low = int(place)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (place - low)


@lru_cache(maxsize=COUNTED)
def _count(text: str, encoding: str) -> int:
    """tokens.count, remembered for the COUNTED texts counted last."""
    return tokens.count(text, encoding)


def _packaged() -> Embedder | None:
    """The packaged model for questions, or None, with a warning, where the extra is not installed: the index is
    then read by its words alone."""
    try:
        return packaged(query=True)
    except EmbeddingError as err:
        warnings.warn(f"{err}; until then, questions are answered by their words alone", stacklevel=3)
        return None


def _written_kinds(con: Connection) -> frozenset[str]:
    """The kinds of written text ("answer", "report") the index holds rows of, so that a question looks for none
    where there are none."""
    answers, reports = con.execute(sql("query.written_counts")).fetchone()
    return frozenset(kind for kind, n in (("answer", answers), ("report", reports)) if n)


def _has_vectors(con: Connection, table: str) -> bool:
    """Whether the index holds entity or chunk vectors (`table`)."""
    count = "query.vector_count" if table == "entity_vectors" else "query.chunk_vector_count"
    return con.execute(sql(count)).fetchone()[0] > 0
