"""The listwise pruner: keep-top-k and threshold decisions, atomic groups kept or dropped whole, the model grader's
one call (several under a small window), its retry on unusable grades, and `acervo query --prune`."""

import json
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from llm_server import FakeLLM

from acervo.flows.cli import main
from acervo.flows.index import publish
from acervo.pipelines.llm import MAX_REPLY_BYTES, NESTED, UNREAD, Completion, Unavailable, openai_compatible
from acervo.pipelines.query import prune as pruning
from acervo.pipelines.query.budget import INSTRUCTION, Unit, key, select
from acervo.pipelines.query.context import Index
from acervo.pipelines.settings import Settings
from acervo.pipelines.tokens import count
from conftest import SAMPLE

DIRECTED = "Who directed Wrong Turn 3?"  # a local context: answers, relations, evidence chunks
MIXED = "Who was the mother of Lothair II, and in general what themes dominate?"  # reports with their chunks
OLD_KEYS = ["question", "route", "reason", "blocks", "budget", "refused", "seeds", "labels"]  # the JSON without --prune
BLOCK = re.compile(r"\n\n### Block \d+\n")  # how the model grader numbers blocks in its prompt


@pytest.fixture(scope="module")
def wiki(tmp_path_factory) -> Path:
    """The 2Wiki sample indexed with titles as entities (read-only use)."""
    db = tmp_path_factory.mktemp("prune") / "w.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles"))
    return db


def by_text(rule: Callable[[str], int]) -> pruning.Grader:
    """A grader passed in: each block's grade from its text alone."""
    return lambda question, texts: [rule(t) for t in texts]


def sent(messages: list[dict[str, str]]) -> list[str]:
    """The block texts of a grading request (its first user message)."""
    return BLOCK.split(messages[1]["content"])[1:]


def grading(rule: Callable[[str], int]) -> Callable[[list[dict[str, str]]], str]:
    """The fake model's reply: every block of the request graded by `rule`, as the prompt asks."""
    return lambda messages: json.dumps({"grades": [{"block": n, "grade": rule(t)}
                                                   for n, t in enumerate(sent(messages), start=1)]})


def wrong_turn(text: str) -> int:
    """4 for a block that names Wrong Turn, 1 otherwise."""
    return 4 if "Wrong Turn" in text else 1


def model(server: FakeLLM, index: Index, **extra) -> pruning.ModelGrader:
    """The model grader asking the fake server, counting with the index's tokenizer."""
    return pruning.llm_grader(openai_compatible(server.url, "fake", retries=0), count=index.count, **extra)


def texts(context) -> list[str]:
    return [b.text for b in context.blocks]


@pytest.mark.parametrize("keep_top", [0, 1, 3])
def test_the_first_blocks_stay_whatever_their_grade_and_the_rest_below_the_threshold_go(wiki, keep_top):
    with Index(wiki) as index:
        whole = index.query(DIRECTED, direct=False)
        pruned = index.query(DIRECTED, direct=False, prune=by_text(lambda t: 0), keep_top=keep_top, threshold=1)
    assert texts(pruned) == texts(whole)[:1 + keep_top]
    assert pruned.blocks[0].kind == INSTRUCTION and pruned.pruned["kept"][0] == {"grade": None,
                                                                                 "reason": "the instruction"}
    assert [k["reason"] for k in pruned.pruned["kept"][1:]] == [f"among the first {keep_top}"] * keep_top
    dropped = pruned.pruned["dropped"]
    assert [d["refs"] for d in dropped] == [b.refs for b in whole.blocks[1 + keep_top:]]
    assert {d["reason"] for d in dropped} == {"grade 0 < threshold 1"}
    assert pruned.pruned["tokens_after"] == sum(b.tokens for b in pruned.blocks) < pruned.pruned["tokens_before"]
    assert pruned.budget == whole.budget  # the budget report is the selection's, before pruning


