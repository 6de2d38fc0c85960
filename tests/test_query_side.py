"""What the query side shares with the stages: no stage module (pipelines/query/__init__.py), and the one
statement that computes edges (edges.ranked), which query.scope_edges uses rather than a copy of it."""

import ast
import json
import re
from pathlib import Path

from acervo.pipelines.db import SQL_DIR, sql
from acervo.pipelines.query import seeds
from acervo.pipelines.settings import EdgeSetting
from conftest import SEED, index_of, write_jsonl

ROOT = Path(__file__).resolve().parents[1]


def _imported(path: Path) -> set[str]:
    """The acervo.pipelines modules the file at `path` imports (their first name below acervo.pipelines)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "acervo.pipelines":
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("acervo.pipelines."):
            found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[2] for a in node.names if a.name.startswith("acervo.pipelines.")}
    return found


def test_the_query_side_imports_no_stage_module():
    stages = set(re.findall(r'stage\("\w+", (\w+)\.run', (ROOT / "flows" / "index.py").read_text(encoding="utf-8")))
    assert {"documents", "chunks", "terms", "mentions", "edges", "communities", "answers", "reports"} <= stages
    imported = set().union(*(_imported(path) for path in (ROOT / "pipelines" / "query").glob("*.py")))
    assert "query" in imported  # the parser finds the package's own imports
    assert imported & stages == set()


def test_edges_are_ranked_by_one_statement_that_the_stage_and_the_query_side_both_use():
    texts = {path.stem: re.sub(r"--[^\n]*", "", path.read_text(encoding="utf-8")) for path in SQL_DIR.glob("*.sql")}
    assert [name for name, text in texts.items() if "row_number() over (partition by src" in text] == ["edges"]
    assert "from ranked_edges(" in sql("edges.next") and "from ranked_edges(" in sql("query.scope_edges")


def test_a_scope_s_edges_are_those_an_index_of_its_readable_documents_alone_stores(tmp_path: Path):
    records = [json.loads(line) for line in SEED.read_text(encoding="utf-8").splitlines()]
    for i, record in enumerate(records):
        record["scope"] = ("a", "b", None)[i % 3]
    settings = {"edge_min_weight": 1, "edge_top_k": 2}
    whole = index_of(write_jsonl(tmp_path / "all.jsonl", records), **settings)
    readable = index_of(write_jsonl(tmp_path / "a.jsonl", [r for r in records if r["scope"] != "b"]), **settings)
    stored = EdgeSetting.model_validate_json(whole.execute("select value from index_state where key = 'edges'"
                                                           ).fetchone()[0])
    assert stored == EdgeSetting(min_weight=1, top_k=2)
    graph = seeds.view(whole, ["a"], checked=False, mode="given", edges=stored).graph
    expected = readable.execute("select src, dst, weight, rank from edges order by src, rank").fetchall()
    assert expected and sum(map(len, graph.values())) < whole.execute("select count(*) from edges").fetchone()[0]
    assert [(src, *row) for src, rows in sorted(graph.items()) for row in rows] == expected
