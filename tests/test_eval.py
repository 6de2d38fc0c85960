"""`acervo eval`: recall beside the BM25 baseline, in one run, its ceiling, empty contexts for off-topic
questions (and none for answerable ones), route accuracy for global questions, latency."""

import json
from pathlib import Path

import pytest

from acervo.flows.cli import main
from acervo.flows.index import publish
from acervo.pipelines.query.context import Index
from acervo.pipelines.query.evaluate import KS, QUERY_BUDGET, RECALLS, percentile
from acervo.pipelines.settings import Settings
from conftest import DATA, SAMPLE

QUESTIONS = DATA / "2wiki_sample_questions.jsonl"
OFFTOPIC = DATA / "offtopic_questions.jsonl"
KEYS = {"recall@2", "recall@5", "recall@10", "recall@512t", "recall@1024t", "recall@2048t", "recall@4096t",
        "route_accuracy", "negative_empty_rate", "questions", "ceiling@2", "ceiling@5", "ceiling@10",
        "recall@2_of_ceiling", "recall@5_of_ceiling", "recall@10_of_ceiling", "answerable_empty_rate",
        "global_report_rate", "global_route_rate", "latency_ms_p50", "latency_ms_p95", "questions_with_gold",
        "questions_off_topic", "questions_global", "tokens_used", "truncation_rate", "citations_resolved_rate"}
GLOBAL = ["What are the main themes of this collection?", "Give me an overview of the topics covered.",
          "Summarize the main ideas across all documents.", "What subjects come up most often?"]


@pytest.fixture(scope="module")
def wiki(tmp_path_factory) -> Path:
    """The 2Wiki sample indexed with titles as entities (read-only use)."""
    db = tmp_path_factory.mktemp("wiki") / "w.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles"))
    return db


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return path


