"""Safe publishing: killed runs leave the last good index, readers never see a lock or a partial index,
and two writers never run at once."""

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import duckdb
import pytest

from acervo.flows.cli import main
from acervo.flows.index import publish
from acervo.pipelines.citations import CITABLE
from acervo.pipelines.db import BLOCK_SIZE, connect, sql
from acervo.pipelines.publish import WASTE, IndexBusy, NotAnIndex, _compact, waste, writer_lock
from acervo.pipelines.query.context import Index
from acervo.pipelines.reconfigure import STAGES as RUN_STAGES
from acervo.pipelines.runs import history
from acervo.pipelines.settings import Settings
from conftest import EQUAL, SAMPLE, SEED, assert_same_files, dump, write_jsonl

pytestmark = pytest.mark.slow  # runs killed in subprocesses, readers and writers in other processes

ROOT = Path(__file__).parent.parent
STAGES = ["documents", "chunks", "terms", "mentions", "edges", "communities", "answers", "reports"]
TITLES = Settings(mentions="titles")

KILLED_RUN = """
import os, signal, sys
from pathlib import Path
from typing import Any
import acervo.pipelines.{module} as stage
from acervo.flows.index import publish
from acervo.pipelines.settings import Settings

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
from typing import Any
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
    changed = changed_sample(tmp_path)
    for source in (changed, changed, SAMPLE):  # the second changes nothing, and rewrites no file
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
from typing import Any
from acervo.pipelines.publish import writer_lock

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


HOLDER = """
import sys
from pathlib import Path
from typing import Any
from acervo.pipelines.publish import writer_lock
with writer_lock(Path(sys.argv[1]), wait=0):
    print('held', flush=True)
    sys.stdin.readline()
