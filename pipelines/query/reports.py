"""Query: community reports as context units, best match to the question first, then weight; each with the
chunks its key evidence cites, under it.

A global question's best BM25 chunks (for its subject: the question without its collection cue) say which
reports cover it: those of the communities whose members the chunks mention, ranked by how much the chunks say
about each (their scaled BM25 times the inverse chunk frequency of the most specific member each mentions);
each chunk enters under the one report that covers it most. Such a report leaves out its member lines and its
key evidence (chosen for the community, not for the question): the chunks under it stand for them. Without such
chunks (an overview of the whole collection), every top-level report is a unit (for a caller who may read every
chunk, the OVERVIEW_REPORTS heaviest), ranked by the question's words in its terms and members' labels, with its
lines and its key evidence, whose chunks come under it.

A report shows its central members, the terms its text uses more than the other reports' do (REPORT_TERMS,
by a TF-IDF over the reports shown), its key evidence sentences and its members' answers, each citing a
chunk. Only lines whose cited chunk the caller may read are shown; a scoped caller (a `View`) sees only the
lines of members it sees, under its labels for them, and neither the community's title nor its central
members (they may name members known only from text it may not read) nor its key evidence (chosen among
chunks it may not read).

With a language model's summary written for a community (pipelines/written_reports.py), the block shows it
after its head, with the chunks it cites among the block's refs, when the caller may read every chunk the
summary was written from; otherwise, and in an index without one, the block is the extractive report alone.
"""

import math
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache

from acervo.pipelines.db import Connection, sql
from acervo.pipelines.names import words
from acervo.pipelines.query import lexical, scoring
from acervo.pipelines.query.budget import Unit, chunk, key
from acervo.pipelines.query.khop import listed
from acervo.pipelines.query.local import chunk_texts, written
from acervo.pipelines.query.scoring import REPORT_TERM_LETTERS, REPORT_TERMS
from acervo.pipelines.query.seeds import Hit, View
from acervo.pipelines.query.words import content_words, stem
from acervo.pipelines.report_lines import ANSWERS, EVIDENCE, MEMBERS, evidence_line, line
from acervo.pipelines.stopwords import STOP_WORDS

SUMMARY = "Summary: "  # opens the line of a written summary in a report's block
TERMS_CACHE = 1024  # report texts whose terms are kept, a few megabytes at most
OVERVIEW_REPORTS = 64  # top-level reports an unscoped overview reads at most, the heaviest


@dataclass
class Report:
    """A community's report as the caller may read it."""

    title: str
    weight: int
    members: str  # the stored report's central members' line
    stored_evidence: list[tuple[str, str]]  # the stored report's (sentence, chunk id) key evidence
    lines: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    evidence: list[tuple[str, str]] = field(default_factory=list)  # the key evidence the caller may read
    terms: list[str] = field(default_factory=list)
    written: tuple[str, list[str]] | None = None  # the written summary the caller may read, and its refs


@dataclass
class Cover:
    """How a global question's best chunks fall in one community: those that mention its members, (chunk id,
    text) -> BM25 scaled to 1 at the question's best, best first; and how much they say about it (each one's BM25
    times the inverse chunk frequency of the most specific member it mentions: an entity most chunks mention,
    a show's host, says little about which community a chunk is about)."""

    hits: dict[tuple[str, str], float] = field(default_factory=dict)
    weight: float = 0.0


