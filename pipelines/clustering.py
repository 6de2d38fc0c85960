"""Hierarchical, seeded Leiden (igraph, modularity) over an entity graph: the clustering of stage
`communities`, with no database.

A rerun warm-starts Leiden from the previous partition, keeps each community's id by best member
overlap, and reuses unchanged sub-hierarchies whole, so a small change keeps most communities.
"""

import itertools
import random
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from hashlib import sha256
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import igraph as ig

from acervo.pipelines.hashing import content_hash, framed

MIN_JACCARD = 0.5  # a community keeps a previous one's id when their members' Jaccard similarity is at least this
MIN_GAIN = 0.05  # known entities stay where they were unless Leiden's partition beats that by this much modularity
LEIDEN_ITERATIONS = 10  # at most: igraph's "until stable" (-1) can cycle forever on some graphs


@cache
def igraph() -> ModuleType:
    """igraph, imported when a run first clusters, without matplotlib: igraph imports it for plotting whenever it is
    installed (acervo's `plot` extra), which costs more than a small rerun's clustering, and acervo never plots
    with igraph."""
    hidden = "matplotlib" not in sys.modules
    if hidden:
        sys.modules["matplotlib"] = None  # type: ignore[assignment]  # igraph then finds no matplotlib to plot with
    try:
        import igraph as ig
    finally:
        if hidden:
            del sys.modules["matplotlib"]
    return ig


class Edge(NamedTuple):
    """A weighted edge of the entity graph (either or both directions may be given)."""

    src: str
    dst: str
    weight: int


@dataclass(frozen=True)
class Community:
    """A set of entities at one level, with a stable id and its parent's id."""

    community_id: str
    level: int
    members: frozenset[str]
    parent_id: str | None
    graph_hash: str  # empty for a community too small to be split again


class Graph:
    """The entity graph with the lookups clustering needs."""

    def __init__(self, entity_ids: list[str], edges: Sequence[Edge],
                 total_weight: float | None = None) -> None:
        self.names = sorted(entity_ids)
        index = self.index = {name: i for i, name in enumerate(self.names)}
        n = len(self.names)
        weights: dict[int, int] = {}  # pair (a < b) as a * n + b: an int hashes faster than a tuple
        for s, d, w in edges:
            a, b = index[s], index[d]
            if a < b:
                weights[a * n + b] = w
            elif b < a:
                weights[b * n + a] = w
        self.pairs = [(divmod(key, n), weights[key]) for key in sorted(weights)]
        self.graph = igraph().Graph(n=n, edges=[p for p, _ in self.pairs],
                                    edge_attrs={"weight": [w for _, w in self.pairs]})
        self.total = sum(weights.values()) if total_weight is None else total_weight

    def share(self, members: list[int]) -> float:
        """The share of the graph's edge weight that lies among `members` (1.0 for an edgeless graph)."""
        inside = set(members)
        among = sum(w for (a, b), w in self.pairs if a in inside and b in inside)
        return among / self.total if among else 1.0

    @cached_property
    def framed(self) -> list[bytes]:
        """Each vertex's name as content_hash frames it, so that a name in many edges is encoded once."""
        return [framed(name) for name in self.names]

    def graph_hash(self, members: list[int]) -> str:
        """Hash of the members (sorted vertex ids) and the weighted edges among them: content_hash(str(len(members)),
        names..., then src, dst, str(weight) per edge in sorted order), fed to sha256 in one piece."""
        names = self.framed
        sub = self.induced(members)
        parts = [framed(str(len(members)))]
        parts += [names[v] for v in members]
        for (a, b), w in sorted(zip(sub.get_edgelist(), sub.es["weight"], strict=True)):  # edges come as (a < b)
            parts += (names[members[a]], names[members[b]], _framed_weight(w))
        return sha256(b"".join(parts)).hexdigest()

    def induced(self, members: list[int]) -> "ig.Graph":
        """The subgraph on `members` (sorted vertex ids); the graph itself when they are all of it."""
        return self.graph.induced_subgraph(members) if len(members) < len(self.names) else self.graph

    def partition(self, members: list[int], initial: list[int] | None, *, seed: int, resolution: float,
                  atoms: Sequence[list[int]] = (), new: frozenset[int] = frozenset()) -> list[list[int]]:
        """Leiden's parts of the subgraph on `members` (global vertex ids, sorted), same on every run.

        With a warm start (`initial`: each member's previous community), the entities at the `new`
        positions (no previous community) go where Leiden puts them; the others move only when that
        gains at least MIN_GAIN modularity (`_settled`). Each atom (positions in `members`) stays whole
        (`_contracted`).
        """
        igraph().set_random_number_generator(random.Random(seed))
        sub, vertex = self._contracted(members, atoms)
        start = None
        if initial is not None:
            start = [0] * sub.vcount()
            for i, v in enumerate(vertex):
                start[v] = initial[i]
            start = _canonical(start)
        found = _leiden(sub, start, resolution)
        if start is not None:
            found = _settled(sub, found, start, n_atoms=len(atoms), new={vertex[i] for i in new},
                             resolution=resolution)
        groups: dict[int, list[int]] = {}
        for i, v in enumerate(vertex):
            groups.setdefault(found[v], []).append(members[i])
        return sorted(groups.values(), key=lambda p: p[0])

    def _contracted(self, members: list[int], atoms: Sequence[list[int]]) -> tuple["ig.Graph", list[int]]:
        """The subgraph on `members` with each atom contracted into one vertex (vertices 0..len(atoms)-1),
        and the vertex each position in `members` became. Modularity is unchanged for partitions that
        keep every atom together, as in Leiden's own aggregation."""
        sub = self.induced(members)
        if not atoms:
            return sub, list(range(len(members)))
        vertex = [-1] * len(members)
        for k, atom in enumerate(atoms):
            for i in atom:
                vertex[i] = k
        free = itertools.count(len(atoms))
        vertex = [v if v >= 0 else next(free) for v in vertex]
        if sub is self.graph:
            sub = sub.copy()
        sub.contract_vertices(vertex)
        sub.simplify(multiple=True, loops=False, combine_edges={"weight": "sum"})
        return sub, vertex


