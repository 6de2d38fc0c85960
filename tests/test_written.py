"""Written reports and answers: a language model's text, every sentence citing chunks of the row's own inputs,
verified before it is stored, cached by input hash, and shown only to a caller who may read those inputs.

The model is the fake OpenAI-compatible server on loopback (tests/llm_server.py) or a function passed in; its
replies cite the chunk ids the prompt lists, or break the rules on purpose.
"""

import json
import threading
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest
from llm_server import ENDPOINT, FakeLLM

from acervo.flows.cli import main
from acervo.flows.index import build, publish
from acervo.pipelines import citations, reconfigure, written_answers, written_reports
from acervo.pipelines.citations import CITABLE, OVERSIZED, Checked, check
from acervo.pipelines.db import connect
from acervo.pipelines.llm import MAX_REPLY_BYTES, UNREAD, Completion, Meter
from acervo.pipelines.query import reports
from acervo.pipelines.query.context import Index
from acervo.pipelines.reconfigure import SettingsChanged, recomputes, resolve
from acervo.pipelines.run import Run
from acervo.pipelines.settings import Requested, Settings
from conftest import SAMPLE, SEED, free_port, write_jsonl

WRITTEN = "Written by the model."  # every sentence the fake model writes opens with it
TABLES = {"documents": "doc_id", "chunks": "chunk_id", "entities": "entity_id", "entity_aliases": "entity_id, alias",
          "mentions": "entity_id, chunk_id", "edges": "src, dst", "communities": "community_id",
          "community_members": "community_id, entity_id", "entity_answers": "entity_id",
          "community_reports": "community_id", "report_lines": "community_id, ord", "chunk_terms": "term, chunk_id",
          "chunk_lengths": "chunk_id", "document_words": "doc_id", "word_documents": "word, scope",
          "entity_vectors": "entity_id", "chunk_vectors": "chunk_id"}  # what a model must never change


def citable(messages: list[dict]) -> list[str]:
    """The chunk ids the first user message of a request lets the reply cite."""
    user = next(m["content"] for m in messages if m["role"] == "user")
    return user.split("\n")[-1].removeprefix(CITABLE).split(", ")


def reply(sentences: list[tuple[str, list[str]]]) -> str:
    """A reply in the shape the prompts ask for."""
    return json.dumps({"sentences": [{"text": t, "cites": c} for t, c in sentences]})


def honest(messages: list[dict]) -> str:
    """A model that cites the first and the last chunk it may."""
    ids = citable(messages)
    return reply([(f"{WRITTEN} One.", ids[:1]), (f"{WRITTEN} Two.", ids[-1:])])


class Counting:
    """A Chat function: `respond`'s reply to each request, the requests kept (thread-safe)."""

    def __init__(self, respond: Callable[[list[dict]], str] = honest) -> None:
        self.respond, self.requests, self.lock = respond, [], threading.Lock()

    def __call__(self, messages: list[dict]) -> str:
        with self.lock:
            self.requests.append(list(messages))
        return self.respond(list(messages))


def table(con, name: str, order: str) -> list[tuple]:
    return con.execute(f"select * from {name} order by {order}").fetchall()


def opened(db: Path) -> duckdb.DuckDBPyConnection:
    return connect(db, read_only=True)


