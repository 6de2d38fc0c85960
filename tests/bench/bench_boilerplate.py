"""Benchmark: the boilerplate each set's corpus holds, and how much of it short answers and reports still quote.

    python tests/bench/bench_boilerplate.py [--data DIR] [--sets podcast_behind_the_tech state_union] [--mode nlp]

For each set found under --data (default ../shared/data beside the repository), builds the index in a temporary
folder and prints one markdown table: documents, chunks, distinct boilerplate sentences (written word for word in
at least pipelines.layout.BOILERPLATE_DOCUMENTS documents), chunks holding one, how many documents write the
three most widespread,
the build's seconds in the boilerplate stage against the whole build, and how many entity answers and report
key-evidence lines quote a boilerplate sentence (an answer may, when every sentence mentioning its entity is one).
Figures are printed, never asserted.
"""

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import duckdb

from acervo.flows.index import publish
from acervo.pipelines.layout import BOILERPLATE_DOCUMENTS, sentence_key
from acervo.pipelines.report_lines import ANSWERS, EVIDENCE
from acervo.pipelines.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SETS = {"2wikimultihopqa": "corpus.jsonl", "hotpotqa_sample": "corpus.jsonl", "pt_faquad": "corpus.jsonl",
        "xquad_es": "corpus.jsonl", "xquad_de": "corpus.jsonl", "covidqa": "corpus.jsonl",
        "pubmedqa": "corpus.jsonl", "podcast_behind_the_tech": "episodes.jsonl", "state_union": "corpus.jsonl"}
SHOWN = 3  # most widespread boilerplate sentences whose document counts are shown per set


def measure(name: str, corpus: Path, db: Path, mode: str) -> dict[str, Any]:
    """Build `corpus` into `db` and count its boilerplate and what quotes it."""
    _, stages = publish(corpus, db, Settings(mentions=mode))
    seconds = {s.stage: s.seconds for s in stages}
    con = duckdb.connect(str(db), read_only=True)
    common = {k for (k,) in con.execute("select distinct unnest(sentences) from chunk_boilerplate").fetchall()}
    answers = [a for (a,) in con.execute("select answer from entity_answers").fetchall()]
    reports = [r for (r,) in con.execute("select report from community_reports").fetchall()]
    lines = [line[2:].rsplit(" [", 1)[0] for r in reports
             for line in r[r.index(EVIDENCE) + len(EVIDENCE):r.index(ANSWERS)].strip().split("\n") if line]
    widest = con.execute(
        "select s, count(distinct doc_id) n from (select doc_id, unnest(sentences) s from chunk_sentences) "
        "where s in (select unnest(sentences) from chunk_boilerplate) group by s order by n desc, s limit $n",
        {"n": SHOWN}).fetchall()
    counts = con.execute("select (select count(*) from documents), (select count(*) from chunks), "
                         "(select count(*) from chunk_boilerplate)").fetchone()
    con.close()
    return {"set": name, "documents": counts[0], "chunks": counts[1], "boilerplate": len(common),
            "chunks_with": counts[2], "widest": [n for _, n in widest],
            "stage_s": seconds.get("boilerplate", 0.0), "build_s": sum(seconds.values()),
            "answers": len(answers), "answers_boilerplate": sum(sentence_key(a) in common for a in answers),
            "lines": len(lines), "lines_boilerplate": sum(sentence_key(x) in common for x in lines)}


def main() -> None:
    """Measure every chosen set and print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS))
    parser.add_argument("--mode", default="nlp", help="mentions mode of every build")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sets:
            corpus = args.data / name / SETS[name]
            if not corpus.exists():
                print(f"bench: {name}: not under {args.data}, left out", file=sys.stderr)
                continue
            print(f"bench: {name}: indexing", file=sys.stderr, flush=True)
            rows.append(measure(name, corpus, Path(tmp) / f"{name}.duckdb", args.mode))
    print(f"mode {args.mode}; boilerplate: a sentence written word for word in at least {BOILERPLATE_DOCUMENTS} "
          f"documents")
    print()
    print("| set | documents | chunks | boilerplate sentences | chunks holding one | documents writing the 3 "
          "widest | boilerplate stage s / build s | answers quoting one | report evidence lines quoting one |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['set']} | {r['documents']:,} | {r['chunks']:,} | {r['boilerplate']:,} | {r['chunks_with']:,} | "
              f"{', '.join(map(str, r['widest'])) or '-'} | {r['stage_s']:.2f} / {r['build_s']:.1f} | "
              f"{r['answers_boilerplate']} of {r['answers']:,} | {r['lines_boilerplate']} of {r['lines']:,} |")


if __name__ == "__main__":
    main()
