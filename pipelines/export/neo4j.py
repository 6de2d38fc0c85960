"""CSV files for `neo4j-admin database import full`: entities, communities, chunks and documents as nodes, and the
relations between them, each file with the import tool's header (docs/exports.md: the import command)."""

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from acervo.pipelines.db import Connection, sql
from acervo.pipelines.export.graph import Graph
from acervo.pipelines.query.context import Index
from acervo.pipelines.query.khop import listed

NODES = {"Entity": "entities.csv", "Community": "communities.csv", "Chunk": "chunks.csv", "Document": "documents.csv"}
RELATIONSHIPS = {"CO_OCCURS": "co_occurs.csv", "MEMBER_OF": "member_of.csv", "CHILD_OF": "child_of.csv",
                 "MENTIONED_IN": "mentioned_in.csv", "PART_OF": "part_of.csv", "CITES": "cites.csv"}


def csvs(index: Index, graph: Graph, scopes: list[str] | None, folder: Path) -> dict[str, int]:
    """Write the node and relationship files into `folder`; return the rows written per file."""
    con, ids = index.con, listed(sorted(graph.entities))
    documents = _records(con.execute(sql("export.documents"), {"scopes": scopes}))
    chunks = _records(con.execute(sql("export.chunks"), {"scopes": scopes}))
    mentions = _records(con.execute(sql("export.mentions"), {"scopes": scopes, "ids": ids}))
    communities = graph.communities.values()
    files = {
        "entities.csv": (["entityId:ID(Entity)", "label", "n_chunks:int", "degree:int", "answer", "evidence_ref"],
                         [(e.entity_id, e.label, e.n_chunks, e.degree, e.answer, e.evidence_ref)
                          for e in graph.entities.values()]),
        "communities.csv": (["communityId:ID(Community)", "level:int", "title", "n_members:int"],
                            [(c.community_id, c.level, c.title, len(c.members)) for c in communities]),
        "chunks.csv": (["chunkId:ID(Chunk)", "doc_id", "ord:int", "n_tokens:int", "locator", "text"],
                       [(r["chunk_id"], r["doc_id"], r["ord"], r["n_tokens"], r["locator"], r["text"])
                        for r in chunks]),
        "documents.csv": (["docId:ID(Document)", "title", "scope", "source", "n_chunks:int"],
                          [(r["doc_id"], r["title"], r["scope"], r["source"], r["n_chunks"]) for r in documents]),
        "co_occurs.csv": ([":START_ID(Entity)", ":END_ID(Entity)", "weight:int", "rank:int"], graph.edges),
        "member_of.csv": ([":START_ID(Entity)", ":END_ID(Community)", "centrality:int"],
                          [(eid, c.community_id, place) for c in communities for eid, place in c.members]),
        "child_of.csv": ([":START_ID(Community)", ":END_ID(Community)"],
                         [(c.community_id, c.parent_id) for c in communities if c.parent_id is not None]),
        "mentioned_in.csv": ([":START_ID(Entity)", ":END_ID(Chunk)"],
                             [(m["entity_id"], m["chunk_id"]) for m in mentions]),
        "part_of.csv": ([":START_ID(Chunk)", ":END_ID(Document)", "ord:int"],
                        [(r["chunk_id"], r["doc_id"], r["ord"]) for r in chunks]),
        "cites.csv": ([":START_ID(Community)", ":END_ID(Chunk)", "ord:int", "entity_id", "text"],
                      [(r.community_id, r.evidence_ref, r.ord, r.entity_id, r.text) for r in graph.lines]),
    }
    return {name: _write(folder / name, header, rows) for name, (header, rows) in files.items()}


def _records(result: Connection) -> list[dict[str, Any]]:
    """The rows of an executed statement as dicts by column name."""
    names = [d[0] for d in result.description]
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


def _write(path: Path, header: list[str], rows: Iterable[tuple]) -> int:
    """Write one CSV file (a field that holds a quote, comma or line end quoted, quotes doubled); return its rows."""
    n = 0
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        for n, row in enumerate(rows, start=1):  # noqa: B007 - n is the count
            writer.writerow(["" if v is None else v for v in row])
    return n
