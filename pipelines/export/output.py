"""Where an export goes: made under a name of its own beside its path, then renamed into place, so that a reader
sees the last whole export or the new one, never half of one; a folder replaced only when acervo made it."""

import json
import os
import shutil
from pathlib import Path
from typing import Any, Literal

from acervo.pipelines.export import community_map, graph, graph_files, neo4j, tables
from acervo.pipelines.query.context import Index

Format = Literal["graphml", "gexf", "parquet", "neo4j", "map"]
FOLDERS = {"parquet", "neo4j"}  # formats written as a folder of files
MANIFEST = "acervo-export.json"  # what a folder export holds besides its files: how it was made, rows per file


def export(db: Path, kind: Format, out: Path, scopes: list[str] | None) -> dict[str, Any]:
    """Write the index `db` as `kind` at `out` (a file, or a folder for parquet and neo4j; map: the community map's
    page) with only what `scopes` (None: any) may read; return the summary (format, path, scopes, entities, edges,
    communities; rows per file of a folder; the communities a map's overview draws)."""
    _check(out, folder=kind in FOLDERS)
    partial = out.with_name(f".{out.name}.partial-{os.getpid()}")
    try:
        with Index(db) as index:
            found = graph.read(index, scopes)
            summary = {"format": kind, "path": str(out), "scopes": scopes, "entities": len(found.entities),
                       "edges": len(found.edges), "communities": len(found.communities)}
            if kind in FOLDERS:
                partial.mkdir(mode=0o755)
                write = tables.parquet if kind == "parquet" else neo4j.csvs
                summary["files"] = write(index, found, scopes, partial)
                (partial / MANIFEST).write_text(json.dumps(summary, ensure_ascii=False, indent=2) + "\n",
                                                encoding="utf-8")
            elif kind == "map":
                summary |= community_map.write(index, found, scopes, partial)
            else:
                (graph_files.graphml if kind == "graphml" else graph_files.gexf)(found, partial)
        _place(partial, out)
    finally:
        if partial.is_dir() and not partial.is_symlink():
            shutil.rmtree(partial)
        elif partial.exists() or partial.is_symlink():
            partial.unlink()
    return summary


def _check(out: Path, *, folder: bool) -> None:
    """Refuse a path an export cannot take: a folder where a file goes, a file or link where a folder goes, a
    folder that holds something acervo did not export (ValueError, before anything is read)."""
    if not (out.exists() or out.is_symlink()):
        return
    if out.is_symlink():
        raise ValueError(f"{out} is a link: an export replaces only a file or a folder it made, never through a link")
    if not folder and out.is_dir():
        raise ValueError(f"{out} is a folder: give the path of the file to write")
    if folder and (not out.is_dir() or (any(out.iterdir()) and not (out / MANIFEST).is_file())):
        raise ValueError(f"{out} exists and is not an export of acervo's (no {MANIFEST}): give a new or empty folder")


def _place(partial: Path, out: Path) -> None:
    """Put the finished export in place: a file by one rename; a folder by moving the last export aside first."""
    if not partial.is_dir() or not out.exists():
        os.replace(partial, out)
        return
    old = out.with_name(f".{out.name}.old-{os.getpid()}")
    os.replace(out, old)
    os.replace(partial, out)
    shutil.rmtree(old)
