"""Query: community reports as context units, best match to the question first, then weight; each with the
chunks its key evidence cites, under it.

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
from dataclasses import dataclass, field

from pipelines.db import Connection, sql
from pipelines.query import scoring
from pipelines.query.budget import Unit, chunk, key
from pipelines.query.khop import listed
from pipelines.query.local import chunk_texts, written
from pipelines.query.scoring import REPORT_TERM_LETTERS, REPORT_TERMS
from pipelines.query.seeds import View
from pipelines.query.words import STOP_WORDS, content_words, stem
from pipelines.text import ANSWERS, EVIDENCE, MEMBERS, evidence_line, line, words

SUMMARY = "Summary: "  # opens the line of a written summary in a report's block


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


def units(con: Connection, question: str, scopes: list[str] | None, ids: list[str] | None,
          view: View | None = None, *, written_rows: bool = True) -> list[Unit]:
    """The units of the top-level communities' reports (or the communities `ids`), with their evidence chunks
    (`written_rows`: the index may hold written summaries; False: none are looked for)."""
    reports = _read(con, scopes, ids, view)
    readable = _evidence(con, reports, scopes)
    if written_rows:
        _written(con, reports, scopes)
    documents = Counter(w for r in reports.values() for w in set(r.terms))
    asked = {stem(w) for w in content_words(question)}
    heaviest = max((r.weight for r in reports.values()), default=1) or 1
    found = []
    for cid, r in reports.items():
        said = {stem(w) for w in r.terms} | {stem(w) for label in r.labels for w in words(label)}
        score = scoring.report(len(asked & said) / len(asked) if asked else 0.0, r.weight, heaviest)
        text = _text(r, _distinctive(r.terms, documents, len(reports)), scoped=scopes is not None)
        refs = tuple(dict.fromkeys([ref for _, ref in r.evidence] + r.refs + (r.written[1] if r.written else [])))
        found.append(Unit("report", key("report", cid), text, refs, score))
        for place, ref in enumerate(dict.fromkeys(ref for _, ref in r.evidence)):
            found.append(chunk(ref, readable[ref], scoring.report_chunk(score, place), key("report", cid)))
    return found


def _read(con: Connection, scopes: list[str] | None, ids: list[str] | None, view: View | None) -> dict[str, Report]:
    """The reports with the lines the caller may read (a scoped caller's under its own labels)."""
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
    """Set each report's written summary, where there is one the caller may read whole (index files made
    before written reports have no such table)."""
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
    return "\n".join(head + [ANSWERS] + r.lines)


def summary(report: str) -> tuple[str, list[tuple[str, str]]]:
    """The central members' line and the (sentence, chunk id) key evidence of a stored report (the report
    stage wrote them in the line formats of pipelines.text)."""
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
    return [w for w in words(text) if w.isalpha() and len(w) >= REPORT_TERM_LETTERS and w not in STOP_WORDS]


def _distinctive(terms: list[str], documents: Counter[str], n_reports: int) -> list[str]:
    """The REPORT_TERMS of `terms` with the highest TF-IDF across the reports shown (`documents`: in how
    many of the `n_reports` each term is, smoothed: ln((n + 1) / df)); a term used once is not."""
    scored = [(-n * math.log((n_reports + 1) / documents[w]), w) for w, n in Counter(terms).items() if n > 1]
    return [w for _, w in sorted(scored)[:REPORT_TERMS]]
