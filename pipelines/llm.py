"""A language model behind one function: chat messages in, a completion out.

acervo ships no model and needs none: without one every stage stays extractive and nothing touches the
network. `openai_compatible` speaks the `/chat/completions` API of local servers (llama.cpp, Ollama, vLLM)
and hosted ones; an assembler may pass any other function of the same shape (`Chat`). `Meter` wraps either
with the run's budget, its bounded concurrency and the counts the run ledger records.
"""

import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from pydantic import BaseModel, Field, ValidationError

if TYPE_CHECKING:  # imported where a run calls a model: a run without one never pays for it
    import httpx

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": text}
API_KEY_VARIABLE = "ACERVO_LLM_API_KEY"  # sent as a bearer token when set; never stored or logged


class Completion(NamedTuple):
    """What one call gave back: the text, the tokens it cost, whether the model stopped at its length
    limit (a truncated reply), and how many times the request was sent again after a fault."""

    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    truncated: bool = False
    retries: int = 0


Chat = Callable[[Sequence[Message]], Completion | str]  # a plain str is a Completion without counts


class LLMError(RuntimeError):
    """One call failed for good: a reply that is not a completion (not JSON, no choices)."""


class Unavailable(LLMError):
    """The model could not be reached or kept failing after every retry: the run stops and publishes nothing."""


class Refused(LLMError):
    """The endpoint refused this one request (400, 413, 422: too long, filtered, unprocessable): sending it
    again would fail the same way, but other requests may pass."""


class Oversized(LLMError):
    """The reply's body ran past MAX_REPLY_BYTES: it was not read further, and is no completion. A caller rejects
    it like a reply that breaks its rules (asked again once, the error stated), not as a failed call."""


class OverBudget(LLMError):
    """The run's budget of calls or tokens is spent: the rows still to write keep their extractive text."""


T = TypeVar("T")
R = TypeVar("R")
MAX_RETRY_AFTER = 60.0  # the longest wait, in seconds, a 429's Retry-After is honoured for before sending again
EXCERPT_CHARS = 200  # how much of a refusing endpoint's body an error message quotes
REFUSED = frozenset({400, 413, 422})  # statuses about the request itself (Refused); any other 4xx is Unavailable
TIMEOUT = 60.0  # seconds one attempt of a call may wait for the endpoint (httpx: per connect and per read)
RETRIES = 3  # times a call is sent again after a fault worth retrying
BACKOFF = 0.5  # seconds before the first retry, doubling for each one after
CONCURRENCY = 4  # calls a run has in flight at once unless told otherwise
# the most bytes of a reply's body read: a completion of 100,000 tokens, JSON-escaped, stays under it; a body past
# it is no answer, and one read whole is held in memory, with all that is made of it, for every call in flight
MAX_REPLY_BYTES = 4 * 1024 * 1024
NESTED = "nested too deeply to read"  # why a reply whose JSON the parser cannot follow is malformed
UNREAD = "(a reply too long to repeat)"  # the assistant's turn a retry shows in place of an Oversized reply


class _Message(BaseModel):
    content: str | None = None  # null when a model answers with tool calls only: no text


class _Choice(BaseModel):
    message: _Message
    finish_reason: str | None = None


