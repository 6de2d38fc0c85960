"""`acervo serve`, the query service, started as a real process on a free loopback port and asked with httpx: every
endpoint, keys bound to scopes (nothing of another scope in any response), bad input, overload and timeouts, a
publish during a stream of questions, and SIGTERM."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_processes import Output, kill_session, session, until
from test_scopes import MARK, NAMES, SENTENCES, records

from acervo.flows.index import publish
from acervo.pipelines.query.keys import hashed
from acervo.pipelines.settings import Settings
from conftest import SAMPLE, free_port, unasked, wait_for, write_jsonl

pytestmark = pytest.mark.slow  # the HTTP service and the MCP door started in subprocesses

ROOT = Path(__file__).parent.parent
QUESTIONS = [*(f"What about {n}?" for n in NAMES), "Who works with Beta?", "What are the main themes?",
             f"What is {MARK}?", "Tell me about Project Zeus and Acme.", "Which board met in public?",
             "How do I bake a carrot cake?"]


class Service:
    """`acervo serve ARGS` on a free loopback port, in a session of its own; `url` once /health answers."""

    def __init__(self, *args: str) -> None:
        self.port = free_port()
        self.process = subprocess.Popen([sys.executable, "-m", "acervo.flows", "serve", "--port", str(self.port),
                                         *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                         start_new_session=True)
        self.err = Output(self.process.stderr)
        self.url = f"http://127.0.0.1:{self.port}"
        wait_for(lambda: self.process.poll() is not None or self.healthy(), timeout=60, what="the service to start")
        assert self.process.poll() is None, self.err.text

    def healthy(self) -> bool:
        try:
            return httpx.get(f"{self.url}/health", timeout=2).is_success
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        kill_session(self.process)


@pytest.fixture(scope="module")
def scoped(tmp_path_factory) -> Path:
    """An index of tenant a's documents, public ones and tenant b's (each of b's names MARK), mode given."""
    folder = tmp_path_factory.mktemp("service")
    mine = [(" ".join(SENTENCES[i::40][:3]), scope, NAMES[i % len(NAMES)]) for i, scope in
            enumerate(["a", None, "a", None, "a", "a"])]
    theirs = [(" ".join(SENTENCES[i::30][:3]), "b", NAMES[i % len(NAMES)]) for i in range(6)]
    source = write_jsonl(folder / "docs.jsonl", records(mine, mark=False, prefix="a") +
                         records(theirs, mark=True, prefix="b"))
    db = folder / "scoped.duckdb"
    publish(source, db, Settings(mentions="given", chunk_tokens=16))
    return db


@pytest.fixture(scope="module")
def keyed(scoped: Path, tmp_path_factory) -> Iterator[Service]:
    keys = tmp_path_factory.mktemp("keys") / "keys.json"
    keys.write_text(json.dumps({"keys": [{"name": "tenant-a", "sha256": hashed("key-a"), "scopes": ["a"]},
                                         {"name": "ops", "sha256": hashed("key-ops"), "scopes": None}]}))
    service = Service("--db", str(scoped), "--keys", str(keys))
    yield service
    service.stop()


def ask(service: Service, key: str | None, method: str, path: str, **kwargs) -> httpx.Response:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    return httpx.request(method, f"{service.url}{path}", headers=headers, timeout=60, **kwargs)


def test_every_endpoint_answers_as_the_python_api_does(keyed: Service, scoped: Path):
    from acervo.pipelines.query.context import Index

    with Index(scoped) as index:
        expected = index.query("Who works with Beta?", budget=400).to_dict()
    found = ask(keyed, "key-ops", "POST", "/query", json={"question": "Who works with Beta?", "budget": 400})
    assert found.status_code == 200 and found.json() == expected
    several = ask(keyed, "key-ops", "POST", "/query", json={"questions": ["What about Acme?", "Who works with Beta?"],
                                                            "budget": 400, "route": "global"})
    assert [c["question"] for c in several.json()] == ["What about Acme?", "Who works with Beta?"]
    assert all(c["reason"].startswith("global, as the caller asked") for c in several.json())
    entity = ask(keyed, "key-ops", "GET", "/entities/beta").json()
    assert entity["label"] == "Beta" and entity["neighbours"] and entity["evidence"]
    assert all(c["text"] and c["doc_id"] for c in entity["evidence"])
    cid = entity_community(scoped, "beta")
    community = ask(keyed, "key-ops", "GET", f"/communities/{cid}").json()
    assert "beta" in [m["entity_id"] for m in community["members"]]
    assert all(line["chunk"]["text"] for line in community["report"])
    assert ask(keyed, "key-ops", "GET", "/entities/no-such-thing").status_code == 404
    assert ask(keyed, "key-ops", "GET", "/health").json()["status"] == "ok"
    paths = ask(keyed, None, "GET", "/openapi.json").json()["paths"]
    assert {"/query", "/entities/{entity_id}", "/communities/{community_id}", "/health"} <= set(paths)


def entity_community(db: Path, eid: str) -> str:
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("select community_id from community_members where entity_id = ? order by 1 limit 1",
                           [eid]).fetchone()[0]


def test_a_request_without_a_known_key_is_refused(keyed: Service):
    for key in (None, "wrong"):
        refused = ask(keyed, key, "POST", "/query", json={"question": "What about Acme?"})
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"


def test_a_key_reads_nothing_of_another_scope_in_any_response(keyed: Service, scoped: Path):
    import duckdb

    with duckdb.connect(str(scoped), read_only=True) as con:
        entities = [e for (e,) in con.execute("select entity_id from entities").fetchall()]
        communities = [c for (c,) in con.execute("select community_id from communities").fetchall()]
    shown = [answered(ask(keyed, "key-a", "POST", "/query", json={"question": q, "budget": 600, "direct": direct}))
             for q in QUESTIONS for direct in (True, False)]
    shown += [answered(ask(keyed, "key-a", "POST", "/query", json={"questions": QUESTIONS, "route": route}))
              for route in ("local", "global", "mixed")]
    shown += [ask(keyed, "key-a", "GET", f"/entities/{e}").text for e in entities]
    shown += [ask(keyed, "key-a", "GET", f"/communities/{c}").text for c in communities]
    for text in shown:
        assert MARK.lower() not in text.lower(), text
        assert not any(f'"b{i}' in text for i in range(6)), text
        assert not any(n.upper() in text for n in NAMES if n.upper() != n), text  # tenant b's spelling
    assert MARK.lower() in ask(keyed, "key-ops", "GET", f"/entities/{MARK.lower()}").text.lower()
    assert ask(keyed, "key-a", "GET", f"/entities/{MARK.lower()}").status_code == 404


def answered(response: httpx.Response) -> str:
    """A /query response without the caller's own words (conftest.unasked) as JSON text."""
    found = response.json()
    return json.dumps([unasked(c) for c in (found if isinstance(found, list) else [found])], ensure_ascii=False)


@pytest.mark.parametrize(("body", "status"), [
    ({"question": "What about Acme?", "questions": ["What about Acme?"]}, 422),
    ({}, 422),
    ({"question": "x" * 4001}, 422),
    ({"questions": ["What about Acme?"] * 101}, 422),
    ({"question": "What about Acme?", "budget": 10_000_000}, 422),  # above MAX_BUDGET
    ({"question": "What about Acme?", "route": "sideways"}, 422),
    ({"question": "What about Acme?", "surprise": 1}, 422),
    ({"question": "What about Acme?", "budget": 5}, 400),  # below the instruction's own cost
])
def test_bad_input_gets_a_4xx_that_says_what_is_wrong(keyed: Service, body: dict, status: int):
    refused = ask(keyed, "key-ops", "POST", "/query", json=body)
    assert refused.status_code == status and refused.json()["detail"]
    assert keyed.healthy()


def test_overload_gets_503_and_a_slow_question_504_and_the_service_goes_on(scoped: Path):
    service = Service("--db", str(scoped), "--readers", "1", "--wait", "0", "--timeout", "0.5")
    heavy = {"questions": QUESTIONS * 6, "budget": 32_768, "direct": False}  # under MAX_QUESTIONS
    try:
        for _ in range(10):  # until the heavy request took the one reader before a light one did
            slow: list[httpx.Response] = []
            holder = threading.Thread(target=lambda got=slow: got.append(ask(service, None, "POST", "/query",
                                                                             json=heavy)))
            holder.start()
            statuses = set()
            while holder.is_alive():
                statuses.add(ask(service, None, "POST", "/query", json={"question": "What about Acme?"}).status_code)
            holder.join()
            if slow[0].status_code != 503:
                break
        assert 503 in statuses
        assert slow[0].status_code == 504 and "took more than 0.5 s" in slow[0].json()["detail"]
        assert ask(service, None, "POST", "/query", json={"question": "What about Acme?"}).status_code == 200
    finally:
        service.stop()


def test_a_publish_during_a_stream_of_questions_is_seen_without_errors(tmp_path: Path):
    db = tmp_path / "live.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles"))
    service = Service("--db", str(db))
    statuses: list[int] = []
    done = threading.Event()

    def stream() -> None:
        while not done.is_set():
            statuses.append(ask(service, None, "POST", "/query", json={"question": "Who directed Wrong Turn 3?",
                                                                       "budget": 500}).status_code)

    asking = threading.Thread(target=stream)
    asking.start()
    try:
        wait_for(lambda: len(statuses) >= 3, timeout=60, what="questions before the publish")
        lines = SAMPLE.read_text(encoding="utf-8").splitlines()
        new = {"doc_id": "new-1", "title": "Quuxbridge Abbey", "text": "Quuxbridge Abbey is a ruined abbey."}
        publish(write_jsonl(tmp_path / "more.jsonl", [json.loads(line) for line in lines if line] + [new]), db,
                Settings(mentions="titles"))
        seen = wait_for(lambda: "Quuxbridge" in ask(service, None, "POST", "/query", json={
            "question": "What is Quuxbridge Abbey?", "budget": 500}).text, timeout=60, what="the new document")
        wait_for(lambda: len(statuses) >= 6, timeout=60, what="questions after the publish")
    finally:
        done.set()
        asking.join()
        service.stop()
    assert seen and set(statuses) == {200}