"""


def test_an_index_through_a_symbolic_link_updates_its_target_and_shares_its_lock(tmp_path: Path):
    target = tmp_path / "real" / "index.duckdb"
    target.parent.mkdir()
    link = tmp_path / "link.duckdb"
    link.symlink_to(target)
    publish(SAMPLE, link, TITLES)
    assert link.is_symlink() and link.resolve() == target
    assert target.is_file() and not target.is_symlink()
    assert len(answers(target)) == 300
    publish(changed_sample(tmp_path), link, TITLES)
    publish(changed_sample(tmp_path), link, TITLES)  # changes nothing: its ledger waits beside the target
    assert link.is_symlink() and len(listed(link)) == 3
    assert {p.name for p in tmp_path.iterdir()} == {"link.duckdb", "changed.jsonl", "real"}  # no lock beside the link
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(target)], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(IndexBusy, match="being reindexed by another run"):
            publish(SAMPLE, link, TITLES)
    finally:
        holder.communicate("\n", timeout=30)
    publish(SAMPLE, link, TITLES)
    assert link.is_symlink() and len(answers(target)) == 300


def other_database(path: Path) -> Path:
    con = duckdb.connect(str(path))
    con.execute("create table accounts (id integer, owner varchar); insert into accounts values (1, 'ana')")
    con.close()
    return path


@pytest.mark.parametrize("flags", [["--fresh"], []])
@pytest.mark.parametrize("kind", ["the source", "a text file", "an empty file", "another database", "a folder"])
def test_index_refuses_a_db_that_is_the_source_or_not_an_index_and_changes_nothing(kind, flags, tmp_path: Path,
                                                                                    capsys):
    source = write_jsonl(tmp_path / "self.jsonl", [{"doc_id": "a", "text": "Ana keeps the accounts."}])
    db = {"the source": source, "a text file": tmp_path / "notes.txt", "an empty file": tmp_path / "empty.duckdb",
          "another database": tmp_path / "other.duckdb", "a folder": tmp_path / "folder.duckdb"}[kind]
    if kind == "a text file":
        db.write_text("my notes\n", encoding="utf-8")
    elif kind == "an empty file":
        db.touch()
    elif kind == "another database":
        other_database(db)
    elif kind == "a folder":
        db.mkdir()
    before = {p.name: p.read_bytes() if p.is_file() else None for p in tmp_path.iterdir()}
    code = main(["index", str(source), "--db", str(db), "--no-prefect", *flags])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and str(db) in err and "choose another --db" in err
    assert {p.name: p.read_bytes() if p.is_file() else None for p in tmp_path.iterdir()} == before
    with pytest.raises(NotAnIndex):
        publish(source, db, Settings(), fresh=bool(flags))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file() and p.suffix != ".lock"} == \
        {name: data for name, data in before.items() if data is not None}


def test_the_source_is_refused_through_a_symbolic_link_and_an_index_is_still_updated(tmp_path: Path, capsys):
    source = write_jsonl(tmp_path / "self.jsonl", [{"doc_id": "a", "text": "Ana keeps the accounts."}])
    (tmp_path / "link.jsonl").symlink_to(source)
    kept = source.read_bytes()
    assert main(["index", str(tmp_path / "link.jsonl"), "--db", str(source), "--no-prefect", "--fresh"]) == 2
    assert source.read_bytes() == kept
    db = tmp_path / "index.duckdb"
    assert main(["index", str(source), "--db", str(db), "--no-prefect"]) == 0
    assert main(["index", str(source), "--db", str(db), "--no-prefect", "--fresh"]) == 0
    assert main(["delete", "a", "--db", str(db), "--no-prefect"]) == 0
    capsys.readouterr()


def test_an_open_index_reads_the_file_it_opened_a_new_one_and_reopen_read_the_published_one(tmp_path: Path):
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    db = tmp_path / "index.duckdb"
    publish(write_jsonl(tmp_path / "first.jsonl", records[:200]), db, TITLES)
    question = f"Who was {records[250]['title']}?"
    documents = "select count(*) from documents"
    with Index(db) as old:
        assert old.con.execute(documents).fetchone()[0] == 200
        assert records[250]["doc_id"] not in old.query(question).to_json()
        publish(SAMPLE, db, TITLES)
        with Index(db) as new:
            assert new.con.execute(documents).fetchone()[0] == 300
            assert records[250]["doc_id"] in new.query(question).to_json()
        assert old.con.execute(documents).fetchone()[0] == 200
        assert records[250]["doc_id"] not in old.query(question).to_json()
        old.reopen()
        assert old.con.execute(documents).fetchone()[0] == 300
        assert records[250]["doc_id"] in old.query(question).to_json()


def growing(tmp_path: Path, *sizes: int) -> list[Path]:
    """The sample's first `sizes` documents, one source each, the last edited: a rerun's work after each."""
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    sources = [write_jsonl(tmp_path / f"first{n}.jsonl", records[:n]) for n in sizes]
    records[0]["text"] += " An edit after the last run."
    return [*sources, write_jsonl(tmp_path / "edited.jsonl", records[:sizes[-1]])]


def test_a_rerun_makes_its_staging_file_from_the_spare_and_publishes_what_a_whole_copy_gives(tmp_path: Path):
    """The file a publish replaces stays as the spare; the next run brings it to the index's bytes, writes
    there, and publishes it: the same tables as a run on a whole copy, and the spare is then the file before."""
    sources = growing(tmp_path, 200, 250, 300)
    spared, copied = tmp_path / "spared" / "index.duckdb", tmp_path / "copied" / "index.duckdb"
    inodes = []
    for source in sources:
        publish(source, spared, TITLES)
        inodes.append(spared.stat().st_ino)
        (copied.parent / "index.duckdb.spare").unlink(missing_ok=True)  # so that every run copies
        publish(source, copied, TITLES)
    assert inodes[2:] == inodes[:2]  # each file in turn: the third run wrote the first's, the fourth the second's
    assert (spared.parent / "index.duckdb.spare").stat().st_ino == inodes[2]
    with connect(spared, read_only=True) as a, connect(copied, read_only=True) as b:
        tables = {**EQUAL, "communities": "community_id", "community_members": "community_id, entity_id",
                  "community_reports": "community_id", "report_lines": "community_id, ord"}
        assert dump(a, tables) == dump(b, tables)
        assert a.execute("select count(*) from documents").fetchone() == (300,)


def test_a_reader_holding_the_spare_keeps_its_file_as_it_was_and_the_run_copies_instead(tmp_path: Path):
    """A reader that opened the index before the last publish holds the spare: a run must not write it. The
    reader is in the running process itself, which a lock that only other processes see would miss, and
    another connection to its file was closed there, which releases DuckDB's own lock."""
    first, second, third, edited = growing(tmp_path, 200, 250, 300)
    db, spare = tmp_path / "index.duckdb", tmp_path / "index.duckdb.spare"
    publish(first, db, TITLES)
    documents = "select count(*) from documents"
    with Index(db) as old:
        Index(db).close()  # another reader of the file, closed: with DuckDB's lock alone, old would hold none
        publish(second, db, TITLES)
        second_file = db.stat().st_ino
        with spare.open("rb") as held:  # the file the reader holds, to read it after the run
            data = held.read()
            publish(third, db, TITLES)
            held.seek(0)
            assert held.read() == data
            assert os.fstat(held.fileno()).st_ino not in (db.stat().st_ino, spare.stat().st_ino)
        assert old.con.execute(documents).fetchone()[0] == 200
    with Index(db) as new:
        assert new.con.execute(documents).fetchone()[0] == 300
    publish(edited, db, TITLES)  # with no reader, the spare (the second run's file) is written and published
    assert db.stat().st_ino == second_file != spare.stat().st_ino


