"""Stage `communities`: communities and community_members from the entity graph (pipelines.clustering),
stable against the previous run."""

from dataclasses import dataclass
from typing import NamedTuple

from acervo.pipelines.clustering import Community, Edge, centrality, cluster
from acervo.pipelines.db import sql
from acervo.pipelines.layout import TITLE_MEMBERS
from acervo.pipelines.run import Run
from acervo.pipelines.runs import SKIPPED, Work

READS = ("mentions", "edges")  # entities and mentions (labels, weights, changed entities), edges
KEY = "communities"  # index_state key of the settings the stored communities were made with
REGION_SEEDS = 0.05  # a change to more of the entities than this reaches most of the graph: read it whole
REGION_SHARE = 0.5  # a rerun reads only the changed region when it holds less of the entities than this


class Stored(NamedTuple):
    """A community's row as the index holds it (or as it is written): its members most central first."""

    level: int
    parent_id: str | None
    graph_hash: str
    title: str
    members: list[str]


@dataclass
class Graph:
    """What a run reads: the entities to cluster, their edges, and the stored communities among them."""

    labels: dict[str, str]  # entity id -> label
    edges: list[Edge]  # from those entities; a neighbour may lie outside a scoped read
    stored: dict[str, Stored]  # community id -> its row
    outside: list[str]  # ids of the communities a scoped read leaves as they are
    total: float | None  # the whole graph's edge weight when only a part of it is read


def run(run: Run, *, max_size: int, max_levels: int, seed: int, resolution: float) -> Work:
    """Update `communities` and `community_members`, stable against the previous run; count what changed.

    A rerun reads only the part of the graph where something changed (communities.community_region): the
    rest keeps its communities, as clustering the whole graph would. Only the rows of communities that
    changed (members, order, title, parent) are rewritten; within a run, a community whose members'
    edges and names did not change keeps its stored order and title. Work counts the rows written and
    removed.
    """
    setting = f"{max_size}:{max_levels}:{seed}:{resolution}"
    if run.unchanged(READS, KEY, setting):
        return SKIPPED
    same_settings = run.get(KEY) == setting
    graph = _read(run, scoped=run.logged and same_settings)
    previous = [Community(cid, row.level, frozenset(row.members), row.parent_id, row.graph_hash)
                for cid, row in graph.stored.items()] if same_settings else []
    changed, touched = _changes(run)
    among = [edge for edge in graph.edges if edge.dst in graph.labels]  # both ends among the entities read
    found = cluster(list(graph.labels), among, max_size=max_size, max_levels=max_levels, seed=seed,
                    resolution=resolution, previous=previous, changed=changed, total_weight=graph.total,
                    taken=graph.outside)
    rows = _rows(found, graph, touched if same_settings else None)
    rewrite = sorted(cid for cid, row in rows.items() if graph.stored.get(cid) != row)
    gone = sorted(graph.stored.keys() - rows.keys())
    with run.transaction():
        _write(run, rows, rewrite, gone)
        run.put(KEY, setting)
    return _work(previous, found, graph, rewrite, gone)


def _read(run: Run, *, scoped: bool) -> Graph:
    """The graph to cluster: all of it, or with `scoped` and a small change only the region it can reach."""
    con = run.con
    con.execute(sql("communities.region_new"))
    scoped = scoped and _regional(run)
    whole = {"all": not scoped}
    labels = dict(con.execute(sql("communities.community_entities"), whole).fetchall())
    edges = [Edge(*row) for row in con.execute(sql("communities.community_edges"), whole).fetchall()]
    members: dict[str, list[str]] = {}
    for cid, entity_id in con.execute(sql("communities.community_members_previous"), whole).fetchall():
        members.setdefault(cid, []).append(entity_id)
    stored = {cid: Stored(level, parent_id, graph_hash, title, members.get(cid, []))
              for cid, level, parent_id, graph_hash, title in
              con.execute(sql("communities.communities_previous"), whole).fetchall()}
    if not scoped:
        return Graph(labels, edges, stored, [], None)
    outside = [cid for (cid,) in con.execute(sql("communities.community_ids")).fetchall() if cid not in stored]
    total = con.execute(sql("communities.community_weight_total")).fetchone()[0]
    return Graph(labels, edges, stored, outside, total)


