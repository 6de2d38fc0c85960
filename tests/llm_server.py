"""A small deterministic OpenAI-compatible chat server on loopback, the model every language-model test talks to.

    with FakeLLM(respond=lambda messages: "text") as server:
        chat = openai_compatible(server.url, "fake")

It serves POST /v1/chat/completions (any query string) on 127.0.0.1 (a free port) from a daemon thread. Each
reply's text is `respond(messages)`; its token counts are the words of the prompt and of the reply.
`server.faults` is a list the server pops one fault from per request before answering normally: "400" (a
request too long for the model), "429" (Retry-After: 0), "500", "slow" (no reply until past any client
timeout), "not_json", "truncated" (finish_reason "length", the text cut to its first half) and "drop" (the
connection closed without a reply). With `api_key` set, a request without that bearer token gets 401 (any
other path: 404). `server.requests` holds the chat requests' JSON bodies, `server.calls` counts every POST
received (refused ones too), `server.paths` holds each one's path as requested (its query string included),
`server.max_in_flight` is the most chat requests handled at once.
"""

import contextlib
import json
import socket
import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Messages = Sequence[dict[str, str]]
DEFAULT_REPLY = "A fixed reply from the fake model."  # the text when no `respond` is given
SLOW_SECONDS = 30.0  # how long a "slow" fault holds its reply: past any test client's timeout (cut short on exit)
POLL_SECONDS = 0.02  # how often the serving loop checks for shutdown: a test's `with` block exits promptly
ENDPOINT = "/v1/chat/completions"  # the one path served, whatever its query string; any other answers 404
# the faults `server.faults` may hold
FAULTS = frozenset({"400", "429", "500", "slow", "not_json", "truncated", "drop"})


class _Server(ThreadingHTTPServer):
    """A threading server whose listen queue takes a burst of concurrent clients without dropping connects."""

    daemon_threads = True
    request_queue_size = 128  # connections the socket holds pending: a shorter queue makes a burst wait on SYN retries


def words(text: str) -> int:
    """The fake model's token count: whitespace-separated words."""
    return len(text.split())


class FakeLLM:
    """The server as a context manager: started on enter, shut down and its thread joined on exit."""

    def __init__(self, respond: Callable[[Messages], str] | None = None, delay: float = 0.0,
                 api_key: str | None = None) -> None:
        self.respond = respond or (lambda messages: DEFAULT_REPLY)
        self.delay = delay
        self.api_key = api_key
        self.requests: list[dict] = []
        self.faults: list[str] = []
        self.calls = 0
        self.paths: list[str] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()  # guards the counters, `requests` and `faults` across handler threads
        self._stopping = threading.Event()  # set on exit: a "slow" reply stops waiting
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL a client is given, e.g. http://127.0.0.1:PORT/v1."""
        assert self._server is not None, "the server runs only inside its `with` block"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> "FakeLLM":
        self._server = _Server(("127.0.0.1", 0), type("Handler", (_Handler,), {"fake": self}))
        self._thread = threading.Thread(target=self._server.serve_forever, args=(POLL_SECONDS,), name="fake-llm",
                                        daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _count(self, path: str) -> None:
        """Count one POST, whatever it asks for, and keep its path."""
        with self._lock:
            self.calls += 1
            self.paths.append(path)

    def _enter_request(self, body: dict) -> tuple[int, str | None]:
        """Keep one chat request's body and pop the fault it meets (None: answer normally); its number."""
        with self._lock:
            self.requests.append(body)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            fault = self.faults.pop(0) if self.faults else None
            number = len(self.requests)
        assert fault is None or fault in FAULTS, f"unknown fault {fault!r}"
        return number, fault

    def _leave_request(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def completion(self, number: int, body: dict, truncated: bool) -> dict:
        """The chat.completion object answering `body`, request `number`."""
        messages = body.get("messages", [])
        text = self.respond(messages)
        if truncated:
            text = " ".join(text.split()[: words(text) // 2])
        return {"id": f"chatcmpl-{number}", "object": "chat.completion", "model": body.get("model", ""),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "length" if truncated else "stop"}],
                "usage": {"prompt_tokens": sum(words(m.get("content", "")) for m in messages),
                          "completion_tokens": words(text)}}


class _Handler(BaseHTTPRequestHandler):
    """Serves the FakeLLM a subclass is bound to (`fake`)."""

    fake: FakeLLM  # set on each subclass by FakeLLM.__enter__

    def do_POST(self) -> None:  # noqa: N802 - the http.server interface
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.fake._count(self.path)
        key = self.fake.api_key
        if self.path.partition("?")[0] != ENDPOINT:
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        if key is not None and self.headers.get("Authorization") != f"Bearer {key}":
            return self._send(401, {"error": {"message": "invalid api key"}})
        try:
            body = json.loads(raw)
        except ValueError:
            return self._send(400, {"error": {"message": "the request body is not JSON"}})
        number, fault = self.fake._enter_request(body)
        try:
            reply = self._answer(number, body, fault)
        finally:  # before the client can see the reply: it may send its next request at once
            self.fake._leave_request()
        if reply is None:  # "drop", or a "slow" reply cut short on exit: the connection closes without a word
            self.close_connection = True
            with contextlib.suppress(OSError):  # the client may have gone already
                self.connection.shutdown(socket.SHUT_RDWR)
            return None
        return self._send(*reply)

    def _answer(self, number: int, body: dict, fault: str | None) -> tuple[int, dict | bytes, dict] | None:
        """The reply's status, body and headers once its delay is over; None for no reply."""
        if self.fake.delay:
            self.fake._stopping.wait(self.fake.delay)
        if fault == "429":
            return 429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"}
        if fault == "500":
            return 500, {"error": {"message": "internal error"}}, {}
        if fault == "400":  # what llama.cpp answers a prompt longer than its context
            return 400, {"error": {"message": "the request exceeds the available context size"}}, {}
        if fault == "drop" or (fault == "slow" and self.fake._stopping.wait(SLOW_SECONDS)):
            return None
        if fault == "not_json":
            return 200, b"<html>upstream error</html>", {}
        return 200, self.fake.completion(number, body, truncated=fault == "truncated"), {}

    def _send(self, status: int, payload: dict | bytes, headers: dict[str, str] | None = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
            self.close_connection = True

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the http.server interface
        """Quiet: tests read `requests`, not a log."""
