"""The language-model backend (`pipelines.llm`) against a real OpenAI-compatible server on loopback.

Every fault the issue names is played by the fake server (tests/llm_server.py): the client must retry what
is worth retrying, give up with Unavailable naming the endpoint (never the key), and Meter must hold the
run's budget and its concurrency limit.
"""

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from email.utils import formatdate

import httpx
import pytest
from llm_server import DEFAULT_REPLY, ENDPOINT, FakeLLM

from acervo.pipelines import embeddings
from acervo.pipelines.llm import (
    API_KEY_VARIABLE,
    MAX_REPLY_BYTES,
    MAX_RETRY_AFTER,
    NESTED,
    Completion,
    LLMError,
    Meter,
    OverBudget,
    Oversized,
    Refused,
    Unavailable,
    Usage,
    _retry_after,
    loads,
    openai_compatible,
)
from conftest import free_port

BACKOFF = 0.01  # seconds: retries in these tests wait next to nothing
TIMEOUT = 2.0  # seconds: a healthy reply from the fake server arrives far sooner
QUESTION = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Who wrote Dom Casmurro?"}]


def echo(messages) -> str:
    """The fake model's reply: the last message's content, so each reply tells which request it answers."""
    return f"echo: {messages[-1]['content']}"


def chat_to(server: FakeLLM, **options) -> object:
    return openai_compatible(server.url, "fake-model", **{"timeout": TIMEOUT, "backoff": BACKOFF, **options})