HOLDING_READER = """
import sys
from acervo.pipelines.query.context import Index

with Index(sys.argv[1]) as index:
    count = "select count(*), sum(length(text)) from documents"
    print(index.con.execute(count).fetchone(), flush=True)
    sys.stdin.readline()  # until the test has published again
    print(index.con.execute(count).fetchone(), flush=True)
"""


def test_a_reader_in_another_process_keeps_its_file_while_runs_publish_from_the_spare(tmp_path: Path):
    first, second, third, edited = growing(tmp_path, 200, 250, 300)
    db, spare = tmp_path / "index.duckdb", tmp_path / "index.duckdb.spare"
    publish(first, db, TITLES)
    reader = subprocess.Popen([sys.executable, "-c", HOLDING_READER, str(db)], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        before = reader.stdout.readline()
        held = db.stat().st_ino
        for source in (second, third, edited):  # the third run finds the reader's file as its spare
            publish(source, db, TITLES)
            assert db.stat().st_ino != held
        assert spare.stat().st_ino != held  # it copied, and kept the second run's file as the spare
        out, err = reader.communicate("go\n", timeout=60)
    finally:
        reader.kill()
    assert reader.returncode == 0, err
    assert before.startswith("(200, ") and out == before
    publish(first, db, TITLES)
    with connect(db, read_only=True) as con:
        assert con.execute("select count(*) from documents").fetchone() == (200,)


KILLED_SYNCING = """
import os, signal, sys
from pathlib import Path
from typing import Any
from acervo.flows.index import publish
from acervo.pipelines.settings import Settings

real = os.pwrite

def dying(fd, data, at):
    real(fd, bytes(data)[:len(data) // 2], at)
    os.kill(os.getpid(), signal.SIGKILL)

os.pwrite = dying
publish(Path(sys.argv[1]), Path(sys.argv[2]), Settings(mentions="titles"))
"""


def test_a_run_killed_while_bringing_the_spare_up_to_date_keeps_the_index_and_the_next_run_converges(tmp_path: Path):
    first, second, third, edited = growing(tmp_path, 200, 250, 300)
    db = tmp_path / "index.duckdb"
    publish(first, db, TITLES)
    publish(second, db, TITLES)
    good, data = answers(db), db.read_bytes()
    done = subprocess.run([sys.executable, "-c", KILLED_SYNCING, str(third), str(db)], cwd=ROOT)
    assert done.returncode == -9
    assert db.read_bytes() == data and answers(db) == good
    assert any(".staging-" in p.name for p in tmp_path.iterdir())  # the spare, half written, under its run's name
    publish(third, db, TITLES)
    fresh = tmp_path / "fresh" / "index.duckdb"
    publish(third, fresh, TITLES)
    assert answers(db) == answers(fresh)
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name]


def test_a_spare_that_is_the_index_itself_is_not_written_and_the_run_copies(tmp_path: Path):
    """A kill between a publish's two renames leaves the spare a second name of the index."""
    first, second, *_ = growing(tmp_path, 200, 250)
    db, spare = tmp_path / "index.duckdb", tmp_path / "index.duckdb.spare"
    publish(first, db, TITLES)
    os.link(db, spare)
    inode, data = db.stat().st_ino, db.read_bytes()
    publish(second, db, TITLES)
    assert spare.stat().st_ino == inode != db.stat().st_ino and spare.read_bytes() == data
    with connect(db, read_only=True) as con:
        assert con.execute("select count(*) from documents").fetchone() == (250,)