@pytest.mark.slow  # seconds of indexing or waiting
def test_verified_rows_are_stored_with_citations_drawn_from_their_own_inputs(tmp_path: Path):
    db = tmp_path / "index.duckdb"
    with FakeLLM(respond=honest) as server:
        publish(SEED, db, Settings(llm_url=server.url, llm_model="fake"))
        n_requests = len(server.requests)
    con = opened(db)
    n_reports, n_answers = (con.execute(f"select count(*) from {t}").fetchone()[0]
                            for t in ("community_reports", "entity_answers"))
    assert n_requests == n_reports + n_answers
    assert {r["model"] for r in server.requests} == {"fake"}
    chunk_ids = {c for (c,) in con.execute("select chunk_id from chunks").fetchall()}
    written = con.execute("select w.report, w.refs, w.inputs, w.reason, r.evidence_refs, "
                          "(select list(evidence_ref order by ord) from report_lines l "
                          " where l.community_id = w.community_id) from written_reports w "
                          "join community_reports r using (community_id)").fetchall()
    assert len(written) == n_reports
    for text, refs, inputs, reason, evidence, lines in written:
        assert text.startswith(WRITTEN) and reason is None
        assert inputs == list(dict.fromkeys(evidence + lines))
        assert refs and set(refs) <= set(inputs) <= chunk_ids
        assert all(f"[{ref}]" in text for ref in refs)
    answers = con.execute("select w.entity_id, w.answer, w.refs, w.inputs, a.evidence_ref, "
                          "(select list(chunk_id) from mentions m where m.entity_id = w.entity_id) "
                          "from written_answers w join entity_answers a using (entity_id)").fetchall()
    assert len(answers) == n_answers
    for _, text, refs, inputs, ref, mentioned in answers:
        assert text.startswith(WRITTEN) and inputs[0] == ref and len(inputs) <= 3
        assert set(refs) <= set(inputs) <= set(mentioned)
    detail = dict(con.execute("select stage, detail from run_stages where stage like 'written_%'").fetchall())
    counts = {stage: json.loads(d) for stage, d in detail.items()}
    assert counts["written_reports"]["calls"] == counts["written_reports"]["written"] == n_reports
    assert counts["written_answers"]["calls"] == counts["written_answers"]["written"] == n_answers
    assert counts["written_answers"]["tokens_in"] > 0 and counts["written_answers"]["tokens_out"] > 0
    assert counts["written_reports"]["fallbacks"] == counts["written_reports"]["rewrites"] == 0
    con.close()


def test_a_rendered_reply_puts_each_sentence_s_cites_after_it():
    text = reply([("First  one.", ["c1", "c2", "c1"]), ("Second.", ["c3"])])
    assert check(Completion(text), {"c1", "c2", "c3"}) == Checked("First one. [c1] [c2] Second. [c3]",
                                                                   ("c1", "c2", "c3"))
    assert check(Completion("```json\n" + text + "\n```"), {"c1", "c2", "c3"}).text is not None


BROKEN = {  # a reply that breaks one rule, and the reason stored
    "invented": (lambda ids: reply([("Fine.", ids[:1]), ("Made up.", ["2w99999#000000000000"])]),
                 "invented citation 2w99999#000000000000"),
    "uncited": (lambda ids: reply([("Fine.", ids[:1]), ("Nothing cited.", [])]), "uncited: sentence 2"),
    "malformed": (lambda ids: "Here is the summary you asked for.", "malformed: not JSON"),
    "shape": (lambda ids: json.dumps({"summary": "no sentences"}), 'malformed: no list "sentences"'),
    "empty": (lambda ids: reply([]), "empty"),
    "bracketed": (lambda ids: reply([(f"Inline [{ids[0]}].", ids[:1])]), "malformed: sentence 1 has brackets"),
    "nested": (lambda ids: "[" * 100_000, "malformed: not JSON"),  # deeper than any JSON parser follows
}


@pytest.mark.slow  # seconds of indexing or waiting
@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_a_reply_that_breaks_a_rule_is_asked_again_once_then_the_extractive_text_stands(broken: str,
                                                                                         tmp_path: Path):
    make, reason = BROKEN[broken]
    model = Counting(lambda messages: make(citable(messages)))
    con = connect()
    build(Run.alone(con), SEED, Settings(), llm=model)
    rows = con.execute("select community_id, report, refs, reason from written_reports").fetchall()
    answers = con.execute("select answer, refs, reason from written_answers").fetchall()
    n_rows = len(rows) + len(answers)
    assert len(model.requests) == 2 * n_rows  # each asked once more
    assert all(text is None and refs == [] and why.startswith(reason) for _, text, refs, why in rows)
    assert all(text is None and why.startswith(reason) for text, _, why in answers)
    first = model.requests[0]
    second = next(r for r in model.requests if len(r) > len(first) and r[: len(first)] == first)  # its retry
    assert [m["role"] for m in second[len(first):]] == ["assistant", "user"]
    assert second[len(first)]["content"] == make(citable(first))
    assert reason.split(":")[0] in second[-1]["content"] and "rejected" in second[-1]["content"]
    detail = {s.stage: s.work.detail for s in build(Run.alone(con), SEED, Settings(), llm=model)}
    assert len(model.requests) == 2 * n_rows  # a stored fallback is not asked again while its inputs stand
    assert detail["written_reports"] == detail["written_answers"] == {"skipped": 1}


