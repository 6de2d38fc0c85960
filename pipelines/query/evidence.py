"""Query: a question's evidence in an index of found names (modes nlp and spacy), ranked through the graph.

First hop: the best BM25 chunks, and the chunks that write a name the question gives verbatim (a
capitalised word sequence), most of all those that open their document with it (other words allowed
between its words: a middle name), the more so the fewer chunks write it. Second hop (bridges): the
entities that the best chunks holding a question's name mention lead to the chunk each one's short answer
quotes, the more as the sentence naming it holds what the question asks beyond its names: "the director of
film X" finds "X is a film directed by Y", then Y's own chunk. A seed's short answer enters beside its
chunk, when that chunk is among them. Weights: pipelines.query.scoring.

Every statement reads only chunks the caller's scopes allow, and a scoped caller follows only the entities
its `View` holds, with their answers chosen among its readable chunks (pipelines.query.local).
"""

from dataclasses import dataclass

from acervo.pipelines.db import Connection, sql
from acervo.pipelines.layout import document_of
from acervo.pipelines.names import position, words
from acervo.pipelines.query import lexical, local, scoring
from acervo.pipelines.query.budget import Unit, chunk
from acervo.pipelines.query.khop import listed
from acervo.pipelines.query.lexical import Searcher
from acervo.pipelines.query.scoring import BRIDGE_PARENTS, LEAD_START, MAX_NAME_CHUNKS, NAME_GAP, SCORE_DIGITS
from acervo.pipelines.query.seeds import Hit, View, names


@dataclass(frozen=True)
class Found:
    """A chunk of the first hop: its document, text, score, and whether it writes a question's name."""

    doc_id: str
    text: str
    score: float
    named: bool


def written(tokens: tuple[str, ...], name: tuple[str, ...]) -> bool:
    """Whether the folded `tokens` hold `name`, its words together and in order."""
    return not name or position(tokens, name) is not None


def opens(tokens: tuple[str, ...], name: tuple[str, ...]) -> bool:
    """Whether folded `tokens` open with `name`, punctuation aside: its first word among the first LEAD_START + 1
    words, then each next word after at most NAME_GAP others ("Christopher Edward Nolan (born 1970)" opens with
    Christopher Nolan; "Leo Smith met Tom Fong" does not open with Leo Fong)."""
    text = [t for t in tokens if t[0].isalnum()]
    wanted = [t for t in name if t[0].isalnum()]
    if not wanted:
        return False
    at = next((i for i, t in enumerate(text[: LEAD_START + 1]) if t == wanted[0]), None)
    for word in wanted[1:]:
        if at is None:
            return False
        at = next((i for i in range(at + 1, min(at + 2 + NAME_GAP, len(text))) if text[i] == word), None)
    return at is not None


def named_chunks(search: Searcher, name: tuple[str, ...], *,
                 most: int = MAX_NAME_CHUNKS) -> list[tuple[str, str, str, bool]]:
    """(chunk_id, doc_id, text, leads) of the chunks the last question may read (bm25_postings) that write
    `name` or open their document with it (`leads`: `opens` it); none when more than `most` chunks hold all its
    words."""
    terms = [term for term in search.scores.terms(" ".join(name)) if term in search.scores.counts()]  # with postings
    if not terms:
        return []
    search.scores.completed(terms)  # postings below their best, once
    found = []
    rows = search.scores.con.execute(sql("query.name_chunks"), {"terms": terms, "most": most}).fetchall()
    for chunk_id, doc_id, ord_, text in rows:
        tokens = words(text)
        leads = ord_ == 0 and opens(tokens, name)
        if leads or written(tokens, name):
            found.append((chunk_id, doc_id, text, leads))
    return found


def first_hop(con: Connection, search: Searcher, question: str, hits: list[Hit]) -> dict[str, Found]:
    """The first hop's chunks by id: the BM25 `hits` and the chunks writing the question's names, scored."""
    n = search.of(question).n  # and bm25_postings holds the question's readable postings, which names are read from
    bm25 = lexical.scaled(hits)
    rows = {hit[0]: (hit[1], hit[2]) for hit in hits}
    holders: dict[tuple[str, ...], list[tuple[str, str, str, bool]]] = {}
    for spellings in names(question):
        for name in spellings:
            found = named_chunks(search, name)
            if found:
                holders.setdefault(name, found)
                rows |= {chunk_id: (doc_id, text) for chunk_id, doc_id, text, _ in found}
                break
    weights = {name: scoring.idf(len(found), n) for name, found in holders.items()}
    total = sum(weights.values())
    marks: dict[str, list[tuple[float, float, bool]]] = {}
    for name, found in holders.items():
        share, spec = weights[name] / total, scoring.specificity(len(found), n)
        for chunk_id, _, _, leads in found:
            marks.setdefault(chunk_id, []).append((share, spec, leads))
    return {chunk_id: Found(doc_id, text, scoring.named(bm25.get(chunk_id, 0.0), marks.get(chunk_id, [])),
                            chunk_id in marks)
            for chunk_id, (doc_id, text) in rows.items()}