def test_reruns_keep_the_file_bounded_reusing_what_each_frees(tmp_path: Path):
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    db, source = tmp_path / "index.duckdb", tmp_path / "corpus.jsonl"
    publish(write_jsonl(source, records), db, TITLES)
    built = db.stat().st_size
    sizes = []
    for n in range(10):
        records[n]["text"] += " An edit of this rerun."
        records = [r for i, r in enumerate(records) if i != 50 + n]
        records.append({**records[100 + n], "doc_id": f"added-{n}", "title": f"{records[100 + n]['title']} ({n})"})
        publish(write_jsonl(source, records), db, TITLES)
        sizes.append(db.stat().st_size)
    fresh = tmp_path / "fresh.duckdb"
    publish(source, fresh, TITLES)
    assert max(sizes) < (1.5 + WASTE) * fresh.stat().st_size, sizes  # live data in part-filled blocks, plus waste
    assert sizes[0] > built
    a, b = connect(db, read_only=True), connect(fresh, read_only=True)
    assert dump(a) == dump(b)
    a.close()
    b.close()


KILLED_INSERT = """
import os, signal, sys
from pathlib import Path
from typing import Any
import acervo.pipelines.bulk as bulk
from acervo.flows.index import publish
from acervo.pipelines.settings import Settings

statement = bulk.insert_sql

def killed(con, table, names, **options):
    if table == "chunks":  # its rows are written to the bulk-insert file; DuckDB has not read them
        os.kill(os.getpid(), signal.SIGKILL)
    return statement(con, table, names, **options)

bulk.insert_sql = killed
publish(Path(sys.argv[1]), Path(sys.argv[2]), Settings(mentions="titles"))
"""


def test_bulk_insert_files_of_a_killed_run_sit_beside_the_index_and_the_next_run_removes_them(tmp_path: Path):
    db, temp = tmp_path / "index.duckdb", tmp_path / "tmp"
    temp.mkdir()
    done = subprocess.run([sys.executable, "-c", KILLED_INSERT, str(SAMPLE), str(db)], cwd=ROOT,
                          env={**os.environ, "TMPDIR": str(temp)})
    assert done.returncode == -9
    assert list(temp.iterdir()) == []
    left = [p.relative_to(tmp_path).as_posix() for p in tmp_path.glob("index.duckdb.staging-*/rows/*")]
    assert left and all(re.fullmatch(r"index\.duckdb\.staging-\d+/rows/acervo-chunks-.*\.ndjson", p) for p in left)
    publish(SAMPLE, db, TITLES)
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name]
    assert len(answers(db)) == 300


def in_file(db: Path) -> list[str]:
    """The run ids of the index file's own ledger, newest first."""
    con = connect(db, read_only=True)
    try:
        return [r for (r,) in con.execute("select run_id from index_runs order by started_at desc").fetchall()]
    finally:
        con.close()


def listed(db: Path) -> list[str]:
    """The run ids the ledger lists (runs.history), newest first."""
    con = connect(db, read_only=True)
    try:
        return [run["run_id"] for run in history(con, limit=100)]
    finally:
        con.close()


def edited_seed(tmp_path: Path) -> Path:
    records = [json.loads(line) for line in SEED.read_text(encoding="utf-8").splitlines()]
    records[0]["text"] += " An edit."
    return write_jsonl(tmp_path / "edited.jsonl", records)


def test_a_rerun_that_changes_nothing_leaves_the_file_as_it_is_and_the_next_publish_records_it(tmp_path: Path):
    db = tmp_path / "index.duckdb"
    first, _ = publish(SEED, db, Settings())
    inode, data = db.stat().st_ino, db.read_bytes()
    second, stages = publish(SEED, db, Settings())
    assert (db.stat().st_ino, db.read_bytes()) == (inode, data)
    assert [s.stage for s in stages] == ["documents", "chunks", "terms", "mentions", "edges", "communities",
                                         "boilerplate", "entity_answers", "community_reports", "written_reports",
                                         "written_answers", "entity_vectors", "chunk_vectors"]
    assert (stages[0].work.read, stages[0].work.reused, stages[0].work.recomputed) == (11, 11, 0)
    assert all((s.work.detail or {}).get("skipped") == 1 for s in stages[1:])
    assert in_file(db) == [first] and listed(db) == [second, first]
    third, _ = publish(SEED, db, Settings())
    assert listed(db) == [third, second, first] and in_file(db) == [first]
    fourth, stages = publish(edited_seed(tmp_path), db, Settings())
    assert stages[0].work.recomputed == 1
    assert in_file(db) == listed(db) == [fourth, third, second, first]
    con = connect(db, read_only=True)
    assert con.execute("select count(*) from run_stages").fetchone() == (len(RUN_STAGES) * 4,)
    con.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edited.jsonl", "index.duckdb", "index.duckdb.lock",
                                                          "index.duckdb.spare"]
    publish(edited_seed(tmp_path), db, Settings())
    fresh, _ = publish(edited_seed(tmp_path), db, Settings(), fresh=True)
    assert in_file(db) == listed(db) == [fresh]  # a fresh build starts a new ledger, as it always did
    assert not (tmp_path / "index.duckdb.runs").exists()


