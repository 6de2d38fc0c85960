"""Benchmark: how far the words of a question's best chunks can tell an answerable question from an off-topic one.

    python tests/bench/bench_answerable.py [--data DIR] [--sets covidqa pubmedqa] [--limit 200] [--keep DIR]
        [--sentences N]
    python tests/bench/bench_answerable.py --meaning [--choose 2wikimultihopqa pt_faquad xquad_es] [--keep DIR]
    python tests/bench/bench_answerable.py --reach [--choose 2wikimultihopqa pt_faquad xquad_es] [--keep DIR]

For each set (mode nlp), the statistic a lexical floor decides on: the share of a question's information (its
subject words' IDF, pipelines.query.words) that one of its best LEXICAL_SEED_CHUNKS BM25 chunks holds (beside it, the
same oracle by reach: how much of the BM25 score its words could get its best chunk gets, lexical.reach). It is
computed for the set's answerable questions (the first --limit) and for every off-topic question
(bench_evidence's defaults); then the floor that keeps 95% of the off-topic questions empty is chosen on those very
questions (an oracle: no floor calibrated without them can do better), and the table gives the share of answerable
questions it would leave empty, beside the share the router leaves empty now. With --sentences N, the statistic is
what N consecutive sentences of a best chunk hold at the most (N = 1: one sentence), where words scattered over a
chunk count for less.

With --meaning (indexes built with the packaged model, NAME.nlp+e5.duckdb), the packaged model's floor as the
router applies it: a question is refused when its closest chunk's cosine is below the index's floor (a quantile
of the unrelated questions' closest cosines, pipelines.query.meaning) and its best BM25 chunks hold less than a
share of its information. For each quantile and share, the worst set's off-topic questions left empty and
answerable ones refused, on the --choose sets (where the constants are chosen) and on the others (where they are
reported). Figures are printed, never asserted.

With --reach (indexes of mode nlp, no model), the lexical floor for a name as the router applies it: a question
that names something (an entity, or a name the best matching text writes) is refused when its best BM25 chunk
reaches less of the score its words could get (lexical.reach) than the REACH quantile of the unrelated questions'
reach on that index. For each quantile, the off-topic questions left empty and the answerable ones, worst set of
the chosen and of the reported sets, each set's own figures, and the router's without the floor (quantile -).
"""

import argparse
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
from bench_evidence import OFFTOPIC, SETS, default_data, index_of, read

from acervo.pipelines.query.context import Index
from acervo.pipelines.query.meaning import unrelated
from acervo.pipelines.query.scoring import LEXICAL_SEED_CHUNKS
from acervo.pipelines.sentences import sentences as split

OFF_TOPIC_EMPTY = 0.95  # the share of off-topic questions the floor must keep empty (the target)
QUANTILES = [0.9 + 0.01 * i for i in range(11)]  # the floor quantiles --meaning tries
SHARES = [0.4, 0.5, 0.6]  # the shares of a question's information held that --meaning tries
REACHES = [0.7, 0.75, 0.8, 0.82, 0.84, 0.86, 0.88, 0.9, 0.92, 0.95]  # the lexical floor quantiles --reach tries
NO_FLOOR, EVERY_NAME = 0.0, 2.0  # lexical floors that refuse no named question, and every one (reach is at most 1)


def coverage(index: Index, question: str, sentences: int = 0) -> float:
    """The most of `question`'s information (IDF of its subject words) one of its best chunks holds, or with
    `sentences`, any run of that many consecutive sentences of one of them."""
    stats = index.word_stats(None)
    hits = index.top(question, None)[:LEXICAL_SEED_CHUNKS]
    return max((stats.coverage(question, part) for _, _, text, _, _ in hits for part in parts(text, sentences)),
               default=0.0)


def parts(text: str, sentences: int) -> list[str]:
    """`text` whole (`sentences` 0), else each run of `sentences` consecutive sentences of it (all of it when it has
    fewer)."""
    if not sentences:
        return [text]
    found = [text[start:end] for start, end in split(text)]
    return [" ".join(found[i:i + sentences]) for i in range(max(1, len(found) - sentences + 1))]


def indexed(args: argparse.Namespace, name: str, mode: str, tmp: Path) -> tuple[Path, list[str]]:
    """The index of the set `name` in `mode` (built where --keep has none) and its first --limit questions."""
    corpus, questions = (args.data / name / part for part in SETS[name])
    db = (args.keep or tmp) / f"{name}.{mode}.duckdb"
    print(f"bench: {name}: indexing ({mode})", file=sys.stderr, flush=True)
    index_of(corpus, db, mode)
    return db, [item["question"] for item in read(questions)[: args.limit]]


def worst(cells: dict[str, list[float]], group: list[str]) -> str:
    """The worst of the sets of `group`: the least share of off-topic questions left empty, and the most of
    answerable ones ("-" for no set)."""
    if not group:
        return "-"
    return f"{100 * min(cells[n][0] for n in group):.1f} / {100 * max(cells[n][1] for n in group):.1f}"


def closeness(index: Index, question: str) -> tuple[float, float]:
    """The cosine of `question`'s closest chunk, and the most of its information one of its best BM25 chunks holds."""
    near = index.closest(question, None)
    return (near[0][-1] if near else 0.0), coverage(index, question)


