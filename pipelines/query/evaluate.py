"""Evaluation: how much gold evidence the assembled context holds, beside a BM25 baseline, in one run.

For every question (JSONL: `question`, optional `supporting_doc_ids`, `route`, `scope`), the context is
assembled at each budget; recall@k counts the gold documents among the first k distinct documents the
context cites (at the largest budget), recall@Nt those cited within a budget of N tokens. The baseline fills
the same budgets with the best BM25 chunks. A question asking for k documents cannot score more than
min(k, gold)/gold: the mean of that is the ceiling of recall@k, and recall is also given as a share of it.

Kinds of question, by what the record says:
- with gold: `supporting_doc_ids` not empty; its recall is measured.
- off-topic: no gold, and a `route` of "none" or no route nor global scope; its context should be empty.
- global: a `route` of global or mixed, or `"scope": "global"`; its context should hold community reports.
Every question that is not off-topic is answerable: its context should not be empty.
Every context that holds blocks, at every budget, should cite only chunks of the index, each label its text
writes standing for a chunk of the block that writes it (pipelines.query.labels.resolved).

The expected route is the record's `route` (matched exactly); without one, `"scope": "global"` expects
global or mixed (a collection-wide question that also names an entity may rightly be mixed).
Latency is the time of one query at QUERY_BUDGET, before the other budgets of the same question are
asked (wall clock, in this process): the one figure that differs between runs.
A figure no question measures is None (see `unmeasured`).
"""

import math
from collections.abc import Callable, Iterable
from time import perf_counter
from typing import Any

from acervo.pipelines.db import sql
from acervo.pipelines.query import labels, lexical
from acervo.pipelines.query.context import INSTRUCTIONS, Index

BUDGETS = (512, 1024, 2048, 4096)
KS = (2, 5, 10)
QUERY_BUDGET = 2048  # the budget whose query is timed and whose reports count (the query verb's default)
WIDE_ROUTES = ("global", "mixed")  # routes that draw on community reports
BM25_LIMIT = 100  # how many BM25 chunks the baseline ranks
RECALLS = [f"recall@{k}" for k in KS] + [f"recall@{b}t" for b in BUDGETS]
UNMEASURED = {"route_accuracy": "no question gives a gold route (route, or scope global)",
              "negative_empty_rate": "no negative question (off-topic: no supporting_doc_ids and route none)",
              "answerable_empty_rate": "every question is off-topic",
              "global_route_rate": "no question expects a global or mixed route",
              "global_report_rate": "no question expects a global or mixed route",
              "citations_resolved_rate": "no context holds a block",
              "latency_ms_p50": "no question", "latency_ms_p95": "no question"}
BASELINE_UNMEASURED = {"route_accuracy": "the baseline does not route",
                       "global_route_rate": "the baseline does not route",
                       "global_report_rate": "the baseline has no community reports",
                       "citations_resolved_rate": "the baseline's chunks cite nothing"}


def unmeasured(name: str, key: str) -> str:
    """Why the figure `key` of `name` (acervo or baseline) is None."""
    if name == "baseline" and key in BASELINE_UNMEASURED:
        return BASELINE_UNMEASURED[key]
    return UNMEASURED.get(key, "no question has supporting_doc_ids")


def can_plot() -> bool:
    """Whether `plot` can run: matplotlib (the `plot` extra) imports."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def recall(gold: set[str], docs: Iterable[str]) -> float:
    """Share of `gold` found in `docs`."""
    return len(gold & set(docs)) / len(gold) if gold else 0.0


def expected_routes(item: dict[str, Any]) -> tuple[str, ...] | None:
    """The routes a question's record accepts: its `route`, else global or mixed for `"scope": "global"`,
    else None (no gold route)."""
    if item.get("route"):
        return (item["route"],)
    if item.get("scope") == "global":
        return WIDE_ROUTES
    return None


def off_topic(item: dict[str, Any]) -> bool:
    """Whether a question's context should be empty: no gold documents, and the route none (a question that gives
    neither gold nor a route is unlabelled, not off-topic: it counts among the answerable ones)."""
    return not item.get("supporting_doc_ids") and expected_routes(item) == ("none",)


def percentile(values: list[float], share: float) -> float | None:
    """The nearest-rank percentile `share` (0-1) of `values`; None for none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def _distinct(items: Iterable[str]) -> list[str]:
    """Items in first-seen order, once each."""
    return list(dict.fromkeys(items))