def embed_one(texts: list[str]) -> list[list[float]]:
    return [[float(len(t))] for t in texts]


@pytest.mark.parametrize("change", ["a setting", "a stage's stored setting", "the gazetteer file", "an embedder"])
def test_a_rerun_is_published_when_anything_but_the_source_changed(change: str, tmp_path: Path):
    names = tmp_path / "names.txt"
    names.write_text("contrato\nfatura\n", encoding="utf-8")
    db, settings = tmp_path / "index.duckdb", Settings(mentions="gazetteer", gazetteer=names)
    first, _ = publish(SEED, db, settings)
    fresh, embed = tmp_path / "fresh.duckdb", None
    if change == "a setting":  # one that changes no row here: the ledger must still record it
        settings = settings.model_copy(update={"report_max_lines": 50})
    elif change == "a stage's stored setting":  # as a later version of the edges stage would find it
        con = connect(db)
        con.execute("update index_state set value = 'another version' where key = 'edges'")
        con.close()
    elif change == "the gazetteer file":
        names.write_text("contrato\nfatura\nrenovação\n", encoding="utf-8")
    else:
        embed = embed_one
    inode = db.stat().st_ino
    second, stages = publish(SEED, db, settings, embed=embed)
    assert db.stat().st_ino != inode and in_file(db) == [second, first]
    if change == "a setting":
        con = connect(db, read_only=True)
        assert json.loads(con.execute("select settings from index_runs where run_id = ?", [second]).fetchone()[0])[
            "report_max_lines"] == 50
        con.close()
    else:
        assert any(s.work.detail != {"skipped": 1} for s in stages[1:]), stages
    publish(SEED, fresh, settings, embed=embed)
    assert_same_files(db, fresh)


KILLED_AT = """
import os, signal, sys
from pathlib import Path
from typing import Any
import acervo.pipelines.publish as publishing
from acervo.flows.index import publish
from acervo.pipelines.settings import Settings

db, point = Path(sys.argv[2]), sys.argv[3]
replace = os.replace

def killed(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

def replaced(src, dst):
    if point == "pending" and str(dst).endswith(".runs"):  # the ledger written beside, not yet in place
        killed()
    replace(src, dst)
    if point == "published" and Path(dst) == db:  # the index replaced, the ledger beside not yet removed
        killed()

if point == "probing":
    publishing.Probe.unchanged = killed
os.replace = replaced
publish(Path(sys.argv[1]), db, Settings())
"""


def killed_at(point: str, source: Path, db: Path) -> None:
    done = subprocess.run([sys.executable, "-c", KILLED_AT, str(source), str(db), point], cwd=ROOT)
    assert done.returncode == -9


@pytest.mark.parametrize("point", ["probing", "pending"])
def test_a_rerun_that_changes_nothing_killed_at_any_point_leaves_the_index_and_its_ledger(point: str, tmp_path: Path):
    db = tmp_path / "index.duckdb"
    first, _ = publish(SEED, db, Settings())
    second, _ = publish(SEED, db, Settings())
    data = db.read_bytes()
    killed_at(point, SEED, db)
    assert db.read_bytes() == data and listed(db) == [second, first]
    third, _ = publish(SEED, db, Settings())
    assert listed(db) == [third, second, first]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.duckdb", "index.duckdb.lock", "index.duckdb.runs"]