def test_a_higher_threshold_keeps_fewer_blocks_and_each_kept_one_says_why(wiki):
    with Index(wiki) as index:
        whole = index.query(DIRECTED, direct=False)
        grade = {b.text: n % 5 for n, b in enumerate(whole.blocks)}
        kept = {t: index.query(DIRECTED, direct=False, prune=by_text(grade.__getitem__), keep_top=0, threshold=t)
                for t in range(5)}
    assert texts(kept[0]) == texts(whole) and kept[0].pruned["dropped"] == []
    for t in range(1, 5):
        assert set(texts(kept[t])) <= set(texts(kept[t - 1]))
        assert texts(kept[t]) == [x for x in texts(whole) if x in set(texts(kept[t]))]  # the same order
        for block, why in zip(kept[t].blocks[1:], kept[t].pruned["kept"][1:], strict=True):
            assert why["grade"] == grade[block.text]
            assert why["grade"] >= t or why["reason"].endswith("hangs from it"), why
        assert all(d["grade"] < t for d in kept[t].pruned["dropped"])
        assert len(kept[t].blocks) + len(kept[t].pruned["dropped"]) == len(whole.blocks)


def chain() -> list[Unit]:
    """An answer A, a relation B hanging from it, a chunk c hanging from B; and another answer D."""
    a, d = key("entity", "A"), key("entity", "D")
    b = key("entity", "B")
    return [Unit(INSTRUCTION, key(INSTRUCTION, ""), "Answer from the context.", (), 1.0),
            Unit("answer", a, "Alpha: the first [a]", ("a",), 0.9),
            Unit("answer", d, "Delta: the fourth [d]", ("d",), 0.8),
            Unit("relation", b, "Alpha -- Beta (together in 2 chunks): the second [b]", ("b",), 0.7, a),
            Unit("chunk", key("chunk", "c"), "[c] Beta met Gamma.", ("c",), 0.6, b)]


@pytest.mark.parametrize(("grades", "kept"), [
    ({"A": 0, "D": 4, "B": 0, "c": 0}, "D"),  # a parent dropped: its children with it
    ({"A": 0, "D": 4, "B": 0, "c": 4}, "ADBc"),  # a kept chunk keeps its chain up to the answer
    ({"A": 0, "D": 0, "B": 3, "c": 1}, "AB"),  # a kept relation keeps its answer
    ({"A": 4, "D": 0, "B": 1, "c": 1}, "A"),  # a kept parent keeps no child by itself
])
def test_a_unit_is_never_kept_without_the_units_it_hangs_from(grades, kept):
    units = chain()
    name = {u.text: json.loads(u.key)[1] for u in units}
    chosen = select(units, budget=1000, count=count)
    assert [u.key for u in chosen.units] == [u.key for u in units]
    result = pruning.prune("q", chosen, by_text(lambda t: grades[name[t]]), keep_top=0, threshold=3)
    assert "".join(name[u.text] for u in result.kept.units[1:]) == kept
    inside = {u.key for u in result.kept.units}
    assert all(u.parent is None or u.parent in inside for u in result.kept.units)
    assert len(result.kept.units) + len(result.dropped) == len(units)
    assert result.kept.tokens == [n for u, n in zip(chosen.units, chosen.tokens, strict=True) if u.key in inside]


def test_a_kept_relation_keeps_its_answer_in_a_real_context(wiki):
    with Index(wiki) as index:
        context = index.query(DIRECTED, direct=False, prune=by_text(lambda t: 4 if " -- " in t else 0), keep_top=0)
    kinds = [b.kind for b in context.blocks]
    assert "relation" in kinds and "answer" in kinds and "chunk" not in kinds
    heads = [b.text for b in context.blocks if b.kind in ("answer", "relation")]
    for block in context.blocks:
        if block.kind == "relation":
            head = block.text.split(" -- ")[0]
            assert any(t.startswith(f"{head}: ") or f" -- {head} (" in t for t in heads), block.text
    reasons = [k["reason"] for b, k in zip(context.blocks, context.pruned["kept"], strict=True) if b.kind == "answer"]
    assert reasons and all(r.startswith("the kept relation ") and r.endswith(" hangs from it") for r in reasons)


