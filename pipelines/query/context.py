"""Query-time assembly for context assemblers: question in, routed and token-budgeted context out.

    from pipelines.context import Index
    with Index("acervo.duckdb") as index:
        context = index.query("Who directed Wrong Turn 3?", budget=1024)
        print(context.to_json())

Every block cites chunk ids only (a report id is never a citation), and only chunks the caller's
scopes allow are ever read: the scope filter sits inside the SQL that reads text. A scoped caller also
sees entities, labels, edges and answers as an index of only the documents it may read would hold them
(a `View`), so that no field of its result depends on what it may not read; communities alone are the
whole corpus's (a report shows only the lines of members the caller sees, under their labels).
"""

import json
import math
import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from itertools import groupby, islice
from pathlib import Path
from typing import Any, Literal

from pipelines import lexical, names, router, state, tokens
from pipelines.answers import MAX_CANDIDATE_CHUNKS, Candidate, choose
from pipelines.budget import INSTRUCTION, Selection, Unit, select, sliced
from pipelines.candidates import candidates
from pipelines.chunks import sentences as chunk_sentences
from pipelines.db import Connection, reader, sql
from pipelines.embeddings import Embedder
from pipelines.khop import Adjacency, adjacency, walk
from pipelines.mentions import CANDIDATE_MODES
from pipelines.reports import ANSWERS, EVIDENCE, MEMBERS, evidence_line, line
from pipelines.router import Decision, route, stem
from pipelines.seeds import STOP_WORDS, Seed, SeedFinder, content_words
from pipelines.settings import Settings

Mode = Literal["priority", "sliced"]
INSTRUCTIONS = ("Answer only from the context below. Cite the chunk ids in brackets after each claim. "
                "If the context does not answer the question, say so.")
