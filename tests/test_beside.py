"""Nothing planted beside an index makes a run write, read or expose another file: the lock, the spare, the
ledger of runs that changed nothing and a run's folder are acervo's own or refused; a publish keeps who may read
the index; two names of one index file share its lock."""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from acervo.flows.cli import main
from acervo.flows.index import publish
from acervo.pipelines.beside import Planted, SetAside
from acervo.pipelines.db import connect
from acervo.pipelines.publish import IndexBusy, writer_lock
from acervo.pipelines.runs import history
from acervo.pipelines.settings import Settings
from conftest import SAMPLE, write_jsonl

pytestmark = pytest.mark.slow  # indexes sample corpora, holds locks from other processes

ROOT = Path(__file__).parent.parent
VICTIM = "a file of someone else's, which no run may touch\n"
TITLES = Settings(mentions="titles")


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sample, and the sample with one more record (a run that changes the index)."""
    folder = tmp_path_factory.mktemp("sources")
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    more = write_jsonl(folder / "more.jsonl", [*records, {"doc_id": "extra", "title": "Extra page",
                                                          "text": "An extra page about nothing in particular."}])
    return SAMPLE, more


def victim(folder: Path) -> Path:
    """A file that is not acervo's, in `folder`."""
    path = folder / "victim.txt"
    path.write_text(VICTIM, encoding="utf-8")
    return path


def documents(db: Path) -> int:
    con = connect(db, read_only=True)
    try:
        return con.execute("select count(*) from documents").fetchone()[0]
    finally:
        con.close()


def test_a_link_planted_as_the_spare_is_not_written_through(tmp_path: Path, sources: tuple[Path, Path]):
    db, target = tmp_path / "a.duckdb", victim(tmp_path)
    publish(sources[0], db, TITLES)
    publish(sources[1], db, TITLES)
    spare = tmp_path / "a.duckdb.spare"
    spare.unlink()
    spare.symlink_to(target)
    with pytest.warns(SetAside, match="a.duckdb.spare: the spare .* is a symbolic link: not used"):
        publish(sources[0], db, TITLES)
    assert target.read_text(encoding="utf-8") == VICTIM
    assert not db.is_symlink() and documents(db) == 300
    assert not spare.is_symlink() and spare.is_file()  # the replaced index took its name


@pytest.mark.parametrize("kind", ["hard link", "another user's file"])
def test_a_file_planted_as_the_spare_is_not_written_or_published(tmp_path: Path, sources: tuple[Path, Path],
                                                                 kind: str):
    db, target = tmp_path / "a.duckdb", victim(tmp_path)
    publish(sources[0], db, TITLES)
    publish(sources[1], db, TITLES)
    spare = tmp_path / "a.duckdb.spare"
    spare.unlink()
    if kind == "hard link":
        os.link(target, spare)
        why = "a file with 2 names"
    else:
        if os.geteuid() != 0:
            pytest.skip("only root can give a file to another user")
        spare.write_bytes(db.read_bytes())
        os.chown(spare, 4321, 4321)
        why = "owned by user 4321"
    with pytest.warns(SetAside, match=why):
        publish(sources[0], db, TITLES)
    assert target.read_text(encoding="utf-8") == VICTIM
    assert db.stat().st_uid == os.geteuid() and documents(db) == 300