def test_a_reply_mended_on_the_retry_is_stored():
    def respond(messages: list[dict]) -> str:
        if messages[-1]["role"] == "user" and "rejected" in messages[-1]["content"]:
            return honest(messages)
        return reply([("Made up.", ["nowhere#1"])])

    model = Counting(respond)
    con = connect()
    done = {s.stage: s.work.detail for s in build(Run.alone(con), SEED, Settings(), llm=model)}
    assert con.execute("select count(*) from written_reports where report is null or reason is not null"
                       ).fetchone() == (0,)
    assert done["written_reports"]["rewrites"] == done["written_reports"]["written"] > 0
    assert done["written_reports"]["fallbacks"] == 0


def test_an_index_run_whose_model_replies_100000_brackets_succeeds_with_the_extractive_text_and_the_reason(
        tmp_path: Path, capsys):
    db = tmp_path / "index.duckdb"
    with FakeLLM(respond=lambda messages: "[" * 100_000) as server:
        assert main(["index", str(SEED), "--db", str(db), "--no-prefect", "--llm-url", server.url]) == 0
        n_requests = len(server.requests)
    con = opened(db)
    rows = con.execute("select report, reason from written_reports union all "
                       "select answer, reason from written_answers").fetchall()
    con.close()
    assert n_requests == 2 * len(rows) > 0  # each asked once more
    assert set(rows) == {(None, "malformed: not JSON")}
    assert f"0 rows written, {len(rows)} kept extractive" in capsys.readouterr().out


def oversized_until_told(messages: list[dict]) -> str:
    """A model whose first reply is longer than any reply is read, and whose retry is honest."""
    return honest(messages) if "rejected" in messages[-1]["content"] else "x" * MAX_REPLY_BYTES


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_reply_too_long_to_read_is_asked_again_with_the_error_stated_not_repeated(tmp_path: Path):
    db = tmp_path / "index.duckdb"
    with FakeLLM(respond=oversized_until_told) as server:
        _, stages = publish(SEED, db, Settings(llm_url=server.url, llm_model="fake"))
        retries = [r["messages"] for r in server.requests if len(r["messages"]) > 2]
    detail = {s.stage: s.work.detail for s in stages}
    n_rows = sum(detail[stage]["written"] for stage in ("written_reports", "written_answers"))
    assert n_rows == len(retries) == len(server.requests) // 2 > 0
    assert detail["written_reports"]["rewrites"] == detail["written_reports"]["written"]
    for messages in retries:
        assert [m["role"] for m in messages[-2:]] == ["assistant", "user"] and messages[-2]["content"] == UNREAD
        assert OVERSIZED in messages[-1]["content"]


