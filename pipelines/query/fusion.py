"""Query: a route's units merged with BM25's chunks, so that a route adds blocks and never pushes the best lexical
evidence out of a context.

- A local route ranks BM25's chunks itself, with the graph's evidence (bridges, answers, relations): BM25's best
  chunk enters first, on its own (no unit it hangs from must enter before it), and the route's units follow in
  their own order (`anchored`).
- A global or mixed route adds community reports, whose lines cite chunks of many documents: its units and BM25's
  chunks are interleaved as two teams drafting in turn, BM25's first (team-draft interleaving, Radlinski et al.,
  2008), each taking its best unit the other has not taken (`interleaved`). So BM25's chunk at place i of its
  ranking enters at place 2i - 1 at the latest, whichever route the router chose, and the reports still enter
  beside them.

Interleaving local routes as well was measured on every set and not kept: it costs the multi-hop sets the graph's
second documents and gains no set (docs/benchmarks.md).
"""

from dataclasses import replace

from acervo.pipelines.query.budget import Unit
from acervo.pipelines.query.scoring import SCORE_DIGITS

LEAD = 1.0  # added to the best score of the route's units: BM25's best chunk enters before any of them
WIDE = ("global", "mixed")  # routes whose units (reports) are interleaved with BM25's chunks


def fused(route: str, units: list[Unit], lexical: list[Unit]) -> list[Unit]:
    """`units` (a route's) with `lexical` (BM25's chunk units, best first): interleaved for a route that adds
    community reports (WIDE), else with BM25's best chunk ahead of them."""
    return interleaved(units, lexical) if route in WIDE else anchored(units, lexical)


def anchored(units: list[Unit], lexical: list[Unit]) -> list[Unit]:
    """`units` in their own order, with the first of `lexical` ahead of them all, on its own; a unit of the route's
    for that chunk keeps its form but its parent."""
    if not lexical:
        return units
    best = lexical[0]
    held = next((u for u in units if u.key == best.key), best)
    top = max((u.score for u in units), default=0.0)
    return [replace(held, parent=None, score=round(top + LEAD, SCORE_DIGITS)),
            *(u for u in units if u.key != best.key)]


def interleaved(units: list[Unit], lexical: list[Unit]) -> list[Unit]:
    """`lexical` and `units` (best score first) taking turns, `lexical` first, each its best unit not taken yet; then
    what is left of either. Scores fall with the place, so the budget takes them in that order; a chunk taken on
    BM25's turn keeps the route's form for it, on its own (its parent may come later)."""
    theirs = {u.key: u for u in units}
    teams = [[replace(theirs.get(u.key, u), parent=None) for u in lexical],
             sorted(units, key=lambda u: (-u.score, u.key))]
    order: list[Unit] = []
    taken: set[str] = set()
    places = [0, 0]
    turn = 0
    while any(place < len(team) for place, team in zip(places, teams, strict=True)):
        team = teams[turn]
        while places[turn] < len(team) and team[places[turn]].key in taken:
            places[turn] += 1
        if places[turn] < len(team):
            order.append(team[places[turn]])
            taken.add(order[-1].key)
        turn = 1 - turn
    n = len(order)
    return [replace(u, score=round(1.0 + (n - i) / n, SCORE_DIGITS)) for i, u in enumerate(order)]
