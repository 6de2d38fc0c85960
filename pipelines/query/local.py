"""Query: the local context of seed entities: their answers and evidence, their neighbours (entity and edge
as one unit) ranked by how well their evidence matches the question (BM25), then the best other BM25 chunks.

A scoped caller (a `View`) walks its own edges, and each entity's answer is chosen among the chunks it may
read, as the answer stage would choose it in an index of those alone.

A seed's answer unit shows the language model's written answer (pipelines/written_answers.py) in place of
the extractive sentence, with the chunks it cites, when there is one and the caller may read every chunk it
was written from; otherwise, and in an index without one, the extractive answer.
"""

from collections.abc import Sequence
from itertools import groupby, islice

from acervo.pipelines.answer_choice import MAX_CANDIDATE_CHUNKS, Candidate, choose
from acervo.pipelines.db import Connection, sql
from acervo.pipelines.layout import EVIDENCE, sentence_keys
from acervo.pipelines.names import position, short_form, words
from acervo.pipelines.query import lexical, scoring
from acervo.pipelines.query.budget import Unit, chunk, key
from acervo.pipelines.query.khop import Neighbours, Reached, listed, walk
from acervo.pipelines.query.scoring import LINK_PROXIMITY, SCORE_DIGITS
from acervo.pipelines.query.seeds import Hit, View
from acervo.pipelines.query.words import content_words, stated, stem
from acervo.pipelines.sentences import sentences

Answers = dict[str, tuple[str, str, str]]  # entity id -> (label, short answer, the chunk it quotes)
Matched = tuple[dict[str, float], dict[str, float]]  # chunk id -> BM25 for the question; for it beyond its names


def units(con: Connection, searcher: lexical.Searcher, question: str, seeds: list[str], scopes: list[str] | None,
          hits: list[Hit], graph: Neighbours, view: View | None, *, hops: int, cap: int | None,
          checked: bool, max_chars: int, written_rows: bool = True) -> list[Unit]:
    """The local units of `seeds` within `hops` over `graph` (each entity's `cap` strongest edges), then the
    best BM25 chunks (`hits`, read for the caller) not already among them; in an index of found names (`checked`),
    seeds weighted by BM25 too, and BM25 chunks as their equals; `max_chars` is the index's answer_max_chars;
    `written_rows`: the index may hold written answers (False: none are looked for). An unscoped caller reads
    each entity's stored best evidence (entity_answers.evidence)."""
    reached = walk(graph, seeds, hops=hops, cap=cap)
    answers, rows = read(con, [r.entity_id for r in reached], scopes, view, max_chars, stored=True)
    labels = {eid: label for eid, (label, _, _) in answers.items()}
    named = [answers[s][0] for s in seeds if s in answers]
    texts = {row[1]: row[3] for row in rows}
    texts |= chunk_texts(con, {ref for _, _, ref in answers.values()} - texts.keys(), scopes)  # an answer elsewhere
    match, asked = lexical.matches(searcher, question, texts, " ".join(named))
    own = {answers[s][2] for s in seeds if s in answers}
    linked = links(question, named, [row[3] for row in rows if row[0] in seeds and row[1] in own], labels,
                   elsewhere=[row[3] for row in rows if row[0] in seeds and row[1] not in own])
    found = _entities(reached, answers, (match, asked), linked, checked,
                      written(con, seeds, scopes) if written_rows else {})
    bm25 = lexical.scaled(hits)
    evidence, seen = _evidence(reached, rows, {u.key for u in found}, (match, asked), bm25, checked)
    return found + evidence + _lexical(hits, bm25, seen, checked)


def chunk_texts(con: Connection, ids: set[str] | list[str], scopes: list[str] | None) -> dict[str, str]:
    """The text of each of the chunks `ids` that the caller may read (query.chunk_texts); no statement for none."""
    if not ids:
        return {}
    if scopes is None:
        return dict(con.execute(sql("query.chunk_texts_unscoped"), {"ids": listed(sorted(ids))}).fetchall())
    return dict(con.execute(sql("query.chunk_texts"), {"ids": listed(sorted(ids)), "scopes": scopes}).fetchall())


