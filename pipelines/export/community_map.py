"""`acervo map`: one self-contained HTML file that shows the communities of an index in any browser, offline: the top
level laid out by igraph beforehand, each community's members, sub-communities and report (with every cited chunk's
text and document) kept in the file as a block of its own (deflated, in one text the page holds), unpacked only when
the community is opened."""

import base64
import itertools
import json
import random
import zlib
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import igraph

from acervo.pipelines.db import sql
from acervo.pipelines.export.graph import Community, Entity, Graph, Line
from acervo.pipelines.query.context import Index
from acervo.pipelines.query.khop import listed

SHOWN = 400  # level-0 communities drawn in the overview, the largest first (the table lists every one)
SHOWN_MEMBERS = 60  # members drawn when a community is opened, the most central first (its panel lists all)
LAYOUT_SEED = 0  # the overview's layout is the same for the same graph
TEMPLATE = "map.html"  # beside this module: the page, its style and script, where the data goes


def write(index: Index, graph: Graph, scopes: list[str] | None, path: Path) -> dict[str, int]:
    """Write the map of `graph` (what `scopes` may see of `index`) at `path`; return what it holds."""
    cids = sorted(graph.communities)
    number = {cid: n for n, cid in enumerate(cids)}
    top = sorted((c for c in graph.communities.values() if c.level == 0), key=lambda c: (-len(c.members),
                                                                                       c.community_id))
    shown = [c.community_id for c in top[:SHOWN]]
    children: dict[str, list[str]] = {}
    for c in graph.communities.values():
        if c.parent_id in graph.communities:
            children.setdefault(c.parent_id, []).append(c.community_id)
    links = _links(graph, set(shown))
    positions = _layout(shown, links)
    overview = {
        "levels": graph.levels,
        "communities": [[c, graph.communities[c].level, number.get(graph.communities[c].parent_id),
                         graph.communities[c].title, len(graph.communities[c].members)] for c in cids],
        "shown": [[number[c], *positions[c]] for c in shown],
        "links": [[number[a], number[b], w] for (a, b), w in sorted(links.items())],
        "entities": [[e.entity_id, e.label, e.degree, _deepest(e, number)]
                     for e in sorted(graph.entities.values(), key=lambda e: e.label)],
    }
    chunks = _chunks(index, graph, scopes)
    lines: dict[str, list[Line]] = {}
    for line in graph.lines:
        lines.setdefault(line.community_id, []).append(line)
    inner = _inner(graph)
    packed = [_packed(_detail(graph, graph.communities[c], sorted(children.get(c, [])), number, lines.get(c, []),
                              inner.get(c, []), chunks)) for c in cids]
    overview["spans"] = [[start, len(p)] for start, p in zip(itertools.accumulate([0, *map(len, packed)]), packed,
                                                                strict=False)]
    page = resources.files("acervo.pipelines.export").joinpath(TEMPLATE).read_text(encoding="utf-8")
    before, after = page.replace("/*DATA*/null", _json(overview)).split("<!--DETAILS-->")
    with path.open("w", encoding="utf-8") as out:
        out.write(before)
        out.write('<script type="text/plain" id="details">')
        out.writelines(packed)
        out.write("</script>")
        out.write(after)
    return {"communities": len(cids), "shown": len(shown), "entities": len(graph.entities)}


def _deepest(entity: Entity, number: dict[str, int]) -> int | None:
    """The number of the community that holds `entity` at its deepest level (where its members are drawn)."""
    return number[entity.communities[max(entity.communities)]] if entity.communities else None


def _links(graph: Graph, shown: set[str]) -> Counter[tuple[str, str]]:
    """The weight between each two shown level-0 communities: the weights of the edges between their members."""
    found: Counter[tuple[str, str]] = Counter()
    for src, dst, weight, _ in graph.edges:
        a, b = graph.entities[src].communities.get(0), graph.entities[dst].communities.get(0)
        if a != b and a in shown and b in shown and a < b:
            found[a, b] += weight
    return found


def _layout(shown: list[str], links: Counter[tuple[str, str]]) -> dict[str, tuple[float, float]]:
    """Positions in [0, 1] of the shown communities: igraph's Fruchterman-Reingold, seeded, so the same graph
    gives the same picture."""
    if not shown:
        return {}
    place = {c: n for n, c in enumerate(shown)}
    g = igraph.Graph(n=len(shown), edges=[(place[a], place[b]) for a, b in links])
    start = random.Random(LAYOUT_SEED)
    coords = g.layout_fruchterman_reingold(weights=list(links.values()) or None, niter=500,
                                           seed=[[start.random(), start.random()] for _ in shown]).coords
    xs, ys = [x for x, _ in coords], [y for _, y in coords]
    span = max(max(xs) - min(xs), max(ys) - min(ys)) or 1.0
    return {c: (round((x - min(xs)) / span, 4), round((y - min(ys)) / span, 4)) for c, (x, y) in zip(shown, coords,
                                                                                                         strict=True)}


def _chunks(index: Index, graph: Graph, scopes: list[str] | None) -> dict[str, list[Any]]:
    """The chunks the report lines cite, as [document title, locator, text, document id], read as `scopes` may."""
    refs = sorted({line.evidence_ref for line in graph.lines})
    rows = index.con.execute(sql("lookup.chunks"), {"ids": listed(refs), "scopes": scopes}).fetchall()
    return {cid: [title, locator, text, doc_id] for cid, text, doc_id, title, locator in rows}


def _inner(graph: Graph) -> dict[str, list[tuple[str, str, int]]]:
    """The edges inside each community (src < dst), at every level, from one pass over the edges."""
    found: dict[str, list[tuple[str, str, int]]] = {}
    for src, dst, weight, _ in graph.edges:
        if src < dst:
            theirs = graph.entities[dst].communities
            for level, cid in graph.entities[src].communities.items():
                if theirs.get(level) == cid:
                    found.setdefault(cid, []).append((src, dst, weight))
    return found


def _detail(graph: Graph, community: Community, children: list[str], number: dict[str, int], lines: list[Line],
            inner: list[tuple[str, str, int]], chunks: dict[str, list[Any]]) -> dict[str, Any]:
    """What opening a community shows: its sub-communities, members (most central first) with the edges among
    those drawn, and its report's lines with each cited chunk."""
    place = {eid: n for n, (eid, _) in enumerate(community.members)}
    return {
        "children": [number[c] for c in children],
        "members": [[graph.entities[eid].label, graph.entities[eid].degree] for eid, _ in community.members],
        "edges": [[place[s], place[d], w] for s, d, w in inner if place[s] < SHOWN_MEMBERS > place[d]],
        "report": [[graph.entities[line.entity_id].label, line.text, line.evidence_ref] for line in lines],
        "chunks": {line.evidence_ref: chunks[line.evidence_ref] for line in lines if line.evidence_ref in chunks},
    }


def _packed(detail: dict[str, Any]) -> str:
    """A community's block as the page reads it: JSON, deflated (raw), in base64 (no character HTML reads)."""
    squeeze = zlib.compressobj(level=9, wbits=-15)
    return base64.b64encode(squeeze.compress(json.dumps(detail, ensure_ascii=False, separators=(",", ":"))
                                             .encode("utf-8")) + squeeze.flush()).decode("ascii")


def _json(value: Any) -> str:
    """`value` as JSON that an HTML script element holds as it is: no "</" (which could end it) or "<!--"."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/").replace("<!--",
                                                                                                   "<\\u0021--")