def _rate(rows: list[dict[str, Any]], test: Callable[[dict[str, Any]], bool]) -> float | None:
    """Percentage of `rows` passing `test`; None for no rows."""
    return round(100 * sum(bool(test(r)) for r in rows) / len(rows), 2) if rows else None


def _mean(rows: list[dict[str, Any]], key: str) -> float | None:
    """Mean percentage of `key` over `rows`; None for no rows."""
    return round(100 * sum(r[key] for r in rows) / len(rows), 2) if rows else None


def _summary(rows: list[dict[str, Any]], *, routes: bool = True) -> dict[str, Any]:
    """Mean percentages over questions with gold documents, the ceiling of recall@k, route accuracy, how
    often off-topic and answerable questions got an empty context, how often global questions got their
    route and community reports, latency.
    `routes`: whether the rows come from a router (the baseline's do not)."""
    positive = [r for r in rows if r["gold"]]
    negative = [r for r in rows if r["off_topic"]]
    answerable = [r for r in rows if not r["off_topic"]]
    routed = [r for r in rows if r["expected"]]
    wide = [r for r in rows if r["expected"] and set(r["expected"]) & set(WIDE_ROUTES)]
    out: dict[str, Any] = {"questions": len(rows), "questions_with_gold": len(positive),
                           "questions_off_topic": len(negative), "questions_global": len(wide)}
    for key in RECALLS:
        out[key] = _mean(positive, key)
    for k in KS:
        ceiling = _mean(positive, f"ceiling@{k}")
        out[f"ceiling@{k}"] = ceiling
        out[f"recall@{k}_of_ceiling"] = round(100 * out[f"recall@{k}"] / ceiling, 2) if ceiling else None
    out["route_accuracy"] = _rate(routed, lambda r: r["route"] in r["expected"]) if routes else None
    out["negative_empty_rate"] = _rate(negative, lambda r: r["empty"])
    out["answerable_empty_rate"] = _rate(answerable, lambda r: r["empty"])
    out["global_route_rate"] = _rate(wide, lambda r: r["route"] in r["expected"]) if routes else None
    out["global_report_rate"] = _rate(wide, lambda r: r["report"]) if routes else None
    out["citations_resolved_rate"] = _rate([r for r in rows if not r["empty"]], lambda r: r["resolved"]) if routes \
        else None
    latencies = [r["ms"] for r in rows]
    out["latency_ms_p50"] = _round(percentile(latencies, 0.50))
    out["latency_ms_p95"] = _round(percentile(latencies, 0.95))
    out["tokens_used"] = round(sum(r["tokens"] for r in rows) / len(rows), 1) if rows else 0
    out["truncation_rate"] = round(sum(r["truncation"] for r in rows) / len(rows), 4) if rows else 0
    return out


def _round(value: float | None) -> float | None:
    """A latency in ms to a tenth."""
    return None if value is None else round(value, 1)


def margin(result: dict[str, Any]) -> dict[str, Any]:
    """The least difference acervo minus baseline over every recall figure, and where: {"min", "at"}
    (None where no recall is measured). Below zero, BM25 alone found more gold at that k or budget."""
    pairs = [(result["acervo"][k] - result["baseline"][k], k) for k in RECALLS
             if result["acervo"][k] is not None and result["baseline"][k] is not None]
    if not pairs:
        return {"min": None, "at": None}
    least = min(pairs, key=lambda p: p[0])
    return {"min": round(least[0], 2), "at": least[1]}


