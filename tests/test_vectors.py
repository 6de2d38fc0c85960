"""Stage `entity_vectors` and vector seeds, against a real OpenAI-compatible endpoint on loopback.

The endpoint's model is a deterministic stand-in (hashed character trigrams), so texts that share
spelling are close; what is tested is acervo's side: what gets embedded, when, and how seeds follow.
"""

import json
import math
import threading
import unicodedata
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from acervo.flows.index import build, publish
from acervo.pipelines.db import connect
from acervo.pipelines.embeddings import API_KEY_VARIABLE, EmbeddingError, openai_compatible
from acervo.pipelines.query.context import Index
from acervo.pipelines.query.router import route
from acervo.pipelines.query.seeds import Seed
from acervo.pipelines.run import Run
from acervo.pipelines.settings import Settings
from conftest import SEED, write_jsonl

DIMENSIONS = 64


def trigram_vector(text: str) -> list[float]:
    """A unit vector of the text's hashed character trigrams (accents and case folded)."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))
    vector = [0.0] * DIMENSIONS
    for i in range(len(folded) - 2):
        vector[zlib.crc32(folded[i : i + 3].encode("utf-8")) % DIMENSIONS] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


class Endpoint:
    """A tiny /v1/embeddings server on 127.0.0.1 that records every text it was asked to embed."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.models: list[str | None] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server interface
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.texts += body["input"]
                outer.models.append(body.get("model"))
                reply = {"object": "list", "model": body.get("model"), "data": [
                    {"object": "embedding", "index": i, "embedding": trigram_vector(t)}
                    for i, t in reversed(list(enumerate(body["input"])))]}  # out of order: acervo sorts by index
                data = json.dumps(reply).encode("utf-8")
                self.send_response(200 if self.path == "/v1/embeddings" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint():
    server = Endpoint()
    yield server
    server.close()


@pytest.mark.slow  # seconds of indexing or waiting
def test_every_entity_gets_a_vector_of_its_label_and_answer_and_a_rerun_embeds_only_what_changed(endpoint, tmp_path):
    config = Settings(embed_url=endpoint.url, embed_model="trigram-64")
    con = connect()
    build(Run.alone(con), SEED, config)
    rows = con.execute("select e.label || ': ' || a.answer, v.vector from entity_vectors v join entities e "
                       "using (entity_id) join entity_answers a using (entity_id) order by all").fetchall()
    assert len(rows) == con.execute("select count(*) from entities").fetchone()[0]
    chunk_texts = [t for (t,) in con.execute("select text from chunks").fetchall()]  # stage chunk_vectors'
    assert sorted(endpoint.texts) == sorted([text for text, _ in rows] + chunk_texts)
    assert all(len(vector) == DIMENSIONS for _, vector in rows) and set(endpoint.models) == {"trigram-64"}
    endpoint.texts.clear()
    build(Run.alone(con), SEED, config)
    assert endpoint.texts == []  # no change, nothing embedded
    records = [json.loads(line) for line in SEED.read_text(encoding="utf-8").splitlines()]
    records[4]["text"] = "O backup roda toda noite e exige autenticação em dois fatores."
    done = {s.stage: s.work for s in build(Run.alone(con), write_jsonl(tmp_path / "v2.jsonl", records), config)}
    changed = con.execute("select e.label || ': ' || a.answer from entities e join entity_answers a "
                          "using (entity_id) where entity_id in ('backup', 'autenticação')").fetchall()
    assert done["entity_vectors"].recomputed + done["chunk_vectors"].recomputed == len(endpoint.texts)
    assert done["entity_vectors"].recomputed > 0 and done["chunk_vectors"].recomputed == 1
    assert set(endpoint.texts) <= {text for (text,) in changed} | {records[4]["text"]}
    build(Run.alone(con), SEED, Settings())  # no embedder configured: the index keeps no vectors
    assert con.execute("select count(*) from entity_vectors").fetchone() == (0,)


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_function_passed_in_makes_the_same_vectors_as_the_endpoint(endpoint):
    served, passed = connect(), connect()
    build(Run.alone(served), SEED, Settings(embed_url=endpoint.url))
    build(Run.alone(passed), SEED, Settings(), embed=lambda texts: [trigram_vector(t) for t in texts])
    query = "select entity_id, vector from entity_vectors order by entity_id"
    assert served.execute(query).fetchall() == passed.execute(query).fetchall()


def test_a_question_that_names_nothing_is_seeded_by_meaning_and_an_off_topic_one_is_not(endpoint, tmp_path):
    db = tmp_path / "index.duckdb"
    publish(SEED, db, Settings(embed_url=endpoint.url))
    embed = lambda texts: [trigram_vector(t) for t in texts]  # noqa: E731 - the same model at query time
    with Index(db, embed=embed, vector_floor=0.5) as index:
        asked = "cópias protegidas por dois fatores fora do horário comercial"  # names no entity
        assert index.seeds.find(asked) == []
        near = index.by_vector(asked, None)
        assert near[0][0].entity_id == "backup" and near[0][1] > 0.7
        assert index.query(asked, budget=512).route == "local"
        cake = index.query("como faço bolo de cenoura", budget=512)
        assert cake.route == "none" and cake.blocks == []
    with Index(db) as plain:  # no model at query time: no vector seeds
        assert plain.by_vector("cópias protegidas por dois fatores fora do horário comercial", None) == []


def test_the_router_says_which_entities_a_question_is_close_to():
    decision = route("what keeps copies safe?", [], by_vector=[(Seed("backup", "Backup", 1), 0.71)],
                     by_words=[Seed("rede", "Rede", 1)])
    assert decision.route == "local" and [s.entity_id for s in decision.seeds] == ["backup"]
    assert "Backup (0.71)" in decision.reason


@pytest.mark.slow  # seconds of indexing or waiting
def test_an_unreachable_endpoint_fails_the_run_and_leaves_the_last_good_index(endpoint, tmp_path: Path):
    db = tmp_path / "index.duckdb"
    publish(SEED, db, Settings())
    before = connect(db, read_only=True).execute("select * from entity_answers order by all").fetchall()
    gone = Endpoint()
    gone.close()  # a port nobody listens on any more
    with pytest.raises(EmbeddingError, match="embeddings"):
        publish(SEED, db, Settings(embed_url=gone.url))
    after = connect(db, read_only=True)
    assert after.execute("select * from entity_answers order by all").fetchall() == before
    assert after.execute("select count(*) from entity_vectors").fetchone() == (0,)


@pytest.mark.slow  # seconds of indexing
def test_the_cli_builds_vectors_and_seeds_a_query_by_meaning(endpoint, tmp_path: Path, capsys):
    from acervo.flows.cli import main

    db = tmp_path / "cli.duckdb"
    assert main(["index", str(SEED), "--db", str(db), "--embed-url", endpoint.url, "--no-prefect", "--json"]) == 0
    capsys.readouterr()
    assert main(["query", "o que roda fora do horário comercial protegido em dois fatores?", "--db", str(db),
                 "--query-embed-url", endpoint.url, "--vector-floor", "0.7", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["route"] == "local" and "close in meaning to Backup (0.8" in result["reason"]  # no other
    assert result["seeds"] == ["backup"]  # entity is as close, and the question names none
    assert any(ref.startswith("d05#") for block in result["blocks"] for ref in block["refs"])  # the backup policy


def test_the_embedder_posts_the_texts_with_the_model_and_key_and_orders_the_vectors_by_index(monkeypatch):
    asked: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(request)
        texts = json.loads(request.content)["input"]
        return httpx.Response(200, json={"data": [{"index": i, "embedding": [float(i), 1.0]}
                                                  for i in reversed(range(len(texts)))]})

    monkeypatch.setenv(API_KEY_VARIABLE, "sk-test")
    embed = openai_compatible("http://models.example/v1/", "m-1", transport=httpx.MockTransport(answer))
    assert embed(["a", "b", "c"]) == [[0.0, 1.0], [1.0, 1.0], [2.0, 1.0]]
    assert embed([]) == [] and len(asked) == 1
    request = asked[0]
    assert (request.method, str(request.url)) == ("POST", "http://models.example/v1/embeddings")
    assert json.loads(request.content) == {"input": ["a", "b", "c"], "model": "m-1"}
    assert request.headers["authorization"] == "Bearer sk-test"
    monkeypatch.delenv(API_KEY_VARIABLE)
    openai_compatible("http://models.example/v1", transport=httpx.MockTransport(answer))(["a"])
    assert "authorization" not in asked[-1].headers and "model" not in json.loads(asked[-1].content)


@pytest.mark.parametrize("reply", [httpx.Response(500, text="overloaded"), httpx.Response(200, text="not json"),
                                   httpx.Response(200, json={"data": [{"index": 0, "embedding": [1.0]}]}),
                                   httpx.Response(200, json={"data": [{"index": 0, "embedding": []},
                                                                      {"index": 1, "embedding": []}]})])
def test_a_refusal_or_an_unusable_reply_is_an_embedding_error(reply: httpx.Response):
    embed = openai_compatible("http://models.example/v1", transport=httpx.MockTransport(lambda request: reply))
    with pytest.raises(EmbeddingError):
        embed(["a", "b"])