def test_a_kept_report_chunk_keeps_its_report_and_a_dropped_report_its_chunks(wiki):
    with Index(wiki) as index:
        whole = index.query(MIXED, direct=False)
        report = next(b for b in whole.blocks if b.kind == "report")
        cited = [b for b in whole.blocks[whole.blocks.index(report):] if b.kind == "chunk" and b.refs[0] in report.refs]
        # BM25's chunks, interleaved with the reports, stand alone even when a report cites them: the first chunk
        # kept alone that brings the report along is one that hangs from it
        kept = [(b, index.query(MIXED, direct=False, prune=by_text(lambda t, b=b: 4 if t == b.text else 0),
                                keep_top=0)) for b in cited]
        first, only_chunk = next((b, c) for b, c in kept if len(c.blocks) == 3)
        no_report = index.query(MIXED, direct=False, prune=by_text(lambda t: 0), keep_top=0)
    assert all(len(c.blocks) in (2, 3) for _, c in kept)
    assert [b.text for b in only_chunk.blocks[1:]] == [report.text, first.text]
    assert only_chunk.pruned["kept"][1]["reason"] == f"the kept chunk {first.refs[0]} hangs from it"
    assert len(no_report.blocks) == 1 and len(no_report.pruned["dropped"]) == len(whole.blocks) - 1


def test_whole_documents_are_pruned_too(wiki):
    with Index(wiki) as index:
        whole = index.query(MIXED)
        pruned = index.query(MIXED, prune=by_text(lambda t: 4 if "Lothair" in t else 0), keep_top=0)
    assert {b.kind for b in whole.blocks[1:]} == {"document"}
    assert 1 < len(pruned.blocks) < len(whole.blocks)
    assert texts(pruned) == [t for t in texts(whole) if t == whole.blocks[0].text or "Lothair" in t]


def test_the_model_grades_every_block_in_one_call(wiki):
    with FakeLLM(respond=grading(wrong_turn)) as server, Index(wiki) as index:
        grader = model(server, index)
        whole = index.query(DIRECTED, direct=False)
        context = index.query(DIRECTED, direct=False, prune=grader, keep_top=1)
    assert server.calls == 1 and context.pruned["calls"] == 1
    assert sent(server.requests[0]["messages"]) == texts(whole)[1:]
    assert server.requests[0]["messages"][1]["content"].startswith(f"Question: {DIRECTED}\n")
    hanging = "Declan O'Brien: "  # the answer the kept relation "Declan O'Brien -- Wrong Turn 3" hangs from
    assert texts(context) == texts(whole)[:2] + [t for t in texts(whole)[2:] if "Wrong Turn" in t
                                                 or t.startswith(hanging)]
    assert context.pruned["model_tokens_in"] > 0 and context.pruned["model_tokens_out"] > 0
    assert grader.usage == (1, context.pruned["model_tokens_in"], context.pruned["model_tokens_out"])


def test_a_small_window_grades_in_several_calls_each_block_once(wiki):
    with FakeLLM(respond=grading(wrong_turn)) as server, Index(wiki) as index:
        whole = index.query(DIRECTED, direct=False)
        window = index.count(pruning.PROMPT.read_text(encoding="utf-8").strip()) + 300
        context = index.query(DIRECTED, direct=False, prune=model(server, index, window=window), keep_top=1)
        one_call = index.query(DIRECTED, direct=False, prune=by_text(wrong_turn), keep_top=1)
        sizes = [sum(index.count(m["content"]) for m in r["messages"]) + pruning.REPLY_TOKENS * len(sent(r["messages"]))
                 for r in server.requests]
    graded = [t for r in server.requests for t in sent(r["messages"])]
    assert server.calls == context.pruned["calls"] > 1
    assert graded == texts(whole)[1:]  # each block exactly once, in order
    assert all(n <= window for n in sizes), (sizes, window)
    assert texts(context) == texts(one_call)


