"""A reader's memory: DuckDB caches at most --cache-mb of table blocks above what it cannot evict (the lookup-index
nodes questions loaded), and the bound never changes or fails an answer."""

import json
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from acervo.flows.index import publish
from acervo.pipelines.db import reader, sql
from acervo.pipelines.query import context
from acervo.pipelines.query.context import PINNED_STEP_MB, Index
from acervo.pipelines.query.words import Words
from acervo.pipelines.settings import Settings
from conftest import DATA, SAMPLE

QUESTIONS = [json.loads(line)["question"] for line in
             (DATA / "2wiki_sample_questions.jsonl").read_text(encoding="utf-8").splitlines()][:20]


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("reader") / "sample.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles"))
    return db


def mib(setting: str) -> float:
    """A memory setting as DuckDB writes it ("161.0 MiB", "1.2 GiB") in MiB."""
    number, unit = re.fullmatch(r"([\d.]+) (\w+)", setting).groups()
    return float(number) * {"KiB": 2**-10, "MiB": 1, "GiB": 2**10, "TiB": 2**20}[unit]


def limit(index: Index) -> float:
    return mib(index.con.execute(sql("db.memory_limit")).fetchone()[0])


def held(index: Index) -> tuple[float, float]:
    """The MiB of table blocks DuckDB caches for the reader, and of all else it holds."""
    rows = dict(index.con.execute("select tag, memory_usage_bytes from duckdb_memory()").fetchall())
    cached = rows.pop("BASE_TABLE", 0)
    return cached / 2**20, sum(rows.values()) / 2**20


def answers(index: Index) -> list[str]:
    return [index.query(q, budget=512).to_json() for q in QUESTIONS]


@pytest.mark.slow  # seconds of indexing
def test_a_reader_caches_table_blocks_up_to_its_bound_above_what_duckdb_cannot_evict(sample_db: Path):
    with Index(sample_db, cache_mb=None) as free:
        own = limit(free)
        expected = answers(free)
        assert limit(free) == own  # unbounded: DuckDB's own limit, untouched
    with Index(sample_db, cache_mb=3) as bounded:
        pinned = bounded.con.execute(sql("query.pinned_memory")).fetchone()[0] // 2**20
        first = bounded.query(QUESTIONS[0], budget=512).to_json()
        assert limit(bounded) == pinned + PINNED_STEP_MB + 3 < own
        assert [first, *answers(bounded)[1:]] == expected
        cached, rest = held(bounded)
        assert cached <= limit(bounded) - rest + 0.25  # a block of 256 KiB may be on its way out


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_question_the_bound_leaves_too_little_memory_for_is_answered_under_duckdbs_own_limit(
        sample_db: Path, monkeypatch: pytest.MonkeyPatch):
    with Index(sample_db, cache_mb=None) as free:
        own = limit(free)
        expected = answers(free)
    monkeypatch.setattr(context, "PINNED_STEP_MB", 1)  # a MiB above what DuckDB cannot evict: too little to answer
    with Index(sample_db, cache_mb=0) as starved:
        assert answers(starved) == expected
        assert limit(starved) == pytest.approx(own, rel=0.01)  # the last question ran out under its bound, asked again


def test_a_reader_of_an_index_without_vectors_never_imports_numpy(sample_db: Path):
    code = ("import sys; from acervo.pipelines.query.context import Index; index = Index(sys.argv[1]); "
            "index.query('Who directed Wrong Turn 3?'); print('numpy' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, str(sample_db)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_word_counts_a_failed_read_left_out_are_read_when_the_question_is_asked_again(sample_db: Path):
    con = reader(sample_db)
    counts = Words(con, None, list)
    con.close()  # the next statement fails, as one out of memory would
    with pytest.raises(duckdb.Error):
        counts.load(["film", "zzzz"])
    assert counts.documents == {}
    counts.con = reader(sample_db)
    counts.load(["film", "zzzz"])
    assert counts.documents["film"] > 0 and counts.documents["zzzz"] == 0
    counts.con.close()