@pytest.mark.slow  # seconds of indexing or waiting
def test_replies_too_long_to_read_twice_keep_the_extractive_text_with_the_reason_stored(tmp_path: Path):
    db = tmp_path / "index.duckdb"
    with FakeLLM(respond=lambda messages: "x" * MAX_REPLY_BYTES) as server:
        settings = Settings(llm_url=server.url, llm_model="fake")
        publish(SEED, db, settings)
        asked = len(server.requests)
        publish(SEED, db, settings)
        assert len(server.requests) == asked  # stored with its reason: not asked again while its inputs stand
    con = opened(db)
    rows = con.execute("select report, reason from written_reports union all "
                       "select answer, reason from written_answers").fetchall()
    con.close()
    assert asked == 2 * len(rows) > 0 and set(rows) == {(None, OVERSIZED)}


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_truncated_reply_is_asked_again_and_a_rerun_with_no_change_makes_no_call(tmp_path: Path):
    db = tmp_path / "index.duckdb"
    with FakeLLM(respond=honest) as server:
        server.faults = ["truncated", "truncated"]  # the first row: both its replies cut at the length limit
        publish(SEED, db, Settings(llm_url=server.url, llm_model="fake", llm_concurrency=1))
        asked = len(server.requests)
        settings = Settings(llm_url=server.url, llm_model="fake")
        _, stages = publish(SEED, db, settings)
        assert len(server.requests) == asked
        publish(SEED, db, settings.model_copy(update={"llm_max_calls": 3}))  # a run knob: stages skip
        assert len(server.requests) == asked
    con = opened(db)
    assert con.execute("select count(*) from written_reports where reason = 'truncated'").fetchone() == (1,)
    con.close()


@pytest.mark.slow  # seconds of indexing or waiting
def test_endpoint_faults_are_sent_again_and_a_reply_that_is_no_completion_leaves_its_row_for_the_next_run(
        tmp_path: Path):
    db = tmp_path / "index.duckdb"
    with FakeLLM(respond=honest) as server:
        server.faults = ["not_json", "429", "500"]  # the first row: no completion; the second: sent again twice
        settings = Settings(llm_url=server.url, llm_model="fake", llm_concurrency=1)
        _, stages = publish(SEED, db, settings)
        detail = {s.stage: s.work.detail for s in stages}
        assert detail["written_reports"]["retries"] == 2 and detail["written_reports"]["failed"] == 1
        assert detail["written_reports"]["fallbacks"] == 1 and detail["written_reports"]["rejected"] == 0
        con = opened(db)
        n_reports, n_written = con.execute("select (select count(*) from community_reports), "
                                           "(select count(*) from written_reports)").fetchone()
        con.close()
        assert n_written == n_reports - 1
        asked = len(server.requests)
        _, stages = publish(SEED, db, settings)
        assert len(server.requests) == asked + 1  # the row left, and only it
    con = opened(db)
    assert con.execute("select count(*) from written_reports where report is not null").fetchone() == (n_reports,)
    con.close()


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_request_the_endpoint_refuses_keeps_its_extractive_text_with_the_refusal_and_is_not_asked_again(
        tmp_path: Path, capsys):
    db = tmp_path / "index.duckdb"
    with FakeLLM(respond=honest) as server:
        server.faults = ["400"]  # the first report's prompt is too long for the model: the rest is written
        args = ["index", str(SEED), "--db", str(db), "--no-prefect", "--llm-url", server.url, "--llm-concurrency", "1"]
        assert main(args) == 0
        assert server.calls == len(server.requests)  # a refusal is not sent again
        summary = capsys.readouterr().out
        con = opened(db)
        refused = con.execute("select reason from written_reports where report is null").fetchall()
        n_written = con.execute("select count(*) from written_reports where report is not null").fetchone()[0]
        con.close()
        assert len(refused) == 1 and refused[0][0].startswith("refused: ") and "400" in refused[0][0]
        assert n_written > 0 and "1 kept extractive" in summary and "left for the next run" not in summary
        asked = server.calls
        assert main(args) == 0
        assert server.calls == asked  # stored with its reason: not asked again until its inputs change


def written_hashes(con) -> dict[str, dict[str, str]]:
    return {t: dict(con.execute(f"select {key}, input_hash from {t}").fetchall())
            for t, key in (("written_reports", "community_id"), ("written_answers", "entity_id"),
                           ("community_reports", "community_id"), ("entity_answers", "entity_id"))}


def labels(con) -> dict[str, str]:
    return dict(con.execute("select entity_id, label from entities").fetchall())