@pytest.mark.parametrize("kind", ["symbolic link", "hard link"])
def test_a_planted_lock_is_refused_and_its_target_left_whole(tmp_path: Path, kind: str,
                                                             capsys: pytest.CaptureFixture[str]):
    db, target = tmp_path / "b.duckdb", victim(tmp_path)
    lock = tmp_path / "b.duckdb.lock"
    lock.symlink_to(target) if kind == "symbolic link" else os.link(target, lock)
    with pytest.raises(Planted):
        publish(SAMPLE, db, TITLES)
    assert main(["index", str(SAMPLE), "--db", str(db), "--mentions", "titles", "--no-prefect"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "b.duckdb.lock" in err[0] and "refused" in err[0]
    assert target.read_text(encoding="utf-8") == VICTIM and not db.exists()


def test_publishing_keeps_the_mode_owner_and_group_of_the_file_it_replaces(tmp_path: Path,
                                                                            sources: tuple[Path, Path]):
    db = tmp_path / "c.duckdb"
    publish(sources[0], db, TITLES)
    os.chmod(db, 0o600)
    owner = (4321, 8765) if os.geteuid() == 0 else (os.geteuid(), os.getegid())
    os.chown(db, *owner)
    publish(sources[1], db, TITLES)  # an incremental run: a new file replaces it
    published = db.stat()
    assert stat.S_IMODE(published.st_mode) == 0o600
    assert (published.st_uid, published.st_gid) == owner
    fresh = tmp_path / "fresh.duckdb"
    umask = os.umask(0o027)
    try:
        publish(sources[0], fresh, TITLES)
    finally:
        os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) & 0o027 == 0  # a new file follows the umask


@pytest.mark.parametrize("content", [b"", b"[{\"run\": ", b"{\"not\": \"a list\"}", b"[" * 100_000])
def test_a_damaged_ledger_of_waiting_runs_is_set_aside_by_name_and_blocks_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes):
    db = tmp_path / "e.duckdb"
    publish(SAMPLE, db, TITLES)
    ledger = tmp_path / "e.duckdb.runs"
    ledger.write_bytes(content)
    assert main(["runs", "--db", str(db)]) == 0
    assert "e.duckdb.runs" in capsys.readouterr().err
    assert main(["index", str(SAMPLE), "--db", str(db), "--mentions", "titles", "--no-prefect"]) == 0
    err = capsys.readouterr().err
    assert "acervo: warning:" in err and "e.duckdb.runs" in err and "e.duckdb.runs.damaged" in err
    assert (tmp_path / "e.duckdb.runs.damaged").read_bytes() == content
    assert json.loads(ledger.read_text(encoding="utf-8"))[0]["run"]["status"] == "ok"  # this run's, waiting
    assert main(["index", str(SAMPLE), "--db", str(db), "--mentions", "titles", "--no-prefect"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_a_link_planted_as_the_ledger_is_neither_read_nor_written_through(tmp_path: Path):
    db = tmp_path / "f.duckdb"
    publish(SAMPLE, db, TITLES)
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps([{"run": {"run_id": "SECRET", "started_at": "2026-01-01T00:00:00",
                                           "finished_at": "2026-01-01T00:00:01", "status": "ok", "source": "x",
                                           "settings": "{}", "n_rejected": 0}, "stages": []}]), encoding="utf-8")
    before = secret.read_bytes()
    (tmp_path / "f.duckdb.runs").symlink_to(secret)
    con = connect(db, read_only=True)
    try:
        with pytest.warns(SetAside, match="symbolic link"):
            assert "SECRET" not in {run["run_id"] for run in history(con)}
    finally:
        con.close()
    with pytest.warns(SetAside):
        publish(SAMPLE, db, TITLES)  # changes nothing: its ledger waits beside the index
    assert secret.read_bytes() == before
    assert not (tmp_path / "f.duckdb.runs").is_symlink()


def test_a_link_planted_as_this_process_s_run_folder_is_not_followed(tmp_path: Path, sources: tuple[Path, Path]):
    db = tmp_path / "g.duckdb"
    publish(sources[0], db, TITLES)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text(VICTIM, encoding="utf-8")
    (tmp_path / f"g.duckdb.staging-{os.getpid()}").symlink_to(elsewhere, target_is_directory=True)
    publish(sources[1], db, TITLES)
    assert [p.name for p in elsewhere.iterdir()] == ["keep.txt"] and documents(db) == 301
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name]


HOLDER = """
import sys
from pathlib import Path
from acervo.pipelines.publish import writer_lock
with writer_lock(Path(sys.argv[1]), wait=0):
    print('held', flush=True)
    sys.stdin.readline()
"""


def test_two_hard_links_to_one_index_share_its_lock(tmp_path: Path):
    db, other = tmp_path / "h.duckdb", tmp_path / "other-name.duckdb"
    publish(SAMPLE, db, TITLES)
    os.link(db, other)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(IndexBusy, match="another name of the same file"), writer_lock(other, wait=0):
            pass
    finally:
        holder.communicate("\n", timeout=30)
    with writer_lock(other, wait=0):  # free once the holder is done
        pass


def test_a_link_loop_in_a_folder_source_is_reported_and_its_document_kept(tmp_path: Path):
    root, db = tmp_path / "src", tmp_path / "i.duckdb"
    root.mkdir()
    (root / "a.md").write_text("# Alpha\n\nThe first page.", encoding="utf-8")
    (root / "b.md").write_text("# Beta\n\nThe second page.", encoding="utf-8")
    publish(root, db, TITLES)
    (root / "b.md").unlink()
    (root / "b.md").symlink_to("b.md")  # a link to itself
    (root / "c.md").symlink_to("d.md")
    (root / "d.md").symlink_to("c.md")  # a loop of two
    publish(root, db, TITLES)
    con = connect(db, read_only=True)
    try:
        assert [d for (d,) in con.execute("select doc_id from documents order by doc_id").fetchall()] == ["a.md",
                                                                                                       "b.md"]
        rejected = con.execute("select source, reason, detail from rejected order by source").fetchall()
    finally:
        con.close()
    assert [(source, reason) for source, reason, _ in rejected] == [("b.md", "unreadable"), ("c.md", "unreadable"),
                                                                    ("d.md", "unreadable")]
    assert all("symbolic links" in detail for _, _, detail in rejected)