class _Counts(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _Reply(BaseModel):
    choices: list[_Choice] = Field(min_length=1)
    usage: _Counts | None = None


class _Fault(NamedTuple):
    """A failed attempt worth sending again: what went wrong, and the wait the endpoint asked for, if any."""

    reason: str
    wait: float | None = None


def openai_compatible(url: str, model: str, *, timeout: float = TIMEOUT, retries: int = RETRIES,
                      backoff: float = BACKOFF, transport: "httpx.BaseTransport | None" = None) -> Chat:
    """A Chat that posts to `url`'s path + "/chat/completions", its query kept (http://127.0.0.1:8080/v1, or
    https://host/v1?api-version=1), temperature 0.

    Timeouts, refused connections, 429 (waiting its Retry-After) and 5xx are sent again up to `retries`
    times, `backoff` seconds doubling in between; then Unavailable. A refusal of this request (400, 413,
    422) is Refused, any other 4xx Unavailable, both at once; a body past MAX_REPLY_BYTES is Oversized.
    `transport` replaces the network."""
    import httpx  # here: only a run with a model needs it

    if retries < 0:
        raise ValueError(f"retries must be at least 0, not {retries}")
    base = httpx.URL(url)  # its query (e.g. ?api-version=) stays after the joined path
    endpoint = str(base.copy_with(path=base.path.rstrip("/") + "/chat/completions"))
    key = os.environ.get(API_KEY_VARIABLE)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    # one client for every call, from any thread: it pools connections, and setting one up costs more than a call
    client = httpx.Client(transport=transport, timeout=timeout, headers=headers)

    def chat(messages: Sequence[Message]) -> Completion:
        body = {"model": model, "messages": list(messages), "temperature": 0}
        for attempt in range(retries + 1):
            outcome = _attempt(client, endpoint, body, key)
            if not isinstance(outcome, _Fault):
                return _completion(outcome, endpoint, attempt)
            if attempt < retries:
                time.sleep(backoff * 2**attempt if outcome.wait is None else outcome.wait)
        raise Unavailable(f"{shown(endpoint)} failed {retries + 1} times, the last: {outcome.reason}")

    return chat


def _attempt(client: "httpx.Client", endpoint: str, body: dict, key: str | None) -> "bytes | _Fault":
    """One POST: the reply's body, or the fault worth another try; Unavailable when trying again cannot help,
    Oversized for a body longer than MAX_REPLY_BYTES (read no further)."""
    import httpx

    try:
        with client.stream("POST", endpoint, json=body) as response:
            return _received(response, endpoint, key)
    except httpx.TimeoutException as err:
        return _Fault(f"timed out ({type(err).__name__})")
    except httpx.TransportError as err:  # refused, reset or closed without a reply
        return _Fault(f"{type(err).__name__}: {err}")


def _received(response: "httpx.Response", endpoint: str, key: str | None) -> "bytes | _Fault":
    """What one streamed response comes to: its body, at most MAX_REPLY_BYTES of it read, or its fault."""
    if response.status_code == 429:
        return _Fault("429 Too Many Requests", _retry_after(response.headers.get("Retry-After")))
    if response.status_code >= 500:
        return _Fault(f"{response.status_code} {response.reason_phrase}")
    content = _read(response)
    if not response.is_success:  # the same request fails the same way: not sent again
        text = content.decode(response.encoding or "utf-8", errors="replace")
        excerpt = (text.replace(key, "***") if key else text)[:EXCERPT_CHARS]
        refusal = f"{shown(endpoint)} refused the request: {response.status_code} {response.reason_phrase}: {excerpt}"
        if response.status_code in REFUSED:  # this request only (too long, filtered)
            raise Refused(refusal)
        raise Unavailable(refusal)  # a wrong model name, key or path: every request would fail
    if len(content) > MAX_REPLY_BYTES:
        raise Oversized(f"{shown(endpoint)} answered more than {MAX_REPLY_BYTES} bytes")
    return content


def _read(response: "httpx.Response") -> bytes:
    """A streamed body, read only until it passes MAX_REPLY_BYTES (then longer than that, cut)."""
    content = bytearray()
    for chunk in response.iter_bytes():
        content += chunk
        if len(content) > MAX_REPLY_BYTES:
            break
    return bytes(content)


def shown(endpoint: str) -> str:
    """`endpoint` as a message may print it: without its query, whose values may be credentials."""
    import httpx

    url = httpx.URL(endpoint)
    return f"{url.copy_with(query=None)}?…" if url.query else endpoint


def _retry_after(value: str | None) -> float | None:
    """The seconds a Retry-After header asks for (a number or an HTTP date), at most MAX_RETRY_AFTER."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):  # neither form: fall back to the backoff
            return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def _completion(content: bytes, endpoint: str, retries: int) -> Completion:
    """The Completion a chat.completion body holds; LLMError when it holds none."""
    try:
        reply = _Reply.model_validate_json(content)
    except ValidationError as err:
        raise LLMError(f"{shown(endpoint)} answered something that is not a chat completion: "
                       f"{err.errors()[0]['msg']}") from err
    choice, counts = reply.choices[0], reply.usage or _Counts()
    return Completion(choice.message.content or "", counts.prompt_tokens, counts.completion_tokens,
                      truncated=choice.finish_reason == "length", retries=retries)


def loads(text: str) -> Any:
    """A model's JSON parsed; json.JSONDecodeError, as for any malformed JSON, also when it nests deeper than
    the parser can follow (100,000 `[` raise RecursionError, which would otherwise end the run)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError(NESTED, text, 0) from None


class Usage(NamedTuple):
    """What a stage's calls cost, as its ledger `detail` records them."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    retries: int = 0
    fallbacks: int = 0
    milliseconds: int = 0


class Meter:
    """`chat` under a run's budget (`max_calls`, `max_tokens`: None for no limit) with at most `concurrency`
    calls in flight, counting what they cost (`usage`). Safe to call from several threads."""

    def __init__(self, chat: Chat, *, max_calls: int | None = None, max_tokens: int | None = None,
                 concurrency: int = CONCURRENCY) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency}")
        self._chat = chat
        self._max_calls = max_calls
        self._max_tokens = max_tokens
        self._concurrency = concurrency
        self._slots = threading.BoundedSemaphore(concurrency)  # the calls allowed in flight at once
        self._lock = threading.Lock()  # guards the counts below
        self._calls = self._tokens_in = self._tokens_out = self._retries = self._fallbacks = 0
        self._seconds = 0.0

    def __call__(self, messages: Sequence[Message]) -> Completion:
        """One call; OverBudget (without calling) once the budget is spent."""
        with self._slots:
            self._reserve()
            start = time.perf_counter()
            try:
                reply = self._chat(messages)
            finally:
                with self._lock:
                    self._seconds += time.perf_counter() - start
            completion = Completion(reply) if isinstance(reply, str) else reply
            with self._lock:
                self._tokens_in += completion.tokens_in
                self._tokens_out += completion.tokens_out
                self._retries += completion.retries
            return completion

    def _reserve(self) -> None:
        """Count the call about to be made, or raise OverBudget when the budget has no room for it."""
        with self._lock:
            if self._max_calls is not None and self._calls >= self._max_calls:
                raise OverBudget(f"the budget of {self._max_calls} calls is spent")
            if self._max_tokens is not None and self._tokens_in + self._tokens_out >= self._max_tokens:
                raise OverBudget(f"the budget of {self._max_tokens} tokens is spent")
            self._calls += 1

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """`fn` over `items`, at most `concurrency` at a time, results in the items' order; the first
        Unavailable raised stops the rest and is raised again."""
        items = list(items)
        if self._concurrency == 1 or len(items) < 2:
            return [fn(item) for item in items]
        with ThreadPoolExecutor(max_workers=min(self._concurrency, len(items)), thread_name_prefix="llm") as pool:
            futures = [pool.submit(fn, item) for item in items]
            for future in as_completed(futures):
                if future.exception() is not None:  # Unavailable, or any failure: what has not started never will
                    for waiting in futures:
                        waiting.cancel()
                    raise future.exception()
            return [future.result() for future in futures]

    def fell_back(self, n: int = 1) -> None:
        """Count `n` rows that kept their extractive text."""
        with self._lock:
            self._fallbacks += n

    @property
    def usage(self) -> Usage:
        """The counts so far."""
        with self._lock:
            return Usage(self._calls, self._tokens_in, self._tokens_out, self._retries, self._fallbacks,
                         round(self._seconds * 1000))

    def usage_since(self, before: Usage) -> Usage:
        """What was spent since `before` (an earlier `usage`): one stage's share of a run's meter."""
        return Usage(*(now - then for now, then in zip(self.usage, before, strict=True)))
