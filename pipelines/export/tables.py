"""Parquet files of the index's tables (sql/schema.sql says what each column means): every table, or for a scoped
export those a caller with its scopes may read, filtered or remade from its view of the graph."""

from pathlib import Path

import duckdb

from acervo.pipelines.db import sql
from acervo.pipelines.export.graph import Graph
from acervo.pipelines.query.context import Index
from acervo.pipelines.query.khop import listed

READ = {"documents": ("scopes",), "chunks": ("scopes",),
        "mentions": ("scopes", "ids")}  # a scoped export's tables read through its scopes, and their parameters


def parquet(index: Index, graph: Graph, scopes: list[str] | None, folder: Path) -> dict[str, int]:
    """Write each table as folder/TABLE.parquet, with the schema beside them (schema.sql); return rows per table.
    Scoped: the documents, chunks and mentions it may read, and the graph tables of its view (entities, edges,
    communities, community_members, entity_answers, report_lines); no table of corpus-wide statistics."""
    (folder / "schema.sql").write_text(sql("schema"), encoding="utf-8")
    con = index.con
    if scopes is None:
        names = [name for (name,) in con.execute(sql("export.tables")).fetchall()]
        return {name: _written(con.table(name), folder / f"{name}.parquet") for name in names}
    given = {"scopes": scopes, "ids": listed(sorted(graph.entities))}
    rows = {name: _written(con.sql(sql(f"export.{name}"), params={p: given[p] for p in wanted}),
                           folder / f"{name}.parquet") for name, wanted in READ.items()}
    with duckdb.connect() as made:
        made.execute(sql("export.graph_tables"))
        for name, values in _graph_rows(graph).items():
            if values:
                made.executemany(sql(f"export.insert_{name}"), values)
            rows[name] = _written(made.table(name), folder / f"{name}.parquet")
    return rows


def _graph_rows(graph: Graph) -> dict[str, list[dict[str, object]]]:
    """The rows of a scoped export's graph tables, by table."""
    entities = graph.entities.values()
    return {
        "entities": [{"entity_id": e.entity_id, "label": e.label, "n_chunks": e.n_chunks, "degree": e.degree}
                     for e in entities],
        "edges": [{"src": s, "dst": d, "weight": w, "rank": r} for s, d, w, r in graph.edges],
        "communities": [{"community_id": c.community_id, "level": c.level, "parent_id": c.parent_id,
                         "title": c.title, "n_members": len(c.members)} for c in graph.communities.values()],
        "community_members": [{"community_id": c.community_id, "entity_id": eid, "centrality": place}
                              for c in graph.communities.values() for eid, place in c.members],
        "entity_answers": [{"entity_id": e.entity_id, "answer": e.answer, "evidence_ref": e.evidence_ref}
                           for e in entities if e.evidence_ref],
        "report_lines": [vars(line) for line in graph.lines],
    }


def _written(relation: duckdb.DuckDBPyRelation, path: Path) -> int:
    """Write `relation` as Parquet at `path`; return its row count."""
    relation.write_parquet(str(path))
    return duckdb.read_parquet(str(path)).count("*").fetchone()[0]