def test_a_run_killed_after_publishing_before_removing_the_waiting_ledger_records_each_run_once(tmp_path: Path):
    db, edited = tmp_path / "index.duckdb", edited_seed(tmp_path)
    first, _ = publish(SEED, db, Settings())
    second, _ = publish(SEED, db, Settings())
    killed_at("published", edited, db)
    killed, = set(in_file(db)) - {first, second}
    assert in_file(db) == listed(db) == [killed, second, first]
    assert (tmp_path / "index.duckdb.runs").exists()
    fourth, _ = publish(edited, db, Settings())  # changes nothing: waits beside, with the run already in the file
    assert listed(db) == [fourth, killed, second, first]
    fifth, _ = publish(SEED, db, Settings())
    assert in_file(db) == listed(db) == [fifth, fourth, killed, second, first]
    con = connect(db, read_only=True)
    uneven = "select run_id, count(*) from run_stages group by all having count(*) != ?"
    assert con.execute(uneven, [len(RUN_STAGES)]).fetchall() == []
    con.close()
    assert not (tmp_path / "index.duckdb.runs").exists()


KEYS = {"documents": "doc_id", "document_entities": "doc_id, label", "chunks": "chunk_id", "entities": "entity_id",
        "entity_aliases": "entity_id, alias", "names": "entity_id, name", "chunk_state": "chunk_id",
        "chunk_folded": "chunk_id", "title_names": "title", "chunk_candidates": "chunk_id",
        "candidate_decisions": "entity_id", "index_state": "key", "mentions": "entity_id, chunk_id",
        "edges": "src, dst", "communities": "community_id", "community_members": "community_id, entity_id",
        "entity_answers": "entity_id", "entity_vectors": "entity_id", "chunk_vectors": "chunk_id",
        "community_reports": "community_id",
        "report_lines": "community_id, ord", "written_reports": "community_id", "written_answers": "entity_id",
        "chunk_terms": "term, chunk_id", "term_postings": "term",
        "chunk_lengths": "chunk_id", "document_words": "doc_id", "word_documents": "word, scope",
        "index_runs": "run_id", "run_stages": "run_id, ord", "chunk_sentences": "chunk_id",
        "chunk_boilerplate": "chunk_id"}  # every table's unique key (sql/schema.sql)


def cite_first(messages: list[dict]) -> str:
    """A stand-in language model: one sentence citing the first chunk its prompt lets it cite."""
    first = messages[-1]["content"].split("\n")[-1].removeprefix(CITABLE).split(", ")[0]
    return json.dumps({"sentences": [{"text": "A written sentence.", "cites": [first]}]})


def doubled(db: Path) -> dict[str, list[tuple]]:
    """The key values that more than one row of a table of the index `db` holds, by table (KEYS)."""
    con = connect(db, read_only=True)
    try:
        tables = {t for (t,) in con.execute(
            "select table_name from duckdb_tables() where database_name = current_database()").fetchall()}
        assert tables == {*KEYS, "rejected"}, tables ^ {*KEYS, "rejected"}
        return {t: found for t, key in KEYS.items()
                if (found := con.execute(f"select {key} from {t} group by all having count(*) > 1").fetchall())}
    finally:
        con.close()


@pytest.mark.parametrize("mode", ["given", "titles", "nlp"])
def test_reruns_keep_every_key_unique_without_the_database_enforcing_it(mode: str, tmp_path: Path):
    """The tables a rerun deletes from hold no primary key (a checkpoint would rewrite it whole): the stages
    alone keep each key unique, through edits, additions, deletions, moves and a doubled id in the source."""
    records = [json.loads(line) for line in (SEED if mode == "given" else SAMPLE).read_text("utf-8").splitlines()]
    db, source, settings = tmp_path / "index.duckdb", tmp_path / "corpus.jsonl", Settings(mentions=mode)
    publish(write_jsonl(source, records), db, settings, embed=embed_one, llm=cite_first)
    assert doubled(db) == {}
    for n in range(3):
        records[n]["text"] += " An edit of this rerun."
        records = records[1:] + [records[0]]  # every line moves
        records.append({**records[2 + n], "doc_id": f"added-{n}", "title": f"{records[2 + n]['title']} ({n})"})
        records.append({**records[4 + n], "text": "Another text under an id the source already has."})
        del records[7 + n]
        publish(write_jsonl(source, records), db, settings, embed=embed_one, llm=cite_first)
        assert doubled(db) == {}
    assert_as_fresh(db, source, tmp_path, settings, embed=embed_one, llm=cite_first)


def catalogue(folder: Path) -> int:
    """The blocks of an empty index: a compaction writes them first, and frees them as it writes the data."""
    connect(folder / "empty.duckdb").close()
    with duckdb.connect(str(folder / "empty.duckdb"), read_only=True) as con:
        return con.execute(sql("publish.blocks")).fetchone()[0]


