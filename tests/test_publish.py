"""Safe publishing: killed runs leave the last good index, readers never see a lock or a partial index,
and two writers never run at once."""

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import SAMPLE, write_jsonl
from flows.build import publish
from pipelines.db import connect
from pipelines.publish import IndexBusy, writer_lock
from pipelines.settings import Settings

ROOT = Path(__file__).parent.parent
STAGES = ["documents", "chunks", "mentions", "edges", "communities", "answers", "reports"]
TITLES = Settings(mentions="titles")

KILLED_RUN = """
import os, signal, sys
from pathlib import Path
import pipelines.{module} as stage
from flows.build import publish
from pipelines.settings import Settings

def killed(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

stage.run = killed
publish(Path(sys.argv[1]), Path(sys.argv[2]), Settings(mentions="titles"))
"""


def answers(db: Path) -> list[tuple]:
    con = connect(db, read_only=True)
    rows = con.execute("select entity_id, answer, evidence_ref from entity_answers order by all").fetchall()
    con.close()
    return rows


def changed_sample(tmp_path: Path) -> Path:
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    records[0]["text"] += " An edit that the killed run never publishes."
    return write_jsonl(tmp_path / "changed.jsonl", records[1:] + records[:1])


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[tuple]]:
    """The sample published once, its changed copy, and the answers a fresh build of that copy gives."""
    tmp = tmp_path_factory.mktemp("published")
    db, fresh, source = tmp / "index.duckdb", tmp / "fresh.duckdb", changed_sample(tmp)
    publish(SAMPLE, db, TITLES)
    publish(source, fresh, TITLES)
    return db, source, answers(fresh)


@pytest.mark.parametrize("module", STAGES)
def test_a_run_killed_in_any_stage_keeps_the_last_index_and_the_next_run_converges(module, published, tmp_path: Path):
    built, source, converged = published
    db = tmp_path / "index.duckdb"
    shutil.copyfile(built, db)
    good = answers(db)
    done = subprocess.run([sys.executable, "-c", KILLED_RUN.format(module=module), str(source), str(db)], cwd=ROOT)
    assert done.returncode == -9
    assert answers(db) == good
    publish(source, db, TITLES)
    assert answers(db) == converged
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name]


READER = """
import os, sys, duckdb
from pathlib import Path
os.nice(10)  # the writer comes first: readers take the time it leaves
db, stop, reads = sys.argv[1], Path(sys.argv[2]), 0
while not stop.exists():
    con = duckdb.connect(db, read_only=True)
    entities, answered, dangling = con.execute(
        "select (select count(*) from entities), (select count(*) from entity_answers), "
        "(select count(*) from entity_answers a anti join chunks c on c.chunk_id = a.evidence_ref)").fetchone()
    con.close()
    assert entities == answered and dangling == 0, (entities, answered, dangling)
    reads += 1
    if reads == 1:
        print("reading", flush=True)
print(reads)
"""


def test_readers_querying_during_reindexes_see_no_lock_and_no_partial_index(tmp_path: Path):
    db, stop = tmp_path / "index.duckdb", tmp_path / "stop"
    publish(SAMPLE, db, TITLES)
    readers = [subprocess.Popen([sys.executable, "-c", READER, str(db), str(stop)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(3)]
    assert all(reader.stdout.readline().strip() == "reading" for reader in readers)
    for source in (changed_sample(tmp_path), SAMPLE):
        publish(source, db, TITLES)
    read_throughout = [reader.poll() is None for reader in readers]
    stop.touch()
    for reader in readers:
        out, err = reader.communicate(timeout=60)
        assert reader.returncode == 0, err
        assert int(out) > 0
    assert all(read_throughout)


HOLDER = """
import sys
from pathlib import Path
from pipelines.publish import writer_lock

with writer_lock(Path(sys.argv[1]), wait=0):
    print("held", flush=True)
    sys.stdin.read()  # until the test closes our stdin
"""


def test_a_second_writer_is_refused_with_a_clear_message_or_waits(tmp_path: Path):
    db = tmp_path / "index.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(IndexBusy, match="being reindexed by another run"):
        publish(SAMPLE, db, TITLES)
    taken, failed = threading.Event(), []

    def second_writer() -> None:
        try:
            with writer_lock(db, wait=30):
                taken.set()
        except Exception as e:  # reported by the assertions below
            failed.append(e)

    waiter = threading.Thread(target=second_writer)
    waiter.start()
    assert not taken.wait(timeout=0.5), "a second writer took the lock while the first held it"
    holder.stdin.close()
    waiter.join(timeout=60)
    assert taken.is_set() and not failed, failed
    assert holder.wait(timeout=30) == 0
    publish(SAMPLE, db, TITLES)
    assert len(answers(db)) == 300
