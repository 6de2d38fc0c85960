"""Equivalence check: every table of reference indexes, and query and eval output, as digests to compare.

    python tests/bench/equivalence.py OUT [--data DIR] [--questions 200] [--against BASELINE] [--workers N]

Through the command line only (so it runs on any version of the code), it builds three reference indexes
and an incremental sequence on two of them, into OUT:

    2wiki.titles   2Wiki with --mentions titles, then a rerun after editing, adding and deleting documents
    sotu.nlp       State of the Union with --mentions nlp, then the same kind of rerun
    podcast.nlp    the podcast transcripts with --mentions nlp

and writes OUT/manifest.json: for each index and each of its tables (ordered dump, `order by all`), the row
count and a sha256; for 2Wiki and the podcast, the sha256 of `acervo query --json` over the first
--questions questions and of `acervo eval --json` with its latency figures removed. The run ledger
(index_runs, run_stages) and index_state's bookkeeping keys are left out: they record when and how, not what.
With --against, it compares with another manifest and exits 1 on any difference, naming it. With --workers, every
build runs on a Dask cluster (acervo index --workers), to compare with the build in one process.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[2]
LEDGER = {"index_runs", "run_stages"}
# index_state keys that say how a run decided what to recompute, not what the index holds ("mentions" also records
# the versions and gazetteer digest the stage decides its skip on, "terms" the postings' version and
# "terms_appended" how many postings reruns appended out of order)
BOOKKEEPING = ("inputs", "mentions", "terms", "terms_appended")
TIMING = ("latency",)  # eval keys measured in wall time


def default_data() -> Path:
    """../shared/data beside the repository, else beside the main checkout of this git worktree."""
    near = ROOT.parent / "shared" / "data"
    if near.is_dir():
        return near
    common = subprocess.run(["git", "rev-parse", "--git-common-dir"], cwd=ROOT, capture_output=True, text=True)
    return Path(common.stdout.strip()).resolve().parent.parent / "shared" / "data"


def acervo(*args: str) -> str:
    """Run the command line of this checkout; its stdout (fails loudly on a non-zero exit)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, "-m", "acervo.flows.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True)
    if done.returncode not in (0,):
        raise SystemExit(f"acervo {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return done.stdout


def edited(corpus: Path, out: Path) -> Path:
    """`corpus` with its 2nd and 5th documents edited, its 3rd and 7th deleted, and a copy of its 4th added."""
    records = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    for i in (1, 4):
        records[i]["text"] = records[i]["text"] + "\n\nA sentence added by the equivalence check."
    added = {**records[3], "doc_id": records[3]["doc_id"] + "-copy"}
    kept = [r for i, r in enumerate(records) if i not in (2, 6)] + [added]
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), encoding="utf-8")
    return out


def tables(db: Path) -> dict[str, dict]:
    """Each table's row count and the sha256 of its ordered dump, with the index's folder written as OUT
    (a rerun's source file lies there, and documents and index_state record its path)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = [n for (n,) in con.execute("select table_name from duckdb_tables() where not temporary "
                                           "order by table_name").fetchall() if n not in LEDGER]
        found = {}
        for name in names:
            query = f'select * from "{name}"'
            if name == "index_state":
                query += " where key not in (" + ", ".join("?" for _ in BOOKKEEPING) + ")"
            rows = con.execute(query + " order by all", list(BOOKKEEPING) if name == "index_state" else []).fetchall()
            dump = repr(rows).replace(str(db.resolve().parent), "OUT")
            digest = hashlib.sha256(dump.encode("utf-8")).hexdigest()
            found[name] = {"rows": len(rows), "sha256": digest}
        return found
    finally:
        con.close()


def without_timing(value):
    """`value` (parsed JSON) without any key that names a wall-time figure."""
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if not any(t in k for t in TIMING)}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def sha(text: str) -> str:
    """sha256 of `text`."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder for the indexes and manifest.json")
    parser.add_argument("--data", type=Path, default=None, help="the shared data folder")
    parser.add_argument("--questions", type=int, default=200, help="questions for query and eval")
    parser.add_argument("--against", type=Path, default=None, help="a manifest.json to compare with")
    parser.add_argument("--workers", default=None, help="build on a Dask cluster (acervo index --workers N|ADDRESS)")
    parser.add_argument("--shard-size", default="300", help="with --workers: documents or chunks a shard")
    args = parser.parse_args()
    how = ["--workers", args.workers, "--shard-size", args.shard_size] if args.workers else ["--no-prefect"]
    data = args.data or default_data()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, dict] = {}
    plans = [("2wiki.titles", data / "2wikimultihopqa" / "corpus.jsonl", "titles",
              data / "2wikimultihopqa" / "questions.dev.jsonl", True),
             ("sotu.nlp", data / "state_union" / "corpus.jsonl", "nlp", None, True),
             ("podcast.nlp", data / "podcast_behind_the_tech" / "episodes.jsonl", "nlp",
              data / "podcast_behind_the_tech" / "questions.jsonl", False)]
    for name, corpus, mode, questions, rerun in plans:
        db = out / f"{name}.duckdb"
        db.unlink(missing_ok=True)
        acervo("index", str(corpus), "--db", str(db), "--mentions", mode, *how, "--allow-rejects", "--json")
        entry: dict = {"fresh": tables(db)}
        if questions is not None:
            subset = out / f"{name}.questions.jsonl"
            lines = questions.read_text(encoding="utf-8").splitlines()[:args.questions]
            subset.write_text("\n".join(lines) + "\n", encoding="utf-8")
            entry["query"] = sha(acervo("query", "--questions", str(subset), "--db", str(db), "--json"))
            report = json.loads(acervo("eval", str(subset), "--db", str(db), "--json"))
            entry["eval"] = sha(json.dumps(without_timing(report), sort_keys=True))
        if rerun:
            acervo("index", str(edited(corpus, out / f"{name}.edited.jsonl")), "--db", str(db), *how,
                   "--allow-rejects", "--json")
            entry["rerun"] = tables(db)
        manifest[name] = entry
        print(f"{name}: {len(entry['fresh'])} tables", flush=True)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if args.against is None:
        return 0
    return compare(json.loads(args.against.read_text(encoding="utf-8")), manifest)


def compare(before: dict, after: dict) -> int:
    """Print every difference between two manifests; 0 when there is none."""
    differences, added = [], []
    for name in sorted(before.keys() | after.keys()):
        b, a = before.get(name, {}), after.get(name, {})
        for part in sorted(b.keys() | a.keys()):
            if isinstance(b.get(part), dict) or isinstance(a.get(part), dict):
                bt, at = b.get(part, {}), a.get(part, {})
                for table in sorted(bt.keys() | at.keys()):
                    if table not in bt:
                        added.append(f"{name} {part} {table}")
                    elif bt.get(table) != at.get(table):
                        differences.append(f"{name} {part} {table}: {bt.get(table)} -> {at.get(table)}")
            elif b.get(part) != a.get(part):
                differences.append(f"{name} {part}: differs")
    for line in differences:
        print(line)
    if added:
        print(f"new tables (not compared): {', '.join(sorted({a.split()[-1] for a in added}))}")
    print("identical" if not differences else f"{len(differences)} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
