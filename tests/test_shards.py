"""The per-document work in shards (pipelines.shards), made in this process: any sharding builds, and rebuilds after
edits, the very tables the build in one process makes; a shard that fails publishes nothing; shards are removed."""

import json
from pathlib import Path

import duckdb
import fsspec
import pytest
from test_vectors import trigram_vector

from acervo.flows.cli import main
from acervo.flows.index import publish
from acervo.pipelines.settings import Settings
from acervo.pipelines.shards import Fanout, Shard, made
from conftest import SAMPLE, SEED

LEDGER = ("index_runs", "run_stages")  # when and how long each run took


def tables(db: Path) -> dict[str, list[tuple]]:
    """Every table of the index file `db` but the run ledger, each in order of all its columns."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = [n for (n,) in con.execute("select table_name from duckdb_tables() where database_name = "
                                           "current_database() order by 1").fetchall() if n not in LEDGER]
        return {n: con.execute(f"select * from {n} order by all").fetchall() for n in names}
    finally:
        con.close()


class Here:
    """A fan-out that makes each shard in this process, keeping the shards it made."""

    def __init__(self) -> None:
        self.shards: list[Shard] = []

    def __call__(self, shards: list[Shard]) -> None:
        for shard in shards:
            made(shard)
        self.shards += shards


def edited(source: Path, out: Path) -> Path:
    """`source` with its 2nd document's text edited, its 3rd deleted and a copy of its 1st added."""
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    records[1]["text"] += "\n\nAn added paragraph names Wrong Turn 3 and Declan O'Brien once more."
    del records[2]
    records.append({**records[0], "doc_id": "copy-of-first"})
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return out


@pytest.mark.slow  # seconds of indexing
@pytest.mark.parametrize(("source", "mode", "size"), [
    (SAMPLE, "titles", 7), (SAMPLE, "nlp", 64), (SEED, "given", 1), (SEED, "nlp", 1000)])
def test_a_sharded_build_and_its_reruns_equal_the_build_in_one_process(tmp_path: Path, source: Path, mode: str,
                                                                      size: int):
    settings = Settings(mentions=mode)
    here = Here()
    fanout = Fanout(here, location=str(tmp_path / "shared"), size=size)
    for step, corpus in enumerate([source, edited(source, tmp_path / "edited.jsonl")]):
        publish(corpus, tmp_path / "one.duckdb", settings)
        shards_before = len(here.shards)
        publish(corpus, tmp_path / "sharded.duckdb", settings, fanout=fanout)
        assert tables(tmp_path / "sharded.duckdb") == tables(tmp_path / "one.duckdb"), f"step {step}"
        assert len(here.shards) > shards_before
        assert list((tmp_path / "shared").iterdir()) == []  # each run removes its shards
    keys = {s.inputs.rsplit("/", 2)[1].rsplit("-", 1)[0] for s in here.shards}
    assert keys == {"chunks", "chunk_terms_next", "document_words_next"} | (
        {"chunk_candidates"} if mode == "nlp" else {"mentions_found"} if mode == "titles" else set())


@pytest.mark.slow  # seconds of indexing
def test_a_rerun_sends_out_only_the_changed_documents(tmp_path: Path):
    here = Here()
    fanout = Fanout(here, location=None, size=1)
    publish(SEED, tmp_path / "x.duckdb", Settings(mentions="given"), fanout=fanout)
    first = len(here.shards)
    publish(edited(SEED, tmp_path / "edited.jsonl"), tmp_path / "x.duckdb", Settings(mentions="given"), fanout=fanout)
    chunked = [s for s in here.shards[first:] if "/chunks-" in s.inputs]
    assert len(chunked) == 2  # the edited document and the copy, a shard each; the deleted one needs none
    assert first > 2 * 11