def units(con: Connection, question: str, scopes: list[str] | None, ids: list[str] | None,
          view: View | None = None, *, written_rows: bool = True, hits: list[Hit] | None = None,
          n_chunks: int = 0) -> list[Unit]:
    """The units of the top-level communities' reports (or the communities `ids`), with their evidence chunks
    (`written_rows`: the index may hold written summaries; False: none are looked for). `hits`: a global
    question's best BM25 chunks among the `n_chunks` it may read; when they fall in communities, only those
    communities' reports are units, ranked by how much the chunks say about them, each without its member
    lines and key evidence, with the chunks under it."""
    covers = _covering(con, hits or [], n_chunks, view)
    reports = _read(con, scopes, sorted(covers), view) if covers else {}  # only theirs are read
    covers = {cid: cover for cid, cover in covers.items() if cid in reports}
    if not covers:
        reports = _read(con, scopes, ids, view)
    readable = _evidence(con, reports, scopes)
    if written_rows:
        _written(con, reports, scopes)
    documents = Counter(w for r in reports.values() for w in set(r.terms))
    heaviest = max((r.weight for r in reports.values()), default=1) or 1
    scores = _scores(question, reports, covers, heaviest)
    placed = _placed(covers, scores)
    found = []
    for cid, r in reports.items():
        # a covered report's lines and key evidence (chosen for its community) give way to the question's chunks
        shown = replace(r, lines=[], refs=[], evidence=[]) if covers else r
        text = _text(shown, _distinctive(r.terms, documents, len(reports)), scoped=scopes is not None)
        evidence = list(dict.fromkeys(ref for _, ref in shown.evidence))
        refs = tuple(dict.fromkeys(evidence + shown.refs + (r.written[1] if r.written else [])))
        found.append(Unit("report", key("report", cid), text, refs, scores[cid]))
        found += [chunk(ref, body, scoring.report_hit(scores[cid], share, place), key("report", cid))
                  for place, (ref, body, share) in enumerate(placed.get(cid, []))]
        found += [chunk(ref, readable[ref], scoring.report_chunk(scores[cid], place), key("report", cid))
                  for place, ref in enumerate(evidence)]
    return found


def _scores(question: str, reports: dict[str, Report], covers: dict[str, Cover], heaviest: int) -> dict[str, float]:
    """Each report's score: how much the question's best chunks say about its community over the most they say
    about one; without such chunks, the share of the question's words its terms and members' labels hold."""
    asked = {stem(w) for w in content_words(question)}
    most = max((c.weight for c in covers.values()), default=0.0)
    scores = {}
    for cid, r in reports.items():
        if most:
            match = covers[cid].weight / most if cid in covers else 0.0
        else:
            said = {stem(w) for w in r.terms} | {stem(w) for label in r.labels for w in words(label)}
            match = len(asked & said) / len(asked) if asked else 0.0
        scores[cid] = scoring.report(match, r.weight, heaviest)
    return scores


def _covering(con: Connection, hits: list[Hit], n_chunks: int, view: View | None) -> dict[str, Cover]:
    """How `hits` (among `n_chunks` readable) fall in the top-level communities, through the members they
    mention (a scoped caller's: those its view holds)."""
    if not hits:
        return {}
    scaled = lexical.scaled(hits)
    texts = {hit[0]: hit[2] for hit in hits}
    specific: dict[tuple[str, str], float] = {}  # (community, chunk) -> its most specific member's IDF
    covers: dict[str, Cover] = {}
    for chunk_id, entity_id, mentioned, cid in con.execute(sql("query.covering_communities"),
                                                            {"ids": list(texts)}).fetchall():
        if view is None or entity_id in view.seeds.entities:
            covers.setdefault(cid, Cover()).hits[(chunk_id, texts[chunk_id])] = scaled[chunk_id]
            idf = math.log((n_chunks + 1) / (mentioned + 1))
            specific[(cid, chunk_id)] = max(specific.get((cid, chunk_id), 0.0), idf)
    for cid, cover in covers.items():
        cover.hits = dict(sorted(cover.hits.items(), key=lambda item: (-item[1], item[0][0])))
        cover.weight = sum(bm25 * specific[(cid, chunk_id)] for (chunk_id, _), bm25 in cover.hits.items())
    return covers


def _placed(covers: dict[str, Cover], scores: dict[str, float]) -> dict[str, list[tuple[str, str, float]]]:
    """Each covering chunk under the best-scoring report that it covers (then the smaller community id), best
    first, each with its BM25 over that report's best chunk's."""
    home: dict[tuple[str, str], str] = {}
    order = sorted(covers, key=lambda c: (-scores[c], c))
    for cid in order:
        for hit in covers[cid].hits:
            home.setdefault(hit, cid)
    placed = {}
    for cid in order:
        mine = [(hit, bm25) for hit, bm25 in covers[cid].hits.items() if home[hit] == cid]
        placed[cid] = [(ref, body, bm25 / mine[0][1]) for (ref, body), bm25 in mine]
    return placed