def evaluated(capsys, *argv: str) -> dict:
    assert main(["eval", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow  # seconds of indexing or waiting
def test_eval_reports_acervo_and_the_baseline_and_off_topic_questions_stay_empty(wiki: Path, tmp_path: Path,
                                                                                  capsys):
    png = tmp_path / "recall.png"
    result = evaluated(capsys, str(QUESTIONS), "--db", str(wiki), "--negatives", str(OFFTOPIC), "--plot", str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert result["acervo"].keys() >= KEYS and result["baseline"].keys() >= KEYS
    ours, theirs = result["acervo"], result["baseline"]
    assert (ours["questions"], ours["questions_with_gold"], ours["questions_off_topic"]) == (83, 27, 56)
    assert ours["negative_empty_rate"] == 100.0 and ours["route_accuracy"] == 100.0
    assert ours["answerable_empty_rate"] == 0.0
    assert ours["recall@5"] > theirs["recall@5"] and ours["recall@1024t"] > theirs["recall@1024t"]
    assert ours["recall@10"] >= 95
    assert theirs["route_accuracy"] is None and theirs["global_report_rate"] is None
    assert theirs["global_route_rate"] is None
    assert ours["citations_resolved_rate"] == 100.0 and theirs["citations_resolved_rate"] is None
    assert ours["global_report_rate"] is None  # no question expects a global route
    margins = [ours[k] - theirs[k] for k in RECALLS]
    assert result["margin_over_baseline"]["min"] == round(min(margins), 2)
    assert result["margin_over_baseline"]["at"] == RECALLS[margins.index(min(margins))]
    # the same figures as one concatenated file gives, but for latency
    both = write(tmp_path / "both.jsonl", records(QUESTIONS) + records(OFFTOPIC))
    again = evaluated(capsys, str(both), "--db", str(wiki))
    for name in ("acervo", "baseline"):
        drop = {"latency_ms_p50", "latency_ms_p95"}
        assert {k: v for k, v in again[name].items() if k not in drop} == \
               {k: v for k, v in result[name].items() if k not in drop}


@pytest.mark.slow  # seconds of indexing
def test_the_ceiling_is_what_k_documents_can_hold_and_recall_is_given_as_a_share_of_it(wiki: Path, capsys):
    gold = [len(item["supporting_doc_ids"]) for item in records(QUESTIONS)]
    assert max(gold) > min(KS)  # some question has more gold documents than recall@2 can find
    result = evaluated(capsys, str(QUESTIONS), "--db", str(wiki))
    for name in ("acervo", "baseline"):
        figures = result[name]
        for k in KS:
            ceiling = 100 * sum(min(k, n) / n for n in gold) / len(gold)
            assert figures[f"ceiling@{k}"] == round(ceiling, 2)
            assert figures[f"recall@{k}"] <= figures[f"ceiling@{k}"]
            assert figures[f"recall@{k}_of_ceiling"] == round(100 * figures[f"recall@{k}"] / figures[f"ceiling@{k}"],
                                                              2)
    assert result["acervo"]["ceiling@2"] < 100 and result["acervo"]["recall@2_of_ceiling"] > \
        result["acervo"]["recall@2"]


def test_an_answerable_question_with_an_empty_context_is_counted(wiki: Path, tmp_path: Path, capsys):
    items = records(QUESTIONS)[:3]
    lost = {"question": "How do I bake a carrot cake?", "supporting_doc_ids": items[0]["supporting_doc_ids"]}
    result = evaluated(capsys, str(write(tmp_path / "q.jsonl", [*items, lost])), "--db", str(wiki))
    assert result["acervo"]["answerable_empty_rate"] == 25.0
    assert result["acervo"]["negative_empty_rate"] is None  # it has gold documents: not off-topic


def test_unlabelled_questions_are_no_off_topic_ones(wiki: Path, tmp_path: Path, capsys):
    path = write(tmp_path / "q.jsonl", [{"question": "Who directed Wrong Turn 3?"},
                                        {"question": "How do I bake a carrot cake?"}])
    result = evaluated(capsys, str(path), "--db", str(wiki))["acervo"]
    assert result["questions_off_topic"] == 0 and result["negative_empty_rate"] is None
    assert result["answerable_empty_rate"] == 50.0


def test_a_question_file_whose_text_holds_a_line_separator_is_read_by_its_json_lines(wiki: Path, tmp_path: Path,
                                                                                      capsys):
    items = records(QUESTIONS)[:2]
    items[0]["question"] += "\u2028(a line separator, valid inside a JSON string)"
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    assert evaluated(capsys, str(path), "--db", str(wiki))["acervo"]["questions"] == 2


@pytest.mark.slow  # seconds of indexing or waiting
def test_limit_keeps_every_negative_and_a_negatives_file_must_hold_no_gold(wiki: Path, tmp_path: Path, capsys):
    result = evaluated(capsys, str(QUESTIONS), "--db", str(wiki), "--negatives", str(OFFTOPIC), "--negatives",
                       str(OFFTOPIC), "--limit", "5")
    assert (result["acervo"]["questions_with_gold"], result["acervo"]["questions_off_topic"]) == (5, 112)
    assert main(["eval", str(QUESTIONS), "--db", str(wiki), "--negatives", str(QUESTIONS)]) == 2
    assert f"{QUESTIONS}:1: a --negatives question must have no supporting_doc_ids" in capsys.readouterr().err


def test_scope_global_expects_the_global_or_mixed_route_and_counts_reports(wiki: Path, tmp_path: Path, capsys):
    asked = [{"id": f"g{i}", "question": q, "scope": "global", "answer": None} for i, q in enumerate(GLOBAL)]
    asked.append({"question": "Who directed Wrong Turn 3?", "scope": "global"})  # routed local: a miss
    result = evaluated(capsys, str(write(tmp_path / "g.jsonl", asked)), "--db", str(wiki))
    with Index(wiki) as index:
        contexts = [index.query(item["question"], budget=QUERY_BUDGET) for item in asked]
    routes = [c.route for c in contexts]
    assert routes[-1] == "local" and routes.count("global") + routes.count("mixed") >= 1
    ours = result["acervo"]
    assert (ours["questions_global"], ours["questions_off_topic"], ours["questions_with_gold"]) == (5, 0, 0)
    assert ours["route_accuracy"] == ours["global_route_rate"] == \
        round(100 * sum(r in ("global", "mixed") for r in routes) / 5, 2)
    reported = sum(any(b.kind == "report" for b in c.blocks) for c in contexts)
    assert reported and ours["global_report_rate"] == round(100 * reported / 5, 2)
    assert ours["recall@5"] is None and ours["negative_empty_rate"] is None
    assert ours["answerable_empty_rate"] == round(100 * sum(not c.blocks for c in contexts) / 5, 2)
    explicit = [{"question": GLOBAL[0], "route": "mixed"}]  # a gold route is matched exactly
    result = evaluated(capsys, str(write(tmp_path / "m.jsonl", explicit)), "--db", str(wiki))
    assert result["acervo"]["route_accuracy"] == (100.0 if routes[0] == "mixed" else 0.0)


def test_latency_percentiles_are_of_every_question():
    assert percentile([], 0.5) is None
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0 and percentile([3.0, 1.0, 2.0], 0.95) == 3.0
    assert percentile([float(i) for i in range(1, 101)], 0.95) == 95.0


@pytest.mark.slow  # seconds of indexing
def test_the_table_names_each_figure_and_its_json_key(wiki: Path, capsys):
    assert main(["eval", str(QUESTIONS), "--db", str(wiki), "--negatives", str(OFFTOPIC), "--limit", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("59 questions: 3 with gold documents, 56 off-topic, 0 global\n")
    row = next(line.split() for line in out.splitlines() if line.rstrip().endswith(" negative_empty_rate"))
    assert row[:3] == ["off-topic", "empty", "100.0"]
    latency = next(line.split() for line in out.splitlines() if line.rstrip().endswith(" latency_ms_p50"))
    assert float(latency[3]) > 0 and float(latency[4]) > 0
    assert "least acervo - BM25 over every k and budget: " in out