def wasted(db: Path) -> tuple[float, float]:
    """The live and wasted blocks of the index file `db` (pipelines.publish.waste)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return waste(con)
    finally:
        con.close()


@pytest.mark.parametrize("indexed", [False, True])
def test_waste_counts_free_blocks_and_deleted_rows_and_a_compaction_leaves_neither(indexed: bool, tmp_path: Path):
    """Three rows in four deleted in every row group: DuckDB's vacuum merges the row groups (their old blocks
    free), except in a table with an index, where the deleted rows stay in their blocks."""
    path = tmp_path / "plain.duckdb"
    con = duckdb.connect(str(path), config={"default_block_size": str(BLOCK_SIZE)})  # as a compaction writes it
    con.execute("create table t as select i, repeat('x', 100) || i as text from range(400000) r(i)")
    if indexed:
        con.execute("create index t_i on t (i)")
    con.execute("checkpoint")
    live, lost = waste(con)
    assert lost == 0
    con.execute("delete from t where i % 4 <> 0")
    con.execute("checkpoint")
    after = waste(con)
    con.close()
    assert after[0] < 0.5 * live and after[1] > 0.6 * live, (live, after)
    _compact(path)
    compacted = wasted(path)
    assert compacted[1] <= catalogue(tmp_path) and compacted[0] < 1.3 * after[0], compacted
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute("select count(*), sum(i) from t").fetchone() == (100000, sum(range(0, 400000, 4)))
    assert con.execute("select count(*) from duckdb_indexes() where table_name = 't'").fetchone()[0] == indexed
    con.close()


def test_reruns_keep_the_file_within_its_waste_bound_and_one_that_frees_much_compacts_it(tmp_path: Path):
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    db, source = tmp_path / "index.duckdb", tmp_path / "corpus.jsonl"
    publish(write_jsonl(source, records), db, TITLES)
    for n in range(5):
        records[n]["text"] += " An edit of this rerun."
        records = [r for i, r in enumerate(records) if i != 50 + n]
        publish(write_jsonl(source, records), db, TITLES)
        live, lost = wasted(db)
        assert lost <= WASTE * live, (n, live, lost)
    gone = [r["doc_id"] for r in records[: 3 * len(records) // 4]]
    publish(None, db, TITLES, delete=gone)
    live, lost = wasted(db)
    assert lost <= catalogue(tmp_path), (live, lost)  # compacted
    fresh = tmp_path / "fresh.duckdb"
    publish(write_jsonl(source, records[len(gone):]), fresh, TITLES)
    assert db.stat().st_size <= (1 + WASTE) * fresh.stat().st_size
    a, b = connect(db, read_only=True), connect(fresh, read_only=True)
    rest = {t: order for t, order in EQUAL.items() if t != "documents"}
    assert dump(a, rest) == dump(b, rest)
    documents = "select * exclude (source, line) from documents order by doc_id"  # delete reads no file
    assert a.execute(documents).fetchall() == b.execute(documents).fetchall()
    a.close()
    b.close()


def test_an_index_file_and_its_rerun_keep_this_versions_blocks(tmp_path: Path):
    db, source = tmp_path / "index.duckdb", tmp_path / "corpus.jsonl"
    publish(SEED, db, Settings())
    assert block_size(db) == BLOCK_SIZE != 262_144
    records = [json.loads(line) for line in SEED.read_text(encoding="utf-8").splitlines()]
    records[0]["text"] += " An edit of this rerun."
    publish(write_jsonl(source, records), db, Settings())
    assert block_size(db) == BLOCK_SIZE
    assert doubled(db) == {}
    assert_as_fresh(db, source, tmp_path)


def block_size(db: Path) -> int:
    """The block size the DuckDB file `db` was made with."""
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("select block_size from pragma_database_size() where database_name = current_database()"
                           ).fetchone()[0]


def assert_as_fresh(db: Path, source: Path, folder: Path, settings: Settings | None = None, **models: Any) -> None:
    """The tables of the index `db` are those a fresh build of `source` makes, with `settings` (default ones) and
    the same `models` (embed, llm) as the runs that made `db`."""
    fresh = folder / "fresh.duckdb"
    publish(source, fresh, settings or Settings(), **models)
    a, b = connect(db, read_only=True), connect(fresh, read_only=True)
    try:
        assert dump(a) == dump(b)
    finally:
        a.close()
        b.close()
