"""Stage `community_reports`: per community, a map of its central members' short answers with their chunks.

Writes community_reports and report_lines.
"""

from pipelines import changes, state
from pipelines.db import Connection, insert, sql, transaction
from pipelines.runs import Work

VERSION = "map-1"


def line(label: str, answer: str, ref: str) -> str:
    """One report line: a member, its short answer, and the chunk that supports it."""
    return f"- {label}: {' '.join(answer.split())} [{ref}]"


def run(con: Connection, *, max_lines: int, n_evidence: int) -> Work:
    """Write the report of every community whose input hash changed; drop those of vanished communities.

    A report's evidence_refs are the `n_evidence` chunks that mention the most members (ties by
    chunk id); its lines are the `max_lines` most central members' answers with their chunks.
    Within a run, only communities the change log points at are hashed (unless the settings changed).
    """
    setting = f"{VERSION}:{max_lines}:{n_evidence}"
    con.execute("delete from keys where kind = 'report'")
    full = not changes.active(con) or state.get(con, "community_reports") != setting
    con.execute(sql("reports_scope"), {"full": full})
    con.execute(sql("report_todo"), {"version": VERSION, "max_lines": max_lines, "k": n_evidence})
    todo = con.execute("select community_id, refs, lines, input_hash from report_todo order by all").fetchall()
    reports, lines = [], []
    for cid, refs, members, digest in todo:
        texts = [line(m["label"], m["answer"], m["ref"]) for m in members]
        reports.append({"community_id": cid, "report": "\n".join(texts), "evidence_refs": refs,
                        "input_hash": digest})
        for place, (m, text) in enumerate(zip(members, texts, strict=True), start=1):
            lines.append({"community_id": cid, "ord": place, "entity_id": m["entity_id"], "text": text,
                          "evidence_ref": m["ref"]})
    n_communities = con.execute("select count(*) from communities").fetchone()[0]
    replaced = con.execute("select count(*) from community_reports where community_id in "
                           "(select community_id from report_todo)").fetchone()[0]
    with transaction(con):
        deleted = con.execute(sql("community_reports_delete")).fetchone()[0]
        con.execute(sql("report_lines_delete"))
        insert(con, "community_reports", reports)
        insert(con, "report_lines", lines)
        state.put(con, "community_reports", setting)
    return Work(n_communities, n_communities - len(reports), len(reports), deleted - replaced)