@pytest.fixture(autouse=True)
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test inherits a key from the environment it runs in."""
    monkeypatch.delenv(API_KEY_VARIABLE, raising=False)


def test_a_good_call_returns_the_text_and_its_token_counts() -> None:
    with FakeLLM(respond=lambda messages: "Machado de Assis wrote it.") as server:
        completion = chat_to(server)(QUESTION)
    assert completion == Completion("Machado de Assis wrote it.", tokens_in=6, tokens_out=5, truncated=False,
                                    retries=0)
    assert server.requests == [{"model": "fake-model", "messages": QUESTION, "temperature": 0}]


@pytest.mark.parametrize("fault", ["429", "500", "drop"])
def test_a_passing_fault_is_retried_and_the_retry_counted(fault: str) -> None:
    with FakeLLM(respond=echo) as server:
        server.faults.append(fault)
        completion = chat_to(server)(QUESTION)
    assert completion.text == "echo: Who wrote Dom Casmurro?" and completion.retries == 1
    assert server.calls == 2


def test_a_429_waits_its_retry_after_not_the_backoff() -> None:
    backoff = 30.0  # seconds: were it waited, the call would take that long
    with FakeLLM() as server:
        server.faults.append("429")  # Retry-After: 0
        start = time.monotonic()
        completion = chat_to(server, backoff=backoff)(QUESTION)
    assert completion.retries == 1 and time.monotonic() - start < backoff / 2


def test_retry_after_takes_seconds_or_a_date_and_is_capped() -> None:
    assert _retry_after("2") == 2.0
    assert _retry_after(str(MAX_RETRY_AFTER * 10)) == MAX_RETRY_AFTER
    assert _retry_after("-5") == 0.0
    assert 0.0 < _retry_after(formatdate(time.time() + 20, usegmt=True)) <= 20.0
    assert _retry_after(None) is None and _retry_after("soon") is None


def test_a_reply_slower_than_the_timeout_is_sent_again() -> None:
    with FakeLLM(respond=echo) as server:
        server.faults.append("slow")
        completion = chat_to(server, timeout=0.3)(QUESTION)
        assert completion.text == "echo: Who wrote Dom Casmurro?" and completion.retries == 1
        assert server.calls == 2
        server.faults += ["slow", "slow"]
        with pytest.raises(Unavailable, match="timed out"):
            chat_to(server, timeout=0.3, retries=1)(QUESTION)


def test_faults_past_the_retries_raise_unavailable_naming_the_endpoint_and_the_fault() -> None:
    with FakeLLM() as server:
        server.faults += ["500", "429", "500"]
        with pytest.raises(Unavailable) as raised:
            chat_to(server, retries=2)(QUESTION)
        assert server.calls == 3
    assert f"{server.url}/chat/completions" in str(raised.value) and "500" in str(raised.value)


def test_a_refused_connection_is_unavailable() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(Unavailable) as raised:
        openai_compatible(url, "fake-model", timeout=TIMEOUT, retries=1, backoff=BACKOFF)(QUESTION)
    assert f"{url}/chat/completions" in str(raised.value) and "ConnectError" in str(raised.value)


def test_a_wrong_path_is_unavailable_at_once() -> None:
    with FakeLLM() as server:
        with pytest.raises(Unavailable, match="404"):
            openai_compatible(server.url + "/nowhere", "fake-model", timeout=TIMEOUT, backoff=BACKOFF)(QUESTION)
        assert server.calls == 1  # a 4xx would fail the same way again: not retried


def test_a_request_the_endpoint_refuses_is_refused_at_once_not_unavailable() -> None:
    with FakeLLM() as server:
        server.faults = ["400"]
        with pytest.raises(Refused, match="400.*context size"):
            chat_to(server)(QUESTION)
        assert server.calls == 1  # the same request would be refused again: not retried
        assert chat_to(server)(QUESTION).text  # and the endpoint still serves others


def test_the_key_is_sent_as_a_bearer_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEY_VARIABLE, "sk-right-key")
    with FakeLLM(api_key="sk-right-key") as server:
        assert chat_to(server)(QUESTION).text
    monkeypatch.delenv(API_KEY_VARIABLE)
    with FakeLLM(api_key="sk-right-key") as server, pytest.raises(Unavailable, match="401"):
        chat_to(server)(QUESTION)


def test_the_key_appears_in_no_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEY_VARIABLE, "sk-wrong-key")
    with FakeLLM(api_key="sk-right-key") as server:
        with pytest.raises(Unavailable, match="401") as refused:
            chat_to(server)(QUESTION)
        assert server.calls == 1
    monkeypatch.setenv(API_KEY_VARIABLE, "sk-right-key")
    with FakeLLM(api_key="sk-right-key") as server:
        server.faults += ["500", "500"]
        with pytest.raises(Unavailable) as exhausted:
            chat_to(server, retries=1)(QUESTION)
    for raised in (refused, exhausted):
        for key in ("sk-wrong-key", "sk-right-key"):
            assert key not in str(raised.value) and key not in repr(raised.value.__cause__)


def test_a_refusal_that_echoes_the_key_is_quoted_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEY_VARIABLE, "sk-echoed-key")
    transport = httpx.MockTransport(lambda request: httpx.Response(
        403, text=f"key {request.headers['Authorization']} may not use this model"))
    with pytest.raises(Unavailable, match="403") as raised:
        openai_compatible("http://model.invalid/v1", "m", transport=transport)(QUESTION)
    assert "sk-echoed-key" not in str(raised.value) and "Bearer *** may not use this model" in str(raised.value)


def test_a_body_that_is_not_json_is_an_llm_error_not_retried() -> None:
    with FakeLLM() as server:
        server.faults.append("not_json")
        with pytest.raises(LLMError, match="not a chat completion") as raised:
            chat_to(server)(QUESTION)
        assert server.calls == 1
    assert not isinstance(raised.value, Unavailable)


def test_a_reply_without_choices_is_an_llm_error() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json={"object": "chat.completion",
                                                                              "choices": []}))
    chat = openai_compatible("http://model.invalid/v1", "fake-model", transport=transport)
    with pytest.raises(LLMError, match="not a chat completion"):
        chat(QUESTION)


def test_missing_usage_counts_no_tokens() -> None:
    reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=reply))
    assert openai_compatible("http://model.invalid/v1", "m", transport=transport)(QUESTION) == Completion("ok")


def test_a_reply_cut_at_the_length_limit_is_marked_truncated() -> None:
    with FakeLLM(respond=lambda messages: "one two three four five six") as server:
        server.faults.append("truncated")
        completion = chat_to(server)(QUESTION)
    assert completion.truncated and completion.text == "one two three" and completion.tokens_out == 3


@pytest.mark.parametrize("tail", ["?api-version=2024-06-01", "/?api-version=2024-06-01"])
def test_an_endpoint_with_a_query_string_is_asked_at_its_path_the_query_kept(tail: str) -> None:
    with FakeLLM() as server:
        completion = openai_compatible(server.url + tail, "fake-model", timeout=TIMEOUT)(QUESTION)
    assert completion.text == DEFAULT_REPLY
    assert server.paths == [f"{ENDPOINT}?api-version=2024-06-01"]


def test_the_embeddings_endpoint_keeps_its_query_string_after_the_joined_path_too() -> None:
    asked = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(request.url)
        return httpx.Response(200, json={"data": [{"index": 0, "embedding": [1.0, 0.0]}]})

    embed = embeddings.openai_compatible("http://model.invalid/v1/?api-version=2024-06-01",
                                         transport=httpx.MockTransport(answer))
    assert embed(["one text"]) == [[1.0, 0.0]]
    assert [(u.path, dict(u.params)) for u in asked] == [("/v1/embeddings", {"api-version": "2024-06-01"})]


def test_an_endpoint_s_query_is_never_printed_in_an_error() -> None:
    refusing = httpx.MockTransport(lambda request: httpx.Response(401, text="no"))
    with pytest.raises(Unavailable) as raised:
        openai_compatible("http://model.invalid/v1?deployment=d&code=S3CR3T", "m", transport=refusing)(QUESTION)
    assert "S3CR3T" not in str(raised.value) and "http://model.invalid/v1/chat/completions?…" in str(raised.value)
    embed = embeddings.openai_compatible("http://model.invalid/v1?code=S3CR3T", transport=refusing)
    with pytest.raises(embeddings.EmbeddingError) as failed:
        embed(["one text"])
    assert "S3CR3T" not in str(failed.value)


def test_a_reply_past_the_size_bound_is_oversized_and_not_sent_again() -> None:
    with FakeLLM(respond=lambda messages: "x" * MAX_REPLY_BYTES) as server:  # its JSON body: past the bound
        with pytest.raises(Oversized, match=f"more than {MAX_REPLY_BYTES} bytes") as raised:
            chat_to(server)(QUESTION)
        assert server.calls == 1  # the same request would answer as much again
        server.respond = lambda messages: "x" * (MAX_REPLY_BYTES - 1000)  # its body: just under the bound
        assert len(chat_to(server)(QUESTION).text) == MAX_REPLY_BYTES - 1000
    assert not isinstance(raised.value, Unavailable | Refused)


def test_a_reply_past_the_size_bound_is_not_read_whole() -> None:
    chunk = 64 * 1024  # bytes the endpoint sends at a time
    sent = []

    def endless() -> Iterator[bytes]:  # a body 16 times the bound, counted as the client draws it
        for _ in range(16 * MAX_REPLY_BYTES // chunk):
            sent.append(chunk)
            yield b"[" * chunk

    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=endless()))
    with pytest.raises(Oversized):
        openai_compatible("http://model.invalid/v1", "m", transport=transport)(QUESTION)
    assert MAX_REPLY_BYTES < sum(sent) <= MAX_REPLY_BYTES + chunk


def test_a_model_s_json_nested_too_deeply_is_malformed_json_not_a_recursion_error() -> None:
    assert loads('{"sentences": [[1]]}') == {"sentences": [[1]]}
    with pytest.raises(json.JSONDecodeError, match=NESTED):
        loads("[" * 100_000)
    with pytest.raises(json.JSONDecodeError):
        loads("[1,")


def test_a_run_without_a_model_never_imports_httpx() -> None:
    code = "import sys, pipelines.llm; print('httpx' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


def test_the_meter_counts_calls_tokens_retries_and_fallbacks() -> None:
    with FakeLLM(respond=lambda messages: "two words") as server:
        meter = Meter(chat_to(server), concurrency=2)
        server.faults.append("500")
        meter(QUESTION)
        before = meter.usage
        meter(QUESTION)
        meter.fell_back(3)
    usage = meter.usage
    assert usage[:5] == (2, 12, 4, 1, 3) and usage.milliseconds >= 0
    assert meter.usage_since(before)[:5] == (1, 6, 2, 0, 3)
    assert meter.usage_since(usage) == Usage()


def test_a_passed_function_returning_text_is_a_completion_without_counts() -> None:
    meter = Meter(lambda messages: f"{len(messages)} messages")
    assert meter(QUESTION) == Completion("2 messages")
    assert meter.usage[:5] == (1, 0, 0, 0, 0)


def test_the_call_budget_stops_calls_before_they_reach_the_server() -> None:
    with FakeLLM() as server:
        meter = Meter(chat_to(server), max_calls=2)
        meter(QUESTION)
        meter(QUESTION)
        with pytest.raises(OverBudget, match="2 calls"):
            meter(QUESTION)
        assert server.calls == 2 and meter.usage.calls == 2


def test_the_token_budget_stops_calls_once_spent() -> None:
    with FakeLLM(respond=lambda messages: "a reply of six words here") as server:
        meter = Meter(chat_to(server), max_tokens=13)
        meter(QUESTION)  # 6 in + 6 out: 12, under 13
        meter(QUESTION)  # 24: spent
        with pytest.raises(OverBudget, match="13 tokens"):
            meter(QUESTION)
        assert server.calls == 2


def test_map_keeps_the_items_order_and_its_concurrency_limit() -> None:
    items = [f"question {i}" for i in range(12)]
    with FakeLLM(respond=echo, delay=0.2) as server:
        meter = Meter(chat_to(server), concurrency=4)
        texts = meter.map(lambda item: meter([{"role": "user", "content": item}]).text, items)
    assert texts == [f"echo: {item}" for item in items]
    assert server.max_in_flight == 4


def test_calls_from_many_threads_respect_the_meters_limit() -> None:
    with FakeLLM(delay=0.1) as server:
        meter = Meter(chat_to(server), concurrency=2)
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda _: meter(QUESTION), range(8)))
    assert server.max_in_flight == 2 and server.calls == 8


def test_map_at_concurrency_one_runs_in_the_callers_thread() -> None:
    meter = Meter(lambda messages: "ok", concurrency=1)
    assert meter.map(lambda item: (item, threading.current_thread()), "ab") == [
        ("a", threading.current_thread()), ("b", threading.current_thread())]


@pytest.mark.parametrize("concurrency", [1, 2])
def test_unavailable_in_map_stops_the_rest_and_is_raised(concurrency: int) -> None:
    items = list(range(10))
    with FakeLLM(delay=0.1) as server:
        server.faults.append("500")
        meter = Meter(chat_to(server, retries=0), concurrency=concurrency)
        with pytest.raises(Unavailable, match="500"):
            meter.map(lambda item: meter(QUESTION), items)
        assert server.calls <= 2 * concurrency < len(items)
