"""Query: the k-hop neighbourhood of seed entities over the ranked co-occurrence edges (query.khop in sql/query.sql)."""

import json
from collections.abc import Callable, Iterable
from typing import NamedTuple

from acervo.pipelines.db import Connection, sql


class Reached(NamedTuple):
    """An entity the walk reached: its depth, the path from a seed, and the weight of the edge that brought it."""

    entity_id: str
    depth: int
    path: tuple[str, ...]
    weight: int | None


def neighbourhood(con: Connection, seeds: list[str], *, hops: int = 2, cap: int | None = None) -> list[Reached]:
    """Every entity within `hops` of `seeds` (each once, at its smallest depth), following each entity's
    `cap` strongest neighbours (None: all)."""
    rows = con.execute(sql("query.khop"), {"seeds": sorted(set(seeds)), "hops": hops, "cap": cap}).fetchall()
    return [Reached(e, d, tuple(p), w) for e, d, p, w in rows]


def listed(values: Iterable[str] | None) -> str | None:
    """Ids as one JSON array, for a statement that reads them with from_json (sql/query.sql); None stays None."""
    return None if values is None else json.dumps(list(values), ensure_ascii=False)


Adjacency = dict[str, list[tuple[str, int, int]]]  # entity id -> its neighbours as (dst, weight, rank), strongest first
Neighbours = Callable[[list[str], int | None], Adjacency]  # the `cap` strongest neighbours of some entities


def stored(con: Connection) -> Neighbours:
    """Neighbours read from the index's edges for each frontier of a walk (query.neighbours), each entity's
    `cap` strongest (rank <= cap, as query.khop): a walk reads only the edges of the entities it reaches."""
    def neighbours(ids: list[str], cap: int | None) -> Adjacency:
        graph: Adjacency = {}
        for src, dst, weight, rank in con.execute(sql("query.neighbours"), {"ids": listed(ids)}).fetchall():
            if cap is None or rank <= cap:
                graph.setdefault(src, []).append((dst, weight, rank))
        return graph
    return neighbours


def held(graph: Adjacency) -> Neighbours:
    """Neighbours from an adjacency held in memory (a scoped caller's own edges)."""
    return lambda ids, cap: {node: graph[node][:cap] for node in ids if node in graph}


def walk(neighbours: Neighbours, seeds: list[str], *, hops: int = 2, cap: int | None = None) -> list[Reached]:
    """`neighbourhood` from the neighbours of each depth's frontier: the same entities, depths and paths as
    query.khop."""
    start = sorted(set(seeds))
    found = {seed: (0, (seed,), None) for seed in start}  # in the order of the result: depth, then id
    frontier = [(seed, (seed,)) for seed in start]
    for depth in range(1, hops + 1):
        if not frontier:
            break
        graph = neighbours(sorted({node for node, _ in frontier}), cap)
        best: dict[str, tuple[int, tuple[str, ...]]] = {}
        for node, path in frontier:
            for dst, weight, _ in graph.get(node, ()):
                if dst in found:
                    continue
                old = best.get(dst)
                if old is None or weight > old[0] or (weight == old[0] and path < old[1]):
                    best[dst] = (weight, path)
        frontier = []
        for dst in sorted(best):
            weight, path = best[dst]
            path = (*path, dst)
            found[dst] = (depth, path, weight)
            frontier.append((dst, path))
    return [Reached(entity, depth, path, weight) for entity, (depth, path, weight) in found.items()]
