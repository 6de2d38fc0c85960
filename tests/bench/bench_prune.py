"""Benchmark: what the listwise pruner saves and what it costs in gold-document recall, per keep-top k and threshold.

    python tests/bench/bench_prune.py [--data DIR] [--set 2wikimultihopqa] [--mode titles] [--db FILE]
        [--limit 200] [--budget 2048] [--no-direct] [--llm-url URL [--llm-model NAME] [--window N]] [--json OUT]

Builds the index of one evaluation set (or reuses --db, building it there when missing), assembles each
question's context as `acervo query` does, grades its blocks once and prunes it at every keep-top k in KS and
threshold in THRESHOLDS, and a last row per k keeps the first k blocks alone (no grade reaches its threshold:
truncating the ranking, the figure grading must beat). It prints one markdown table:

    k, threshold, blocks dropped %, tokens dropped % (the instruction, never graded, is left out of both),
    gold-document recall before and after (%, the documents the context's blocks cite, as `acervo eval`
    counts them), recall points lost, questions that lost a gold document %, and compression per point of
    recall lost (tokens dropped % / points lost; "inf" when nothing was lost, null in the JSON).

The grader is LEXICAL, standing in for a model: the share of the question's content-word stems a block
holds, mapped to 0-4 by the cut points below. With --llm-url the same evaluation asks that OpenAI-compatible
endpoint instead (pipelines.query.prune.llm_grader; key from $ACERVO_LLM_API_KEY), each context graded once
and its grades reused at every k and threshold; the calls and model tokens it spent are printed. Figures are
printed, never asserted.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_evidence import SETS, default_data, index_of, read

from acervo.pipelines.db import sql
from acervo.pipelines.llm import LLMError, openai_compatible
from acervo.pipelines.names import words
from acervo.pipelines.query import evaluate
from acervo.pipelines.query import prune as pruning
from acervo.pipelines.query.context import Index
from acervo.pipelines.query.words import content_words, stem

KS = (0, 1, 2, 3, 5)  # keep-top k: the ranking's first blocks kept whatever their grade
THRESHOLDS = (1, 2, 3)  # least grade kept
TOP_ONLY = max(pruning.GRADES) + 1  # a threshold no grade reaches: the first k blocks alone
ESSENTIAL_SHARE = 0.75  # share of the question's content stems a block holds to grade 4
CONTRIBUTING_SHARE = 0.5  # ... to grade 3
SUPPORTING_SHARE = 0.25  # ... to grade 2 (any shared stem grades 1, none 0)


def lexical_grade(question: str, text: str) -> int:
    """A block's grade from the share of the question's content-word stems it holds."""
    asked = {stem(w) for w in content_words(question)}
    if not asked:
        return 0
    share = len(asked & {stem(w) for w in words(text)}) / len(asked)
    cuts = ((ESSENTIAL_SHARE, 4), (CONTRIBUTING_SHARE, 3), (SUPPORTING_SHARE, 2))
    return next((grade for cut, grade in cuts if share >= cut), 1 if share > 0 else 0)


def lexical(question: str, texts: list[str]) -> list[int]:
    """The lexical Grader."""
    return [lexical_grade(question, t) for t in texts]


class Once:
    """A grader asked once per question and set of blocks, its grades (or its LLMError) reused at every k and
    threshold."""

    def __init__(self, grader: pruning.Grader) -> None:
        self.grader = grader
        self.seen: dict[tuple[str, tuple[str, ...]], list[int] | LLMError] = {}

    def __call__(self, question: str, texts: list[str]) -> list[int]:
        asked = (question, tuple(texts))
        if asked not in self.seen:
            try:
                self.seen[asked] = self.grader(question, texts)
            except LLMError as err:
                self.seen[asked] = err
        found = self.seen[asked]
        if isinstance(found, LLMError):
            raise found
        return found


def measure(index: Index, questions: list[dict[str, Any]], grader: pruning.Grader, *, budget: int,
            direct: bool) -> list[dict[str, Any]]:
    """One row per k and threshold: the figures summed over `questions`."""
    doc_of = dict(index.con.execute(sql("query.chunk_documents")).fetchall())
    rows = {(k, t): {"k": k, "threshold": t, "blocks": 0, "dropped_blocks": 0, "tokens": 0, "dropped_tokens": 0,
                     "before": 0.0, "after": 0.0, "lost_questions": 0, "errors": 0, "gold": 0}
            for k in KS for t in (*THRESHOLDS, TOP_ONLY)}
    for n, item in enumerate(questions, start=1):
        gold = set(item.get("supporting_doc_ids") or [])
        whole = index.query(item["question"], budget=budget, direct=direct)
        before = evaluate.recall(gold, (doc_of[r] for b in whole.blocks for r in b.refs))
        for (k, t), row in rows.items():
            context = index.query(item["question"], budget=budget, direct=direct, prune=grader, keep_top=k,
                                  threshold=t)
            pruned = context.pruned
            after = evaluate.recall(gold, (doc_of[r] for b in context.blocks for r in b.refs))
            row["blocks"] += pruned["blocks_before"] - (1 if whole.blocks else 0)  # the instruction left out
            row["dropped_blocks"] += len(pruned["dropped"])
            row["tokens"] += pruned["tokens_before"] - (whole.blocks[0].tokens if whole.blocks else 0)
            row["dropped_tokens"] += pruned["tokens_before"] - pruned["tokens_after"]
            row["errors"] += pruned["error"] is not None
            if gold:
                row["gold"] += 1
                row["before"] += before
                row["after"] += after
                row["lost_questions"] += after < before
        if n % 20 == 0:
            print(f"bench: {n}/{len(questions)} questions", file=sys.stderr, flush=True)
    return [_figures(row) for row in rows.values()]


def _figures(row: dict[str, Any]) -> dict[str, Any]:
    """A row's percentages: compression, recall before and after, points lost, compression per point lost."""
    share = lambda part, whole: round(100 * part / whole, 2) if whole else 0.0  # noqa: E731
    out = {"k": row["k"], "threshold": row["threshold"] if row["threshold"] != TOP_ONLY else None,
           "blocks_dropped": share(row["dropped_blocks"], row["blocks"]),
           "tokens_dropped": share(row["dropped_tokens"], row["tokens"]),
           "recall_before": share(row["before"], row["gold"]), "recall_after": share(row["after"], row["gold"]),
           "questions_lost": share(row["lost_questions"], row["gold"]), "grading_errors": row["errors"]}
    out["points_lost"] = round(out["recall_before"] - out["recall_after"], 2)
    lost = out["points_lost"]
    out["per_point"] = round(out["tokens_dropped"] / lost, 2) if lost > 0 else None  # None: nothing lost
    return out