def read(con: Connection, ids: list[str], scopes: list[str] | None, view: View | None,
         max_chars: int, *, stored: bool = False) -> tuple[Answers, list[tuple]]:
    """The readable answers of the entities `ids` and their best EVIDENCE readable evidence chunks (rows of
    entity id, chunk id, label, text and, from query.chunks, more); a scoped caller's answers are chosen among
    the chunks it may read. An unscoped caller reads the stored evidence with `stored`."""
    if view is None and stored:
        found = con.execute(sql("query.entity_evidence"), {"ids": listed(ids)}).fetchall()
        answers = {eid: (label, answer, ref) for eid, label, answer, ref, *_ in found}
        return answers, [(eid, chunk_id, label, text) for eid, label, _, _, chunk_id, text in found]
    if view is None:
        answers = {eid: (label, answer, ref) for eid, label, answer, ref in
                   con.execute(sql("query.answers"), {"ids": listed(ids), "scopes": scopes}).fetchall()}
        rows = con.execute(sql("query.chunks"), {"ids": listed(ids), "labels": None, "scopes": scopes,
                                                 "per_entity": EVIDENCE}).fetchall()
        return answers | readable_answers(con, rows, {row[0] for row in rows} - answers.keys(), max_chars), rows
    labels = listed(view.seeds.entities[eid].label for eid in ids)
    found = con.execute(sql("query.chunks"), {"ids": listed(ids), "labels": labels,
                                              "scopes": scopes, "per_entity": MAX_CANDIDATE_CHUNKS}).fetchall()
    rows = [row for _, group in groupby(found, key=lambda row: row[0]) for row in islice(group, EVIDENCE)]
    return readable_answers(con, found, {row[0] for row in found}, max_chars, view.boilerplate), rows


def readable_answers(con: Connection, rows: list[tuple], missing: set[str], max_chars: int,
                     common: frozenset[str] = frozenset()) -> Answers:
    """(label, answer, ref) of each `missing` entity (one whose stored answer the caller may not rely on):
    what the answer stage chooses among its readable chunks in `rows` (query.chunks rows), `common` the sentence
    keys that are boilerplate among the documents the caller may read."""
    if not missing:
        return {}
    aliases: dict[str, list[str]] = {}
    for eid, alias in con.execute(sql("query.aliases"), {"ids": listed(sorted(missing))}).fetchall():
        aliases.setdefault(eid, []).append(alias)
    found = {}
    for eid in sorted(missing):
        mine = [row for row in rows if row[0] == eid]
        sentence, ref = choose(aliases[eid], [Candidate(row[1], *row[4:8], _common(row[3], common)) for row in mine],
                               {row[1]: row[3] for row in mine}, max_chars=max_chars)
        found[eid] = (mine[0][2], sentence, ref)
    return found


def _common(text: str, common: frozenset[str]) -> frozenset[str]:
    """The keys of the sentences of `text` that are among the boilerplate keys `common`."""
    return frozenset(sentence_keys(text)) & common if common else frozenset()


def written(con: Connection, ids: list[str], scopes: list[str] | None,
            kind: str = "answer") -> dict[str, tuple[str, list[str]]]:
    """The written texts of `kind` ("answer": of the entities `ids`; "report": of the communities `ids`) that
    the caller may read whole, with their refs."""
    if not ids:
        return {}
    return {i: (text, refs) for i, text, refs in
            con.execute(sql("query.written"), {"kind": kind, "ids": listed(ids), "scopes": scopes}).fetchall()}


def _entities(reached: list[Reached], answers: Answers, matched: Matched, linked: dict[str, float],
              checked: bool, written_: dict[str, tuple[str, list[str]]]) -> list[Unit]:
    """The answer unit of each seed (its written answer in `written_`, where there is one) and the relation
    unit (neighbour and edge) of each entity reached through an entity with an answer, by an edge the caller
    may read; `matched`: each chunk's BM25 for the question, and for what it asks beyond its names."""
    match, asked = matched
    together = {r.path[-2:]: r.weight for r in reached if r.depth}  # a view's weights count readable chunks
    found = []
    for r in reached:
        if r.entity_id not in answers or (r.depth and (r.path[-2] not in answers or not together.get(r.path[-2:]))):
            continue
        label, answer, ref = answers[r.entity_id]
        if r.depth == 0:
            found.append(answer_unit(r.entity_id, answers, written_, scoring.seed(match.get(ref, 0.0), checked)))
            continue
        n = together[r.path[-2:]]
        text = f"{answers[r.path[-2]][0]} -- {label} (together in {n} chunk{'' if n == 1 else 's'}): {answer} [{ref}]"
        score = scoring.relation(r.depth, asked.get(ref, 0.0), linked.get(r.entity_id))
        found.append(Unit("relation", key("entity", r.entity_id), text, (ref,), score, key("entity", r.path[-2])))
    return found


def answer_unit(eid: str, answers: Answers, written_: dict[str, tuple[str, list[str]]], score: float) -> Unit:
    """A seed's answer unit: its written answer in `written_` with the chunks it cites, else its short answer
    and the chunk that sentence comes from (which it quotes)."""
    label, answer, ref = answers[eid]
    if eid in written_:
        return Unit("answer", key("entity", eid), f"{label}: {written_[eid][0]}", tuple(written_[eid][1]), score)
    return Unit("answer", key("entity", eid), f"{label}: {answer} [{ref}]", (ref,), score, quotes=ref)


