"""Precision and recall of the entities mode nlp finds, from hand labels.

Precision (tests/data/entity_labels.jsonl): each line is {"corpus", "entity_id", "label", "correct"}: correct is
true for a real name (a person, place, organisation, work, product, or a concept written as a proper noun) and
false for a common word capitalised by its place (sentence start, heading, list item), boilerplate, or a fragment
that names nothing.

Recall (tests/data/name_labels.jsonl): each line is a sentence drawn from a corpus, {"corpus", "doc_id",
"start", "end", "names"} (the sentence is the document's text[start:end], not copied), with every name it writes,
as written, labelled by hand; a name is found when an entity of the corpus's nlp index has it as an alias (its
folded words), or its words with a leading article dropped.

  python tests/bench/bench_entities.py                       # precision of each labelled sample
  python tests/bench/bench_entities.py --recall --db podcast=P.duckdb --db sotu=S.duckdb ...
      # recall of the labelled names in each corpus's nlp index
  python tests/bench/bench_entities.py --capitals --db podcast=P.duckdb --db de=D.duckdb ...
      # the share of each corpus's mid-sentence words it writes with a capital (from its nlp index's word cases)
  python tests/bench/bench_entities.py --sample X.duckdb --corpus podcast --version after
      # the sample to label from an index: SAMPLE_SIZE entities drawn with SEED, one JSON line each, its
      # label taken from the labels file when that entity is labelled already (null when not)
  python tests/bench/bench_entities.py --sentences CORPUS.jsonl --corpus podcast
      # SENTENCES sentences drawn with SEED from the corpus, with their text, "names" null: lines to label

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
NAMES = Path(__file__).resolve().parents[1] / "data" / "name_labels.jsonl"
SAMPLE_SIZE = 60  # entities labelled per corpus and version
SENTENCES = 40  # sentences labelled per corpus for recall
MIN_SENTENCE, MAX_SENTENCE = 40, 300  # characters of a sentence drawn for labelling
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


def sentences(corpus: Path) -> list[tuple[str, int, int, str]]:
    """SENTENCES (doc_id, start, end, sentence) drawn with SEED from the sentences of `corpus` (JSONL) of
    MIN_SENTENCE to MAX_SENTENCE characters, on one line, in corpus order."""
    from acervo.pipelines.sentences import sentences as spans

    found = []
    for line in corpus.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            record = json.loads(line)
            found += [(record["doc_id"], a, b, record["text"][a:b]) for a, b in spans(record["text"])
                      if MIN_SENTENCE <= b - a <= MAX_SENTENCE and "\n" not in record["text"][a:b]]
    chosen = sorted(random.Random(SEED).sample(range(len(found)), min(SENTENCES, len(found))))
    return [found[i] for i in chosen]


def recall(dbs: dict[str, Path], labels: Path) -> None:
    """Print, per corpus, how many of the labelled names its nlp index holds as an entity's alias, and why the
    others are not entities (their candidate decision, or no candidate)."""
    from acervo.pipelines.db import reader
    from acervo.pipelines.names import entity_id, words

    rows = [json.loads(line) for line in labels.read_text(encoding="utf-8").split("\n") if line.strip()]
    print(f"{'corpus':<10} {'names':>6} {'found':>6} {'recall':>7}  missed, by why")
    for corpus, db in dbs.items():
        con = reader(db)
        try:
            aliases = {tuple(words(a)) for (a,) in con.execute("select alias from entity_aliases").fetchall()}
            decided = dict(con.execute("select entity_id, reason from candidate_decisions").fetchall())
        finally:
            con.close()
        named = [n for r in rows if r["corpus"] == corpus for n in r["names"]]
        missed = [n for n in named if not {tuple(words(n)), tuple(words(n))[1:]} & aliases]
        why: dict[str, int] = defaultdict(int)
        for name in missed:
            why[decided.get(entity_id(name), "no candidate")] += 1
        found = len(named) - len(missed)
        print(f"{corpus:<10} {len(named):>6} {found:>6} {100 * found / max(len(named), 1):>6.1f}%  "
              + ", ".join(f"{reason} {n}" for reason, n in sorted(why.items(), key=lambda kv: -kv[1])))


def capitals(dbs: dict[str, Path]) -> None:
    """Print, per corpus, the share of the words its nlp index saw in mid-sentence that were written with a capital
    (chunk_candidates.words: mid against lower), over all their uses."""
    from acervo.pipelines.db import reader

    print(f"{'corpus':<24} {'capitalised in mid-sentence':>28}")
    for corpus, db in dbs.items():
        con = reader(db)
        try:
            share = con.execute("select sum(w.mid) / (sum(w.mid) + sum(w.lower)) "
                                "from chunk_candidates x, unnest(x.words) as u(w)").fetchone()[0]
        finally:
            con.close()
        print(f"{corpus:<24} {100 * share:>27.1f}%")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labels", type=Path, default=LABELS, help="the labels file (default tests/data/"
                        "entity_labels.jsonl)")
    parser.add_argument("--sample", type=Path, help="an index to draw a sample to label from")
    parser.add_argument("--corpus", help="with --sample: the corpus name the lines carry")
    parser.add_argument("--version", help="with --sample: the version name the lines carry (before, after)")
    parser.add_argument("--sentences", type=Path, help="a corpus (JSONL) to draw sentences to label from")
    parser.add_argument("--recall", action="store_true", help="recall of the labelled names (tests/data/"
                        "name_labels.jsonl) in the indexes of --db")
    parser.add_argument("--capitals", action="store_true", help="the share of mid-sentence words written with a "
                        "capital in the indexes of --db")
    parser.add_argument("--db", action="append", default=[], help="with --recall or --capitals: CORPUS=INDEX.duckdb, "
                        "nlp mode")
    args = parser.parse_args()
    if args.sentences:
        for doc_id, start, end, sentence in sentences(args.sentences):
            print(json.dumps({"corpus": args.corpus, "doc_id": doc_id, "start": start, "end": end,
                              "sentence": sentence, "names": None}, ensure_ascii=False))
        return 0
    dbs = dict((name, Path(path)) for name, _, path in (d.partition("=") for d in args.db))
    if args.recall:
        recall(dbs, NAMES)
        return 0
    if args.capitals:
        capitals(dbs)
        return 0
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
