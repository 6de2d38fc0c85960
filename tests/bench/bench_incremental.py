"""Benchmark: full build, then change N% of the documents (edit, add, delete) and reindex incrementally.

    python tests/bench/bench_incremental.py CORPUS.jsonl [--mentions titles] [--change 1.0] [--repeat 3] [--copies 1]
        [--json]

Prints full and incremental seconds (the median of --repeat runs of each), their ratio, and the fraction
of chunks, answers, reports and communities recomputed. Seconds are the stages' own; the wall time of each
publish (staging copy, stages, commit, checkpoint, replace) is printed beside them. It then checks the
incremental index against a fresh build of the changed corpus: same rows, and the answers and reports
recomputed are exactly those whose inputs changed; and runs the answer and report stages once more with
every input hash checked, which must find nothing stale.
"""

import argparse
import json
import random
import re
import shutil
import statistics
import tempfile
from pathlib import Path
from time import perf_counter

from acervo.flows.index import publish
from acervo.pipelines import answers, reports
from acervo.pipelines.db import connect
from acervo.pipelines.run import Run
from acervo.pipelines.settings import Settings

WORD = re.compile(r"[^\W\d_]+")  # a run of letters
SAME_SQL = {  # the source file differs (the fresh build reads a copy), so documents skip source and line
    "documents": "select * exclude (source, line) from documents order by doc_id",
    "chunks": "select * from chunks order by chunk_id",
    "entities": "select * from entities order by entity_id",
    "mentions": "select * from mentions order by entity_id, chunk_id",
    "edges": "select * from edges order by src, dst",
    "entity_answers": "select * from entity_answers order by entity_id",
}