def test_sigterm_stops_the_service_and_leaves_no_process(scoped: Path):
    service = Service("--db", str(scoped))
    try:
        service.process.send_signal(signal.SIGTERM)
        code = service.process.wait(timeout=60)
        until(lambda: not session(service.process.pid), 60, "the service's processes to end")
        assert service.err.closed_within(30)
    finally:
        service.stop()
    assert code == 0 and "Traceback" not in service.err.text, service.err.text


def test_without_keys_it_listens_on_loopback_only(scoped: Path):
    refused = subprocess.run([sys.executable, "-m", "acervo.flows", "serve", "--db", str(scoped), "--host", "0.0.0.0",
                              "--port", str(free_port())], cwd=ROOT, capture_output=True, text=True, timeout=120,
                             env={**os.environ})
    assert refused.returncode == 2
    assert "no --keys" in refused.stderr and "loopback only" in refused.stderr


def mcp_calls(server: Any, calls: list[tuple[str, dict]]) -> tuple[list[str], list[Any]]:
    """The tool names an MCP server lists, and each call's structured result (None for an error), through the
    MCP SDK's own client."""
    from mcp import Client

    async def run() -> tuple[list[str], list[Any]]:
        async with Client(server) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            found = []
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                found.append(None if result.is_error else result.structured_content)
            return names, found
    return asyncio.run(run())