def _leiden(graph: "ig.Graph", start: list[int] | None, resolution: float) -> list[int]:
    """Leiden's membership of `graph` from `start` (None: every vertex alone), iterated until an iteration
    changes nothing (at most LEIDEN_ITERATIONS): a warm start from a partition that is still good stops
    after one or two."""
    membership = start
    strength = graph.strength(weights="weight", loops=True)  # Leiden's own default leaves a loop out
    for _ in range(LEIDEN_ITERATIONS):
        parts = graph.community_leiden(objective_function="modularity", weights="weight", resolution=resolution,
                                       n_iterations=1, initial_membership=membership, node_weights=strength)
        found = _canonical(parts.membership)
        if found == membership:
            break
        membership = found
    return found


def _settled(graph: "ig.Graph", found: list[int], start: list[int], *, n_atoms: int, new: set[int],
             resolution: float) -> list[int]:
    """Leiden's membership `found` from the warm start `start`, with parts that joined atoms of different
    previous communities split back (`_unmerged`), and kept only where it beats `start` with the `new`
    vertices placed (`_placed`) by at least MIN_GAIN modularity."""
    if n_atoms:
        found = _unmerged(graph, found, start, n_atoms)
    if found == start:
        return found
    placed = _placed(found, start, new)
    if placed != found and graph.modularity(found, weights="weight", resolution=resolution) \
            - graph.modularity(placed, weights="weight", resolution=resolution) < MIN_GAIN:
        return placed
    return found


@cache
def _framed_weight(weight: int) -> bytes:
    """An edge weight as graph_hash hashes it (few distinct values, each framed once)."""
    return framed(str(weight))


def _unmerged(graph: "ig.Graph", membership: list[int], start: list[int], n_atoms: int) -> list[int]:
    """`membership` with every part that joined atoms (vertices 0..n_atoms-1) of different previous
    communities split back: each atom stays with its previous community, and the part's other
    vertices join the one they have the most edge weight to. Reruns place entities; they do not merge
    what was apart."""
    owners: dict[int, set[int]] = {}
    for v in range(n_atoms):
        owners.setdefault(membership[v], set()).add(start[v])
    merged = {part for part, labels in owners.items() if len(labels) > 1}
    if not merged:
        return membership
    out = list(membership)
    labels = itertools.count(max(membership) + 1)
    split: dict[tuple[int, int | None], int] = {}
    for v in range(n_atoms):
        if membership[v] in merged:
            out[v] = split.setdefault((membership[v], start[v]), next(labels))
    for v in range(n_atoms, graph.vcount()):
        if membership[v] in merged:
            ties: Counter[int] = Counter()
            for edge in graph.es[graph.incident(v)]:
                u = edge.target if edge.source == v else edge.source
                if u < n_atoms and membership[u] == membership[v]:
                    ties[out[u]] += edge["weight"]
            out[v] = min(ties, key=lambda label: (-ties[label], label)) if ties \
                else split.setdefault((membership[v], None), next(labels))
    return _canonical(out)


