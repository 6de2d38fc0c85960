"""Benchmark: how much gold evidence acervo's context holds on each evaluation set, beside BM25, per mode.

    python tests/bench/bench_evidence.py [--data DIR] [--sets 2wikimultihopqa pt_faquad] [--modes nlp titles]
        [--meaning] [--limit 100] [--keep DIR] [--negatives FILE...] [--globals FILE] [--json]

For each set found under --data (default ../shared/data beside the repository, or beside its main checkout
when run from a git worktree) and each mentions mode, builds the index into a temporary folder (or reuses
DIR/SET.MODE.duckdb with --keep, building it there when missing), then runs `acervo eval` on the set's
questions (the first --limit of them) together with every off-topic question of --negatives (default
tests/data/offtopic_questions.jsonl and tests/data/offtopic_named.jsonl), and prints
one markdown table (with --meaning, each mode also as MODE+e5: the index built with the packaged model's
chunk and entity vectors, extra embed; its build embeds every chunk, minutes per thousand on two cores):

    set, mode, questions (the set's + the off-topic ones), R@2/5/10, R@2 as % of its ceiling,
    R@512t/1024t/2048t/4096t, BM25 at the same,
    min(acervo - BM25) over every k and budget (below zero: BM25 alone found more there), route accuracy
    (off-topic questions included: they expect none), off-topic empty %, answerable empty %, global questions
    routed global or mixed %, global questions whose 2048-token context holds a community report %, questions
    whose every citation resolves %, query latency p50 ms.

The podcast's questions have no gold documents and `"scope": "global"`: they are its global questions. The
--globals file's questions (default tests/data/global_questions.jsonl: about the whole collection, each naming
its set in `collection`) are asked of their set's index apart, and give its two global columns; the other
columns are the set's own questions and the off-topic ones.
Figures are printed, never asserted; latency is wall clock on this machine.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path
from time import perf_counter
from typing import Any

from acervo.flows.index import publish
from acervo.pipelines.embeddings import PACKAGED
from acervo.pipelines.query import evaluate
from acervo.pipelines.query.context import Index
from acervo.pipelines.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
OFFTOPIC = [ROOT / "tests" / "data" / "offtopic_questions.jsonl", ROOT / "tests" / "data" / "offtopic_named.jsonl"]
GLOBALS = ROOT / "tests" / "data" / "global_questions.jsonl"
WIDE = ("questions_global", "global_route_rate", "global_report_rate")  # what the --globals questions give
SETS = {  # set folder -> (corpus file, questions file)
    "2wikimultihopqa": ("corpus.jsonl", "questions.dev.jsonl"),
    "hotpotqa_sample": ("corpus.jsonl", "questions.jsonl"),
    "pt_faquad": ("corpus.jsonl", "questions.jsonl"),
    "xquad_es": ("corpus.jsonl", "questions.jsonl"),
    "xquad_de": ("corpus.jsonl", "questions.jsonl"),
    "covidqa": ("corpus.jsonl", "questions.jsonl"),
    "pubmedqa": ("corpus.jsonl", "questions.jsonl"),
    "podcast_behind_the_tech": ("episodes.jsonl", "questions.jsonl"),
}
UNTITLED = {"xquad_es", "xquad_de", "pubmedqa"}  # their documents have no titles: mode titles would name ids
MODES = ("nlp", "titles")
COLUMNS = [("set", None), ("mode", None), ("q", None),
           *[(f"R@{k}", f"recall@{k}") for k in evaluate.KS], ("%ceil@2", "recall@2_of_ceiling"),
           *[(f"R@{b}t", f"recall@{b}t") for b in evaluate.BUDGETS],
           *[(f"BM25 @{k}", f"recall@{k}") for k in evaluate.KS],
           *[(f"BM25 @{b}t", f"recall@{b}t") for b in evaluate.BUDGETS],
           ("min Δ", None), ("route acc", "route_accuracy"), ("off-topic empty", "negative_empty_rate"),
           ("answerable empty", "answerable_empty_rate"), ("global routed", "global_route_rate"),
           ("global w/ report", "global_report_rate"),
           ("cites resolved", "citations_resolved_rate"),
           ("p50 ms", "latency_ms_p50")]


def default_data() -> Path:
    """../shared/data beside the repository, else beside the main checkout of this git worktree."""
    near = ROOT.parent / "shared" / "data"
    dotgit = ROOT / ".git"
    if near.is_dir() or not dotgit.is_file():
        return near
    gitdir = Path(dotgit.read_text(encoding="utf-8").split(":", 1)[1].strip())  # MAIN/.git/worktrees/NAME
    return gitdir.parents[2].parent / "shared" / "data"


def read(path: Path) -> list[dict[str, Any]]:
    """The records of a JSONL file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def index_of(corpus: Path, db: Path, mode: str) -> float | None:
    """Build the index of `corpus` at `db` unless it is there already; the seconds it took, None if reused.
    A mode ending in "+e5" is built with the packaged model's vectors."""
    if db.exists():
        return None
    start = perf_counter()
    mentions, _, meaning = mode.partition("+")
    publish(corpus, db, Settings(mentions=mentions, embed_model=PACKAGED if meaning else ""))
    return perf_counter() - start


