"""Benchmark: document-level BM25 recall on each evaluation set with each of DuckDB's fts stemmers.

    python tests/bench/bench_stemmers.py [--data DIR] [--sets pt_faquad 2wikimultihopqa] [--stemmers porter portuguese]
        [--limit N]

acervo's postings (pipelines.terms) stem a corpus with the stemmer of its language (setting stemmer, auto: read
off its function words, pipelines.terms.MARKERS) after stripping accents. This measures what the stemmer alone
changes. Each set's documents (title and text) go into one DuckDB fts index per stemmer (accents stripped as in
acervo's postings; no stop list, where acervo's drop fts's English one). Each question's gold documents are then
looked up in the top 1, 2 and 5 documents by BM25. It prints a markdown table, one row per set and stemmer, with
the share of the set's documents that use that stemmer's marker words (their mean; "-" for a stemmer without
markers) and whether auto picks it (pipelines.terms.most_used, as language_stemmer picks over document_words).
It reads the sets directly, not an acervo index.
"""

import argparse
import json
from pathlib import Path

import duckdb
from equivalence import default_data  # the data folder beside the repository, as the other benchmarks find it

from acervo.pipelines.db import load_fts
from acervo.pipelines.names import word_stems
from acervo.pipelines.terms import marker_stems, most_used

SETS = {  # set folder -> (corpus file, questions file)
    "pt_faquad": ("corpus.jsonl", "questions.jsonl"),
    "hotpotqa_sample": ("corpus.jsonl", "questions.jsonl"),
    "2wikimultihopqa": ("corpus.jsonl", "questions.dev.jsonl"),
    "xquad_es": ("corpus.jsonl", "questions.jsonl"),
    "xquad_de": ("corpus.jsonl", "questions.jsonl"),
}
STEMMERS = ("porter", "english", "portuguese", "spanish", "german")
KS = (1, 2, 5)


def recall(con: duckdb.DuckDBPyConnection, questions: list[dict], stemmer: str) -> dict[int, float]:
    """Mean share of each question's gold documents among the top k by BM25, per k, with `stemmer`."""
    con.execute(f"pragma create_fts_index('d', 'doc_id', 'text', stemmer='{stemmer}', stopwords='none', "
                "strip_accents=1, overwrite=1)")
    found = dict.fromkeys(KS, 0.0)
    for q in questions:
        gold = set(q["supporting_doc_ids"])
        ranked = [doc for (doc,) in con.execute(
            "select doc_id from (select doc_id, fts_main_d.match_bm25(doc_id, ?) as s from d) "
            "where s is not null order by s desc, doc_id limit ?", [q["question"], max(KS)]).fetchall()]
        for k in KS:
            found[k] += len(gold & set(ranked[:k])) / len(gold)
    return {k: 100 * v / len(questions) for k, v in found.items()}


def marker_shares(docs: list[dict]) -> dict[str, float]:
    """For each stemmer with marker words (pipelines.terms.MARKERS), the mean share (%) of `docs` whose text uses
    each of them, compared as the terms stage compares them (by stem, over each document's word stems)."""
    used = [word_stems(d["text"]) for d in docs]
    return {name: 100 * sum(sum(w in u for u in used) for w in stems) / len(stems) / len(docs)
            for name, stems in marker_stems().items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="the shared data folder")
    parser.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS))
    parser.add_argument("--stemmers", nargs="+", default=list(STEMMERS), help="DuckDB fts stemmer names")
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions with gold of each set")
    args = parser.parse_args()
    data = args.data or default_data()
    print("| set | stemmer | markers % | auto | questions | R@1 | R@2 | R@5 |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in args.sets:
        corpus, asked = (data / name / part for part in SETS[name])
        docs = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
        questions = [q for q in map(json.loads, asked.read_text(encoding="utf-8").splitlines())
                     if q.get("supporting_doc_ids")][: args.limit]
        con = duckdb.connect()
        load_fts(con)
        con.execute("create table d (doc_id varchar, text varchar)")
        con.executemany("insert into d values (?, ?)",
                        [(d["doc_id"], f"{d.get('title') or ''}\n{d['text']}") for d in docs])
        shares = marker_shares(docs)
        auto = most_used(shares)
        for stemmer in args.stemmers:
            r = recall(con, questions, stemmer)
            share = f"{shares[stemmer]:.1f}" if stemmer in shares else "-"
            print(f"| {name} | {stemmer} | {share} | {'yes' if stemmer == auto else ''} | {len(questions)} | "
                  + " | ".join(f"{r[k]:.1f}" for k in KS) + " |", flush=True)


if __name__ == "__main__":
    main()