DIRECT_SLACK = 0.8  # documents go in whole when they fill at most this share of the budget
CHUNKS_PER_ENTITY = 2
ANSWER_MAX_CHARS = Settings.model_fields["answer_max_chars"].default  # as the answer stage's default
LEXICAL_LIMIT = 30
LEXICAL_SEED_CHUNKS = 2  # the best BM25 chunks whose entities seed a question that names none
REPORT_TERMS = 8  # distinctive terms shown in a report
REPORT_TERM_LETTERS = 4  # a term is a word of at least this many letters, not a stop word
MIXED_REPORT_LEAD = 1.0  # added to report scores in a mixed context, above every local unit's (at most 1)
REPORT_CHUNK_SHARE = 0.5  # a report's evidence chunk scores this share of its report's score
COMMON_SHARE = 0.5  # share of documents using a name's words, and of those its mentions, for a common phrase
MAX_WORD_SEEDS = 3
MAX_VECTOR_SEEDS = 3
VECTOR_FLOOR = 0.6  # least cosine for a vector seed; models differ: calibrate it on off-topic questions (README)
LINK_BASE, LINK_BM25, LINK_SENTENCE = 0.3, 0.3, 0.4  # a neighbour's score: base, BM25 of its evidence, linking sentence


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

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON shape: route, reason, blocks, budget, refused (and question, seeds)."""
        return asdict(self)

    def to_json(self) -> str:
        """`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @property
    def text(self) -> str:
        """The blocks joined, ready to paste into a prompt."""
        return "\n\n".join(b.text for b in self.blocks)


@dataclass(frozen=True)
class Words:
    """How many of the readable documents use each word (by its stem, router.stem), for routing."""

    n_documents: int
    documents: dict[str, int]

    def share(self, word_stem: str) -> float:
        """The share of the documents that use a word with this stem."""
        return self.documents.get(word_stem, 0) / self.n_documents if self.n_documents else 0.0

    def idf(self, word_stem: str) -> float:
        """Its inverse document frequency, ln((n + 1) / (df + 1)): 0 for a word every document uses."""
        return math.log((self.n_documents + 1) / (self.documents.get(word_stem, 0) + 1))

    def matches(self, question: str, text: str) -> bool:
        """Whether `text` passes the lexical floor for `question`: it holds MIN_COVERAGE of its information
        (its content words' IDF) and MIN_SPECIFIC_WORDS of its specific words (all of them, when it has fewer)."""
        asked = {stem(w) for w in content_words(question)}
        held = asked & {stem(w) for w in names.words(text)}
        total = sum(self.idf(w) for w in asked)
        specific = {w for w in asked if self.share(w) <= router.SPECIFIC_SHARE}
        return (total > 0 and sum(self.idf(w) for w in held) / total >= router.MIN_COVERAGE
                and len(specific & held) >= min(router.MIN_SPECIFIC_WORDS, len(specific)))


@dataclass(frozen=True)
class View:
    """What a caller with some scopes may see of the graph: the entities a readable chunk mentions (with
    their labels and readable mention counts) and the edges their readable chunks make."""

    seeds: SeedFinder
    graph: Adjacency


def key(kind: str, ident: str) -> str:
    """A block's unique key: its kind and id as a JSON array, so no id can pass for another kind's."""
    return json.dumps([kind, ident], ensure_ascii=False)


class Index:
    """An open index (read-only) for answering many questions in one process.

    It keeps reading the file it opened, whole and unchanged, while runs publish newer ones (a new Index
    reads the newest); `reopen` switches it to the newest published index.
    """

    def __init__(self, db: Path | str, *, embed: Embedder | None = None, vector_floor: float = VECTOR_FLOOR) -> None:
        """Open `db` read-only and load the names that seed questions; budgets count tokens in the
        encoding the index was built with. With `embed` (the model the index's entity vectors were made
        with), a question that names no entity is also seeded by the entities closest to it in meaning.
        ValueError when `db` is missing or not an index."""
        self.db = db
        self._embedder = embed  # kept as `embed` by each opening whose index holds entity vectors
        self.vector_floor = vector_floor
        self._open()

    def _open(self) -> None:
        """Connect to the index file published now and load what queries need from it."""
        self.con: Connection = reader(self.db)
        self.embed = self._embedder if self._embedder is not None and _has_vectors(self.con) else None
        self.encoding = state.get(self.con, "encoding") or "cl100k_base"
        self._bm25: dict[tuple[str, ...] | None, Connection] = {}  # one BM25 index per set of scopes
        self._graph: Adjacency | None = None  # the edges in memory, loaded on first use
        self._views: dict[tuple[str, ...], View] = {}  # what each set of scopes sees, made on first use
        self._words: dict[tuple[str, ...] | None, Words] = {}  # word statistics per set of scopes
        # Names the nlp and spacy modes found are candidates, often partial ("Midnight" for "A Midnight
        # Romance"), not curated titles or gazetteer entries: in such an index a seed is trusted as far
        # as its evidence matches the question, and BM25's best chunks compete on their own.
        self.checked = (state.get(self.con, "mentions") or "").split(":")[0] in CANDIDATE_MODES
        self.seeds = SeedFinder(self.con, capitals=self.checked)

    def reopen(self) -> None:
        """Read the index published last from now on: close this one and open the file at the path again."""
        self.close()
        self._open()

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections."""
        self.con.close()
        for searcher in self._bm25.values():
            searcher.close()

    def searcher(self, scopes: list[str] | None) -> Connection:
        """The BM25 index over the chunks `scopes` may read, built on first use."""
        allowed = None if scopes is None else tuple(sorted(set(scopes)))
        if allowed not in self._bm25:
            self._bm25[allowed] = lexical.searcher(self.con, None if allowed is None else list(allowed))
        return self._bm25[allowed]

    def words(self, scopes: list[str] | None) -> Words:
        """How many of the documents `scopes` may read use each word, counted on first use."""
        allowed = None if scopes is None else tuple(sorted(set(scopes)))
        if allowed not in self._words:
            documents: dict[str, set[str]] = {}
            for doc_id, text in self.searcher(scopes).execute(sql("query_search_texts")).fetchall():
                documents.setdefault(doc_id, set()).update(stem(w) for w in names.words(text))
            counts = Counter(w for stems in documents.values() for w in stems)
            self._words[allowed] = Words(len(documents), dict(counts))
        return self._words[allowed]

    def view(self, scopes: list[str] | None) -> View | None:
        """What `scopes` may see of the graph, made on first use (None: unscoped, the whole index)."""
        if scopes is None:
            return None
        allowed = tuple(sorted(set(scopes)))
        if allowed not in self._views:
            mode = (state.get(self.con, "mentions") or "").split(":")[0]
            seeds = SeedFinder(self.con, capitals=self.checked, scopes=list(allowed), mode=mode)
            min_weight, top_k = (state.get(self.con, "edges") or "1:None").split(":")
            rows = self.con.execute(sql("scope_edges"), {"scopes": list(allowed), "ids": sorted(seeds.entities),
                                                         "min_weight": int(min_weight),
                                                         "top_k": None if top_k == "None" else int(top_k)}).fetchall()
            graph: Adjacency = {}
            for src, dst, weight, rank in rows:
                graph.setdefault(src, []).append((dst, weight, rank))
            self._views[allowed] = View(seeds, graph)
        return self._views[allowed]

    def matches(self, question: str, chunk_ids: set[str], scopes: list[str] | None) -> dict[str, float]:
        """BM25 score of each readable one of `chunk_ids` for `question`, scaled so that the best is 1."""
        scores = lexical.scores(self.searcher(scopes), question, sorted(chunk_ids))
        best = max(scores.values(), default=0.0) or 1.0
        return {chunk_id: score / best for chunk_id, score in scores.items()}

    def top(self, question: str, scopes: list[str] | None) -> list[tuple]:
        """The best LEXICAL_LIMIT readable chunks for `question` by BM25 (sql/lexical_top.sql rows), best first."""
        return lexical.top_chunks(self.searcher(scopes), question, limit=LEXICAL_LIMIT)

    def by_words(self, question: str, hits: list[tuple], view: View | None = None,
                 words: Words | None = None) -> list[Seed]:
        """Entities of the best BM25 `hits` that hold at least MIN_COVERAGE of the question's information
        (`words`' IDF of its content words: the lexical floor, which an off-topic question's chance matches on
        everyday words do not reach), best match first; with a `view`, those it sees, as it labels and
        counts them."""
        if words is None:
            return []
        chunks = self.covered(question, hits, words)
        if not chunks:
            return []
        rows = self.con.execute(sql("query_chunk_entities"), {"ids": chunks}).fetchall()
        if view is not None:
            seen = view.seeds.entities
            rows = [(cid, eid, seen[eid].label, seen[eid].n_chunks) for cid, eid, _, _ in rows if eid in seen]
        order = {cid: i for i, cid in enumerate(chunks)}
        rows.sort(key=lambda r: (order[r[0]], r[3], r[1]))
        found = list(dict.fromkeys(Seed(eid, label, n) for _, eid, label, n in rows))
        return found[:MAX_WORD_SEEDS]

    def named(self, question: str, view: View | None, words: Words) -> list[Seed]:
        """The entities `question` names; in an index of found names (`checked`), not a common phrase found
        as a name (`_common`: "Can I")."""
        found = (self.seeds if view is None else view.seeds).find(question)
        if not self.checked:
            return found
        return [s for s in found if not _common(s, words)]

    def covered(self, question: str, hits: list[tuple], words: Words) -> list[str]:
        """The best LEXICAL_SEED_CHUNKS `hits` that pass the lexical floor (`Words.matches`)."""
        return [cid for cid, _, text, _, _ in hits[:LEXICAL_SEED_CHUNKS] if words.matches(question, text)]

    def by_name(self, question: str, hits: list[tuple], words: Words | None = None) -> list[str]:
        """Names of `question` (found as the nlp mode finds them) that the best BM25 `hits` store as candidates
        though no entity holds them; only in an index of found names (`checked`), and with `words`, not a
        name made only of words at least COMMON_SHARE of the documents use."""
        if not self.checked or not hits:
            return []
        asked = sorted({names.entity_id(name) for name in candidates(question)[0]
                        if words is None or not all(words.share(stem(w)) >= COMMON_SHARE
                                                    for w in names.words(name) if w.isalnum())})
        if not asked:
            return []
        rows = self.con.execute(sql("query_named_chunks"), {"chunk_ids": [hit[0] for hit in hits],
                                                            "ids": asked}).fetchall()
        return [name for (name,) in rows]

    def by_vector(self, question: str, scopes: list[str] | None) -> list[tuple[Seed, float]]:
        """The entities closest in meaning to `question` (cosine of the vectors, at least the floor), with
        their similarity; none without an embedder. A scoped caller gets only entities it sees, as it
        labels and counts them."""
        if self.embed is None:
            return []
        vector = self.embed([question])[0]
        rows = self.con.execute(sql("query_vector_seeds"), {"vector": vector, "floor": self.vector_floor,
                                                            "scopes": scopes, "limit": MAX_VECTOR_SEEDS}).fetchall()
        view = self.view(scopes)
        if view is not None:
            seen = view.seeds.entities
            return [(seen[eid], round(similarity, 3)) for eid, _, _, similarity in rows if eid in seen]
        return [(Seed(eid, label, n), round(similarity, 3)) for eid, label, n, similarity in rows]

    def count(self, text: str) -> int:
        """Tokens of `text` in the index's encoding."""
        return tokens.count(text, self.encoding)

    @property
    def min_budget(self) -> int:
        """The least budget a query accepts: what the instruction, which every context starts with, costs."""
        return self.count(INSTRUCTIONS)

    def query(self, question: str, *, budget: int = 2048, scopes: list[str] | None = None, hops: int = 2,
              cap: int | None = 8, mode: Mode = "priority", direct: bool = True) -> Context:
        """Route `question` and assemble its context within `budget` tokens.

        `scopes`: None reads every document; a list reads documents without scope or with one of them.
        `direct`: when the documents the context draws on fit the budget with slack, return them whole.
        ValueError for a budget below `min_budget`, which the instruction alone would overspend.
        """
        if budget < self.min_budget:
            raise ValueError(f"a budget of {budget} tokens is below the instruction's cost: give at least "
                             f"{self.min_budget} (--budget)")
        view = self.view(scopes)
        words = self.words(scopes)
        named = self.named(question, view, words)
        hits = None
        if any(_lower_case(question, s.label) for s in named):  # a common word, or a title written as one?
            hits = self.top(question, scopes)
            named = [s for s in named if not _lower_case(question, s.label) or _supported(question, s.label, hits)]
        share = words.share if words.n_documents >= router.MIN_DOCUMENTS else None
        decision = route(question, named, share=share)
        if decision.route == "none":
            hits = self.top(question, scopes) if hits is None else hits
            covered = self.covered(question, hits, words)
            decision = route(question, named, by_vector=self.by_vector(question, scopes),
                             by_words=self.by_words(question, hits, view, words),
                             by_name=self.by_name(question, hits, words), by_chunks=len(covered),
                             profile=_profile(hits), share=share)
            if decision.route == "local" and not decision.seeds:
                hits = [hit for hit in hits if hit[0] in covered] or hits
        if decision.route == "none":
            nothing = Decision("none", decision.reason + " (no context: nothing was found)", decision.seeds)
            return self._context(question, nothing, Selection([], [], budget), [])
        instruction = Unit(INSTRUCTION, key(INSTRUCTION, ""), INSTRUCTIONS, (), 1.0)
        units: list[Unit] = []
        seeds = [s.entity_id for s in decision.seeds]
        if seeds:
            hits = self.top(question, scopes) if hits is None else hits
            units += self._local(question, seeds, scopes, _scaled(hits), hops=hops, cap=cap, view=view)
        elif decision.route == "local":  # a name the text uses, no entity: the best BM25 chunks alone
            scaled = _scaled(hits or [])
            units += [_chunk(chunk_id, text, scaled[chunk_id]) for chunk_id, _, text, *_ in hits or []]
        if decision.route in ("global", "mixed"):
            ids = None
            if decision.route == "mixed":
                ids = [c for (c,) in self.con.execute(sql("query_communities_of"), {"ids": seeds}).fetchall()]
            reports = self._reports(question, scopes, ids, view)
            if ids is not None and not reports:  # its entities are in no community: the collection's reports
                reports = self._reports(question, scopes, None, view)
            if decision.route == "mixed":  # it asks about the collection: its reports lead its entities' evidence
                reports = [replace(u, score=round(u.score + MIXED_REPORT_LEAD, 6)) for u in reports]
            units += reports
        if mode == "sliced":
            groups = [(0.5, [u for u in units if u.kind in ("answer", "relation", "report")]),
                      (0.5, [u for u in units if u.kind == "chunk"])]
            chosen = sliced([instruction], groups, budget=budget, count=self.count)
        else:
            chosen = select([instruction, *units], budget=budget, count=self.count)
        whole = self._direct(chosen, instruction, budget, scopes) if direct and seeds else None
        if whole:
            decision = Decision(decision.route, decision.reason + "; its documents fit the budget whole",
                                decision.seeds)
            return self._context(question, decision, whole, seeds)
        return self._context(question, decision, chosen, seeds)

    def _local(self, question: str, seeds: list[str], scopes: list[str] | None, bm25: dict[str, float], *,
               hops: int, cap: int | None, view: View | None = None) -> list[Unit]:
        """Seeds with their answers and evidence, then neighbours (entity and edge as one unit) ranked by how
        well their evidence matches the question (BM25), then the best other BM25 chunks as a last resort;
        in an index of found names (`checked`), seeds weighted by BM25 too, and BM25 chunks as their equals.
        A scoped caller (`view`) walks its own edges, and each entity's answer is chosen among the chunks it
        may read, as the answer stage would choose it in an index of those alone."""
        if view is None:
            if self._graph is None:
                self._graph = adjacency(self.con)
            reached = walk(self._graph, seeds, hops=hops, cap=cap)
            ids = [r.entity_id for r in reached]
            answers = {eid: (label, answer, ref) for eid, label, answer, ref in
                       self.con.execute(sql("query_answers"), {"ids": ids, "scopes": scopes}).fetchall()}
            rows = self.con.execute(sql("query_chunks"), {"ids": ids, "labels": None, "scopes": scopes,
                                                          "per_entity": CHUNKS_PER_ENTITY}).fetchall()
            answers |= self._readable_answers(rows, {row[0] for row in rows} - answers.keys())
        else:
            reached = walk(view.graph, seeds, hops=hops, cap=cap)
            ids = [r.entity_id for r in reached]
            found = self.con.execute(sql("query_chunks"), {
                "ids": ids, "labels": [view.seeds.entities[eid].label for eid in ids], "scopes": scopes,
                "per_entity": MAX_CANDIDATE_CHUNKS}).fetchall()
            answers = self._readable_answers(found, {row[0] for row in found})
            rows = [row for _, group in groupby(found, key=lambda row: row[0])
                    for row in islice(group, CHUNKS_PER_ENTITY)]
        labels = {eid: label for eid, (label, _, _) in answers.items()}
        together = {r.path[-2:]: r.weight for r in reached if r.depth}  # a view's weights count readable chunks
        match = self.matches(question, {ref for _, _, ref in answers.values()} | {row[1] for row in rows}, scopes)
        links = _links(question, [answers[s][0] for s in seeds if s in answers],
                       [row[3] for row in rows if row[0] in seeds], labels)
        units = []
        for r in reached:
            if r.entity_id not in answers or (r.depth and (r.path[-2] not in answers or not together.get(r.path[-2:]))):
                continue
            label, answer, ref = answers[r.entity_id]
            if r.depth == 0:
                trust = 0.5 + 0.5 * match.get(ref, 0.0) if self.checked else 1.0
                units.append(Unit("answer", key("entity", r.entity_id), f"{label}: {answer} [{ref}]", (ref,),
                                  round(trust, 6)))
            else:
                parent = labels[r.path[-2]]
                text = f"{parent} -- {label} (together in {together[r.path[-2:]]} chunks): {answer} [{ref}]"
                fit = LINK_BASE + LINK_BM25 * match.get(ref, 0.0) + LINK_SENTENCE * links.get(r.entity_id, 0.0)
                score = 0.8 / r.depth * fit
                units.append(Unit("relation", key("entity", r.entity_id), text, (ref,), round(score, 6),
                                  key("entity", r.path[-2])))
        kept = {u.key for u in units}
        depth = {r.entity_id: r.depth for r in reached}
        rows.sort(key=lambda row: depth[row[0]])  # stable: seeds' evidence first, each entity's best first
        seen: set[str] = set()
        best_of: set[str] = set()
        for place, (eid, chunk_id, _, text, *_) in enumerate(rows):
            if chunk_id in seen or key("entity", eid) not in kept:
                continue
            seen.add(chunk_id)
            first = eid not in best_of
            best_of.add(eid)
            fit = 1.0 if depth[eid] == 0 and not self.checked else 0.4 + 0.6 * match.get(chunk_id, 0.0)
            score = 0.9 / (1 + depth[eid]) * fit * (1.0 if first else 0.5) - place * 1e-6
            parent: str | None = key("entity", eid)
            if self.checked and bm25.get(chunk_id, 0.0) > score:  # enters on its own BM25 score, entity or not
                score, parent = bm25[chunk_id], None
            units.append(_chunk(chunk_id, text, score, parent))
        extra = [c for c in bm25 if c not in seen]
        texts = dict(self.con.execute(sql("query_chunk_texts"), {"ids": extra, "scopes": scopes}).fetchall())
        for chunk_id in extra:
            if chunk_id in texts:
                units.append(_chunk(chunk_id, texts[chunk_id], (1.0 if self.checked else 0.3) * bm25[chunk_id]))
        return units

    def _readable_answers(self, rows: list[tuple], missing: set[str]) -> dict[str, tuple[str, str, str]]:
        """(label, answer, ref) of each `missing` entity (one whose stored answer the caller may not rely on):
        what the answer stage chooses among its readable chunks in `rows` (from sql/query_chunks.sql)."""
        aliases: dict[str, list[str]] = {}
        for eid, alias in self.con.execute(sql("query_aliases"), {"ids": sorted(missing)}).fetchall():
            aliases.setdefault(eid, []).append(alias)
        found = {}
        for eid in sorted(missing):
            mine = [row for row in rows if row[0] == eid]
            sentence, ref = choose(aliases[eid], [Candidate(row[1], *row[4:8]) for row in mine],
                                   {row[1]: row[3] for row in mine}, max_chars=ANSWER_MAX_CHARS)
            found[eid] = (mine[0][2], sentence, ref)
        return found

    def _reports(self, question: str, scopes: list[str] | None, ids: list[str] | None,
                 view: View | None = None) -> list[Unit]:
        """Top-level (or the given) community reports, best match to the question first, then weight; each
        with the chunks its key evidence cites, under it.

        A report shows its central members, the terms its text uses more than the other reports' do
        (REPORT_TERMS, by a TF-IDF over the reports shown), its key evidence sentences and its members'
        answers, each citing a chunk. Only lines whose cited chunk the caller may read are shown; a scoped
        caller (`view`) sees only the lines of members it sees, under its labels for them, and neither the
        community's title nor its central members (they may name members known only from text it may not
        read) nor its key evidence (chosen among chunks it may not read).
        """
        rows = self.con.execute(sql("query_reports"), {"ids": ids, "level": 0, "scopes": scopes}).fetchall()
        reports: dict[str, dict[str, Any]] = {}
        for cid, title, weight, text, ref, label, eid, answer, stored in rows:
            if view is not None:
                if eid not in view.seeds.entities:
                    continue
                label = view.seeds.entities[eid].label
                text = line(label, answer, ref)
            r = reports.setdefault(cid, {"title": title, "weight": weight, "lines": [], "refs": [], "labels": [],
                                         "head": _summary(stored)})
            r["lines"].append(text)
            r["refs"].append(ref)
            r["labels"].append(label)
        cited = sorted({ref for r in reports.values() for _, ref in r["head"][1]})
        readable = dict(self.con.execute(sql("query_chunk_texts"), {"ids": cited, "scopes": scopes}).fetchall())
        for r in reports.values():  # a scoped caller: no evidence the whole corpus chose
            r["evidence"] = [(text, ref) for text, ref in r["head"][1] if ref in readable and scopes is None]
            r["terms"] = [w for t in (r["lines"], [t for t, _ in r["evidence"]]) for w in _terms(" ".join(t))]
        documents = Counter(w for r in reports.values() for w in set(r["terms"]))
        asked = {stem(w) for w in content_words(question)}
        heaviest = max((r["weight"] for r in reports.values()), default=1) or 1
        units = []
        for cid, r in reports.items():
            shared = _distinctive(r["terms"], documents, len(reports))
            said = {stem(w) for w in r["terms"]} | {stem(w) for label in r["labels"] for w in names.words(label)}
            match = len(asked & said) / len(asked) if asked else 0.0
            score = round(0.5 + 0.4 * match + 0.1 * r["weight"] / heaviest, 6)
            head = ["Community" if scopes is not None else f"Community: {r['title']}"]
            if scopes is None and r["head"][0]:
                head.append(r["head"][0])
            if shared:
                head.append("Shared terms: " + ", ".join(shared))
            if r["evidence"]:
                head += [EVIDENCE] + [evidence_line(t, ref) for t, ref in r["evidence"]]
            text = "\n".join(head + [ANSWERS] + r["lines"])
            refs = tuple(dict.fromkeys([ref for _, ref in r["evidence"]] + r["refs"]))
            units.append(Unit("report", key("report", cid), text, refs, score))
            for place, ref in enumerate(dict.fromkeys(ref for _, ref in r["evidence"])):
                units.append(_chunk(ref, readable[ref], round(score * REPORT_CHUNK_SHARE - place * 1e-6, 6),
                                    key("report", cid)))
        return units

    def _direct(self, chosen: Selection, instruction: Unit, budget: int,
                scopes: list[str] | None) -> Selection | None:
        """The documents the chosen fragments come from, whole, when they fit the budget with slack."""
        refs = list(dict.fromkeys(r for u in chosen.units for r in u.refs))
        docs = self.con.execute(sql("query_documents"), {"chunk_ids": refs, "scopes": scopes}).fetchall()
        if not docs or sum(d[3] for d in docs) > DIRECT_SLACK * budget:  # stored sizes: no tokenizing to refuse
            return None
        first = {cid: i for i, cid in enumerate(refs)}
        docs.sort(key=lambda d: min(first.get(c, len(first)) for c in d[4]))
        units = [Unit("document", key("document", d), f"# {title}\n{text}", tuple(chunk_ids), round(1.0 - i / 1000, 6))
                 for i, (d, title, text, _, chunk_ids) in enumerate(docs)]
        counted = {u.text: self.count(u.text) for u in [instruction, *units]}
        if sum(counted.values()) > DIRECT_SLACK * budget:
            return None
        return select([instruction, *units], budget=budget, count=counted.__getitem__)

    @staticmethod
    def _context(question: str, decision: Decision, chosen: Selection, seeds: list[str]) -> Context:
        """The selection as a Context."""
        blocks = [Block(u.kind, u.text, list(u.refs), u.score, n) for u, n in zip(chosen.units, chosen.tokens,
                                                                                 strict=True)]
        seeds_in = sum(1 for u in chosen.units if u.kind == "answer")  # each relation hangs from one of them
        report = {"total": chosen.total, "spent": chosen.spent, "by_kind": chosen.by_kind,
                  "truncation_rate": round(chosen.truncation_rate, 4), "components": seeds_in}
        refused = [json.loads(k) for k in chosen.refused]
        return Context(question, decision.route, decision.reason, blocks, report, refused, seeds)


def _chunk(chunk_id: str, text: str, score: float, parent: str | None = None) -> Unit:
    """A chunk's block: its id, then its text, citing itself."""
    return Unit("chunk", key("chunk", chunk_id), f"[{chunk_id}] {text}", (chunk_id,), round(score, 6), parent)


def _summary(report: str) -> tuple[str, list[tuple[str, str]]]:
    """The central members' line and the (sentence, chunk id) key evidence of a stored report
    (pipelines.reports.summary wrote them)."""
    members, evidence, inside = "", [], False
    for text in report.split("\n"):
        if text.startswith(MEMBERS):
            members = text
        elif text == EVIDENCE:
            inside = True
        elif text == ANSWERS:
            break
        elif inside and text.startswith("- ") and text.endswith("]") and " [" in text:
            sentence, ref = text[2:-1].rsplit(" [", 1)
            evidence.append((sentence, ref))
    return members, evidence


def _terms(text: str) -> list[str]:
    """The words of `text` that may be a report's terms: letters only, long enough, no stop word."""
    return [w for w in names.words(text) if w.isalpha() and len(w) >= REPORT_TERM_LETTERS and w not in STOP_WORDS]


def _distinctive(terms: list[str], documents: dict[str, int], n_reports: int) -> list[str]:
    """The REPORT_TERMS of `terms` with the highest TF-IDF across the reports shown (`documents`: in how
    many of the `n_reports` each term is, smoothed: ln((n + 1) / df)); a term used once is not."""
    scored = [(-n * math.log((n_reports + 1) / documents[w]), w) for w, n in Counter(terms).items() if n > 1]
    return [w for _, w in sorted(scored)[:REPORT_TERMS]]


def _common(seed: Seed, words: Words) -> bool:
    """Whether `seed` is a common phrase found as a name ("Can I" at the start of a sentence): every word of
    its label is in at least COMMON_SHARE of the documents, yet it is found as a name in fewer chunks than
    COMMON_SHARE of the documents that use all its words (at most, those that use its rarest word)."""
    stems = [stem(w) for w in names.words(seed.label) if w.isalnum()]
    if not stems or any(words.share(w) < COMMON_SHARE for w in stems):
        return False
    return seed.n_chunks < COMMON_SHARE * min(words.documents.get(w, 0) for w in stems)


def _supported(question: str, label: str, hits: list[tuple]) -> bool:
    """Whether one of the best LEXICAL_SEED_CHUNKS BM25 `hits` holds the words of `label` and another content
    word of `question` too: the text uses the name in the question's context."""
    named = {stem(w) for w in names.words(label)}
    others = {stem(w) for w in content_words(question)} - named
    for _, _, text, _, _ in hits[:LEXICAL_SEED_CHUNKS]:
        held = {stem(w) for w in names.words(text)}
        if named <= held and others & held:
            return True
    return False


def _lower_case(question: str, label: str) -> bool:
    """Whether `question` writes no word of `label` with a capital or a digit (its first word, capitalised as
    any sentence's is, does not count): then the name may be a common word ("safe", "run"), and it seeds only
    when the best matching text uses it with another of the question's words (`_supported`)."""
    wanted = set(names.words(label))
    written = names.WORD.findall(unicodedata.normalize("NFC", question))
    return not any(names.fold(w) in wanted and (w[:1].isupper() or w[:1].isdigit()) for w in written[1:])


def _has_vectors(con: Connection) -> bool:
    """Whether the index holds entity vectors (index files made before them have no such table)."""
    found = con.execute("select count(*) from duckdb_tables() where table_name = 'entity_vectors'").fetchone()[0]
    return bool(found) and con.execute("select count(*) from entity_vectors").fetchone()[0] > 0


def _profile(hits: list[tuple]) -> float | None:
    """The search profile: best BM25 score over the fourth best (peaked > 1, flat near 1), or None."""
    return round(hits[0][-1] / hits[3][-1], 2) if len(hits) >= 4 and hits[3][-1] > 0 else None


def _scaled(hits: list[tuple]) -> dict[str, float]:
    """Each hit's BM25 score scaled so that the best is 1."""
    best = hits[0][-1] if hits else 1.0
    return {chunk_id: score / best for chunk_id, *_, score in hits}


def _links(question: str, seed_labels: list[str], seed_texts: list[str], labels: dict[str, str]) -> dict[str, float]:
    """How well the sentence that links a seed to each neighbour matches what the question asks beyond the
    seed's own name: the share of the question's other words (compared by their first five letters) found
    in the seed sentences that name the neighbour. "the director of X" finds "X ... directed by Y"."""
    named = {w for label in seed_labels for w in names.words(label)}
    asked = {w[:5] for w in content_words(question) if w not in named}
    if not asked:
        return {}
    sentences = [text[a:b] for text in seed_texts for a, b in chunk_sentences(text)]
    folded = [(names.fold(s), {w[:5] for w in names.words(s)}) for s in sentences]
    scores = {}
    for eid, label in labels.items():
        key = names.fold(label)
        found = [stems for text, stems in folded if key in text]
        if found:
            scores[eid] = max(len(asked & stems) for stems in found) / len(asked)
    return scores
