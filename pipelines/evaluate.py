"""Evaluation: how much gold evidence the assembled context holds, beside a BM25 baseline, in one run.

For every question (JSONL: `question`, `supporting_doc_ids`, optional `route`), the context is assembled
at each budget; recall@k counts the gold documents among the first k distinct documents the context
cites (at the largest budget), recall@Nt those cited within a budget of N tokens. The baseline fills the
same budgets with the best BM25 chunks. A question with no gold documents is a negative case: its
context should be empty. A figure no question measures is None (see `unmeasured`).
"""

from collections.abc import Callable, Iterable
from typing import Any

from pipelines import lexical
from pipelines.context import INSTRUCTIONS, Index

BUDGETS = (512, 1024, 2048, 4096)
KS = (2, 5, 10)
UNMEASURED = {"route_accuracy": "no question gives a gold route",
              "negative_empty_rate": "no negative question: every question has supporting_doc_ids"}


def unmeasured(name: str, key: str) -> str:
    """Why the figure `key` of `name` (acervo or baseline) is None."""
    if name == "baseline" and key == "route_accuracy":
        return "the baseline does not route"
    return UNMEASURED.get(key, "no question has supporting_doc_ids")


def can_plot() -> bool:
    """Whether `plot` can run: Pillow (the `plot` extra) imports."""
    try:
        import PIL.Image  # noqa: F401
    except ImportError:
        return False
    return True


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


def run(index: Index, questions: list[dict[str, Any]], *, progress: Callable[[int], Any] | None = None,
        **knobs: Any) -> dict[str, Any]:
    """Evaluate acervo and the BM25 baseline on `questions`; aggregated overall and per route.

    `progress(n)` is called after each question with the number done so far.
    """
    doc_of = dict(index.con.execute("select chunk_id, doc_id from chunks").fetchall())
    bm25 = index.searcher(None)  # the BM25 index the queries use, over every chunk
    overhead = index.count(INSTRUCTIONS)
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
            base["tokens"] = b - overhead - left  # the largest budget's, as for acervo
        theirs.append(base)
        if progress:
            progress(len(ours))
    routes = sorted({r["route"] for r in ours})
    return {"acervo": _summary(ours), "baseline": _summary(theirs),
            "per_route": {route: _summary([r for r in ours if r["route"] == route]) for route in routes}}


def plot(result: dict[str, Any], path: str) -> None:
    """A PNG of recall against token budget, acervo beside the baseline (needs the `plot` extra: Pillow)."""
    from PIL import Image, ImageDraw

    width, height, left, right, top, bottom = 640, 400, 70, 20, 40, 60
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)

    def at(i: int, value: float) -> tuple[float, float]:
        """Pixel of budget number `i` at `value` percent."""
        x = left + i * (width - left - right) / (len(BUDGETS) - 1)
        return x, top + (100 - value) * (height - top - bottom) / 100

    for value in range(0, 101, 20):
        y = at(0, value)[1]
        draw.line([(left, y), (width - right, y)], fill=(225, 225, 225))
        draw.text((left - 30, y - 6), f"{value:>3}", fill="black")
    for i, budget in enumerate(BUDGETS):
        x = at(i, 0)[0]
        draw.text((x - 12, height - bottom + 8), str(budget), fill="black")
    draw.rectangle([left, top, width - right, height - bottom], outline="black")
    draw.text((left, 12), f"gold-document recall (%) against context budget (tokens), "
                          f"{result['acervo']['questions']} questions", fill="black")
    for row, (name, colour) in enumerate((("acervo", (31, 119, 180)), ("baseline", (255, 127, 14)))):
        points = [at(i, result[name][f"recall@{b}t"] or 0) for i, b in enumerate(BUDGETS)]
        draw.line(points, fill=colour, width=3)
        for x, y in points:
            draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill=colour)
        draw.text((left + 200 * row, height - 22), f"--- {name}", fill=colour)
    image.save(path, format="PNG")