def test_a_retry_under_a_small_window_fits_it_too(wiki):
    def garbled_first(messages: list[dict[str, str]]) -> str:
        if len(messages) == 2:  # a first request: an unusable reply as long as a good one
            return "x" * len(grading(wrong_turn)(messages))
        return grading(wrong_turn)(messages[:2])

    with FakeLLM(respond=garbled_first) as server, Index(wiki) as index:
        window = index.count(pruning.PROMPT.read_text(encoding="utf-8").strip()) + 400
        context = index.query(DIRECTED, direct=False, prune=model(server, index, window=window), keep_top=1)
        sizes = [sum(index.count(m["content"]) for m in r["messages"]) + pruning.REPLY_TOKENS * len(sent(r["messages"]))
                 for r in server.requests]
    retries = [r for r in server.requests if len(r["messages"]) == 4]
    assert context.pruned["error"] is None and len(retries) == len(server.requests) // 2 > 1
    assert all(n <= window for n in sizes), (sizes, window)


@pytest.mark.parametrize(("first", "error"), [
    ("Sure! Here are the grades.", "the reply is not a JSON object"),
    ('{"grades": [{"block": 1, "grade": 4}]}', "no grade for blocks 2, "),
    ('{"grades": [{"block": 1, "grade": 7}]}', 'block 1 has grade 7, not one of 0-4'),
    ('{"grades": [{"block": 1, "grade": 4}, {"block": 1, "grade": 3}]}', "block 1 is graded twice"),
    ('{"scores": []}', 'the reply has no "grades" list'),
    ("[" * 100_000, f"the reply is not a JSON object ({NESTED})"),
])
def test_unusable_grades_are_asked_again_with_the_error_stated(wiki, first, error):
    replies = [first]

    def respond(messages):
        return replies.pop(0) if replies else grading(wrong_turn)(messages)

    with FakeLLM(respond=respond) as server, Index(wiki) as index:
        context = index.query(DIRECTED, direct=False, prune=model(server, index), keep_top=1)
        expected = index.query(DIRECTED, direct=False, prune=by_text(wrong_turn), keep_top=1)
    assert server.calls == context.pruned["calls"] == 2
    retry = server.requests[1]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"] and retry[2]["content"] == first
    assert error in retry[3]["content"] and retry[3]["content"].startswith("Your reply could not be used: ")
    assert texts(context) == texts(expected) and context.pruned["error"] is None


def test_a_reply_too_long_to_read_is_asked_again_with_the_error_stated_not_repeated(wiki):
    def oversized_first(messages: list[dict[str, str]]) -> str:
        return "x" * MAX_REPLY_BYTES if len(messages) == 2 else grading(wrong_turn)(messages[:2])

    with FakeLLM(respond=oversized_first) as server, Index(wiki) as index:
        context = index.query(DIRECTED, direct=False, prune=model(server, index), keep_top=1)
        expected = index.query(DIRECTED, direct=False, prune=by_text(wrong_turn), keep_top=1)
    assert server.calls == context.pruned["calls"] == 2
    retry = server.requests[1]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"] and retry[2]["content"] == UNREAD
    assert f"the reply was longer than {MAX_REPLY_BYTES} bytes" in retry[3]["content"]
    assert texts(context) == texts(expected) and context.pruned["error"] is None