def table(rows: list[dict[str, Any]]) -> str:
    """The markdown table."""
    head = ["k", "threshold", "blocks dropped %", "tokens dropped %", "recall before", "recall after",
            "points lost", "questions lost %", "compression per point lost"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---:" for _ in head) + "|"]
    for r in rows:
        per = f"{r['per_point']:.1f}" if r["per_point"] is not None else "inf" if r["tokens_dropped"] else "-"
        threshold = "top k only" if r["threshold"] is None else str(r["threshold"])
        cells = [str(r["k"]), threshold, *(f"{r[key]:.1f}" for key in ("blocks_dropped", "tokens_dropped",
                                                                       "recall_before", "recall_after",
                                                                       "points_lost", "questions_lost")), per]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    """Index (or reuse) one set, grade and prune every question's context, print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=default_data(), help="folder of the set folders")
    parser.add_argument("--set", default="2wikimultihopqa", choices=[s for s in SETS if s != "podcast_behind_the_tech"])
    parser.add_argument("--mode", default="titles", choices=("nlp", "titles"), help="the index's mentions mode")
    parser.add_argument("--db", type=Path, help="the index to reuse (built there when missing)")
    parser.add_argument("--limit", type=int, default=200, help="only the first N questions (default 200)")
    parser.add_argument("--budget", type=int, default=2048, help="context budget in tokens (default 2048)")
    parser.add_argument("--no-direct", action="store_true", help="never whole documents (as acervo query's)")
    parser.add_argument("--llm-url", help="grade with this OpenAI-compatible chat endpoint instead")
    parser.add_argument("--llm-model", default="", help="the model to ask that endpoint for")
    parser.add_argument("--window", type=int, default=pruning.WINDOW, help="tokens one grading call may fill")
    parser.add_argument("--json", type=Path, help="also write the rows and settings as JSON to this file")
    args = parser.parse_args()
    corpus, questions = (args.data / args.set / part for part in SETS[args.set])
    asked = [q for q in read(questions) if q.get("supporting_doc_ids")][:args.limit]
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / f"{args.set}.{args.mode}.duckdb"
        built = index_of(corpus, db, args.mode)
        print(f"bench: {db} {'reused' if built is None else f'built in {built:.1f} s'}; {len(asked)} questions",
              file=sys.stderr, flush=True)
        with Index(db) as index:
            model = (pruning.llm_grader(openai_compatible(args.llm_url, args.llm_model), window=args.window,
                                        count=index.count) if args.llm_url else None)
            rows = measure(index, asked, Once(model or lexical), budget=args.budget, direct=not args.no_direct)
    grader = f"model {args.llm_model or '(default)'} at {args.llm_url}" if model else "lexical"
    spent = {"calls": model.calls, "tokens_in": model.tokens_in, "tokens_out": model.tokens_out} if model else None
    print(f"{args.set} ({args.mode}), {len(asked)} questions with gold documents, budget {args.budget}, "
          f"{'no whole documents' if args.no_direct else 'whole documents when they fit'}; grader: {grader}"
          + (f"; {spent['calls']} calls, {spent['tokens_in']} tokens in, {spent['tokens_out']} out" if spent else ""))
    print()
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps({"set": args.set, "mode": args.mode, "questions": len(asked),
                                         "budget": args.budget, "direct": not args.no_direct, "grader": grader,
                                         "spent": spent, "rows": rows}, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
