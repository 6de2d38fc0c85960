"""pipelines.db's guards: a statement gets only the parameters it names, and only names from a fixed list are
formatted into one; and the one library behaviour it works around is still there."""

import subprocess
import sys
from pathlib import Path

import pytest

from acervo.pipelines import answers
from acervo.pipelines.db import ATTACHED, attach, execute, identifier, parameters, tables
from acervo.pipelines.run import Run
from acervo.pipelines.stage import refresh


def test_execute_refuses_a_parameter_the_statement_does_not_name(con):
    assert parameters("run.state_update") == {"value", "key"}
    with pytest.raises(ValueError, match=r"statement run\.state_update names no parameter \$vlaue"):
        execute(con, "run.state_update", {"key": "k", "vlaue": "v"})
    with pytest.raises(ValueError, match=r"statement publish\.blocks names no parameter \$table \(it names none\)"):
        execute(con, "publish.blocks", {"table": "chunks"})


def test_execute_binds_every_parameter_the_statement_names(con):
    con.execute("insert into index_state values ('k', 'old')")
    execute(con, "run.state_update", {"key": "k", "value": "new"})
    assert con.execute("select value from index_state where key = 'k'").fetchone() == ("new",)


def test_a_stage_refuses_a_parameter_none_of_its_statements_names(con):
    with pytest.raises(ValueError, match=r"stage entity_answers: none of its statements names .* \$max_char"):
        refresh(Run.alone(con), answers.STAGE, "v", lambda run: 0, max_char=10)


def test_only_names_from_the_fixed_lists_are_formatted_into_a_statement(con, tmp_path: Path):
    assert {"chunks", "entities", "index_state", "places", "answer_todo"} <= tables()
    assert identifier("chunks", tables()) == "chunks"
    for name in ('chunks"; drop table chunks; --', "nowhere", "Chunks"):
        with pytest.raises(ValueError, match="not a name acervo's statements use"):
            identifier(name, tables())
    with pytest.raises(ValueError, match="not a name acervo's statements use"):
        attach(con, tmp_path / "other.duckdb", "other")
    assert "other" not in ATTACHED and not (tmp_path / "other.duckdb").exists()


DUCKDB_TRIES_PANDAS = """
import importlib.abc, sys
asked = []
class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "pandas":
            asked.append(name)
sys.meta_path.insert(0, Watch())
import duckdb
con = duckdb.connect()
for i in range(20):
    con.execute("select $a", {"a": i}).fetchone()
print(len(asked))
"""


def test_duckdb_still_tries_to_import_pandas_on_each_execute_with_parameters():
    """Why pipelines.db marks an absent pandas absent (sys.modules): DuckDB looks for it on every parameterised
    execute. Once DuckDB stops, this fails, and the mark goes."""
    if subprocess.run([sys.executable, "-c", "import pandas"], capture_output=True).returncode == 0:
        pytest.skip("pandas is installed: DuckDB imports it once, and pipelines.db marks nothing")
    done = subprocess.run([sys.executable, "-c", DUCKDB_TRIES_PANDAS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 20, "DuckDB no longer looks for pandas on each execute: drop the mark in pipelines.db"


def test_pipelines_db_marks_an_absent_pandas_absent():
    script = "import sys\nimport acervo.pipelines.db\nprint(sys.modules.get('pandas', 'unmarked'))"
    if subprocess.run([sys.executable, "-c", "import pandas"], capture_output=True).returncode == 0:
        pytest.skip("pandas is installed")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "None", done.stderr
