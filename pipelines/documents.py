"""Stage `documents`: bring the index's documents in line with the source (read by pipelines.sources), by content
hash: writes documents, document_entities (given labels), and rejected (bad records, with file and line).
"""

import itertools
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path

from acervo.pipelines import shards
from acervo.pipelines.db import sql
from acervo.pipelines.hashing import content_hash
from acervo.pipelines.names import entity_id
from acervo.pipelines.run import Run
from acervo.pipelines.runs import Work
from acervo.pipelines.sources import (
    Document,
    Known,
    Reading,
    Rejection,
    converted_rows,
    files_read,
    fingerprint,
    from_row,
    read,
)

BATCH = 20_000  # documents held at a time: a run holds a batch of the corpus, not all of it


def doc_hash(doc: Document) -> str:
    """The content hash of everything a document contributes to the index, each field as it is stored.

    A scope "" and metadata {} are told apart from none by an extra part, which only they add: the hash of a
    document without them stays what it was.
    """
    meta = json.dumps(doc.metadata, ensure_ascii=False) if doc.metadata else ""
    empty = [name for name, value in (("scope", doc.scope), ("metadata", doc.metadata)) if value in ("", {})]
    return content_hash(doc.title, doc.text, json.dumps(doc.entities, ensure_ascii=False), doc.scope or "", meta,
                        *(["empty " + " ".join(empty)] if empty else []))


def run(run: Run, source: Path | None, *, max_bytes: int, delete: Sequence[str] = (),
        gazetteer: Path | None = None) -> Work:
    """Bring `documents` in line with `source` (a full source: absent documents are deleted), or delete ids.

    Documents of a file or folder that could not be read are kept: what could not be read is not gone.
    The rejected lines of the `gazetteer` file are the mentions stage's, and are left to it.

    Unchanged documents (same content hash) are kept as they are, with n_chunks intact; new and
    changed ones are written with n_chunks = 0, which is what tells the chunks stage to split them.
    JSONL lines identical to the indexed record (same bytes) are not even parsed.
    Work counts the documents written or removed; in its detail, "moved" those that only stand elsewhere now
    (another line or file) and "rejected" the rejections that came or went: no later stage reads either.
    """
    con = run.con
    whole = fingerprint(source, max_bytes) if source is not None and source.is_file() and not delete else ""
    if whole and run.get("source") == whole:  # the very file the index was last built from
        n = con.execute(sql("documents.count")).fetchone()[0]
        return Work(n, n, 0, 0)
    stored = {doc_id: (content_hash, src, line, record_hash) for doc_id, content_hash, src, line, record_hash in
              con.execute(sql("documents.stored")).fetchall()}
    old = {doc_id: row[0] for doc_id, row in stored.items()}
    if source is None:
        gone = sorted(set(delete) & old.keys())
        with run.transaction():
            _delete(run, gone)
            run.put("source", "")  # the index no longer matches the file it was built from
        return Work(len(delete), len(old) - len(gone), 0, len(gone))
    known = {row[3]: doc_id for doc_id, row in stored.items() if row[3] is not None}
    reading = Reading()
    convert = partial(_converted_elsewhere, run) if run.fanout else files_read
    docs = read(source, reading, max_bytes=max_bytes, known=known, convert=convert)
    read_ids, changed, places = _read(run, docs, reading, stored)
    kept = _unread(stored, reading.unread)
    gone = sorted(old.keys() - read_ids - {k.doc_id for k in reading.known} - kept)
    shifts, moved = _moves(reading.known, stored, str(source))
    moved += [p for p in places if stored[p[0]][1:] != p[1:]]
    n_moved = 0
    with run.transaction():
        _delete(run, gone + changed)
        if shifts["delta"]:  # only documents left unchanged are in the table now
            n_moved += con.execute(sql("documents.shift"), {"shifts": json.dumps(shifts),
                                                            "source": str(source)}).fetchone()[0]
        con.execute(sql("documents.places"))
        if run.insert("places", ({"doc_id": i, "source": s, "line": n, "record_hash": r} for i, s, n, r in moved)):
            n_moved += con.execute(sql("documents.move")).fetchone()[0]
        fresh = con.execute(sql("documents.insert_read")).fetchone()[0]
        con.execute(sql("documents.entities_insert_read"))
        con.execute(sql("documents.read_drop"))
        was = Counter(con.execute(sql("documents.rejected_delete"),
                                  {"gazetteer": str(gazetteer) if gazetteer else None}).fetchall())
        run.insert("rejected", (r.__dict__ for r in reading.rejected))
        run.put("source", whole)
    now = Counter((r.source, r.line, r.doc_id, r.reason, r.detail) for r in reading.rejected)
    detail = {k: n for k, n in (("moved", n_moved), ("rejected", (now - was).total() + (was - now).total())) if n}
    unchanged = len(reading.known) + len(read_ids) - fresh + len(kept)
    return Work(reading.records, unchanged, fresh, len(gone), detail or None)