def _regional(run: Run) -> bool:
    """Whether a rerun reads only the region a change can reach (then in community_region): not when the
    change touches so many entities, or reaches so much of the graph, that filtering costs more than it saves."""
    con = run.con
    n = con.execute(sql("communities.entity_count")).fetchone()[0]
    if con.execute(sql("communities.changed_seeds")).fetchone()[0] >= REGION_SEEDS * n:
        return False
    con.execute(sql("communities.community_region"))
    return con.execute(sql("communities.region_size")).fetchone()[0] < REGION_SHARE * n


def _changes(run: Run) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """The entities whose edges changed in this run, and those whose edges, mentions or names did (None, None
    with no change log: then anything may have changed)."""
    if not run.logged:
        return None, None
    con = run.con
    changed = frozenset(e for (e,) in con.execute(sql("communities.changed_edge_entities")).fetchall())
    named = {e for (e,) in con.execute(sql("communities.changed_named_entities")).fetchall()}
    return changed, changed | named


def _rows(found: list[Community], graph: Graph, touched: frozenset[str] | None) -> dict[str, Stored]:
    """The row of each community `found`: its stored row where that still holds (`_same_row`; never without
    `touched`), else with its members ranked by centrality and its title from the first of them."""
    rows = {c.community_id: graph.stored[c.community_id] for c in found if touched is not None
            and _same_row(c, graph.stored.get(c.community_id), touched)}
    order = centrality([c for c in found if c.community_id not in rows], graph.edges)
    rows |= {c.community_id: Stored(c.level, c.parent_id, c.graph_hash,
                                    ", ".join(graph.labels[m] for m in order[c.community_id][:TITLE_MEMBERS]),
                                    order[c.community_id]) for c in found if c.community_id in order}
    return rows


def _same_row(c: Community, old: Stored | None, touched: frozenset[str]) -> bool:
    """Whether the stored row `old` still holds for `c`: same place and members, and no member whose edges or
    names changed (so its centrality order and title are what they were)."""
    return old is not None and (old.level, old.parent_id, old.graph_hash) == (c.level, c.parent_id, c.graph_hash) \
        and len(old.members) == len(c.members) and c.members.issuperset(old.members) and not c.members & touched


def _write(run: Run, rows: dict[str, Stored], rewrite: list[str], gone: list[str]) -> None:
    """Write the rows of the communities `rewrite`, remove those `gone`, and bring the weights up to date."""
    con = run.con
    run.ids("communities.rewritten", rewrite + gone)
    con.execute(sql("communities.communities_delete"))
    con.execute(sql("communities.community_members_delete"))
    run.insert("communities", (
        {"community_id": cid, "level": rows[cid].level, "parent_id": rows[cid].parent_id, "title": rows[cid].title,
         "weight": 0, "n_members": len(rows[cid].members), "graph_hash": rows[cid].graph_hash} for cid in rewrite))
    run.insert("community_members", ({"community_id": cid, "entity_id": m, "centrality": rank}
                                      for cid in rewrite for rank, m in enumerate(rows[cid].members, start=1)))
    con.execute(sql("communities.community_weights"), {"full": not run.logged})
    run.note("communities.changed_communities")


def _work(previous: list[Community], found: list[Community], graph: Graph, rewrite: list[str],
          gone: list[str]) -> Work:
    """What the run did: the communities kept with the same members, those recomputed (changed, born, or
    their rows rewritten) and those gone; in detail, kept, changed, born, gone, and rows rewritten."""
    before = {c.community_id: c.members for c in previous}
    after = {c.community_id: c.members for c in found}
    recomputed = {cid for cid, members in after.items() if before.get(cid) != members} | set(rewrite)
    detail = {"kept": len(graph.outside) + sum(1 for cid, m in after.items() if before.get(cid) == m),
              "changed": sum(1 for cid, m in after.items() if cid in before and before[cid] != m),
              "born": len(after.keys() - before.keys()), "gone": len(before.keys() - after.keys()),
              "rows_rewritten": len(rewrite)}
    return Work(len(graph.labels), len(graph.outside) + len(after) - len(recomputed), len(recomputed), len(gone),
                detail)