def test_replies_too_long_to_read_twice_keep_every_block_and_say_why(wiki):
    with FakeLLM(respond=lambda messages: "x" * MAX_REPLY_BYTES) as server, Index(wiki) as index:
        whole = index.query(DIRECTED, direct=False)
        context = index.query(DIRECTED, direct=False, prune=model(server, index))
    assert server.calls == context.pruned["calls"] == 2
    assert texts(context) == texts(whole) and context.pruned["error"] == (
        f"the pruning model's grades were unusable after a retry: the reply was longer than {MAX_REPLY_BYTES} "
        "bytes; every block kept")


def test_grades_unusable_twice_keep_every_block_and_say_why(wiki):
    with FakeLLM(respond=lambda messages: '{"grades": [{"block": 1, "grade": 9}]}') as server, Index(wiki) as index:
        whole = index.query(DIRECTED, direct=False)
        context = index.query(DIRECTED, direct=False, prune=model(server, index))
    assert server.calls == context.pruned["calls"] == 2
    assert texts(context) == texts(whole) and context.pruned["dropped"] == []
    error = context.pruned["error"]
    assert error.startswith("the pruning model's grades were unusable after a retry: block 1 has grade 9")
    assert error.endswith("; every block kept") and "no grade for blocks 2, 3" in error
    assert {k["reason"] for k in context.pruned["kept"][1:]} == {"not graded"}


def test_a_truncated_reply_is_asked_again(wiki):
    with FakeLLM(respond=grading(wrong_turn)) as server, Index(wiki) as index:
        server.faults.append("truncated")
        context = index.query(DIRECTED, direct=False, prune=model(server, index), keep_top=1)
    assert server.calls == 2 and "cut at the model's length limit" in server.requests[1]["messages"][3]["content"]
    assert context.pruned["error"] is None and context.pruned["dropped"]


def test_an_unreachable_model_fails_the_query(wiki):
    with FakeLLM(respond=grading(wrong_turn)) as server, Index(wiki) as index:
        server.faults.append("500")
        with pytest.raises(Unavailable, match="500"):
            index.query(DIRECTED, prune=model(server, index))


def test_a_grader_passed_in_must_grade_every_block_0_to_4(wiki):
    with Index(wiki) as index:
        with pytest.raises(ValueError, match="gave 1 grades for"):
            index.query(DIRECTED, prune=lambda question, blocks: [4])
        with pytest.raises(ValueError, match="grade 5 of block 1 is not one of 0-4"):
            index.query(DIRECTED, prune=by_text(lambda t: 5))
        with pytest.raises(ValueError, match="leaves no room for blocks"):
            pruning.llm_grader(lambda messages: "", window=50, count=index.count)


@pytest.mark.parametrize(("reply", "grades", "error"), [
    ('```json\n{"grades": [{"block": 2, "grade": 0}, {"block": 1, "grade": 4}]}\n```', [4, 0], None),
    ('{"grades": [{"block": 1, "grade": 4}, {"block": 2, "grade": true}]}', [],
     "block 2 has grade true, not one of 0-4"),
    ('{"grades": [{"block": 3, "grade": 4}, {"block": 1, "grade": 1}]}', [],
     '{"block": 3, "grade": 4} names no block from 1 to 2; no grade for block 2'),
    ('{"grades": "4 0"}', [], 'the reply has no "grades" list'),
    ("[" * 100_000, [], f"the reply is not a JSON object ({NESTED})"),
])
def test_a_reply_is_read_strictly(reply, grades, error):
    assert pruning.parse(Completion(reply), 2) == (grades, error)


def test_an_empty_context_is_not_graded(wiki):
    calls = []
    with Index(wiki) as index:
        context = index.query("como faço bolo de cenoura", prune=lambda q, t: calls.append(t) or [])
    assert context.route == "none" and calls == []
    assert context.pruned["calls"] == 0 and context.pruned["blocks_before"] == 0


def test_prune_needs_a_model(wiki, capsys):
    assert main(["query", DIRECTED, "--db", str(wiki), "--prune"]) == 2
    err = capsys.readouterr().err
    assert "--prune needs a model" in err and "--llm-url" in err