def _evidence(reached: list[Reached], rows: list[tuple], kept: set[str], matched: Matched,
              bm25: dict[str, float], checked: bool) -> tuple[list[Unit], set[str]]:
    """The evidence chunks of the entities `kept`, seeds' first, each entity's best first, under their entity
    (in an index of found names, on their own when their BM25 score beats it); and the chunks used. A seed's
    chunk fits as far as it matches the question (`matched`), another entity's as far as it matches what the
    question asks beyond its names."""
    depth = {r.entity_id: r.depth for r in reached}
    match, asked = matched
    seen: set[str] = set()
    best_of: set[str] = set()
    found = []
    for place, (eid, chunk_id, _, text, *_) in enumerate(sorted(rows, key=lambda row: depth[row[0]])):
        if chunk_id in seen or key("entity", eid) not in kept:
            continue
        seen.add(chunk_id)
        matches = asked if depth[eid] else match  # past the seeds: what the question asks beyond their names
        score = scoring.evidence(depth[eid], matches.get(chunk_id, 0.0), first=eid not in best_of, place=place,
                                 checked=checked)
        best_of.add(eid)
        parent: str | None = key("entity", eid)
        if checked and bm25.get(chunk_id, 0.0) > score:  # enters on its own BM25 score, entity or not
            score, parent = bm25[chunk_id], None
        found.append(chunk(chunk_id, text, score, parent))
    return found, seen


def _lexical(hits: list[Hit], bm25: dict[str, float], seen: set[str], checked: bool) -> list[Unit]:
    """The BM25 chunks `hits` (readable, with their text; `bm25`: their scaled scores) not among the evidence
    `seen`, as a last resort."""
    return [chunk(c, text, scoring.lexical(bm25[c], checked)) for c, _, text, *_ in hits if c not in seen]


def links(question: str, seed_labels: list[str], seed_texts: list[str], labels: dict[str, str],
          elsewhere: Sequence[str] = ()) -> dict[str, float]:
    """How well the sentence that links a seed to each neighbour matches what the question asks beyond the
    seed's own name: the share of the question's other words (by their stems) found in a seed sentence that
    names the neighbour, plus LINK_PROXIMITY over 1 + the distance in tokens from the name to the nearest of
    them (1: next to it; "performed by Y" links Y closer than "Y and Z, performed"); 0 for a sentence that
    names it with none of them. A neighbour's name is read in its short form ("Friedrich Wolf (writer)" as
    "Friedrich Wolf"). Every sentence of `seed_texts` (the seeds' own) counts; one of `elsewhere` (other
    documents, about their own subjects) only where it names a seed too, by its whole label. "the director of
    X" finds "X ... directed by Y"."""
    named = {w for label in seed_labels for w in words(label)}
    asked = {stem(w): stated(w) for w in content_words(question) if w not in named}
    if not asked:
        return {}
    seeds = [words(label) for label in seed_labels]  # whole: a short form is ambiguous elsewhere ("The Mission")
    said = [words(text[a:b]) for text in seed_texts for a, b in sentences(text)]
    said += [tokens for text in elsewhere for a, b in sentences(text)
             if any(position(tokens := words(text[a:b]), seed) is not None for seed in seeds)]
    scores = {}
    for eid, label in labels.items():
        name = words(short_form(label))
        found = [link for tokens in said if (link := _link(tokens, name, asked)) is not None]
        if found:
            scores[eid] = max(found)
    return scores


def _link(tokens: tuple[str, ...], name: tuple[str, ...], asked: dict[str, frozenset[str]]) -> float | None:
    """A sentence's link to `name` (None when it does not name it): the share of the `asked` words it states
    outside the name (each by any of its stems: `stated`), plus LINK_PROXIMITY over 1 + the distance in tokens
    from the name to the nearest of them (at most 1 + LINK_PROXIMITY)."""
    n = len(name)
    at = [i for i in range(len(tokens) - n + 1) if tokens[i : i + n] == name] if n else []
    if not at:
        return None
    inside = {j for i in at for j in range(i, i + n)}
    stems = {j: stem(token) for j, token in enumerate(tokens) if j not in inside}
    held = {j: {w for w, alike in asked.items() if s in alike} for j, s in stems.items()}
    hits = [j for j, found in held.items() if found]
    if not hits:
        return 0.0
    gap = min(i - j if j < i else j - (i + n - 1) for i in at for j in hits)
    share = len(set().union(*(held[j] for j in hits))) / len(asked)
    return round(share + LINK_PROXIMITY / (1 + gap), SCORE_DIGITS)
