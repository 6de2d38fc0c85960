"""Shared fixtures: a fresh in-memory index, the seed corpus built end to end, one Prefect server for the
session, a wait on a condition, and the hypothesis profiles (HYPOTHESIS_PROFILE=thorough for CI)."""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import httpx
import pytest
from hypothesis import settings

# The suite's Prefect runs stay in the repository (.prefect/, ignored by git), out of the user's own history.
os.environ.setdefault("PREFECT_HOME", str(Path(__file__).resolve().parent.parent / ".prefect"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")

from acervo.flows.index import build  # noqa: E402  (after the offline defaults above)
from acervo.pipelines import reports  # noqa: E402
from acervo.pipelines.db import Connection, connect  # noqa: E402
from acervo.pipelines.names import words  # noqa: E402
from acervo.pipelines.run import Run
from acervo.pipelines.settings import Settings  # noqa: E402

DATA = Path(__file__).parent / "data"
SEED = DATA / "seed_corpus.jsonl"
SAMPLE = DATA / "2wiki_sample.jsonl"
T = TypeVar("T")

settings.register_profile("quick", max_examples=10, deadline=None)
settings.register_profile("thorough", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))


def examples(share: float) -> int:
    """How many examples a property test tries: `share` of the profile's count (a costly test takes less)."""
    return max(1, round(share * settings.default.max_examples))


def wait_for(condition: Callable[[], T], *, timeout: float, what: str, interval: float = 0.1) -> T:
    """Poll `condition` until it returns something true, and return that; fail naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f} s waiting for {what}"
        time.sleep(interval)
    return result


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers_health(url: str) -> bool:
    """Whether a Prefect API at `url` answers its health check."""
    try:
        return httpx.get(f"{url}/health", timeout=2).is_success
    except httpx.HTTPError:
        return False


class PrefectServer:
    """A real `prefect server start` on a free loopback port with its own home, booting from construction on."""

    def __init__(self) -> None:
        port, self.home = free_port(), Path(tempfile.mkdtemp(prefix="acervo-prefect-"))
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
        self.env |= {"PREFECT_HOME": str(self.home), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
                     "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
                     "PREFECT_RUNNER_POLL_FREQUENCY": "1"}  # a served deployment starts its run within a second
        self.process = subprocess.Popen([str(Path(sys.executable).with_name("prefect")), "server", "start", "--host",
                                         "127.0.0.1", "--port", str(port), "--no-ui"], env=self.env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def ready(self) -> dict[str, str]:
        """The environment for a subprocess to use the server, once it answers."""
        wait_for(lambda: self.process.poll() is not None or answers_health(self.env["PREFECT_API_URL"]),
                 timeout=240, what="the Prefect server to start")
        assert self.process.poll() is None, "the Prefect server exited on start"
        return dict(self.env)

    def stop(self) -> None:
        """Stop the server and remove its home."""
        self.process.terminate()
        self.process.wait(timeout=60)
        shutil.rmtree(self.home, ignore_errors=True)


BOOTING: list[PrefectServer] = []  # the session's server, started once the collected tests are known to need it


def pytest_collection_finish(session: pytest.Session) -> None:
    """Boot the Prefect server while the tests before the first that needs it run."""
    if any("prefect_server" in item.fixturenames for item in session.items):
        BOOTING.append(PrefectServer())


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop the session's Prefect server, if one booted."""
    for server in BOOTING:
        server.stop()


@pytest.fixture(scope="session")
def prefect_server() -> dict[str, str]:
    """A real Prefect server on loopback, shared by the whole session; the environment for a subprocess to use
    it (PREFECT_API_URL). Tests that share it read only what their own runs made."""
    if not BOOTING:
        BOOTING.append(PrefectServer())
    return BOOTING[0].ready()


@pytest.fixture
def prefect_api(prefect_server: dict[str, str]) -> Iterator[str]:
    """Flows and clients in this process talk to the session's Prefect server; yields its API URL."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: prefect_server["PREFECT_API_URL"]}):
        yield prefect_server["PREFECT_API_URL"]
        APILogWorker.drain_all()
        EventsWorker.drain_all()


@pytest.fixture
def con() -> Connection:
    """A fresh in-memory index with the schema applied."""
    c = connect()
    yield c
    c.close()


def write_jsonl(path: Path, records: list[dict]) -> Path:
    """`records` written one per line as JSON; returns `path`."""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def index_of(source: Path, **settings) -> Connection:
    """A fresh in-memory index of `source`, built by every stage."""
    c = connect()
    build(Run.alone(c), source, Settings(**settings))
    return c


@pytest.fixture(scope="module")
def seed() -> Connection:
    """The seed corpus indexed in `given` mode (read-only use)."""
    c = index_of(SEED)
    yield c
    c.close()


EQUAL = {"documents": "doc_id", "document_entities": "doc_id, label", "chunks": "chunk_id", "entities": "entity_id",
         "entity_aliases": "entity_id, alias", "mentions": "entity_id, chunk_id", "edges": "src, dst",
         "entity_answers": "entity_id", "chunk_terms": "term, chunk_id", "term_postings": "term",
         "word_documents": "word, scope", "chunk_boilerplate": "chunk_id"}
# what reruns compare against: stale or doubled rows would mislead the next
BOOKKEEPING = {"names": "entity_id, name", "chunk_state": "chunk_id", "chunk_folded": "chunk_id",
               "title_names": "title", "candidate_decisions": "entity_id", "chunk_lengths": "chunk_id",
               "document_words": "doc_id", "chunk_sentences": "chunk_id"}


def dump(con: Connection, tables: dict[str, str] = EQUAL) -> dict[str, list[tuple]]:
    return {t: con.execute(f"select * from {t} order by {order}").fetchall() for t, order in tables.items()}


def assert_same_files(a: Path, b: Path, *, state: str = "select * from index_state order by all") -> None:
    """The index files `a` and `b` hold the same tables and the same index_state (as `state` selects it)."""
    con_a, con_b = connect(a, read_only=True), connect(b, read_only=True)
    try:
        assert dump(con_a) == dump(con_b)
        assert con_a.execute(state).fetchall() == con_b.execute(state).fetchall()
    finally:
        con_a.close()
        con_b.close()


def assert_like_fresh(con: Connection, source: Path, config: Settings, *, provenance: bool = True) -> None:
    """The incremental index equals a fresh build; its reports are what the report stage writes.

    Without `provenance`, documents' source file and line are not compared (a `delete` reads no file).
    """
    fresh = connect()
    build(Run.alone(fresh), source, config)
    if not provenance:
        for c in (con, fresh):
            c.execute("update documents set source = '', line = 0")
    assert dump(con) == dump(fresh)
    assert dump(con, BOOKKEEPING) == dump(fresh, BOOKKEEPING)
    before = dump(con, {"community_reports": "community_id", "report_lines": "community_id, ord"})
    con.execute("delete from community_reports")
    reports.run(Run.alone(con), max_lines=config.report_max_lines, n_evidence=config.report_evidence)
    assert dump(con, {"community_reports": "community_id", "report_lines": "community_id, ord"}) == before
    fresh.close()


UNCOVERED = re.compile(r"the best matching text holds none of ((?:'[^']*'(?:, )?)+)")  # a none route's reason


def unasked(result: dict) -> dict:
    """A query result without what is the caller's own: its question, and the words of it that a `none` route's
    reason says no best match holds (each checked to be a word of the question)."""
    fields = {k: v for k, v in result.items() if k != "question"}
    if said := UNCOVERED.search(fields["reason"]):
        assert set(re.findall(r"'([^']*)'", said.group(1))) <= set(words(result["question"])), fields["reason"]
        fields["reason"] = fields["reason"][: said.start()] + fields["reason"][said.end() :]
    return fields