@pytest.mark.slow  # seconds of indexing or waiting
def test_one_edited_document_rewrites_exactly_the_rows_whose_inputs_changed(tmp_path: Path):
    records = [json.loads(line) for line in SAMPLE.read_text("utf-8").splitlines()]
    source, db = write_jsonl(tmp_path / "corpus.jsonl", records), tmp_path / "index.duckdb"
    model = Counting()
    settings = Settings(mentions="titles", llm_model="fake")
    publish(source, db, settings, llm=model)
    con = opened(db)
    before, named = written_hashes(con), labels(con)
    con.close()
    records[5]["text"] += " Its author later moved to Lisbon."
    write_jsonl(source, records)
    model.requests.clear()
    publish(source, db, settings, llm=model)
    con = opened(db)
    after, now = written_hashes(con), labels(con)
    con.close()

    def changed(t: str) -> set[str]:
        return {k for k, v in after[t].items() if before[t].get(k) != v}

    reports_due = changed("community_reports")
    answers_due = changed("entity_answers") | {e for e in after["entity_answers"] if named.get(e) != now[e]}
    assert 0 < len(model.requests) == len(reports_due) + len(answers_due) < len(before["written_answers"])
    assert changed("written_reports") == reports_due and changed("written_answers") == answers_due
    assert set(after["written_reports"]) == set(after["community_reports"])
    assert set(after["written_answers"]) == set(after["entity_answers"])


@pytest.mark.slow  # seconds of indexing or waiting
def test_rows_the_budget_had_no_room_for_are_not_stored_and_the_next_run_writes_them(tmp_path: Path):
    db, model = tmp_path / "index.duckdb", Counting()
    _, stages = publish(SEED, db, Settings(llm_max_calls=5), llm=model)
    detail = {s.stage: s.work.detail for s in stages}
    con = opened(db)
    n_reports, n_answers = (con.execute(f"select count(*) from {t}").fetchone()[0]
                            for t in ("community_reports", "entity_answers"))
    stored = {t: con.execute(f"select count(*) from {t}").fetchone()[0] for t in ("written_reports", "written_answers")}
    con.close()
    assert len(model.requests) == 5 and n_reports < 5  # reports first: all of them written
    assert stored == {"written_reports": n_reports, "written_answers": 5 - n_reports}
    left = n_answers - (5 - n_reports)
    assert detail["written_answers"]["over_budget"] == detail["written_answers"]["fallbacks"] == left
    assert detail["written_answers"]["calls"] == 5 - n_reports and detail["written_reports"]["over_budget"] == 0
    assert detail["written_answers"]["rejected"] == 0  # the summary's "kept extractive": budget rows are not
    _, stages = publish(SEED, db, Settings(), llm=model)  # no budget now: the rows left are written
    assert len(model.requests) == 5 + left
    con = opened(db)
    assert con.execute("select count(*) from written_answers where answer is not null").fetchone() == (n_answers,)
    con.close()
    publish(SEED, db, Settings(), llm=model)
    assert len(model.requests) == 5 + left


@pytest.mark.slow  # seconds of indexing or waiting
def test_an_unreachable_model_exits_4_and_leaves_the_last_good_index(tmp_path: Path, capsys):
    db = tmp_path / "index.duckdb"
    assert main(["index", str(SEED), "--db", str(db), "--no-prefect"]) == 0
    was = db.read_bytes()
    dead = f"http://127.0.0.1:{free_port()}/v1"
    code = main(["index", str(SEED), "--db", str(db), "--no-prefect", "--reconfigure", "--llm-url", dead,
                 "--llm-model", "m", "--llm-timeout", "1"])
    assert code == 4
    assert "language model could not be reached" in capsys.readouterr().err
    assert db.read_bytes() == was
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == ["index.duckdb"]