def _read(run: Run, docs: Iterator[Document], reading: Reading,
          stored: dict[str, tuple]) -> tuple[set[str], list[str], list[tuple]]:
    """Put the documents `docs` whose content is new or changed into the scratch relations documents_read and
    document_entities_read, BATCH at a time (each with its record hash, taken from `reading`); return the ids
    read, those of the stored documents that changed, and the places rows (id, source, line, record hash) of
    those that did not."""
    run.con.execute(sql("documents.read_tables"))
    read_ids: set[str] = set()
    changed: list[str] = []
    places: list[tuple] = []
    while batch := list(itertools.islice(docs, BATCH)):
        fresh = []
        for d in batch:
            digest, was = doc_hash(d), stored.get(d.doc_id)
            record_hash = reading.record_hashes.pop(d.doc_id, None)
            read_ids.add(d.doc_id)
            if was is not None and was[0] == digest:
                places.append((d.doc_id, d.source, d.line, record_hash))
                continue
            fresh.append((d, digest, record_hash))
            if was is not None:
                changed.append(d.doc_id)
        run.insert("documents_read", (
            {"doc_id": d.doc_id, "title": d.title, "text": d.text, "scope": d.scope, "metadata": d.metadata,
             "source": d.source, "line": d.line, "record_hash": record_hash, "content_hash": digest,
             "n_tokens": 0, "n_chunks": 0}
            for d, digest, record_hash in fresh))
        run.insert("document_entities_read", (
            {"doc_id": d.doc_id, "label": label, "entity_id": entity_id(label)}
            for d, _, _ in fresh for label in d.entities))
    return read_ids, changed, places


def _converted_elsewhere(run: Run, root: Path, srcs: list[str], max_bytes: int) -> Iterator[Document | Rejection]:
    """What `files_read` gives, each file read and converted on the workers (pipelines.shards), which reach the
    folder `root` at the same path; a shard's rows in memory at a time."""
    run.con.execute(sql("documents.files_tables"))
    run.insert("files_listed", ({"ord": n, "src": src} for n, src in enumerate(srcs)))
    paths = shards.spread(run.con, run.fanout, "documents.shard_files", converted_rows,
                          {"root": str(root.resolve()), "max_bytes": max_bytes}, "files_converted")
    for path in paths:
        yield from map(from_row, shards.rows(path))


def _unread(stored: dict[str, tuple], unread: list[str]) -> set[str]:
    """The stored documents that came from a file or folder that could not be read this time: kept as they are."""
    if not unread:
        return set()
    if "." in unread:
        return set(stored)
    under = tuple(f"{path}/" for path in unread)
    return {doc_id for doc_id, row in stored.items() if row[1] in unread or row[1].startswith(under)}


def _moves(known: list[Known], stored: dict[str, tuple], source: str) -> tuple[dict[str, list[int]], list[tuple]]:
    """Where the byte-identical records of `source` now stand: ranges of old lines that moved by one offset
    (column lists lo, hi, delta, in old-line order), and, as places rows, those that came from another file."""
    ranges: list[list[int]] = []  # [lo, hi, delta] over old lines
    elsewhere = []
    for k in sorted(known, key=lambda k: stored[k.doc_id][2]):
        _, was_source, was_line, record_hash = stored[k.doc_id]
        if was_source != source:
            elsewhere.append((k.doc_id, k.source, k.line, record_hash))
        elif ranges and ranges[-1][2] == k.line - was_line:
            ranges[-1][1] = was_line
        else:
            ranges.append([was_line, was_line, k.line - was_line])
    moving = [r for r in ranges if r[2]]
    return {"lo": [r[0] for r in moving], "hi": [r[1] for r in moving], "delta": [r[2] for r in moving]}, elsewhere


def _delete(run: Run, doc_ids: list[str]) -> None:
    """Delete these documents and their given entities (their chunks go in the chunks stage)."""
    if doc_ids:
        run.ids("documents.gone", doc_ids)
        run.con.execute(sql("documents.entities_delete"))
        run.con.execute(sql("documents.delete"))
