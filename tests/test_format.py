"""One index format: a new index file carries it, and a file of another format is refused by every verb in one
line, left as it is, until `acervo index --fresh` rebuilds it."""

import shutil
from pathlib import Path

import duckdb
import pytest

from acervo.flows.cli import BAD_INPUT, main
from acervo.flows.index import publish
from acervo.pipelines.db import FORMAT, OtherFormat, connect, sql
from acervo.pipelines.publish import _compact
from acervo.pipelines.query.context import Index
from acervo.pipelines.settings import Settings
from conftest import SEED, assert_same_files


def stored_format(db: Path) -> str:
    """The index format the file `db` says it has (db.format)."""
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql("db.format")).fetchone()[0]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed corpus indexed by this acervo (read-only use)."""
    db = tmp_path_factory.mktemp("format") / "index.duckdb"
    publish(SEED, db, Settings())
    return db


def other(built: Path, folder: Path, value: str | None) -> Path:
    """A copy of `built` with the index format `value` (None: none stored, as files made before formats were)."""
    db = folder / "other.duckdb"
    shutil.copy(built, db)
    with duckdb.connect(str(db)) as con:
        con.execute("delete from index_state where key = 'format'")
        if value is not None:
            con.execute("insert into index_state values ('format', ?)", [value])
    return db


def test_a_new_index_file_and_an_empty_connection_carry_this_format(built: Path, tmp_path: Path):
    assert stored_format(built) == str(FORMAT)
    connect(tmp_path / "empty.duckdb").close()
    assert stored_format(tmp_path / "empty.duckdb") == str(FORMAT)
    with duckdb.connect(str(tmp_path / "state.duckdb")) as con:  # a file that holds state but no format
        con.execute("create table index_state (key varchar primary key, value varchar not null)")
        con.execute("insert into index_state values ('chunks', 'x')")
    connect(tmp_path / "state.duckdb").close()  # a writable connection does not stamp it
    assert stored_format(tmp_path / "state.duckdb") == "0"


@pytest.mark.parametrize("value", [None, str(FORMAT + 1)])
def test_every_verb_refuses_a_file_of_another_format_in_one_line_and_leaves_it_as_it_is(
        built: Path, tmp_path: Path, capsys, value: str | None):
    db = other(built, tmp_path, value)
    made = db.read_bytes()
    verbs = [["index", str(SEED), "--db", str(db), "--no-prefect"], ["delete", "d01", "--db", str(db)],
             ["query", "o que é o contrato", "--db", str(db)], ["stats", "--db", str(db)],
             ["runs", "--db", str(db)], ["entities", "--db", str(db)],
             ["export", "graphml", "--db", str(db), "--out", str(tmp_path / "g.graphml")],
             ["map", "--db", str(db), "--out", str(tmp_path / "map.html")]]
    line = (f"acervo: {db} is index format {value or 0}, this acervo reads and writes format {FORMAT}: "
            f"rebuild it with `acervo index SOURCE --db {db} --fresh`\n")
    for verb in verbs:
        capsys.readouterr()
        assert main(verb) == BAD_INPUT == 2, verb
        assert capsys.readouterr().err == line, verb
    assert db.read_bytes() == made
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.duckdb"]  # no lock, spare, run folder or export
    with pytest.raises(OtherFormat, match="^[^\n]*--fresh`$"):
        Index(db)
    with pytest.raises(OtherFormat):
        publish(SEED, db, Settings())
    assert db.read_bytes() == made


def test_index_fresh_rebuilds_a_file_of_another_format_as_a_new_build(built: Path, tmp_path: Path, capsys):
    db = other(built, tmp_path, None)
    assert main(["index", str(SEED), "--db", str(db), "--no-prefect", "--fresh"]) == 0
    assert stored_format(db) == str(FORMAT)
    assert_same_files(db, built, state="select * from index_state where key <> 'source' order by all")
    capsys.readouterr()
    assert main(["stats", "--db", str(db)]) == 0


def test_a_compaction_keeps_the_file_s_format(built: Path, tmp_path: Path):
    db = tmp_path / "index.duckdb"
    shutil.copy(built, db)
    _compact(db)
    assert stored_format(db) == str(FORMAT)
    assert_same_files(db, built)
