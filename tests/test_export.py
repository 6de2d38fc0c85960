"""`acervo export`: GraphML and GEXF read back by igraph and networkx as the index holds the graph, Parquet read back
by DuckDB equal to the tables, Neo4j import CSVs whose relations name nodes that exist, nothing of another scope in
a scoped export, and an export that replaces only what acervo made."""

import csv
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb
import igraph
import networkx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_scopes import MARK, NAMES, index, others, readable, records

from acervo.flows.cli import main
from acervo.flows.index import publish
from acervo.pipelines.db import FORMAT
from acervo.pipelines.export.neo4j import NODES, RELATIONSHIPS
from acervo.pipelines.export.output import MANIFEST
from acervo.pipelines.settings import Settings
from conftest import SAMPLE

FILES = {"graphml": "g.graphml", "gexf": "g.gexf", "parquet": "tables", "neo4j": "neo4j", "map": "m.html"}


@pytest.fixture(scope="module")
def wiki(tmp_path_factory) -> Path:
    """The 2Wiki sample indexed with titles as entities, in a folder of its own (read-only use)."""
    db = tmp_path_factory.mktemp("export") / "w.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles", chunk_tokens=64))
    return db


def stored(db: Path) -> tuple[dict[str, tuple], dict[tuple[str, str], tuple], dict[str, dict[int, str]]]:
    """What the index holds: entity -> (label, degree), edge -> (weight, rank), entity -> {level: community}."""
    with duckdb.connect(str(db), read_only=True) as con:
        entities = {e: (label, degree) for e, label, degree in con.sql("select entity_id, label, degree from entities")
                    .fetchall()}
        edges = {(s, d): (w, r) for s, d, w, r in con.sql("select src, dst, weight, rank from edges").fetchall()}
        levels: dict[str, dict[int, str]] = {}
        for eid, level, cid in con.sql("select m.entity_id, c.level, c.community_id from community_members m "
                                       "join communities c using (community_id)").fetchall():
            levels.setdefault(eid, {})[level] = cid
    return entities, edges, levels


def run(db: Path, kind: str, out: Path, capsys, *scopes: str) -> dict:
    args = ["export", kind, "--db", str(db), "--out", str(out), "--json"] + (["--scope", *scopes] if scopes else [])
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow  # seconds of indexing
def test_graphml_reads_back_in_igraph_and_networkx_as_the_index_holds_the_graph(wiki, tmp_path, capsys):
    entities, edges, levels = stored(wiki)
    summary = run(wiki, "graphml", tmp_path / "g.graphml", capsys)
    assert (summary["entities"], summary["edges"]) == (len(entities), len(edges))
    read = networkx.read_graphml(tmp_path / "g.graphml")
    assert read.is_directed() and read.number_of_nodes() == len(entities)
    assert {(s, d): (a["weight"], a["rank"]) for s, d, a in read.edges(data=True)} == edges
    assert {n: (a["label"], a["degree"]) for n, a in read.nodes(data=True)} == entities
    assert {n: {0: a["community_0"]} for n, a in read.nodes(data=True)} == {e: {0: levels[e][0]} for e in entities}
    again = igraph.Graph.Read_GraphML(str(tmp_path / "g.graphml"))
    assert (again.vcount(), again.ecount()) == (len(entities), len(edges))
    assert sorted(again.vs["label"]) == sorted(label for label, _ in entities.values())
    assert sorted(again.es["weight"]) == sorted(w for w, _ in edges.values())
    answered = next(a for _, a in read.nodes(data=True) if a["answer"])
    assert answered["evidence_ref"] and answered["answer"]


def test_gexf_reads_back_in_networkx_with_labels_weights_and_ranks(wiki, tmp_path, capsys):
    entities, edges, _ = stored(wiki)
    run(wiki, "gexf", tmp_path / "g.gexf", capsys)
    read = networkx.read_gexf(tmp_path / "g.gexf")
    assert {n: (a["label"], a["degree"]) for n, a in read.nodes(data=True)} == entities
    assert {(s, d): (int(a["weight"]), a["rank"]) for s, d, a in read.edges(data=True)} == edges


