"""`acervo eval`: recall beside the BM25 baseline, in one run, and empty contexts for off-topic questions."""

import json
from pathlib import Path

from conftest import DATA, SAMPLE
from flows.build import publish
from flows.cli import main
from pipelines.settings import Settings

KEYS = {"recall@2", "recall@5", "recall@10", "recall@512t", "recall@1024t", "recall@2048t", "recall@4096t",
        "route_accuracy", "negative_empty_rate", "questions"}


def test_eval_reports_acervo_and_the_baseline_and_off_topic_questions_stay_empty(tmp_path: Path, capsys):
    db = tmp_path / "w.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles"))
    questions = tmp_path / "q.jsonl"
    questions.write_text((DATA / "2wiki_sample_questions.jsonl").read_text(encoding="utf-8")
                         + (DATA / "offtopic_questions.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    png = tmp_path / "recall.png"
    assert main(["eval", str(questions), "--db", str(db), "--json", "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    result = json.loads(capsys.readouterr().out)
    assert result["acervo"].keys() >= KEYS and result["baseline"].keys() >= KEYS
    ours, theirs = result["acervo"], result["baseline"]
    assert ours["questions"] == 75 and ours["negative_empty_rate"] == 100.0 and ours["route_accuracy"] == 100.0
    assert ours["recall@5"] > theirs["recall@5"] and ours["recall@1024t"] > theirs["recall@1024t"]
    assert ours["recall@10"] >= 95
