"""The build on a real Dask cluster (distributed.LocalCluster, worker processes on loopback) through Prefect's Dask
task runner (flows.workers): equal to the build in one process, full and incremental; a worker killed mid-build
is replaced and its shard made again; a shard that fails for good publishes nothing."""

import os
import signal
import subprocess
import sys
from functools import partial
from pathlib import Path

import psutil
import pytest
from prefect import flow

from acervo.flows.flow_run import on_cluster
from acervo.flows.index import publish
from acervo.flows.workers import ShardFailed, fanout, runner
from acervo.pipelines.settings import Settings
from acervo.pipelines.shards import Shard, made
from conftest import SAMPLE, wait_for
from test_shards import edited, tables

pytestmark = pytest.mark.slow  # a Dask cluster of worker processes, Prefect flow runs against the session's server

ROOT = Path(__file__).parent.parent


def test_a_build_on_a_local_cluster_and_its_rerun_equal_the_build_in_one_process(prefect_api, tmp_path: Path):
    settings = Settings(mentions="nlp")
    on_workers = Settings(mentions="nlp", workers="2", shard_size=40)
    for step, corpus in enumerate([SAMPLE, edited(SAMPLE, tmp_path / "edited.jsonl")]):
        publish(corpus, tmp_path / "one.duckdb", settings)
        summary = on_cluster("2")(corpus, tmp_path / "cluster.duckdb", on_workers)
        assert summary["stages"][1]["stage"] == "chunks"
        assert tables(tmp_path / "cluster.duckdb") == tables(tmp_path / "one.duckdb"), f"step {step}"


def killing(marker: Path, shard: Shard) -> str:
    """Make `shard`, but first kill the worker process the first time a shard of chunks comes (`marker` says
    whether it came)."""
    if "/chunks-" in shard.inputs and not marker.exists():
        marker.touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return made(shard)


def failing(shard: Shard) -> str:
    """Make `shard`, but fail for good on every shard of postings."""
    if "/chunk_terms_next-" in shard.inputs:
        raise OSError("the shard location is full")
    return made(shard)


@flow(task_runner=runner("2"))
def build_on_two_workers(source: Path, db: Path, make_marker: Path | None) -> None:
    """The build on a local cluster of two workers, each shard made by `killing` (with `make_marker`) or `failing`."""
    make = partial(killing, make_marker) if make_marker else failing
    publish(source, db, Settings(mentions="titles"), fanout=fanout(size=50, make=make))


def test_a_worker_killed_mid_build_is_replaced_and_the_build_is_the_same(prefect_api, tmp_path: Path):
    marker = tmp_path / "killed"
    build_on_two_workers(SAMPLE, tmp_path / "cluster.duckdb", marker)
    assert marker.exists()
    publish(SAMPLE, tmp_path / "one.duckdb", Settings(mentions="titles"))
    assert tables(tmp_path / "cluster.duckdb") == tables(tmp_path / "one.duckdb")


def test_a_shard_that_fails_for_good_publishes_nothing(prefect_api, tmp_path: Path):
    db = tmp_path / "x.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles"))
    before = tables(db)
    with pytest.raises(ShardFailed, match="the shard location is full"):
        build_on_two_workers(edited(SAMPLE, tmp_path / "edited.jsonl"), db, None)
    assert tables(db) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edited.jsonl", "x.duckdb", "x.duckdb.lock"]


def test_the_command_line_builds_on_workers(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")} | {
        "PREFECT_HOME": str(tmp_path / "prefect-home")}
    command = [sys.executable, "-m", "acervo.flows.cli", "index", str(SAMPLE), "--mentions", "titles", "--json"]
    done = subprocess.run([*command, "--db", str(tmp_path / "cluster.duckdb"), "--workers", "2", "--shard-location",
                           str(tmp_path / "shared"), "--shard-size", "100"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    subprocess.run([*command, "--db", str(tmp_path / "one.duckdb"), "--no-prefect"], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=300)
    assert tables(tmp_path / "cluster.duckdb") == tables(tmp_path / "one.duckdb")
    assert list((tmp_path / "shared").iterdir()) == []


def test_a_writer_killed_mid_build_leaves_its_index_and_no_process_behind(tmp_path: Path):
    db = tmp_path / "x.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles"))
    before = tables(db)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")} | {
        "PREFECT_HOME": str(tmp_path / "prefect-home")}
    source = edited(SAMPLE, tmp_path / "e.jsonl")
    command = ["index", str(source), "--db", str(db), "--mentions", "titles", "--workers", "2", "--shard-size", "5"]
    run = subprocess.Popen([sys.executable, "-m", "acervo.flows.cli", *command], cwd=ROOT, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: any(tmp_path.glob("x.duckdb.staging-*/**/out-*.parquet")), timeout=180,
                 what="the workers to make shards")
        children = psutil.Process(run.pid).children(recursive=True)
        assert len(children) >= 3  # Prefect's temporary server and two Dask workers (and their nannies)
    finally:
        run.kill()
        run.wait()
    wait_for(lambda: not [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE],
             timeout=90, what="the workers and the server to end with the writer")
    assert tables(db) == before
