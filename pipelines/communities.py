"""Stage `communities`: hierarchical, seeded Leiden (igraph, modularity) over the edges -> communities, members."""

import random
from dataclasses import dataclass

import igraph as ig

from pipelines.db import Connection, content_hash, insert, sql, transaction

TITLE_MEMBERS = 3


@dataclass(frozen=True)
class Community:
    """A set of entities at one level, most central first, with the index of its parent in the list."""

    level: int
    members: tuple[str, ...]
    parent: int | None

    @property
    def community_id(self) -> str:
        """'c<level>-' and a hash of the sorted members: the same members give the same id."""
        return f"c{self.level}-{content_hash(*sorted(self.members))[:10]}"


def _leiden(graph: ig.Graph, *, seed: int, resolution: float) -> list[list[int]]:
    """Leiden's partition of `graph` (modularity, weighted), identical on every run with the same seed."""
    ig.set_random_number_generator(random.Random(seed))
    parts = graph.community_leiden(objective_function="modularity", weights="weight",
                                   resolution=resolution, n_iterations=-1)
    return sorted((sorted(p) for p in parts), key=lambda p: p[0])


def _central_first(graph: ig.Graph, members: list[int], names: list[str], strength: list[float]) -> tuple[str, ...]:
    """`members` ordered by weighted degree inside the community, then in the whole graph, then id."""
    inside = graph.induced_subgraph(members).strength(weights="weight") if graph.ecount() else [0] * len(members)
    order = sorted(range(len(members)), key=lambda i: (-inside[i], -strength[members[i]], names[members[i]]))
    return tuple(names[members[i]] for i in order)


def cluster(entity_ids: list[str], edges: list[tuple[str, str, int]], *, max_size: int, max_levels: int,
            seed: int, resolution: float = 1.0) -> list[Community]:
    """Hierarchical communities over undirected weighted `edges` (either or both directions given).

    Level 0 partitions every entity, isolated ones included; a community larger than `max_size`
    is partitioned again inside itself, until Leiden no longer splits it or `max_levels` is reached.
    """
    names = sorted(entity_ids)
    index = {name: i for i, name in enumerate(names)}
    weights = {(min(index[s], index[d]), max(index[s], index[d])): w for s, d, w in edges if s != d}
    pairs = [(a, b, w) for (a, b), w in sorted(weights.items())]
    graph = ig.Graph(n=len(names), edges=[(a, b) for a, b, _ in pairs], edge_attrs={"weight": [w for *_, w in pairs]})
    strength = graph.strength(weights="weight") if pairs else [0.0] * len(names)
    found: list[Community] = []
    todo: list[tuple[list[int], int, int | None]] = [(list(range(len(names))), 0, None)]
    while todo:
        vertices, level, parent = todo.pop(0)
        parts = _leiden(graph.induced_subgraph(vertices), seed=seed, resolution=resolution)
        if parent is not None and len(parts) < 2:
            continue
        for part in parts:
            members = [vertices[i] for i in part]
            found.append(Community(level, _central_first(graph, members, names, strength), parent))
            if len(members) > max_size and level + 1 < max_levels:
                todo.append((members, level + 1, len(found) - 1))
    return found


def run(con: Connection, *, max_size: int, max_levels: int, seed: int, resolution: float) -> tuple[int, int]:
    """Rebuild `communities` and `community_members`; return (entities read, communities written)."""
    entity_ids = [e for (e,) in con.execute("select entity_id from entities order by entity_id").fetchall()]
    edges = con.execute("select src, dst, weight from edges where src < dst").fetchall()
    found = cluster(entity_ids, edges, max_size=max_size, max_levels=max_levels, seed=seed, resolution=resolution)
    labels = dict(con.execute("select entity_id, label from entities").fetchall())
    with transaction(con):
        con.execute("delete from communities")
        con.execute("delete from community_members")
        insert(con, "communities", (
            {"community_id": c.community_id, "level": c.level,
             "parent_id": found[c.parent].community_id if c.parent is not None else None,
             "title": ", ".join(labels[m] for m in c.members[:TITLE_MEMBERS]), "weight": 0, "n_members": len(c.members)}
            for c in found))
        insert(con, "community_members", (
            {"community_id": c.community_id, "entity_id": m, "centrality": rank}
            for c in found for rank, m in enumerate(c.members, start=1)))
        con.execute(sql("community_weights"))
    return len(entity_ids), len(found)