def meaning(args: argparse.Namespace, off: list[str], tmp: Path) -> None:
    """The --meaning table: per quantile and share, the worst chosen and reported set."""
    found: dict[str, tuple[list[tuple[float, float]], list[tuple[float, float]], list[float]]] = {}
    for name in args.sets:
        db, asked = indexed(args, name, "nlp+e5", tmp)
        with Index(db) as index:
            reference = [index.closest(q, None)[0][-1] for q in unrelated()]
            found[name] = ([closeness(index, q) for q in asked], [closeness(index, q) for q in off], reference)
    chosen = [n for n in args.sets if n in args.choose]
    reported = [n for n in args.sets if n not in args.choose]
    print(f"| quantile | share | chosen on ({', '.join(chosen)}): off-topic empty / answerable refused, worst | "
          f"reported on ({', '.join(reported)}) |")
    print("|---:|---:|---|---|")
    for share in SHARES:
        for quantile in QUANTILES:
            cells = {}
            for name, (ours, theirs, reference) in found.items():
                floor = float(np.quantile(reference, quantile))
                refused = [sum(1 for best, held in group if best < floor and held < share) / len(group)
                           for group in (theirs, ours)]
                cells[name] = refused
            print(f"| {quantile:.2f} | {share} | {worst(cells, chosen)} | {worst(cells, reported)} |")


def judged(index: Index, strict: Index, question: str) -> tuple[bool, bool, float]:
    """Whether the router leaves `question` empty without the lexical floor (`index`), whether the floor judges it
    (it names something: `strict`, whose floor refuses every such question, refuses it), and its reach."""
    empty = index.query(question).route == "none"
    return empty, not empty and strict.query(question).route == "none", index.reach(question, None)


def reaches(args: argparse.Namespace, off: list[str], tmp: Path) -> None:
    """The --reach table: per quantile of the unrelated questions' reach, the worst chosen and reported set."""
    found: dict[str, tuple[list[tuple[bool, bool, float]], list[tuple[bool, bool, float]], list[float]]] = {}
    for name in args.sets:
        db, asked = indexed(args, name, "nlp", tmp)
        with Index(db, reach_floor=NO_FLOOR) as index, Index(db, reach_floor=EVERY_NAME) as strict:
            reference = [index.reach(q, None) for q in unrelated()]
            found[name] = ([judged(index, strict, q) for q in asked], [judged(index, strict, q) for q in off],
                           reference)
    chosen = [n for n in args.sets if n in args.choose]
    reported = [n for n in args.sets if n not in args.choose]
    print(f"| quantile | chosen on ({', '.join(chosen)}): off-topic empty / answerable empty, worst | "
          f"reported on ({', '.join(reported)}) | {' | '.join(args.sets)} |")
    print("|---:|---|---|" + "---|" * len(args.sets))
    for quantile in [None, *REACHES]:
        cells = {}
        for name, (ours, theirs, reference) in found.items():
            floor = -1.0 if quantile is None else float(np.quantile(reference, quantile))
            cells[name] = [sum(1 for empty, named, reach in group if empty or (named and reach < floor)) / len(group)
                           for group in (theirs, ours)]
        each = " | ".join(f"{100 * cells[n][0]:.1f} / {100 * cells[n][1]:.1f}" for n in args.sets)
        print(f"| {'-' if quantile is None else f'{quantile:.2f}'} | {worst(cells, chosen)} | "
              f"{worst(cells, reported)} | {each} |")


def main() -> None:
    """Measure every chosen set and print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=default_data())
    parser.add_argument("--sets", nargs="+", choices=[s for s in SETS if s != "podcast_behind_the_tech"],
                        default=["2wikimultihopqa", "hotpotqa_sample", "pt_faquad", "xquad_es", "xquad_de", "covidqa",
                                 "pubmedqa"])
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="folder of indexes bench_evidence kept (NAME.nlp.duckdb)")
    parser.add_argument("--sentences", type=int, default=0, help="the statistic over runs of N sentences (0: chunks)")
    parser.add_argument("--meaning", action="store_true", help="the packaged model's floor (NAME.nlp+e5.duckdb)")
    parser.add_argument("--choose", nargs="+", default=["2wikimultihopqa", "pt_faquad", "xquad_es"],
                        help="with --meaning or --reach: the sets the constants are chosen on; the others report them")
    parser.add_argument("--reach", action="store_true", help="the lexical floor for a name (NAME.nlp.duckdb)")
    args = parser.parse_args()
    off = [item["question"] for path in OFFTOPIC for item in read(path)]
    if args.meaning or args.reach:
        with tempfile.TemporaryDirectory() as tmp:
            (meaning if args.meaning else reaches)(args, off, Path(tmp))
        return
    print("| set | answerable | off-topic | oracle floor | answerable below it | the same by reach | "
          "answerable the router leaves empty |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sets:
            db, asked = indexed(args, name, "nlp", Path(tmp))
            with Index(db) as index:
                ours = [coverage(index, q, args.sentences) for q in asked]
                theirs = [coverage(index, q, args.sentences) for q in off]
                reached = [index.reach(q, None) for q in asked], [index.reach(q, None) for q in off]
                empty = sum(1 for q in asked if index.query(q).route == "none")
            floor, below = oracle(ours, theirs)
            print(f"| {name} | {len(ours)} | {len(theirs)} | {floor:.3f} | {100 * below:.1f}% | "
                  f"{100 * oracle(*reached)[1]:.1f}% | {100 * empty / len(ours):.1f}% |")


def oracle(ours: list[float], theirs: list[float]) -> tuple[float, float]:
    """The floor that keeps OFF_TOPIC_EMPTY of the off-topic questions (`theirs`: their statistic) at or below it,
    and the share of the answerable questions (`ours`) at or below it too."""
    ranked = sorted(theirs)
    leaks = math.floor((1 - OFF_TOPIC_EMPTY) * len(ranked))  # off-topic questions allowed a context
    floor = ranked[len(ranked) - leaks - 1]  # a question needs more than this
    return floor, sum(1 for c in ours if c <= floor) / len(ours)


if __name__ == "__main__":
    main()