@pytest.mark.slow  # seconds of indexing or waiting
def test_the_index_summary_says_what_the_model_was_asked(tmp_path: Path, capsys):
    db = tmp_path / "index.duckdb"
    with FakeLLM(respond=lambda messages: "no JSON here") as server:
        assert main(["index", str(SEED), "--db", str(db), "--no-prefect", "--llm-url", server.url]) == 0
        n_requests = len(server.requests)
    con = opened(db)
    n_rows = sum(con.execute(f"select count(*) from {t}").fetchone()[0] for t in ("written_reports", "written_answers"))
    con.close()
    assert f"language model: {n_requests} calls, 0 rows written, {n_rows} kept extractive" in capsys.readouterr().out
    assert main(["index", str(SEED), "--db", str(db), "--no-prefect"]) == 0
    assert "language model" not in capsys.readouterr().out  # nothing asked: nothing to say


@pytest.mark.slow  # seconds of indexing or waiting
def test_without_a_model_no_row_is_written_and_a_model_changes_no_other_table(tmp_path: Path):
    plain, written = connect(), connect()
    build(Run.alone(plain), SAMPLE, Settings(mentions="titles"))
    build(Run.alone(written), SAMPLE, Settings(mentions="titles"), llm=Counting())
    for t, order in TABLES.items():
        assert table(plain, t, order) == table(written, t, order), t
    assert plain.execute("select count(*) from written_reports").fetchone() == (0,)
    assert plain.execute("select count(*) from written_answers").fetchone() == (0,)
    assert written.execute("select count(*) from written_answers").fetchone()[0] > 0
    build(Run.alone(written), SAMPLE, Settings(mentions="titles"))  # the model gone: its rows go too
    assert written.execute("select count(*) from written_reports").fetchone() == (0,)
    assert written.execute("select count(*) from written_answers").fetchone() == (0,)


def ask(db: Path, questions: list[str], scopes: list[str] | None = None, cite: str = "labels") -> list[str]:
    with Index(db) as index:
        return [index.query(q, budget=800, scopes=scopes, direct=False, cite=cite).to_json() for q in questions]


QUESTIONS = ["Who was Lothair II married to?", "Who directed Wrong Turn 3?", "What are the main themes?",
             "Where was the director of film The Hunger born?"]


@pytest.mark.slow  # seconds of indexing or waiting
def test_an_index_without_a_model_holds_no_written_rows_and_its_queries_look_for_none(tmp_path: Path):
    db = tmp_path / "index.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles"))
    before = ask(db, QUESTIONS)
    con = connect(db, read_only=True)
    assert con.execute("select (select count(*) from written_reports) + (select count(*) from written_answers)"
                       ).fetchone() == (0,)
    con.close()
    with Index(db) as index:
        assert index.written == frozenset()
    assert ask(db, QUESTIONS) == before


@pytest.mark.slow  # seconds of indexing or waiting
def test_written_text_is_shown_in_place_of_the_extractive_with_its_refs(tmp_path: Path):
    db = tmp_path / "index.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles"), llm=Counting())
    result = json.loads(ask(db, ["Who was Lothair II married to?"], cite="ids")[0])
    (answer,) = [b for b in result["blocks"] if b["kind"] == "answer"]
    assert WRITTEN in answer["text"] and answer["text"].startswith("Lothair II: ")
    assert answer["refs"] and all(f"[{r}]" in answer["text"] for r in answer["refs"])
    labelled = json.loads(ask(db, ["Who was Lothair II married to?"])[0])
    (answer,) = [b for b in labelled["blocks"] if b["kind"] == "answer"]
    label = {ref: name for name, ref in labelled["labels"].items()}
    assert WRITTEN in answer["text"] and all(f"[{label[r]}]" in answer["text"] for r in answer["refs"])
    with Index(db) as index:
        units = reports.units(index.con, "What are the main themes?", None, None)
    blocks = [u for u in units if u.kind == "report"]
    assert blocks and all(reports.SUMMARY + WRITTEN in u.text for u in blocks)
    summary = blocks[0].text.split(reports.SUMMARY)[1].split("\n")[0]
    assert all(ref in blocks[0].refs for ref in summary.replace("]", "[").split("[")[1::2])


