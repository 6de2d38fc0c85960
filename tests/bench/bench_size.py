"""Benchmark: the index file's size over many incremental reruns, against a fresh build of the same corpus.

    python tests/bench/bench_size.py CORPUS.jsonl [--mentions titles] [--change 1.0] [--reruns 30]

Each rerun changes --change % of the documents of the one before (bench_incremental.changed: edits,
deletes, additions) and publishes; it prints the file's size, DuckDB's used and free blocks, and the
rerun's wall time. At the end a fresh build of the last corpus gives the size to compare with.
"""

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from time import perf_counter

from bench_incremental import changed

from acervo.flows.index import publish
from acervo.pipelines.db import connect, sql
from acervo.pipelines.settings import Settings


def blocks(db: Path) -> tuple[int, int]:
    """(used, free) blocks of the database file `db`."""
    con = connect(db, read_only=True)
    used, free = con.execute(sql("publish.blocks")).fetchone()
    con.close()
    return used, free


def write(path: Path, records: list[dict]) -> Path:
    """`records` as JSONL at `path`."""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def main() -> None:
    """Build, rerun, print the sizes."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--mentions", default="titles", choices=["given", "gazetteer", "titles", "nlp", "spacy"])
    parser.add_argument("--change", type=float, default=1.0, help="percent of documents each rerun changes")
    parser.add_argument("--reruns", type=int, default=30)
    args = parser.parse_args()
    settings = Settings(mentions=args.mentions)
    records = [json.loads(line) for line in args.corpus.read_text(encoding="utf-8").split("\n") if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src, db = tmp / "corpus.jsonl", tmp / "index.duckdb"
        start = perf_counter()
        publish(write(src, records), db, settings)
        print(f"build    {db.stat().st_size / 2**20:7.2f} MiB  blocks used/free {blocks(db)}  "
              f"{perf_counter() - start:6.2f} s")
        walls = []
        for n in range(1, args.reruns + 1):
            records, _ = changed(records, args.change, seed=n)
            records = [{**r, "doc_id": r["doc_id"].replace("bench-new-", f"bench-{n}-new-")} for r in records]
            start = perf_counter()
            publish(write(src, records), db, settings)
            walls.append(perf_counter() - start)
            print(f"rerun {n:2} {db.stat().st_size / 2**20:7.2f} MiB  blocks used/free {blocks(db)}  "
                  f"{walls[-1]:6.2f} s")
        fresh = tmp / "fresh.duckdb"
        publish(src, fresh, settings)
        size, fresh_size = db.stat().st_size, fresh.stat().st_size
        print(f"fresh    {fresh_size / 2**20:7.2f} MiB  blocks used/free {blocks(fresh)}")
        print(f"after {args.reruns} reruns: {size / fresh_size:.2f} x a fresh build; rerun wall time median "
              f"{statistics.median(walls):.3f} s, max {max(walls):.3f} s")


if __name__ == "__main__":
    main()