def _read(con: Connection, scopes: list[str] | None, ids: list[str] | None, view: View | None) -> dict[str, Report]:
    """The reports `ids` with the lines the caller may read (a scoped caller's under its own labels); None: the
    top level's, the OVERVIEW_REPORTS heaviest for an unscoped caller (a scoped one reads every one: which are
    heaviest depends on documents it may not read)."""
    if scopes is None:
        if ids is None:
            ids = [c for (c,) in con.execute(sql("query.heaviest_communities"),
                                             {"level": 0, "limit": OVERVIEW_REPORTS}).fetchall()]
        rows = con.execute(sql("query.reports_unscoped"), {"ids": listed(ids)}).fetchall()
    else:
        rows = con.execute(sql("query.reports"), {"ids": listed(ids), "level": 0, "scopes": scopes}).fetchall()
    reports: dict[str, Report] = {}
    for cid, title, weight, text, ref, label, eid, answer, stored in rows:
        if view is not None:
            if eid not in view.seeds.entities:
                continue
            label = view.seeds.entities[eid].label
            text = line(label, answer, ref)
        if cid not in reports:
            reports[cid] = Report(title, weight, *summary(stored))
        r = reports[cid]
        r.lines.append(text)
        r.refs.append(ref)
        r.labels.append(label)
    return reports


def _evidence(con: Connection, reports: dict[str, Report], scopes: list[str] | None) -> dict[str, str]:
    """Set each report's readable key evidence (none for a scoped caller: the whole corpus chose it) and
    terms; return the text of each chunk the key evidence cites that the caller may read."""
    cited = sorted({ref for r in reports.values() for _, ref in r.stored_evidence})
    readable = chunk_texts(con, cited, scopes)
    for r in reports.values():
        r.evidence = [(text, ref) for text, ref in r.stored_evidence if ref in readable and scopes is None]
        r.terms = [w for t in (r.lines, [t for t, _ in r.evidence]) for w in _terms(" ".join(t))]
    return readable


def _written(con: Connection, reports: dict[str, Report], scopes: list[str] | None) -> None:
    """Set each report's written summary, where there is one the caller may read whole."""
    for cid, found in written(con, list(reports), scopes, kind="report").items():
        reports[cid].written = found


def _text(r: Report, shared: list[str], *, scoped: bool) -> str:
    """A report's block: its head (title, central members, shared terms, key evidence), then its lines."""
    head = ["Community" if scoped else f"Community: {r.title}"]
    if not scoped and r.members:
        head.append(r.members)
    if shared:
        head.append("Shared terms: " + ", ".join(shared))
    if r.evidence:
        head += [EVIDENCE] + [evidence_line(t, ref) for t, ref in r.evidence]
    if r.written:
        head.append(SUMMARY + r.written[0])
    return "\n".join(head + ([ANSWERS, *r.lines] if r.lines else []))


def summary(report: str) -> tuple[str, list[tuple[str, str]]]:
    """The central members' line and the (sentence, chunk id) key evidence of a stored report (the report
    stage wrote them in the line formats of pipelines.report_lines)."""
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


@lru_cache(maxsize=TERMS_CACHE)
def _terms(text: str) -> tuple[str, ...]:
    """The words of `text` that may be a report's terms: letters only, long enough, no stop word (kept for
    the TERMS_CACHE texts last asked: the same reports' lines come back with every global question)."""
    return tuple(w for w in words(text) if w.isalpha() and len(w) >= REPORT_TERM_LETTERS and w not in STOP_WORDS)


def _distinctive(terms: list[str], documents: Counter[str], n_reports: int) -> list[str]:
    """The REPORT_TERMS of `terms` with the highest TF-IDF across the reports shown (`documents`: in how
    many of the `n_reports` each term is, smoothed: ln((n + 1) / df)); a term used once is not."""
    scored = [(-n * math.log((n_reports + 1) / documents[w]), w) for w, n in Counter(terms).items() if n > 1]
    return [w for _, w in sorted(scored)[:REPORT_TERMS]]