def test_the_mcp_tools_over_stdio_read_only_the_scopes_given(scoped: Path):
    from mcp import StdioServerParameters

    community_id = entity_community(scoped, "beta")
    calls = [("query", {"question": q, "budget": 600}) for q in QUESTIONS] + [
        ("entity", {"entity_id": "beta"}), ("entity", {"entity_id": MARK.lower()}),
        ("community", {"community_id": community_id})]
    params = StdioServerParameters(command=sys.executable, args=["-m", "acervo.flows", "mcp", "--db", str(scoped),
                                                                 "--scope", "a"], cwd=ROOT)
    names, found = mcp_calls(params, calls)
    assert names == ["query", "entity", "community"]
    contexts, (beta, theirs, group) = found[:len(QUESTIONS)], found[len(QUESTIONS):]
    assert beta["result"]["label"] == "Beta" and theirs["result"] is None
    assert "beta" in [m["entity_id"] for m in group["result"]["members"]]
    for shown in [json.dumps(unasked(c)) for c in contexts] + [
            json.dumps(beta), json.dumps(group)]:
        assert MARK.lower() not in shown.lower() and not any(f'"b{i}' in shown for i in range(6)), shown


def test_the_mcp_door_of_the_service_reads_as_each_key_may(keyed: Service):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    def door(key: str | None) -> Any:
        headers = {"authorization": f"Bearer {key}"} if key else {}
        return streamable_http_client(f"{keyed.url}/mcp", http_client=httpx2.AsyncClient(headers=headers))

    calls = [("entity", {"entity_id": MARK.lower()}), ("query", {"question": f"What is {MARK}?", "route": "local"})]
    names, (theirs, context) = mcp_calls(door("key-a"), calls)
    assert names == ["query", "entity", "community"] and theirs["result"] is None
    assert MARK.lower() not in json.dumps(unasked(context)).lower()
    _, (seen, _) = mcp_calls(door("key-ops"), calls)
    assert seen["result"]["label"] == MARK
    _, refused = mcp_calls(door("wrong"), calls)
    assert refused == [None, None]
