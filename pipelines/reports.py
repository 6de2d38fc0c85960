"""Stage `community_reports`: per community, a map of its central members' short answers with their chunks."""

import itertools

from pipelines.db import Connection, content_hash, insert, sql, transaction

VERSION = "map-1"


def line(label: str, answer: str, ref: str) -> str:
    """One report line: a member, its short answer, and the chunk that supports it."""
    return f"- {label}: {' '.join(answer.split())} [{ref}]"


def run(con: Connection, *, max_lines: int, n_evidence: int) -> tuple[int, int]:
    """Rebuild `community_reports` and `report_lines`; return (communities read, reports written)."""
    evidence = {cid: (refs, hashes) for cid, refs, hashes in
                con.execute(sql("community_evidence"), {"k": n_evidence}).fetchall()}
    members = con.execute(sql("report_members"), {"max_lines": max_lines}).fetchall()
    reports, lines = [], []
    for cid, group in itertools.groupby(members, key=lambda r: r[0]):
        rows = list(group)
        refs, hashes = evidence[cid]
        texts = [line(label, answer, ref) for _, _, label, answer, ref in rows]
        parts = [VERSION, str(max_lines), str(n_evidence), cid, *refs, *hashes]
        for place, ((_, eid, _, _, ref), text) in enumerate(zip(rows, texts, strict=True), start=1):
            parts += [eid, text]
            lines.append({"community_id": cid, "ord": place, "entity_id": eid, "text": text, "evidence_ref": ref})
        reports.append({"community_id": cid, "report": "\n".join(texts), "evidence_refs": refs,
                        "input_hash": content_hash(*parts)})
    with transaction(con):
        con.execute("delete from community_reports")
        con.execute("delete from report_lines")
        insert(con, "community_reports", reports)
        insert(con, "report_lines", lines)
    return len(evidence), len(reports)
