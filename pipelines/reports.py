"""Stage `community_reports`: per community, a map of its central members' short answers with their chunks."""

import itertools

from pipelines.db import Connection, content_hash, insert, keys, sql, transaction
from pipelines.runs import Work

VERSION = "map-1"


def line(label: str, answer: str, ref: str) -> str:
    """One report line: a member, its short answer, and the chunk that supports it."""
    return f"- {label}: {' '.join(answer.split())} [{ref}]"


def run(con: Connection, *, max_lines: int, n_evidence: int) -> Work:
    """Write the report of every community whose input hash changed; drop those of vanished communities."""
    evidence = {cid: (refs, hashes) for cid, refs, hashes in
                con.execute(sql("community_evidence"), {"k": n_evidence}).fetchall()}
    members = con.execute(sql("report_members"), {"max_lines": max_lines}).fetchall()
    stored = dict(con.execute("select community_id, input_hash from community_reports").fetchall())
    reports, lines = [], []
    for cid, group in itertools.groupby(members, key=lambda r: r[0]):
        rows = list(group)
        refs, hashes = evidence[cid]
        texts = [line(label, answer, ref) for _, _, label, answer, ref in rows]
        parts = [VERSION, str(max_lines), str(n_evidence), cid, *refs, *hashes]
        for (_, eid, _, _, _), text in zip(rows, texts, strict=True):
            parts += [eid, text]
        digest = content_hash(*parts)
        if stored.get(cid) == digest:
            continue
        reports.append({"community_id": cid, "report": "\n".join(texts), "evidence_refs": refs, "input_hash": digest})
        lines += [{"community_id": cid, "ord": place, "entity_id": eid, "text": text, "evidence_ref": ref}
                  for place, ((_, eid, _, _, ref), text) in enumerate(zip(rows, texts, strict=True), start=1)]
    with transaction(con):
        keys(con, "community", (r["community_id"] for r in reports))
        deleted = con.execute(sql("community_reports_delete")).fetchone()[0]
        con.execute(sql("report_lines_delete"))
        insert(con, "community_reports", reports)
        insert(con, "report_lines", lines)
    replaced = len(stored.keys() & {r["community_id"] for r in reports})
    return Work(len(evidence), len(evidence) - len(reports), len(reports), deleted - replaced)
