"""Shared fixtures: a fresh in-memory index, the seed corpus built end to end, and a Prefect harness."""

import json
import os
from pathlib import Path

import pytest

# The suite's Prefect runs stay in the repository (.prefect/, ignored by git), out of the user's own history.
os.environ.setdefault("PREFECT_HOME", str(Path(__file__).resolve().parent.parent / ".prefect"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")

from flows.build import build  # noqa: E402  (after the offline defaults above)
from pipelines import reports  # noqa: E402
from pipelines.db import Connection, connect  # noqa: E402
from pipelines.settings import Settings  # noqa: E402

DATA = Path(__file__).parent / "data"
SEED = DATA / "seed_corpus.jsonl"
SAMPLE = DATA / "2wiki_sample.jsonl"


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
    build(c, source, Settings(**settings))
    return c


@pytest.fixture(scope="module")
def seed() -> Connection:
    """The seed corpus indexed in `given` mode (read-only use)."""
    c = index_of(SEED)
    yield c
    c.close()


EQUAL = {"documents": "doc_id", "document_entities": "doc_id, label", "chunks": "chunk_id", "entities": "entity_id",
         "entity_aliases": "entity_id, alias", "mentions": "entity_id, chunk_id", "edges": "src, dst",
         "entity_answers": "entity_id"}
BOOKKEEPING = {"names": "entity_id, name", "chunk_state": "chunk_id", "chunk_folded": "chunk_id",
               "title_names": "title"}  # what reruns compare against: stale or doubled rows would mislead the next


def dump(con: Connection, tables: dict[str, str] = EQUAL) -> dict[str, list[tuple]]:
    return {t: con.execute(f"select * from {t} order by {order}").fetchall() for t, order in tables.items()}


def assert_like_fresh(con: Connection, source: Path, config: Settings, *, provenance: bool = True) -> None:
    """The incremental index equals a fresh build; its reports are what the report stage writes.

    Without `provenance`, documents' source file and line are not compared (a `delete` reads no file).
    """
    fresh = connect()
    build(fresh, source, config)
    if not provenance:
        for c in (con, fresh):
            c.execute("update documents set source = '', line = 0")
    assert dump(con) == dump(fresh)
    assert dump(con, BOOKKEEPING) == dump(fresh, BOOKKEEPING)
    before = dump(con, {"community_reports": "community_id", "report_lines": "community_id, ord"})
    con.execute("delete from community_reports")
    reports.run(con, max_lines=config.report_max_lines, n_evidence=config.report_evidence)
    assert dump(con, {"community_reports": "community_id", "report_lines": "community_id, ord"}) == before
    fresh.close()