def _placed(found: list[int], start: list[int], new: set[int]) -> list[int]:
    """`start` with each `new` vertex placed as in `found`: in the previous community that most of its
    part's other vertices came from (then the smallest label), or with the new vertices of its part."""
    came_from: dict[int, Counter[int]] = {}
    for v, part in enumerate(found):
        if v not in new:
            came_from.setdefault(part, Counter())[start[v]] += 1
    out = list(start)
    labels = itertools.count(max(start) + 1)
    fresh: dict[int, int] = {}
    for v in sorted(new):
        known = came_from.get(found[v])
        out[v] = min(known, key=lambda label: (-known[label], label)) if known \
            else fresh.setdefault(found[v], next(labels))
    return _canonical(out)


def _canonical(membership: list[int]) -> list[int]:
    """A membership with communities numbered in order of first appearance, so equal partitions compare equal."""
    numbers: dict[int, int] = {}
    return [numbers.setdefault(m, len(numbers)) for m in membership]


def _initial(members: list[int], names: list[str], previous: Sequence[Community]) -> list[int] | None:
    """Each member's previous community as a warm start (new members alone), or None with no history."""
    if not previous:
        return None
    where = {e: c.community_id for c in previous for e in c.members}
    numbers: dict[tuple[str, str], int] = {}
    return [numbers.setdefault(("old", where[names[v]]) if names[v] in where else ("new", names[v]), len(numbers))
            for v in members]


def _atoms(g: Graph, members: list[int], previous: Sequence[Community],
           changed: frozenset[str] | None) -> list[list[int]]:
    """Groups of positions in `members` that stay together: the entities of each previous community
    whose edges did not change, split where the current graph no longer connects them. Only changed
    and new entities are placed again. None (no atom) when what changed is unknown.

    igraph finds them: the subgraph on those entities, less the edges between different communities.
    """
    if changed is None:
        return []
    position = {v: i for i, v in enumerate(members)}
    owner: dict[int, int] = {}  # unchanged member -> its previous community (an index in `previous`)
    for k, c in enumerate(previous):
        for e in c.members:
            v = g.index.get(e)
            if v in position and e not in changed:
                owner[v] = k
    vertices = sorted(owner)  # vertex i of the induced subgraph is vertices[i]
    sub = g.graph.induced_subgraph(vertices)
    label = [owner[v] for v in vertices]
    sub.delete_edges([i for i, (a, b) in enumerate(sub.get_edgelist()) if label[a] != label[b]])
    groups: dict[int, list[int]] = {}
    for v, part in zip(vertices, sub.connected_components().membership, strict=True):
        groups.setdefault(part, []).append(position[v])
    return sorted(sorted(group) for group in groups.values() if len(group) > 1)


def _ids(parts: list[frozenset[str]], previous: Sequence[Community], level: int, taken: set[str],
         claimed: set[str]) -> list[str]:
    """An id per part: the previous community it overlaps best (Jaccard >= 0.5, one-to-one, not `claimed`
    by an earlier part), else a new one that no previous or earlier community has (`taken`)."""
    where = {e: c.community_id for c in previous for e in c.members}
    sizes = {c.community_id: len(c.members) for c in previous}
    same = {c.members: c.community_id for c in previous}
    pairs = []
    for i, part in enumerate(parts):
        if part in same:
            pairs.append((-len(part), same[part], min(part), i))
            continue
        for cid, common in Counter(where[e] for e in part if e in where).items():
            if common / (len(part) + sizes[cid] - common) >= MIN_JACCARD:
                pairs.append((-common, cid, min(part), i))
    ids: list[str | None] = [None] * len(parts)
    used: set[str] = set()
    for _, cid, _, i in sorted(pairs):
        if ids[i] is None and cid not in used and cid not in claimed:
            ids[i] = cid
            used.add(cid)
    for i, part in enumerate(parts):
        if ids[i] is None:
            salt = 0
            while (cid := f"c{level}-{content_hash(*sorted(part), str(salt) if salt else '')[:10]}") in taken \
                    or cid in used:
                salt += 1
            ids[i] = cid
            used.add(cid)
    taken |= used
    claimed |= used
    return [cid for cid in ids if cid is not None]