def units(con: Connection, search: Searcher, question: str, hits: list[Hit], seeds: list[str],
          scopes: list[str] | None, view: View | None, *, max_chars: int, written_rows: bool = True) -> list[Unit]:
    """The local units of `question`: the first hop's chunks, the bridges they lead to, and the short answer
    of each of `seeds` whose chunk is among them (`max_chars`: the index's answer_max_chars; `written_rows`: the
    index may hold written answers)."""
    found = first_hop(con, search, question, hits)
    parents = sorted((c for c, f in found.items() if f.named), key=lambda c: (-found[c].score, c))[:BRIDGE_PARENTS]
    mentioned = _mentioned(con, parents, question, view)
    answers = _answers(con, sorted({e for es in mentioned.values() for e in es} | set(seeds)), scopes, view,
                       max_chars)
    scores = {chunk_id: f.score for chunk_id, f in found.items()}
    texts = {chunk_id: f.text for chunk_id, f in found.items()}
    bridged = _bridges(question, parents, found, mentioned, answers)
    texts |= local.chunk_texts(con, bridged.keys() - texts.keys(), scopes)
    for ref, score in bridged.items():
        if ref in texts:
            scores[ref] = max(score, scores.get(ref, 0.0))
    best = max(scores.values(), default=0.0) or 1.0  # the best scores 1 as local units do: a mixed route's reports lead
    scores = {chunk_id: round(score / best, SCORE_DIGITS) for chunk_id, score in scores.items()}
    written_ = local.written(con, seeds, scopes) if written_rows else {}
    out = [local.answer_unit(eid, answers, written_, scores[answers[eid][2]])
           for eid in seeds if eid in answers and answers[eid][2] in scores]
    return out + [chunk(chunk_id, texts[chunk_id], score) for chunk_id, score in scores.items()]


def _answers(con: Connection, ids: list[str], scopes: list[str] | None, view: View | None,
             max_chars: int) -> local.Answers:
    """The short answers of the entities `ids` that the caller may read: the stored ones (a scoped caller's
    chosen among its readable chunks, as pipelines.query.local chooses them)."""
    if view is not None:
        return local.read(con, ids, scopes, view, max_chars)[0]
    rows = con.execute(sql("query.answers"), {"ids": listed(ids), "scopes": scopes}).fetchall()
    return {eid: (label, answer, ref) for eid, label, answer, ref in rows}


def _mentioned(con: Connection, parents: list[str], question: str, view: View | None) -> dict[str, list[str]]:
    """The entities each of `parents` mentions (those a scoped caller's `view` holds), the ones the question
    names itself left out."""
    asked = words(question)
    found: dict[str, list[str]] = {}
    for chunk_id, eid, label, _ in con.execute(sql("query.chunk_entities"), {"ids": listed(parents)}).fetchall():
        if view is not None:
            if eid not in view.seeds.entities:
                continue
            label = view.seeds.entities[eid].label
        if not written(asked, words(label)):
            found.setdefault(chunk_id, []).append(eid)
    return {c: sorted(es) for c, es in found.items()}


def _bridges(question: str, parents: list[str], found: dict[str, Found], mentioned: dict[str, list[str]],
             answers: local.Answers) -> dict[str, float]:
    """The score of each chunk a bridge reaches: an entity a parent mentions, by its linking sentence, to the
    chunk of another document its short answer quotes (the best score of those that reach it)."""
    given = [" ".join(name) for spellings in names(question) for name in spellings]
    reached: dict[str, float] = {}
    for parent in parents:
        labels = {eid: answers[eid][0] for eid in mentioned.get(parent, []) if eid in answers}
        linked = local.links(question, given, [found[parent].text], labels)
        for eid in labels:
            ref = answers[eid][2]
            if document_of(ref) == found[parent].doc_id:
                continue
            score = scoring.bridge(found[parent].score, linked.get(eid, 0.0))
            reached[ref] = max(score, reached.get(ref, 0.0))
    return reached
