"""Query: a route's units with BM25's best chunk ahead of them, so that a route adds blocks and never pushes the
best lexical evidence out of a context.

Whatever the route (local, mixed, global), the chunk BM25 ranks first for the question enters first, on its own
(no unit it hangs from must enter before it); the route's units follow in their own order. So whenever the budget
holds that chunk after the instruction, the context holds it: a wrong route, a partial seed or a report that fills
the budget costs the rest of the context, never the best lexical evidence. Reciprocal rank fusion of the two
rankings (K = 60) was measured too and not kept: it also interleaves BM25's later chunks with the graph's, which on
2WikiMultihopQA cost 10.8 points of recall@2 in mode nlp and the global questions a third of their reports
(docs/benchmarks.md).
"""

from dataclasses import replace

from acervo.pipelines.query.budget import Unit
from acervo.pipelines.query.scoring import SCORE_DIGITS

LEAD = 1.0  # added to the best score of the route's units: BM25's best chunk enters before any of them


def anchored(units: list[Unit], lexical: list[Unit]) -> list[Unit]:
    """`units` (a route's) in their own order, with the first of `lexical` (BM25's chunk units, best first) ahead
    of them all, on its own; a unit of the route's for that chunk keeps its form but its parent."""
    if not lexical:
        return units
    best = lexical[0]
    held = next((u for u in units if u.key == best.key), best)
    top = max((u.score for u in units), default=0.0)
    return [replace(held, parent=None, score=round(top + LEAD, SCORE_DIGITS)),
            *(u for u in units if u.key != best.key)]