def measure(name: str, mode: str, folder: Path, store: Path, limit: int | None,
            negatives: list[dict[str, Any]], wide: list[dict[str, Any]]) -> dict[str, Any]:
    """Index one set in one mode and evaluate it with the off-topic questions beside, then the questions of
    `wide` about the whole of it, whose route and report figures replace the set's own."""
    wide = [item for item in wide if item.get("collection") == name]
    corpus, questions = (folder / part for part in SETS[name])
    db = store / f"{name}.{mode}.duckdb"
    print(f"bench: {name} {mode}: indexing {corpus} into {db}", file=sys.stderr, flush=True)
    built = index_of(corpus, db, mode)
    asked = read(questions)[:limit] + negatives
    done = "reused" if built is None else f"built in {built:.1f} s"
    print(f"bench: {name} {mode}: {done}; "
          f"evaluating {len(asked)} questions", file=sys.stderr, flush=True)
    with Index(db) as index:
        result = evaluate.run(index, asked)
        if wide:
            result["acervo"] |= {key: evaluate.run(index, wide)["acervo"][key] for key in WIDE}
    return {"set": name, "mode": mode, "index_seconds": built, **result}


def cell(value: Any) -> str:
    """A table cell: '-' for a missing figure, one decimal otherwise."""
    if value is None:
        return "-"
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def table(results: list[dict[str, Any]]) -> str:
    """The markdown table of every set and mode."""
    lines = ["| " + " | ".join(title for title, _ in COLUMNS) + " |",
             "|" + "|".join("---" if title in ("set", "mode") else "---:" for title, key in COLUMNS)
             + "|"]
    for r in results:
        cells = []
        for title, key in COLUMNS:
            if title == "set":
                cells.append(r["set"])
            elif title == "mode":
                cells.append(r["mode"])
            elif title == "q":  # the set's own, then the off-topic ones beside
                ours = r["acervo"]
                cells.append(f"{ours['questions'] - ours['questions_off_topic']}+{ours['questions_off_topic']}")
            elif title == "min Δ":
                least = r["margin_over_baseline"]
                cells.append("-" if least["min"] is None else f"{least['min']:.1f} ({least['at'][6:]})")
            else:
                cells.append(cell(r["baseline" if title.startswith("BM25") else "acervo"][key]))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    """Run every chosen set in every chosen mode and print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=default_data(), help="folder of the set folders")
    parser.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS))
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument("--meaning", action="store_true", help="each mode also with the packaged model's vectors")
    parser.add_argument("--limit", type=int, help="only the first N questions of each set (all off-topic ones)")
    parser.add_argument("--keep", type=Path, help="folder to keep the indexes in and reuse them from")
    parser.add_argument("--negatives", type=Path, nargs="+", default=OFFTOPIC,
                        help="JSONL files of off-topic questions")
    parser.add_argument("--globals", type=Path, default=GLOBALS,
                        help="JSONL of questions about a whole collection, each naming its set in `collection`")
    parser.add_argument("--json", action="store_true", help="print every set's eval result as JSON instead")
    args = parser.parse_args()
    negatives = [{**item, "route": "none"} for path in args.negatives for item in read(path)]
    wide = read(args.globals)
    found = [name for name in args.sets if (args.data / name).is_dir()]
    for name in sorted(set(args.sets) - set(found)):
        print(f"bench: {name}: not under {args.data}, left out", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        store = args.keep or Path(tmp)
        store.mkdir(parents=True, exist_ok=True)
        modes = [m for mode in args.modes for m in ([mode, f"{mode}+e5"] if args.meaning else [mode])]
        results = [measure(name, mode, args.data / name, store, args.limit, negatives, wide)
                   for name in found for mode in modes if not (name in UNTITLED and mode.startswith("titles"))]
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=2))
        return
    print(f"questions: the first {args.limit or 'all'} of each set, plus {len(negatives)} off-topic "
          f"({', '.join(path.name for path in args.negatives)}); "
          f"recall in % of gold documents; BM25 = the baseline at the same k or budget; "
          f"the global columns of a set named in {args.globals.name} are its questions there")
    print()
    print(table(results))


if __name__ == "__main__":
    main()
