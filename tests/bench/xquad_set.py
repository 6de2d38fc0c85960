"""Held-out set: an XQuAD language file as a corpus and questions that `acervo eval` reads, made as the XQuAD sets
of the shared data folder were (its xquad_es/SOURCE.md): every paragraph a document, the 1,000 questions with the
smallest sha1 of their SQuAD id, the same in every language, in the order of their paragraphs.

    python tests/bench/xquad_set.py xquad.th.json OUT

XQuAD (github.com/google-deepmind/xquad, CC BY-SA 4.0) is not in the shared data folder: a language it lacks
(Thai, Chinese...) is a set nobody tuned on. OUT gets corpus.jsonl and questions.jsonl; then, for instance:

    acervo index OUT/corpus.jsonl --db OUT.duckdb --mentions nlp --no-prefect
    acervo eval OUT/questions.jsonl --db OUT.duckdb --limit 200 --negatives tests/data/offtopic_questions.jsonl \
        --negatives tests/data/offtopic_named.jsonl
"""

import argparse
import hashlib
import json
from pathlib import Path

QUESTIONS = 1000  # questions kept, as in the shared data folder's XQuAD sets


def main() -> None:
    """Write OUT/corpus.jsonl and OUT/questions.jsonl from an XQuAD file."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("xquad", type=Path, help="an XQuAD file, e.g. xquad.th.json")
    parser.add_argument("out", type=Path, help="the folder to write corpus.jsonl and questions.jsonl into")
    args = parser.parse_args()
    data = json.loads(args.xquad.read_text(encoding="utf-8-sig"))["data"]
    language = args.xquad.name.split(".")[1]
    documents, questions = [], []
    for a, article in enumerate(data):
        for p, paragraph in enumerate(article["paragraphs"]):
            doc_id = f"xquad-{language}-a{a:02d}-p{p}"
            documents.append({"doc_id": doc_id, "title": "", "text": paragraph["context"].lstrip("\ufeff")})
            questions += [{"id": f"xquad-{language}-{q['id']}", "question": q["question"],
                           "supporting_doc_ids": [doc_id], "parallel_id": q["id"]} for q in paragraph["qas"]]
    chosen = {q["id"] for q in sorted(questions, key=lambda q: hashlib.sha1(q["parallel_id"].encode()).hexdigest())
              [:QUESTIONS]}
    kept = [q for q in questions if q["id"] in chosen]  # in the order of their paragraphs
    args.out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("corpus.jsonl", documents), ("questions.jsonl", kept)):
        with (args.out / name).open("w", encoding="utf-8") as file:
            file.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


if __name__ == "__main__":
    main()
