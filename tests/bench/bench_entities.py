"""Precision of the entities mode nlp finds, from hand labels (tests/data/entity_labels.jsonl).

Each label line is {"corpus", "entity_id", "label", "correct"}: correct is true for a real name (a person,
place, organisation, work, product, or a concept written as a proper noun) and false for a common word
capitalised by its place (sentence start, heading, list item), boilerplate, or a fragment that names nothing.

  python tests/bench/bench_entities.py                       # precision of each labelled sample
  python tests/bench/bench_entities.py --sample X.duckdb --corpus podcast --version after
      # the sample to label from an index: SAMPLE_SIZE entities drawn with SEED, one JSON line each, its
      # label taken from the labels file when that entity is labelled already (null when not)

A sample is drawn from the index's entities sorted by id, so the same index gives the same sample.
"""

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

LABELS = Path(__file__).resolve().parents[1] / "data" / "entity_labels.jsonl"
SAMPLE_SIZE = 60  # entities labelled per corpus and version
SEED = 17  # the sample's random seed


def sample(db: Path) -> list[tuple[str, str]]:
    """SAMPLE_SIZE (entity_id, label) pairs of the index `db`, drawn with SEED from its entities sorted by id."""
    from acervo.pipelines.db import reader

    con = reader(db)
    try:
        rows = con.execute("select entity_id, label from entities order by entity_id").fetchall()
    finally:
        con.close()
    return sorted(random.Random(SEED).sample(rows, min(SAMPLE_SIZE, len(rows))))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labels", type=Path, default=LABELS, help="the labels file (default tests/data/"
                        "entity_labels.jsonl)")
    parser.add_argument("--sample", type=Path, help="an index to draw a sample to label from")
    parser.add_argument("--corpus", help="with --sample: the corpus name the lines carry")
    parser.add_argument("--version", help="with --sample: the version name the lines carry (before, after)")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.labels.read_text(encoding="utf-8").split("\n") if line.strip()]
    known = {(r["corpus"], r["entity_id"]): r["correct"] for r in rows}
    if args.sample:
        for eid, label in sample(args.sample):
            print(json.dumps({"corpus": args.corpus, "version": args.version, "entity_id": eid, "label": label,
                              "correct": known.get((args.corpus, eid))}, ensure_ascii=False))
        return 0
    totals: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        totals[(r["corpus"], r["version"])][0] += bool(r["correct"])
        totals[(r["corpus"], r["version"])][1] += 1
    print(f"{'corpus':<10} {'version':<8} {'correct':>8} {'labelled':>9} {'precision':>10}")
    for (corpus, version), (good, n) in sorted(totals.items()):
        print(f"{corpus:<10} {version:<8} {good:>8} {n:>9} {100 * good / n:>9.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