@pytest.mark.slow  # seconds of indexing
def test_a_shard_that_fails_publishes_nothing_and_leaves_no_shards(tmp_path: Path):
    db, shared = tmp_path / "x.duckdb", tmp_path / "shared"
    publish(SEED, db, Settings(mentions="given"))
    before = tables(db)

    def failing(shards: list[Shard]) -> None:
        made(shards[0])
        raise RuntimeError("a worker could not make a shard")

    with pytest.raises(RuntimeError, match="could not make a shard"):
        publish(edited(SEED, tmp_path / "edited.jsonl"), db, Settings(mentions="given"),
                fanout=Fanout(failing, location=str(shared), size=100))
    assert tables(db) == before
    assert list(shared.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edited.jsonl", "shared", "x.duckdb", "x.duckdb.lock"]


@pytest.mark.slow  # seconds of indexing
def test_a_failed_runs_shards_are_removed_by_the_next_run(tmp_path: Path):
    db, shared = tmp_path / "x.duckdb", tmp_path / "shared"
    here = Here()
    publish(SEED, db, Settings(mentions="given"), fanout=Fanout(here, location=str(shared), size=100))
    folder = Path(here.shards[0].inputs).parent.parent
    (folder / "chunks-left-by-a-killed-run").mkdir(parents=True)
    (folder / "chunks-left-by-a-killed-run" / "in-00000.parquet").write_bytes(b"partial")
    publish(edited(SEED, tmp_path / "edited.jsonl"), db, Settings(mentions="given"),
            fanout=Fanout(here, location=str(shared), size=100))
    assert not folder.exists()


def test_workers_need_a_flow_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    code = main(["index", str(SEED), "--db", str(tmp_path / "x.duckdb"), "--workers", "2", "--no-prefect"])
    assert code == 2
    assert "drop --no-prefect" in capsys.readouterr().err
    assert not (tmp_path / "x.duckdb").exists()


class Batches:
    """A stand-in embedding model (hashed character trigrams) that keeps each batch it is asked for."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.seen.append(list(texts))
        return [trigram_vector(t) for t in texts]


@pytest.mark.slow  # two builds of the sample with vectors
def test_vectors_made_in_shards_are_made_batch_for_batch_as_here(tmp_path: Path):
    here, sharded = Batches(), Batches()
    publish(SAMPLE, tmp_path / "one.duckdb", Settings(mentions="titles"), embed=here)
    publish(SAMPLE, tmp_path / "sharded.duckdb", Settings(mentions="titles"), embed=sharded,
            fanout=Fanout(Here(), location=None, size=50))
    assert tables(tmp_path / "sharded.duckdb") == tables(tmp_path / "one.duckdb")
    assert len(here.seen) > 10
    assert sharded.seen == here.seen  # shards of 50 are rounded up to whole batches: a model sees the same batches


@pytest.mark.slow  # seconds of indexing
def test_a_folder_read_and_converted_in_shards_is_the_folder_read_here(tmp_path: Path):
    folder = tmp_path / "docs"
    (folder / "guides").mkdir(parents=True)
    (folder / "guides" / "install.md").write_text("# Installing Acervo\n\nAcervo installs with pip.\n")
    (folder / "readme.txt").write_text("Acervo indexes folders. The Guide names DuckDB.\n", encoding="latin-1")
    (folder / "page.html").write_text("<html><body><h1>Acervo Page</h1><p>DuckDB holds it.</p></body></html>")
    (folder / "empty.md").write_text("   \n")
    (folder / "binary.txt").write_bytes(b"\x00\x01\x02 not text \xff\xfe")
    here = Here()
    publish(folder, tmp_path / "one.duckdb", Settings(mentions="nlp"))
    publish(folder, tmp_path / "sharded.duckdb", Settings(mentions="nlp"), fanout=Fanout(here, location=None, size=2))
    one, sharded = tables(tmp_path / "one.duckdb"), tables(tmp_path / "sharded.duckdb")
    assert sharded == one
    assert len(one["documents"]) == 3 and len(one["rejected"]) == 2
    assert len([s for s in here.shards if "/files_converted-" in s.inputs]) == 3  # 5 files read, 2 a shard


@pytest.mark.slow  # two builds in mode nlp
def test_shards_travel_through_an_fsspec_url(tmp_path: Path):
    here = Here()
    publish(SEED, tmp_path / "one.duckdb", Settings(mentions="nlp"))
    publish(SEED, tmp_path / "sharded.duckdb", Settings(mentions="nlp"),
            fanout=Fanout(here, location="memory://acervo-test/shards", size=4))
    assert tables(tmp_path / "sharded.duckdb") == tables(tmp_path / "one.duckdb")
    assert here.shards and all(s.inputs.startswith("memory://acervo-test/shards/acervo-") for s in here.shards)
    folder = here.shards[0].inputs.rsplit("/", 2)[0]
    assert not fsspec.filesystem("memory").exists(folder)  # the index's shard folder, removed after the run