def test_query_prune_json_has_the_pruned_blocks_a_subset_in_order(wiki, capsys):
    assert main(["query", DIRECTED, "--db", str(wiki), "--json", "--no-direct"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert list(plain) == OLD_KEYS
    with FakeLLM(respond=grading(wrong_turn)) as server:
        assert main(["query", DIRECTED, "--db", str(wiki), "--json", "--no-direct", "--prune", "--llm-url",
                     server.url, "--llm-model", "fake", "--prune-top-k", "1", "--prune-threshold", "4"]) == 0
        pruned = json.loads(capsys.readouterr().out)
        assert server.calls == 1 and server.requests[0]["model"] == "fake"
    assert list(pruned) == [*OLD_KEYS, "pruned"] and pruned["budget"] == plain["budget"]
    kept = [b["text"] for b in pruned["blocks"]]
    assert kept == [b["text"] for b in plain["blocks"] if b["text"] in kept] and len(kept) < len(plain["blocks"])
    assert pruned["pruned"]["blocks_after"] == len(kept) and (pruned["pruned"]["keep_top"],
                                                              pruned["pruned"]["threshold"]) == (1, 4)
    assert all(d["reason"] == f"grade {d['grade']} < threshold 4" for d in pruned["pruned"]["dropped"])


def test_query_prune_explain_lists_each_dropped_block_with_its_grade(wiki, capsys):
    with FakeLLM(respond=grading(wrong_turn)) as server:
        assert main(["query", DIRECTED, "--db", str(wiki), "--explain", "--no-direct", "--prune", "--llm-url",
                     server.url]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^pruned (\d+) of (\d+) blocks, \d+ -> \d+ tokens \(keep top 2, threshold 3; 1 model calls",
                     out, flags=re.M)
    dropped = re.findall(r"^  dropped (\w+) +grade (\d) .*: grade (\d) < threshold 3$", out, flags=re.M)
    assert dropped and all(g == h == "1" for _, g, h in dropped)
    assert re.search(r"^  answer .* grade \d \(among the first 2\)$", out, flags=re.M)


def test_query_with_a_model_that_never_grades_right_prints_every_block_and_says_so(wiki, capsys):
    assert main(["query", DIRECTED, "--db", str(wiki), "--no-direct"]) == 0
    plain = capsys.readouterr().out
    with FakeLLM(respond=lambda messages: "no idea") as server:
        assert main(["query", DIRECTED, "--db", str(wiki), "--no-direct", "--prune", "--llm-url", server.url]) == 0
        assert server.calls == 2
    done = capsys.readouterr()
    assert done.out == plain
    assert done.err.startswith("acervo: pruning failed: the pruning model's grades were unusable after a retry: ")


@pytest.mark.slow  # seconds of indexing or waiting
def test_query_prune_against_a_hung_endpoint_gives_up_within_its_llm_timeout(wiki, capsys):
    with FakeLLM() as server:
        server.faults = ["slow"] * 4  # no reply to the call nor to any of its 3 retries
        start = time.monotonic()
        code = main(["query", DIRECTED, "--db", str(wiki), "--prune", "--llm-url", server.url, "--llm-timeout", "1"])
        elapsed = time.monotonic() - start
        assert server.calls == 4
    assert code == 4 and elapsed < 30  # 4 tries of 1 s and the backoff between them, not 4 of the default 60 s
    err = capsys.readouterr().err
    assert "language model could not be reached" in err and "timed out" in err


def test_query_refuses_an_llm_timeout_that_is_not_above_0(wiki, capsys):
    with FakeLLM() as server:
        code = main(["query", DIRECTED, "--db", str(wiki), "--prune", "--llm-url", server.url, "--llm-timeout", "0"])
        assert server.calls == 0
    assert code == 2 and "llm_timeout = 0.0: input should be greater than 0" in capsys.readouterr().err