def test_parquet_reads_back_in_duckdb_equal_to_every_table(wiki, tmp_path, capsys):
    summary = run(wiki, "parquet", tmp_path / "tables", capsys)
    with duckdb.connect(str(wiki), read_only=True) as con:
        names = [t for (t,) in con.sql("select table_name from duckdb_tables() where schema_name = 'main'").fetchall()]
        assert sorted(summary["files"]) == sorted(names)
        for name in names:
            kept = con.sql(f"select * from {name}").fetchall()  # a test's own reading of its own names
            back = con.sql(f"select * from read_parquet('{tmp_path / 'tables' / name}.parquet')").fetchall()
            assert sorted(back, key=repr) == sorted(kept, key=repr), name
    assert (tmp_path / "tables" / "schema.sql").read_text().startswith("-- acervo index schema")
    assert json.loads((tmp_path / "tables" / MANIFEST).read_text())["files"] == summary["files"]


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_neo4j_csvs_have_the_import_headers_and_every_relation_names_nodes_that_exist(wiki, tmp_path, capsys):
    entities, edges, _ = stored(wiki)
    summary = run(wiki, "neo4j", tmp_path / "neo4j", capsys)
    folder = tmp_path / "neo4j"
    ids = {}
    for label, name in NODES.items():
        found = rows(folder / name)
        key = next(k for k in found[0] if k.endswith(f":ID({label})"))
        ids[label] = {r[key] for r in found}
        assert len(ids[label]) == len(found) == summary["files"][name]
    assert ids["Entity"] == set(entities) and len(rows(folder / "co_occurs.csv")) == len(edges)
    for name in RELATIONSHIPS.values():
        for r in rows(folder / name):
            start = next(k for k in r if k.startswith(":START_ID("))
            end = next(k for k in r if k.startswith(":END_ID("))
            assert r[start] in ids[start[10:-1]] and r[end] in ids[end[8:-1]], (name, r)
    chunk = next(r for r in rows(folder / "chunks.csv") if "\n" in r["text"] or "," in r["text"])
    assert chunk["text"]  # a text with commas or line ends comes back whole


def test_an_export_replaces_only_what_acervo_made(wiki, tmp_path, capsys):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    assert main(["export", "parquet", "--db", str(wiki), "--out", str(foreign)]) == 2
    assert "is not an export of acervo's" in capsys.readouterr().err
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]
    link = tmp_path / "link.graphml"
    link.symlink_to(tmp_path / "victim.txt")
    assert main(["export", "graphml", "--db", str(wiki), "--out", str(link)]) == 2
    assert not (tmp_path / "victim.txt").exists()
    folder = tmp_path / "tables"
    first = run(wiki, "neo4j", folder, capsys)
    second = run(wiki, "neo4j", folder, capsys)
    assert first == second and sorted(p.name for p in tmp_path.iterdir()) == ["link.graphml", "mine", "tables"]


def values(path: Path) -> list[str]:
    """Every value an export file holds, as text: XML text and attributes, CSV cells, Parquet cells (a map's page:
    its whole text)."""
    if path.suffix in (".graphml", ".gexf"):
        return [v for e in ET.parse(path).iter() for v in [e.text or "", *e.attrib.values()]]
    if path.suffix == ".csv":
        return [cell for row in csv.reader(path.open(encoding="utf-8", newline="")) for cell in row]
    if path.suffix == ".parquet":
        return [str(v) for row in duckdb.read_parquet(str(path)).fetchall() for v in row]
    return [path.read_text(encoding="utf-8")]


@pytest.mark.slow  # seconds of indexing or waiting
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mine=readable, theirs=others, mode=st.sampled_from(["titles", "given", "gazetteer", "nlp"]))
@example(mine=[("Alpha works with Beta.", "a", "Notes")], theirs=[("Alpha works with Beta.", "b", "Notes")] * 2,
         mode="given")  # their spelling, ALPHA, is the label the whole corpus gives: the export says Alpha
def test_a_scoped_export_holds_nothing_of_another_scope(tmp_path_factory, mine, theirs, mode):
    tmp = tmp_path_factory.mktemp("scoped")
    docs = records(mine, mark=False, prefix="a") + records(theirs, mark=True, prefix="b")
    db = index(tmp, "full", docs, mode)
    for kind, name in FILES.items():
        out = tmp / name
        verb = ["map"] if kind == "map" else ["export", kind]
        assert main([*verb, "--db", str(db), "--out", str(out), "--scope", "a"]) == 0
        theirs_ids = [f"b{i}" for i in range(len(theirs))]
        for f in [out] if out.is_file() else sorted(out.iterdir()):
            for v in values(f):
                assert MARK.lower() not in v.lower(), (kind, f.name, v)
                assert not any(n.upper() in v for n in NAMES), (kind, f.name, v)  # their spelling of a name
                assert not any(v == d or v.startswith(f"{d}#") or f"({d})" in v for d in theirs_ids), (kind, f.name, v)


@pytest.mark.slow  # seconds of indexing
def test_an_index_of_another_format_is_refused_until_a_fresh_run_rebuilds_it(tmp_path, capsys):
    db = tmp_path / "old.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles"))
    with duckdb.connect(str(db)) as con:  # an index file as an earlier version made it: no format stored
        con.execute("delete from index_state where key = 'format'")
    assert main(["export", "graphml", "--db", str(db), "--out", str(tmp_path / "g.graphml")]) == 2
    assert f"{db} is index format 0, this acervo reads and writes format {FORMAT}: rebuild it with `acervo index " \
        f"SOURCE --db {db} --fresh`" in capsys.readouterr().err
    assert not (tmp_path / "g.graphml").exists()
    assert main(["index", str(SAMPLE), "--db", str(db), "--mentions", "titles", "--no-prefect", "--fresh"]) == 0
    assert main(["export", "graphml", "--db", str(db), "--out", str(tmp_path / "g.graphml")]) == 0
