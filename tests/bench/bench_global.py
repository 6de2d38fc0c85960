"""Benchmark: what a global question's context holds, judged by a model that chose none of it, beside BM25.

    python tests/bench/bench_global.py --keep DIR [--data DIR] [--modes nlp titles] [--budget 2048]

The podcast's global questions have no gold documents, so `bench_evidence.py` can count only whether a
report is there. This one asks what the context is about. It reads the indexes `bench_evidence.py --keep
DIR --sets podcast_behind_the_tech [--meaning]` keeps (building a missing one the same way), and for every
global question prints, per mode, the mean over questions of:

    reports in the context; chunk blocks (whole chunks); documents those chunks come from;
    judge cosine: the packaged model's cosine (extra `embed`) between the question and each chunk the
        context cites (reports' lines and evidence included), averaged;
    judge top 50: the share of the cited chunks that are among the 50 chunks of the collection closest to the
        question in the model's meaning;

and the same for BM25's best chunks filling the same budget. The judge reads the chunk vectors of
DIR/podcast_behind_the_tech.nlp+e5.duckdb (chunk ids are the same in every mode; built when missing, about half
an hour on two cores). Acervo never ranks by the model here: the nlp and titles indexes hold no vectors.
Figures are printed, never asserted.
"""

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

from bench_evidence import SETS, default_data, index_of, read

from acervo.pipelines.db import reader
from acervo.pipelines.embeddings import packaged
from acervo.pipelines.query import meaning
from acervo.pipelines.query.context import Index
from acervo.pipelines.query.lexical import top_chunks

SET = "podcast_behind_the_tech"
JUDGE_TOP = 50  # the judge's closest chunks a cited chunk is looked for among


def judged(index: Index, judge: meaning.Vectors, row: dict[str, int], question: str, vector: Any,
           budget: int) -> dict[str, dict]:
    """acervo's context for `question` and BM25's best chunks in the same budget, each with its figures (`row`:
    each chunk id's row in the judge's matrix)."""
    import numpy as np

    closest = set(np.argsort(-(judge.matrix @ vector))[:JUDGE_TOP].tolist())
    context = index.query(question, budget=budget)
    cited = list(dict.fromkeys(r for b in context.blocks for r in b.refs if r in row))
    chunks = [b.refs[0] for b in context.blocks if b.kind == "chunk"]
    spent = index.min_budget  # the instruction, which every context starts with
    bm25 = []
    for chunk_id, _, _, n_tokens, _ in top_chunks(index.searcher(None), question, limit=200):
        if spent + n_tokens > budget:
            break
        spent += n_tokens
        bm25.append(chunk_id)

    def figures(refs: list[str], reports: int, blocks: list[str]) -> dict[str, float]:
        places = [row[r] for r in refs if r in row]
        cosines = judge.matrix[places] @ vector if places else np.zeros(1)
        return {"reports": reports, "chunks": len(blocks), "documents": len({b.split("#")[0] for b in blocks}),
                "cosine": float(cosines.mean()), "top": sum(p in closest for p in places) / max(len(places), 1)}

    return {"acervo": figures(cited, sum(b.kind == "report" for b in context.blocks), chunks),
            "BM25": figures(bm25, 0, bm25)}


def main() -> None:
    """Parse the arguments, read or build the indexes, judge every global question, print one table."""
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=default_data(), help="folder of the set folders")
    parser.add_argument("--keep", type=Path, required=True, help="folder of the kept indexes (built when missing)")
    parser.add_argument("--modes", nargs="+", choices=["nlp", "titles"], default=["nlp", "titles"])
    parser.add_argument("--budget", type=int, default=2048, help="tokens of every context")
    args = parser.parse_args()
    corpus, questions = (args.data / SET / part for part in SETS[SET])
    asked = [q["question"] for q in read(questions) if q.get("scope") == "global"]
    args.keep.mkdir(parents=True, exist_ok=True)
    index_of(corpus, args.keep / f"{SET}.nlp+e5.duckdb", "nlp+e5")
    con = reader(args.keep / f"{SET}.nlp+e5.duckdb")
    judge = meaning.Vectors(con)
    row = {chunk_id: i for i, chunk_id in enumerate(judge.ids)}
    vectors = np.asarray(packaged(query=True)(asked), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    print(f"{len(asked)} global questions of {SET}, budget {args.budget} tokens; judge: multilingual-e5-small\n")
    print("| mode | context | reports | chunk blocks | documents | judge cosine | judge top 50 |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for mode in args.modes:
        db = args.keep / f"{SET}.{mode}.duckdb"
        index_of(corpus, db, mode)
        print(f"bench: {SET} {mode}: judging {len(asked)} questions", file=sys.stderr, flush=True)
        with Index(db) as index:
            rows = [judged(index, judge, row, q, v, args.budget) for q, v in zip(asked, vectors, strict=True)]
        for side in ("acervo", "BM25"):
            mean = {k: statistics.mean(r[side][k] for r in rows) for k in rows[0][side]}
            print(f"| {mode} | {side} | {mean['reports']:.2f} | {mean['chunks']:.2f} | {mean['documents']:.2f} "
                  f"| {mean['cosine']:.4f} | {100 * mean['top']:.1f}% |")
    con.close()


if __name__ == "__main__":
    main()
