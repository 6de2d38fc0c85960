"""Stage `community_reports`: per community, a summary of what its members share, with its evidence.

A report names its central members, then the key evidence: from each of its supporting chunks (those
that mention the most members) the sentence that names the most of them, cited, each once; then each listed
member's short answer with its chunk. The terms a community's text uses more than the other
communities' are found at query time (pipelines.query.reports), across the reports a caller may read.

Writes community_reports and report_lines.
"""

from collections.abc import Iterator
from typing import Any

from acervo.pipelines.db import Connection, sql
from acervo.pipelines.layout import sentence_key
from acervo.pipelines.names import fold, position, words
from acervo.pipelines.report_lines import ANSWERS, EVIDENCE, MEMBERS, evidence_line, line
from acervo.pipelines.run import Run
from acervo.pipelines.runs import Work
from acervo.pipelines.sentences import sentences
from acervo.pipelines.stage import Hashed, refresh

VERSION = "summary-4"  # 4: names found in words without marks, and in pairs of Thai or Khmer letters
CENTRAL_MEMBERS = 5  # members named in a report's first line, most central first
SENTENCE_CHARS = 300  # longest evidence sentence kept whole; a longer one is cut at a word
BATCH = 10_000  # communities whose reports are written at a time
READS = ("chunks", "mentions", "communities", "entity_answers", "boilerplate")  # stages whose tables it reads
STAGE = Hashed("community_reports", READS, "community_id", "report_todo", "communities", scoped=True,
               ranged=True)


def key_sentence(text: str, labels: list[str], common: frozenset[str] = frozenset()) -> str:
    """The sentence of `text` that names the most of `labels` (the first of those tied), at most
    SENTENCE_CHARS long, none of the boilerplate sentences `common` (their keys: pipelines.layout.sentence_key). Only
    the labels whose every word the folded text holds are looked for (no sentence names another), and the search
    stops at a sentence that names them all."""
    folded = fold(text)
    wanted = [w for w in map(words, labels) if w and all(word in folded for word in w)]
    best, most = "", -1
    for start, end in sentences(text):
        if common and sentence_key(text[start:end]) in common:
            continue
        tokens = words(text[start:end])
        named = sum(1 for w in wanted if position(tokens, w) is not None)
        if named > most:
            best, most = text[start:end], named
            if most == len(wanted):
                break
    best = " ".join(best.split())
    if len(best) > SENTENCE_CHARS:
        best = best[:SENTENCE_CHARS].rsplit(" ", 1)[0] + " …"
    return best


def summary(members: list[dict], evidence: list[tuple[str, str, frozenset[str]]]) -> list[str]:
    """A report's lines before its member answers: its central members and its key evidence sentences
    (`evidence`: (chunk id, text, boilerplate sentence keys) of its supporting chunks, in order), a sentence that
    repeats an earlier one's words (case, accents and punctuation aside) left out."""
    labels = [m["label"] for m in members]
    out = [MEMBERS + ", ".join(labels[:CENTRAL_MEMBERS]) + (f" (+{len(labels) - CENTRAL_MEMBERS} more)"
                                                           if len(labels) > CENTRAL_MEMBERS else "")]
    found, seen = [], set()
    for ref, text, common in evidence:
        sentence = key_sentence(text, labels, common)
        said = tuple(filter(str.isalnum, words(sentence)))  # a host's greeting in every episode: once
        if sentence and said not in seen:
            seen.add(said)
            found.append(evidence_line(sentence, ref))
    return out + ([EVIDENCE, *found] if found else []) + [ANSWERS]


def run(run: Run, *, max_lines: int, n_evidence: int) -> Work:
    """Write the report of every community whose input hash changed; drop those of vanished communities.

    A report's evidence_refs are the `n_evidence` chunks that mention the most members (ties by
    chunk id); its lines are the `max_lines` most central members' answers with their chunks, after its
    summary (`summary`), which those same inputs determine.
    """
    return refresh(run, STAGE, f"{VERSION}:{max_lines}:{n_evidence}", _write, version=VERSION, max_lines=max_lines,
                   k=n_evidence)


def _write(run: Run) -> int:
    """Write the reports and lines of the communities of report_todo; how many reports."""
    run.con.execute(sql("community_reports.lines_delete"))
    written = 0
    for reports, lines in _written(run.con):
        written += run.insert("community_reports", reports)
        run.insert("report_lines", lines)
    return written


def _written(con: Connection) -> Iterator[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """The community_reports and report_lines rows of the communities of report_todo, BATCH communities at a
    time: a run holds their supporting chunks' text, not the corpus's."""
    after = None
    while todo := con.execute(sql("community_reports.todo_batch"), {"after": after, "n": BATCH}).fetchall():
        texts_of = dict(con.execute(sql("community_reports.batch_texts"),
                                    {"after": after, "last": todo[-1][0]}).fetchall())
        reports, lines = [], []
        for cid, refs, common, members, digest in todo:
            texts = [line(m["label"], m["answer"], m["ref"]) for m in members]
            evidence = [(ref, texts_of[ref], frozenset(c)) for ref, c in zip(refs, common, strict=True)]
            head = summary(members, evidence)
            reports.append({"community_id": cid, "report": "\n".join(head + texts), "evidence_refs": refs,
                            "input_hash": digest})
            for place, (m, text) in enumerate(zip(members, texts, strict=True), start=1):
                lines.append({"community_id": cid, "ord": place, "entity_id": m["entity_id"], "text": text,
                              "evidence_ref": m["ref"]})
        yield reports, lines
        after = todo[-1][0]
