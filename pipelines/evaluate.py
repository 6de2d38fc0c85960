"""Evaluation: how much gold evidence the assembled context holds, beside a BM25 baseline, in one run.

For every question (JSONL: `question`, `supporting_doc_ids`, optional `route`), the context is assembled
at each budget; recall@k counts the gold documents among the first k distinct documents the context
cites (at the largest budget), recall@Nt those cited within a budget of N tokens. The baseline fills the
same budgets with the best BM25 chunks. A question with no gold documents is a negative case: its
context should be empty.
"""

from collections.abc import Iterable
from typing import Any

from pipelines import lexical, tokens
from pipelines.context import INSTRUCTIONS, Index

BUDGETS = (512, 1024, 2048, 4096)
KS = (2, 5, 10)


def recall(gold: set[str], docs: Iterable[str]) -> float:
    """Share of `gold` found in `docs`."""
    return len(gold & set(docs)) / len(gold) if gold else 0.0


def _distinct(items: Iterable[str]) -> list[str]:
    """Items in first-seen order, once each."""
    return list(dict.fromkeys(items))


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean percentages over questions with gold documents, plus route accuracy and negative emptiness."""
    positive = [r for r in rows if r["gold"]]
    negative = [r for r in rows if not r["gold"]]
    routed = [r for r in rows if r.get("expected_route")]
    out: dict[str, Any] = {"questions": len(rows)}
    for key in [f"recall@{k}" for k in KS] + [f"recall@{b}t" for b in BUDGETS]:
        out[key] = round(100 * sum(r[key] for r in positive) / len(positive), 2) if positive else None
    out["route_accuracy"] = (round(100 * sum(r["route"] == r["expected_route"] for r in routed) / len(routed), 2)
                             if routed else None)
    out["negative_empty_rate"] = (round(100 * sum(r["empty"] for r in negative) / len(negative), 2)
                                  if negative else None)
    out["tokens_used"] = round(sum(r["tokens"] for r in rows) / len(rows), 1) if rows else 0
    out["truncation_rate"] = round(sum(r["truncation"] for r in rows) / len(rows), 4) if rows else 0
    return out


def run(index: Index, questions: list[dict[str, Any]], **knobs: Any) -> dict[str, Any]:
    """Evaluate acervo and the BM25 baseline on `questions`; aggregated overall and per route."""
    doc_of = dict(index.con.execute("select chunk_id, doc_id from chunks").fetchall())
    bm25 = lexical.searcher(index.con)
    overhead = tokens.count(INSTRUCTIONS, index.encoding)
    ours, theirs = [], []
    for item in questions:
        gold = set(item.get("supporting_doc_ids") or [])
        contexts = {b: index.query(item["question"], budget=b, **knobs) for b in BUDGETS}
        cited = {b: _distinct(doc_of[r] for block in c.blocks for r in block.refs) for b, c in contexts.items()}
        top = contexts[BUDGETS[-1]]
        row = {"gold": gold, "route": top.route, "expected_route": item.get("route"), "empty": not top.blocks,
               "tokens": top.budget["spent"], "truncation": top.budget["truncation_rate"]}
        row |= {f"recall@{k}": recall(gold, cited[BUDGETS[-1]][:k]) for k in KS}
        row |= {f"recall@{b}t": recall(gold, cited[b]) for b in BUDGETS}
        ours.append(row)
        hits = lexical.top_chunks(bm25, item["question"], limit=100)
        base = {"gold": gold, "route": "lexical", "expected_route": None, "empty": not hits, "truncation": 0.0}
        ranked = _distinct(doc for _, doc, _, _, _ in hits)
        base |= {f"recall@{k}": recall(gold, ranked[:k]) for k in KS}
        for b in BUDGETS:
            left, docs = b - overhead, []
            for _, doc, _, n, _ in hits:
                if n <= left:
                    docs.append(doc)
                    left -= n
            base[f"recall@{b}t"] = recall(gold, docs)
        base["tokens"] = BUDGETS[-1] - overhead - left
        theirs.append(base)
    bm25.close()
    routes = sorted({r["route"] for r in ours})
    return {"acervo": _summary(ours), "baseline": _summary(theirs),
            "per_route": {route: _summary([r for r in ours if r["route"] == route]) for route in routes}}


def plot(result: dict[str, Any], path: str) -> None:
    """A PNG of recall against token budget, acervo beside the baseline (needs the `plot` extra)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(6, 4), dpi=120)
    for name, style in (("acervo", "o-"), ("baseline", "s--")):
        axes.plot(BUDGETS, [result[name][f"recall@{b}t"] for b in BUDGETS], style, label=name)
    axes.set_xscale("log", base=2)
    axes.set_xticks(BUDGETS, [str(b) for b in BUDGETS])
    axes.set_xlabel("context budget (tokens)")
    axes.set_ylabel("gold-document recall (%)")
    axes.set_ylim(0, 100)
    axes.grid(alpha=0.3)
    axes.set_title(f"recall against budget ({result['acervo']['questions']} questions)")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    pyplot.close(figure)