def cluster(entity_ids: list[str], edges: Sequence[Edge], *, max_size: int, max_levels: int,
            seed: int, resolution: float = 1.0, previous: Sequence[Community] = (),
            changed: frozenset[str] | None = None, total_weight: float | None = None,
            taken: Iterable[str] = ()) -> list[Community]:
    """Hierarchical communities over undirected weighted `edges` (either or both directions given).

    Level 0 partitions every entity, isolated ones included; a community larger than `max_size`
    is partitioned again inside itself, until Leiden no longer splits it or `max_levels` is reached.
    With `previous` communities, Leiden starts from those at the same level that share members
    (whatever their parent), ids follow the best overlap, known entities move only when that gains
    MIN_GAIN modularity, a community that was split is split again even once it is no larger than
    `max_size` (so its children can stay), and a community whose members and inner edges are
    unchanged keeps its whole sub-hierarchy. With the entities whose edges `changed`, only
    those and new entities are placed again: the others stay with the unchanged entities they were
    grouped with, and groups that were apart are not merged.

    The graph may be a part of a larger one that no edge joins to the rest: `total_weight` is then the
    whole graph's edge weight, and `taken` the ids of the communities outside the part.
    """
    g = Graph(entity_ids, edges, total_weight)
    children: dict[str | None, list[Community]] = {}
    at_level: dict[int, dict[str, str]] = {}  # level -> entity -> the id of its previous community there
    by_id = {c.community_id: c for c in previous}
    for c in previous:
        children.setdefault(c.parent_id, []).append(c)
        at_level.setdefault(c.level, {}).update(dict.fromkeys(c.members, c.community_id))
    taken, claimed = {c.community_id for c in previous} | set(taken), set[str]()
    found, dirty = _untouched(g, previous, changed, children)
    claimed.update(c.community_id for c in found)
    todo: list[tuple[list[int], int, str | None]] = [(dirty, 0, None)] if dirty else []
    while todo:
        members, level, parent_id = todo.pop(0)
        where = at_level.get(level, {})
        before = [by_id[cid] for cid in sorted({where.get(g.names[v]) for v in members} - {None} - claimed)]
        known = {e for c in before for e in c.members}
        parts = g.partition(members, _initial(members, g.names, before), seed=seed,
                            resolution=resolution * g.share(members) if level == 0 else resolution,
                            atoms=_atoms(g, members, before, changed),
                            new=frozenset(i for i, v in enumerate(members) if g.names[v] not in known))
        if parent_id is not None and len(parts) < 2:
            continue
        sets = [frozenset(g.names[v] for v in part) for part in parts]
        old = {c.community_id: c for c in before}
        for part, members_set, cid in zip(parts, sets, _ids(sets, before, level, taken, claimed), strict=True):
            splittable = (len(part) > max_size or bool(children.get(cid))) and level + 1 < max_levels
            same = old.get(cid)
            unchanged = same is not None and same.members == members_set
            digest = ""
            if splittable:  # same members, none whose edges changed: the edges among them, and their hash, are too
                kept = unchanged and same.graph_hash and changed is not None and members_set.isdisjoint(changed)
                digest = same.graph_hash if kept else g.graph_hash(part)
            found.append(Community(cid, level, members_set, parent_id, digest))
            if unchanged and same.graph_hash == digest:
                reused = _subtree(cid, children)
                found.extend(reused)
                claimed.update(c.community_id for c in reused)
            elif splittable:
                todo.append((part, level + 1, cid))
    return found


def _untouched(g: Graph, previous: Sequence[Community], changed: frozenset[str] | None,
               children: dict[str | None, list[Community]]) -> tuple[list[Community], list[int]]:
    """The previous level-0 communities (with their sub-hierarchies) that lie in connected parts of the
    graph where no entity changed or appeared, kept as they were; and every other vertex, to partition.

    Parts of the graph share no edge, so modularity over the rest, with the resolution scaled to
    its share of the edge weight (`Graph.share`), ranks partitions exactly as over the whole graph.
    """
    everything = list(range(len(g.names)))
    if changed is None or not previous:
        return [], everything
    part = g.graph.connected_components().membership
    known = {e for c in previous if c.level == 0 for e in c.members}
    moved = {part[g.index[e]] for e in changed if e in g.index}
    moved |= {part[v] for v, name in enumerate(g.names) if name not in known}
    kept = [c for c in previous if c.level == 0 and all(e in g.index and part[g.index[e]] not in moved
                                                        for e in c.members)]
    covered = {g.index[e] for c in kept for e in c.members}
    return [x for c in kept for x in (c, *_subtree(c.community_id, children))], [v for v in everything
                                                                                if v not in covered]


def _subtree(cid: str, children: dict[str | None, list[Community]]) -> list[Community]:
    """Every previous descendant of `cid`, reused as it was."""
    out = []
    for child in children.get(cid, []):
        out.append(child)
        out.extend(_subtree(child.community_id, children))
    return out


def centrality(communities: Sequence[Community], edges: Sequence[Edge]) -> dict[str, list[str]]:
    """Each community's members, most central first: weighted degree inside it, then in the whole graph, then id."""
    ranked = {e for c in communities for e in c.members}
    out: dict[str, list[tuple[str, int]]] = {}
    for s, d, w in edges:
        if s in ranked:
            out.setdefault(s, []).append((d, w))
    strength = {e: sum(w for _, w in adjacent) for e, adjacent in out.items()}  # once, not once per level
    order = {}
    for c in communities:
        members = c.members
        inside = {e: sum(w for d, w in out.get(e, ()) if d in members) for e in members}
        order[c.community_id] = sorted(members, key=lambda e: (-inside[e], -strength.get(e, 0), e))
    return order