SCOPED = [
    {"doc_id": "d1", "title": "Alpha Corp", "text": "Alpha Corp is a company that makes anvils. Bob Smith founded "
     "Alpha Corp.", "entities": ["Alpha Corp", "Bob Smith"]},
    {"doc_id": "d2", "title": "Beta Labs", "text": "Bob Smith later founded Beta Labs in secret.",
     "entities": ["Bob Smith", "Beta Labs"], "scope": "b"},
    {"doc_id": "d3", "title": "Anvils", "text": "Anvils are heavy. Alpha Corp sells anvils.",
     "entities": ["Alpha Corp", "Anvils"], "scope": "a"},
]


def test_a_scoped_caller_sees_a_written_text_only_when_it_may_read_all_its_inputs(tmp_path: Path):
    db = tmp_path / "index.duckdb"
    publish(write_jsonl(tmp_path / "docs.jsonl", SCOPED), db, Settings(), llm=Counting())
    con = opened(db)
    inputs = dict(con.execute("select entity_id, inputs from written_answers").fetchall())
    report_inputs = dict(con.execute("select community_id, inputs from written_reports").fetchall())
    con.close()
    assert "d2" in " ".join(inputs["bob smith"]) and not any(i.startswith("d2") for i in inputs["anvils"])

    def answer_of(question: str, scopes: list[str] | None) -> str:
        (block,) = [b for b in json.loads(ask(db, [question], scopes)[0])["blocks"] if b["kind"] == "answer"]
        return block["text"]

    assert WRITTEN in answer_of("Who is Bob Smith?", None)
    assert WRITTEN not in answer_of("Who is Bob Smith?", ["a"])  # one of its chunks is scope b's
    assert WRITTEN in answer_of("What are Anvils?", ["a"])
    with Index(db) as index:
        for scopes, hidden in ((None, ""), (["a"], "d2#"), (["a", "b"], "")):
            units = reports.units(index.con, "What are the main themes?", scopes, None, index.view(scopes))
            shown = {json.loads(u.key)[1]: reports.SUMMARY in u.text for u in units if u.kind == "report"}
            assert shown == {c: not hidden or not any(i.startswith(hidden) for i in report_inputs[c])
                             for c in shown}, scopes
            assert len(set(shown.values())) == (2 if hidden else 1)


def test_budget_concurrency_and_timeout_change_without_reconfigure_and_the_model_with_it():
    was = Settings(llm_url="http://127.0.0.1:1/v1", llm_model="m", llm_max_calls=10)
    new, changed = resolve(was, Requested(given={"llm_max_calls": 3, "llm_concurrency": 2, "llm_timeout": 5.0}))
    assert changed == [] and (new.llm_max_calls, new.llm_concurrency, new.llm_timeout) == (3, 2, 5.0)
    kept, _ = resolve(was, Requested(given={}))
    assert kept.llm_url == was.llm_url and kept.llm_max_calls is None  # a budget is the run's own
    with pytest.raises(SettingsChanged, match="llm_model"):
        resolve(was, Requested(given={"llm_model": "other"}))
    assert recomputes(["llm_model"]) == ["written_reports", "written_answers"]
    assert recomputes(["report_evidence"]) == ["community_reports", "written_reports"]


def test_an_edit_of_a_prompt_file_changes_its_version(tmp_path: Path, monkeypatch):
    was = citations.prompt("written_answer")
    monkeypatch.setattr(citations, "PROMPTS", tmp_path)
    citations.prompt.cache_clear()
    (tmp_path / "written_answer.txt").write_text(was.text + "\nBe brief.", encoding="utf-8")
    try:
        assert citations.prompt("written_answer").version != was.version
    finally:
        citations.prompt.cache_clear()