def _row(item: dict[str, Any]) -> dict[str, Any]:
    """What every question's row starts with: its gold, kind and expected route."""
    gold = set(item.get("supporting_doc_ids") or [])
    row: dict[str, Any] = {"gold": gold, "off_topic": off_topic(item), "expected": expected_routes(item)}
    row |= {f"ceiling@{k}": min(k, len(gold)) / len(gold) if gold else 0.0 for k in KS}
    return row


def run(index: Index, questions: list[dict[str, Any]], *, progress: Callable[[int], Any] | None = None,
        **knobs: Any) -> dict[str, Any]:
    """Evaluate acervo and the BM25 baseline on `questions`; aggregated overall and per route.

    `progress(n)` is called after each question with the number done so far.
    """
    doc_of = dict(index.con.execute(sql("query.chunk_documents")).fetchall())
    bm25 = index.searcher(None)  # the BM25 index the queries use, over every chunk
    overhead = index.count(INSTRUCTIONS)
    ours, theirs = [], []
    for item in questions:
        start = perf_counter()
        contexts = {QUERY_BUDGET: index.query(item["question"], budget=QUERY_BUDGET, **knobs)}
        ms = 1000 * (perf_counter() - start)
        contexts |= {b: index.query(item["question"], budget=b, **knobs) for b in BUDGETS if b != QUERY_BUDGET}
        cited = {b: _distinct(doc_of[r] for block in c.blocks for r in block.refs) for b, c in contexts.items()}
        top = contexts[BUDGETS[-1]]
        resolved = all(labels.resolved([(b.text, b.refs) for b in c.blocks], c.labels, doc_of)
                       for c in contexts.values())
        row = _row(item) | {"route": top.route, "empty": not top.blocks, "ms": ms, "resolved": resolved,
                            "report": any(b.kind == "report" for b in contexts[QUERY_BUDGET].blocks),
                            "tokens": top.budget["spent"], "truncation": top.budget["truncation_rate"]}
        gold = row["gold"]
        row |= {f"recall@{k}": recall(gold, cited[BUDGETS[-1]][:k]) for k in KS}
        row |= {f"recall@{b}t": recall(gold, cited[b]) for b in BUDGETS}
        ours.append(row)
        start = perf_counter()
        hits = lexical.top_chunks(bm25, item["question"], limit=BM25_LIMIT, most=None)  # the exact BM25
        base = _row(item) | {"route": "lexical", "empty": not hits, "report": False,
                             "ms": 1000 * (perf_counter() - start), "truncation": 0.0}
        ranked = _distinct(doc for _, doc, _, _, _ in hits)
        base |= {f"recall@{k}": recall(gold, ranked[:k]) for k in KS}
        for b in BUDGETS:
            left, docs = b - overhead, []
            for _, doc, _, n, _ in hits:
                if n <= left:
                    docs.append(doc)
                    left -= n
            base[f"recall@{b}t"] = recall(gold, docs)
            base["tokens"] = b - overhead - left  # the largest budget's, as for acervo
        theirs.append(base)
        if progress:
            progress(len(ours))
    routes = sorted({r["route"] for r in ours})
    result = {"acervo": _summary(ours), "baseline": _summary(theirs, routes=False),
              "per_route": {route: _summary([r for r in ours if r["route"] == route]) for route in routes}}
    return result | {"margin_over_baseline": margin(result)}


def plot(result: dict[str, Any], path: str) -> None:
    """A PNG of recall against token budget, acervo beside the baseline (needs the `plot` extra: matplotlib)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.4, 4.0), layout="constrained")
    axes = figure.subplots()
    for name in ("acervo", "baseline"):
        axes.plot(BUDGETS, [result[name][f"recall@{b}t"] or 0 for b in BUDGETS], marker="o", label=name)
    axes.set_xscale("log", base=2)
    axes.set_xticks(BUDGETS, [str(b) for b in BUDGETS])
    axes.set_ylim(0, 100)
    axes.set_xlabel("context budget (tokens)")
    axes.set_ylabel("gold-document recall (%)")
    axes.set_title(f"Recall against budget, {result['acervo']['questions']} questions")
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right")
    figure.savefig(path, format="png")