def changed(records: list[dict], percent: float, seed: int) -> tuple[list[dict], dict[str, int]]:
    """`records` with `percent` % of them edited, deleted or added (a third each)."""
    rng = random.Random(seed)
    n = max(3, round(len(records) * percent / 100))
    picked = rng.sample(range(len(records)), n)
    edits, deletes = set(picked[: n // 3]), set(picked[n // 3 : 2 * n // 3])
    out = []
    for i, r in enumerate(records):
        if i in deletes:
            continue
        if i in edits:
            r = {**r, "text": r["text"] + " This sentence was added by an edit."}
        out.append(r)
    for k in range(n - 2 * (n // 3)):
        donor = records[rng.randrange(len(records))]
        out.append({**donor, "doc_id": f"bench-new-{k}", "title": f"{donor['title']} (new {k})",
                    "text": f"{donor['title']} (new {k}) is a new document. {donor['text']}"})
    return out, {"edited": len(edits), "deleted": len(deletes), "added": n - 2 * (n // 3)}


def copies(records: list[dict], k: int) -> list[dict]:
    """`records` k times over; copy n > 0 suffixes every word (titles included) with a tag of its own, so
    the copies share no name and their graphs are disjoint: a corpus k times larger with the same shape."""
    out = list(records)
    for tag in (f"qz{n}" for n in range(1, k)):
        out += [{**r, "doc_id": f"{r['doc_id']}-{tag}", "title": tagged(r.get("title") or "", tag),
                 "text": tagged(r["text"], tag)} for r in records]
    return out


def tagged(text: str, tag: str) -> str:
    """`text` with `tag` after every word."""
    return WORD.sub(lambda m: m.group(0) + tag, text)


def table(db: Path, name: str) -> dict:
    """(key -> input_hash) of answers or reports."""
    con = connect(db, read_only=True)
    key = "entity_id" if name == "entity_answers" else "community_id"
    rows = dict(con.execute(f"select {key}, input_hash from {name}").fetchall())
    con.close()
    return rows


def median_run(runs: list[list]) -> list:
    """The run whose total stage time is the median of `runs`."""
    return sorted(runs, key=lambda stages: sum(s.seconds for s in stages))[len(runs) // 2]


def timed_publish(source: Path, db: Path, settings: Settings, walls: list[float], **options) -> list:
    """publish(...)'s stage results; its wall time goes into `walls`."""
    start = perf_counter()
    stages = publish(source, db, settings, **options)[1]
    walls.append(perf_counter() - start)
    return stages


def stale_rows(db: Path, scratch: Path, settings: Settings) -> dict[str, int]:
    """How many answers and reports a full pass of those stages (no change log: every input hash is
    checked) would still rewrite in a copy of `db`: 0 when the incremental run left none stale."""
    shutil.copyfile(db, scratch)
    con = connect(scratch)
    stale = {"entity_answers": answers.run(Run.alone(con), max_chars=settings.answer_max_chars).recomputed,
             "community_reports": reports.run(Run.alone(con), max_lines=settings.report_max_lines,
                                              n_evidence=settings.report_evidence).recomputed}
    con.close()
    return stale


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--mentions", default="titles", choices=["given", "gazetteer", "titles", "nlp", "spacy"])
    parser.add_argument("--change", type=float, default=1.0, help="percent of documents changed")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3, help="full and incremental runs timed (medians)")
    parser.add_argument("--copies", type=int, default=1, help="index the corpus this many times over (disjoint copies)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    settings = Settings(mentions=args.mentions)
    records = copies([json.loads(line) for line in args.corpus.read_text(encoding="utf-8").split("\n")
                      if line.strip()], args.copies)
    new_records, counts = changed(records, args.change, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = tmp / "corpus.jsonl"
        src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        db, fresh_db = tmp / "index.duckdb", tmp / "fresh.duckdb"
        full_walls, inc_walls = [], []
        fulls = [timed_publish(src, tmp / f"full{i}.duckdb", settings, full_walls, fresh=True)
                 for i in range(args.repeat)]
        shutil.copyfile(tmp / "full0.duckdb", db)
        before = {t: table(db, t) for t in ("entity_answers", "community_reports")}
        con = connect(db, read_only=True)
        communities_before = con.execute("select count(*) from communities").fetchone()[0]
        con.close()
        src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in new_records), encoding="utf-8")
        shutil.copyfile(db, tmp / "old.duckdb")
        incs = []
        for _ in range(args.repeat):
            shutil.copyfile(tmp / "old.duckdb", db)
            incs.append(timed_publish(src, db, settings, inc_walls))
        full, inc = median_run(fulls), median_run(incs)
        _, _ = publish(src, fresh_db, settings, fresh=True)
        after = {t: table(db, t) for t in ("entity_answers", "community_reports")}
        fresh_answers = table(fresh_db, "entity_answers")
        stale = stale_rows(db, tmp / "check.duckdb", settings)
        a, b = connect(db, read_only=True), connect(fresh_db, read_only=True)
        equal = {t: a.execute(SAME_SQL[t]).fetchall() == b.execute(SAME_SQL[t]).fetchall() for t in SAME_SQL}
        n_chunks = a.execute("select count(*) from chunks").fetchone()[0]
        a.close()
        b.close()
    work = {s.stage: s.work for s in inc}
    full_s, inc_s = sum(s.seconds for s in full), sum(s.seconds for s in inc)
    recomputed_answers = {e for e, h in after["entity_answers"].items() if before["entity_answers"].get(e) != h}
    needed_answers = {e for e, h in fresh_answers.items() if before["entity_answers"].get(e) != h}
    detail = work["communities"].detail or {}
    result = {
        "corpus": str(args.corpus), "documents": len(records), "change": counts,
        "full_s": round(full_s, 3), "incremental_s": round(inc_s, 3), "ratio": round(inc_s / full_s, 4),
        "full_runs_s": [round(sum(s.seconds for s in r), 3) for r in fulls],
        "full_wall_s": round(statistics.median(full_walls), 3),
        "incremental_wall_s": round(statistics.median(inc_walls), 3),
        "incremental_runs_s": [round(sum(s.seconds for s in r), 3) for r in incs],
        "stages_s": {s.stage: round(s.seconds, 3) for s in inc},
        "chunks_recomputed": work["chunks"].recomputed, "chunks": n_chunks,
        "answers_recomputed": len(recomputed_answers), "answers": len(after["entity_answers"]),
        "answers_needed": len(needed_answers), "answers_exact": recomputed_answers == needed_answers,
        "reports_recomputed": work["community_reports"].recomputed, "reports": len(after["community_reports"]),
        "communities_before": communities_before, "communities": detail,
        "equal_to_fresh": equal, "stale_after_incremental": stale,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{args.corpus}: {len(records)} documents, changed {counts} ({args.change}%)")
    print(f"  full build   {full_s:7.3f} s   incremental {inc_s:7.3f} s   ratio {inc_s / full_s:.3f}   (medians of "
          f"{result['full_runs_s']} and {result['incremental_runs_s']})")
    print(f"  wall time of a publish (staging copy, stages, commit, checkpoint, replace): full "
          f"{result['full_wall_s']:.3f} s, incremental {result['incremental_wall_s']:.3f} s, ratio "
          f"{result['incremental_wall_s'] / result['full_wall_s']:.3f}")
    print("  incremental stages: " + "  ".join(f"{k} {v:.3f}" for k, v in result["stages_s"].items()))
    n_answers, n_reports = len(after["entity_answers"]), len(after["community_reports"])
    n_reports_done = work["community_reports"].recomputed
    print(f"  recomputed: chunks {work['chunks'].recomputed}/{n_chunks} ({work['chunks'].recomputed / n_chunks:.2%}), "
          f"answers {len(recomputed_answers)}/{n_answers} ({len(recomputed_answers) / n_answers:.2%}), "
          f"reports {n_reports_done}/{n_reports} ({n_reports_done / n_reports:.2%})")
    print(f"  communities (of {communities_before}): kept {detail.get('kept')}, changed {detail.get('changed')}, "
          f"born {detail.get('born')}, gone {detail.get('gone')}")
    print(f"  answers recomputed == answers whose inputs changed (vs a fresh build): {result['answers_exact']} "
          f"({len(needed_answers)} needed)")
    print(f"  tables equal to a fresh build: {equal}")
    print(f"  rows a full check of every input hash would still rewrite (0 = none left stale): {stale}")


if __name__ == "__main__":
    main()
