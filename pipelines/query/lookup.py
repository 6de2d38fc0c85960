"""Query: one entity (short answer, evidence, neighbours) or one community (members, sub-communities, report with
each cited chunk) by id, with only what the caller's scopes may read: the service's /entities and /communities."""

from typing import Any

from acervo.pipelines.db import sql
from acervo.pipelines.layout import TITLE_MEMBERS
from acervo.pipelines.query.context import Index
from acervo.pipelines.query.khop import listed
from acervo.pipelines.report_lines import line


def entity(index: Index, entity_id: str, scopes: list[str] | None, *, neighbours: int = 10) -> dict[str, Any] | None:
    """The entity `entity_id` as `scopes` may see it: label, chunks, short answer with its chunk, evidence chunks,
    its `neighbours` strongest neighbours; None when it does not exist or the caller may not see it."""
    row = index.con.execute(sql("lookup.entity"), {"id": entity_id}).fetchone()
    if row is None:
        return None
    _, label, n_chunks, evidence = row
    view = index.view(scopes)
    if view is not None:
        if entity_id not in view.seeds.entities:
            return None
        seen = view.seeds.entities[entity_id]
        label, n_chunks = seen.label, seen.n_chunks
        near = view.graph.get(entity_id, [])
    else:
        near = index.graph()([entity_id], neighbours).get(entity_id, [])
    labels = _labels(index, [dst for dst, _, _ in near], scopes)
    answered = index.con.execute(sql("query.answers"), {"ids": listed([entity_id]), "scopes": scopes}).fetchone()
    chunks = _chunks(index, list(evidence or []) + ([answered[3]] if answered else []), scopes)
    return {"entity_id": entity_id, "label": label, "n_chunks": n_chunks,
            "answer": {"text": answered[2], "chunk": chunks[answered[3]]} if answered else None,
            "evidence": [chunks[c] for c in evidence or [] if c in chunks],
            "neighbours": [{"entity_id": dst, "label": labels[dst], "weight": weight, "rank": rank}
                           for dst, weight, rank in sorted(near, key=lambda n: n[2])[:neighbours] if dst in labels]}


def community(index: Index, community_id: str, scopes: list[str] | None) -> dict[str, Any] | None:
    """The community `community_id` as `scopes` may see it: level, parent, title, members (most central first),
    sub-communities, and its report's lines, each with the chunk it cites; None when it does not exist or holds
    no member the caller may see. A scoped caller's title and lines name its members as it sees them."""
    rows = index.con.execute(sql("lookup.community"), {"id": community_id}).fetchall()
    view = index.view(scopes)
    seen = None if view is None else view.seeds.entities
    members = [eid for *_, eid, _ in rows if seen is None or eid in seen]
    if not members:
        return None
    level, parent, title = rows[0][:3]
    labels = _labels(index, members, scopes)
    if seen is not None:
        title = ", ".join(labels[m] for m in members[:TITLE_MEMBERS])
    lines = [(n, eid, text if seen is None else line(labels[eid], answer, ref), ref)
             for n, eid, text, ref, answer in index.con.execute(sql("lookup.lines"), {"id": community_id}).fetchall()
             if eid in labels]
    chunks = _chunks(index, [ref for *_, ref in lines], scopes)
    children = [c for (c,) in index.con.execute(sql("lookup.children"), {"id": community_id}).fetchall()]
    if seen is not None:  # a sub-community the caller sees nothing of is not named
        children = [c for c in children if community(index, c, scopes) is not None]
    return {"community_id": community_id, "level": level, "parent_id": parent, "title": title,
            "members": [{"entity_id": m, "label": labels[m]} for m in members], "children": children,
            "report": [{"entity_id": eid, "text": text, "chunk": chunks[ref]}
                       for _, eid, text, ref in lines if ref in chunks]}


def _labels(index: Index, ids: list[str], scopes: list[str] | None) -> dict[str, str]:
    """The labels of the entities `ids` the caller may see, as it sees them."""
    view = index.view(scopes)
    if view is not None:
        return {eid: view.seeds.entities[eid].label for eid in ids if eid in view.seeds.entities}
    return dict(index.con.execute(sql("lookup.labels"), {"ids": listed(sorted(set(ids)))}).fetchall())


def _chunks(index: Index, ids: list[str], scopes: list[str] | None) -> dict[str, dict[str, Any]]:
    """The chunks `ids` the caller may read: id, text, document id and title, locator."""
    rows = index.con.execute(sql("lookup.chunks"), {"ids": listed(sorted(set(ids))), "scopes": scopes}).fetchall()
    return {cid: {"chunk_id": cid, "text": text, "doc_id": doc, "title": title, "locator": locator}
            for cid, text, doc, title, locator in rows}
