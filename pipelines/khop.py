"""Query: the k-hop neighbourhood of seed entities over the ranked co-occurrence edges (sql/khop.sql)."""

from dataclasses import dataclass

from pipelines.db import Connection, sql


@dataclass(frozen=True)
class Reached:
    """An entity the walk reached: its depth, the path from a seed, and the weight of the edge that brought it."""

    entity_id: str
    depth: int
    path: tuple[str, ...]
    weight: int | None


def neighbourhood(con: Connection, seeds: list[str], *, hops: int = 2, cap: int | None = None) -> list[Reached]:
    """Every entity within `hops` of `seeds` (each once, at its smallest depth), following each entity's
    `cap` strongest neighbours (None: all)."""
    rows = con.execute(sql("khop"), {"seeds": sorted(set(seeds)), "hops": hops, "cap": cap}).fetchall()
    return [Reached(e, d, tuple(p), w) for e, d, p, w in rows]
