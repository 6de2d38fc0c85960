"""The entity graph an export writes: entities with their short answers and communities, edges with weight and rank;
a scoped export's is the query side's own view of what its scopes may read (pipelines.query.seeds.view)."""

from collections import Counter
from dataclasses import dataclass, field

from acervo.pipelines.db import sql
from acervo.pipelines.layout import TITLE_MEMBERS
from acervo.pipelines.query.context import Index
from acervo.pipelines.query.khop import listed
from acervo.pipelines.report_lines import line


@dataclass
class Entity:
    """A node: its label, the chunks that mention it, its degree (edge rows from it) and short answer."""

    entity_id: str
    label: str
    n_chunks: int
    degree: int = 0
    answer: str = ""
    evidence_ref: str = ""
    communities: dict[int, str] = field(default_factory=dict)  # level -> the community holding it there


@dataclass
class Community:
    """A community at one level, its parent, title and members (entity id, centrality: 1 = most central)."""

    community_id: str
    level: int
    parent_id: str | None
    title: str
    members: list[tuple[str, int]] = field(default_factory=list)


@dataclass
class Line:
    """A line of a community's report: a member's short answer and the chunk it cites."""

    community_id: str
    ord: int
    entity_id: str
    text: str
    evidence_ref: str


@dataclass
class Graph:
    """What an export writes of the graph; `edges` are (src, dst, weight, rank), one row per direction."""

    entities: dict[str, Entity]
    edges: list[tuple[str, str, int, int]]
    communities: dict[str, Community]
    lines: list[Line]

    @property
    def levels(self) -> int:
        """How many community levels the graph has."""
        return 1 + max((c.level for c in self.communities.values()), default=-1)


def read(index: Index, scopes: list[str] | None) -> Graph:
    """The graph of `index` as a caller with `scopes` (None: any) may see it."""
    con = index.con
    if scopes is None:
        entities = {eid: Entity(eid, label, n) for eid, label, n in con.execute(sql("export.entities")).fetchall()}
        edges = [tuple(row) for row in con.execute(sql("export.edges")).fetchall()]
    else:
        view = index.view(scopes)
        entities = {s.entity_id: Entity(s.entity_id, s.label, s.n_chunks) for s in view.seeds.entities.values()}
        edges = [(src, dst, weight, rank) for src in sorted(view.graph)
                 for dst, weight, rank in sorted(view.graph[src], key=lambda n: n[2])]
    for src, n in Counter(src for src, *_ in edges).items():
        entities[src].degree = n
    ids = listed(sorted(entities))
    for eid, _, answer, ref in con.execute(sql("query.answers"), {"ids": ids, "scopes": scopes}).fetchall():
        entities[eid].answer, entities[eid].evidence_ref = answer, ref
    communities = _communities(index, entities, ids, scoped=scopes is not None)
    return Graph(entities, edges, communities, _lines(index, entities, ids, scopes))


def _lines(index: Index, entities: dict[str, Entity], ids: str, scopes: list[str] | None) -> list[Line]:
    """The report lines whose member and cited chunk the caller may see; a scoped export's under the labels it
    sees (a stored line names the member as the whole corpus spells it)."""
    rows = index.con.execute(sql("export.report_lines"), {"ids": ids, "scopes": scopes}).fetchall()
    return [Line(cid, n, eid, text if scopes is None else line(entities[eid].label, answer, ref), ref)
            for cid, n, eid, text, ref, answer in rows]


def _communities(index: Index, entities: dict[str, Entity], ids: str, *, scoped: bool) -> dict[str, Community]:
    """The communities that hold a visible entity, with only those members; a scoped export's titles and
    centralities are made from its visible members alone (a stored title may name a hidden one)."""
    found: dict[str, Community] = {}
    for cid, level, parent, title, eid, centrality in index.con.execute(sql("export.memberships"),
                                                                        {"ids": ids}).fetchall():
        community = found.setdefault(cid, Community(cid, level, parent, title))
        community.members.append((eid, centrality))
        entities[eid].communities[level] = cid
    if scoped:
        for c in found.values():
            c.members = [(eid, place) for place, (eid, _) in enumerate(c.members, start=1)]
            c.title = ", ".join(entities[eid].label for eid, _ in c.members[:TITLE_MEMBERS])
    return found