@pytest.mark.parametrize("stage", [written_reports, written_answers], ids=["reports", "answers"])
def test_a_written_stage_is_skipped_when_nothing_it_reads_changed_and_runs_when_one_input_did(stage):
    model = Counting()
    run = Run.alone(connect())
    build(run, SEED, Settings(llm_model="m"), llm=model)
    meter, name, skipped = Meter(model), stage.__name__.rsplit(".", 1)[1], {"skipped": 1}
    with run.logging():
        assert stage.run(run, llm=meter, model="m").detail == skipped
        run.changed = set(reconfigure.STAGES) - set(stage.READS) - {name}  # what it does not read
        assert stage.run(run, llm=meter, model="m").detail == skipped
        for read in stage.READS:
            run.changed = {read}
            assert stage.run(run, llm=meter, model="m").detail != skipped, read
        run.changed = set()
        assert stage.run(run, llm=meter, model="m").detail == skipped
        calls = len(model.requests)
        assert stage.run(run, llm=meter, model="other").recomputed > 0 and len(model.requests) > calls
        assert stage.run(run, llm=None).removed > 0
        assert stage.run(run, llm=None).detail == skipped
    assert stage.run(Run.alone(run.con), llm=None).detail != skipped  # on its own, a stage checks everything


def test_an_index_never_given_a_model_stores_no_setting_for_the_written_stages(con):
    done = {s.stage: s.work.detail for s in build(Run.alone(con), SEED, Settings())}
    assert done["written_reports"] == done["written_answers"] == {"skipped": 1, "no_model": 1}
    keys = {k for (k,) in con.execute("select key from index_state").fetchall()}
    assert not keys & {"written_reports", "written_answers"} and "entity_vectors" in keys


@pytest.mark.slow  # starts the session's Prefect server
def test_a_prefect_flow_run_writes_with_the_model_its_settings_name(prefect_api: str, tmp_path: Path):
    from acervo.flows.flow_run import index

    db = tmp_path / "index.duckdb"
    with FakeLLM(respond=honest) as server:
        summary = index(SEED, db, Settings(llm_url=server.url, llm_model="fake"))
        n_requests = len(server.requests)
    detail = {s["stage"]: s["detail"] for s in summary["stages"]}
    assert detail["written_reports"]["calls"] + detail["written_answers"]["calls"] == n_requests > 0
    con = opened(db)
    assert con.execute("select count(*) from written_answers where answer is not null").fetchone()[0] > 0
    con.close()


@pytest.mark.parametrize(("option", "url"), [("--llm-url", "http://user:s3cret@127.0.0.1:9/v1"),
                                             ("--embed-url", "http://user:s3cret@127.0.0.1:9/v1"),
                                             ("--llm-url", "http://127.0.0.1:9/v1?api_key=s3cret&user=x"),
                                             ("--llm-url", "http://127.0.0.1:9/v1?auth=s3cret"),
                                             ("--llm-url", "http://127.0.0.1:9/v1?Authorization=Bearer%20s3cret"),
                                             ("--embed-url", "http://127.0.0.1:9/v1?access_token=s3cret"),
                                             ("--llm-url", "http://127.0.0.1:9/v1?api-version=1;sig=s3cret"),
                                             ("--embed-url", "http://127.0.0.1:9/v1?X-Api-Key=s3cret")])
def test_an_endpoint_url_with_credentials_is_refused_without_printing_them(option: str, url: str, tmp_path: Path,
                                                                          capsys):
    db = tmp_path / "index.duckdb"
    assert main(["index", str(SAMPLE), "--db", str(db), option, url]) == 2
    err = capsys.readouterr().err
    assert "holds credentials" in err and "http://127.0.0.1:9/v1" in err
    assert "s3cret" not in err and "user" not in err
    assert not db.exists()


def test_an_endpoint_url_with_a_query_string_is_asked_at_its_path_and_stored_as_given(tmp_path: Path):
    db = tmp_path / "index.duckdb"
    with FakeLLM(respond=honest) as server:
        url = f"{server.url}?api-version=2024-06-01"
        assert main(["index", str(SEED), "--db", str(db), "--no-prefect", "--llm-url", url]) == 0
        assert set(server.paths) == {f"{ENDPOINT}?api-version=2024-06-01"}
    con = opened(db)
    assert con.execute("select count(*) from written_reports where report is null").fetchone() == (0,)
    assert json.loads(con.execute("select settings from index_runs").fetchone()[0])["llm_url"] == url
    con.close()
