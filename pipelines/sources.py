"""Sources: documents read from a JSONL file or a folder of .txt, .md, .html, .pdf and .docx files
(pipelines.conversion), one at a time, each bad record rejected with its file and line, never raised."""

import json
import math
import os
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from hashlib import file_digest, sha256
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from pydantic import ValidationError

from acervo.pipelines.conversion import BOM, CONVERTED, Converted, Unconvertible, converted, decoded
from acervo.pipelines.names import blank, display, problem
from acervo.pipelines.settings import DocumentIn

FOLDER_SUFFIXES = (".txt", ".md", *CONVERTED)
KEPT = {"unreadable", "converter_missing", "unconvertible", "no_text"}  # rejections whose file's documents are kept
READ_BLOCK = 1 << 22  # bytes of JSONL read and hashed together
MAX_DEPTH = 100  # JSON nesting a record may have: deeper ones would run the json module and json.dumps out of stack


@dataclass(frozen=True)
class Document:
    """A valid input document, normalised."""

    doc_id: str
    title: str
    text: str
    source: str
    line: int
    entities: tuple[str, ...] = ()
    scope: str | None = None
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class Rejection:
    """A record that could not be indexed, and why."""

    source: str
    line: int
    reason: str
    detail: str
    doc_id: str | None = None


class Known(NamedTuple):
    """A JSONL record byte-identical to one already indexed: not parsed again (a tuple: there are many)."""

    doc_id: str
    source: str
    line: int


@dataclass
class Reading:
    """What one pass over the source produced."""

    records: int = 0
    known: list[Known] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    record_hashes: dict[str, str] = field(default_factory=dict)  # of the documents read and not yet stored
    unread: list[str] = field(default_factory=list)  # folder paths that could not be read ('.': the folder itself)


def normalise(text: str) -> str:
    """Text as the index keeps it: NFC, with \\n line ends."""
    return unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))


Convert = Callable[[Path, list[str], int], Iterable[Document | Rejection]]  # a folder's files (root, paths, max_bytes)


def files_read(root: Path, srcs: list[str], max_bytes: int) -> Iterator[Document | Rejection]:
    """The document in each file `srcs` (paths relative to the folder `root`), or why it cannot be indexed, in
    order, one file read and converted at a time."""
    return (_file(root / src, src, max_bytes) for src in srcs)


def read(source: Path, reading: Reading, *, max_bytes: int, known: dict[str, str] | None = None,
         convert: Convert = files_read) -> Iterator[Document]:
    """Every valid document of `source` (a JSONL file or a folder), one at a time, so that a run holds a batch of
    them and not the corpus; each bad record is rejected into `reading`, not raised.

    A JSONL line whose bytes hash to a `known` record hash goes to `reading.known`, without parsing. A folder's
    files are read and converted by `convert` (on workers: pipelines.documents).
    """
    if not source.exists():
        raise FileNotFoundError(f"{source}: no such file or folder")
    records = (_folder(source, max_bytes, reading, convert) if source.is_dir()
               else _jsonl(source, max_bytes, known or {}, reading))
    first_line: dict[str, int] = {}
    for record in records:
        reading.records += 1
        if isinstance(record, Rejection):
            reading.rejected.append(record)
        elif record.doc_id in first_line:
            reading.rejected.append(Rejection(
                record.source, record.line, "duplicate_doc_id",
                f"doc_id {record.doc_id!r} was already read at line {first_line[record.doc_id]}", record.doc_id))
        else:
            first_line[record.doc_id] = record.line
            if isinstance(record, Known):
                reading.known.append(record)
                continue
            entities, bad = _entities(record)
            reading.rejected.extend(bad)
            if bad:
                reading.record_hashes.pop(record.doc_id, None)
            yield Document(**{**record.__dict__, "entities": entities})


def _entities(doc: Document) -> tuple[tuple[str, ...], list[Rejection]]:
    """A document's usable entity labels, and a rejection for each unusable one."""
    good, bad = [], []
    for label in doc.entities:
        why = problem(label)
        if why:
            bad.append(Rejection(doc.source, doc.line, "invalid_entity", f"entity {label!r} {why}", doc.doc_id))
        else:
            good.append(display(label))
    return tuple(dict.fromkeys(good)), bad


def _problem(text: str) -> tuple[str, str] | None:
    """Why a document's text cannot be indexed, or None."""
    if blank(text):
        return "empty_text", "text is empty or only white space and invisible characters"
    if "\x00" in text:
        return "invalid_text", "text contains a NUL character"
    return None


def _jsonl(path: Path, max_bytes: int, known: dict[str, str],
           reading: Reading) -> Iterator[Document | Rejection | Known]:
    """Documents from a JSONL file, one per line; lines already indexed byte for byte come back as Known.

    Lines are hashed a block at a time, in one comprehension: a rerun of a large corpus mostly finds
    known lines, and per-line work is what it costs.
    """
    src = str(path)
    number = 0
    with path.open("rb") as data:
        for block in _blocks(data, max_bytes):
            if isinstance(block, int):
                number += 1
                yield Rejection(src, number, "too_large", f"record has {block} bytes, more than {max_bytes}")
                continue
            digests = [sha256(raw.rstrip(b"\r\n")).hexdigest() for raw in block]
            for raw, digest in zip(block, digests, strict=True):
                number += 1
                doc_id = known.get(digest)
                if doc_id is not None and len(raw) <= max_bytes:
                    yield Known(doc_id, src, number)
                    continue
                if not raw or raw.isspace():
                    continue
                if len(raw) > max_bytes:
                    yield Rejection(src, number, "too_large", f"record has {len(raw)} bytes, more than {max_bytes}")
                    continue
                yield _parsed(raw, digest, src, number, reading)


def _blocks(data: BinaryIO, max_bytes: int) -> Iterator[list[bytes] | int]:
    """The lines of `data` (without their \\n) a block at a time; a line longer than `max_bytes` that does not
    fit in a block comes as its length alone, read past in pieces and never held whole: memory stays bounded.

    A byte order mark at the start of the file is dropped.
    """
    tail = b""  # the unfinished last line of the blocks so far
    skipped = 0  # bytes of an over-long line read past so far
    first = True
    while piece := data.read(READ_BLOCK):
        if first and piece.startswith(BOM):
            piece = piece[len(BOM):]
        first = False
        if skipped:
            end = piece.find(b"\n")
            if end < 0:
                skipped += len(piece)
                continue
            yield skipped + end
            skipped, piece = 0, piece[end + 1:]
        lines = piece.split(b"\n")
        lines[0] = tail + lines[0]
        tail = lines.pop()
        if len(tail) > max_bytes:
            skipped, tail = len(tail), b""
        if lines:
            yield lines
    if skipped:
        yield skipped
    elif tail:
        yield [tail]


def _parsed(raw: bytes, digest: str, src: str, number: int, reading: Reading) -> Document | Rejection:
    """The document on one JSONL line (its bytes hash to `digest`), or why it cannot be indexed."""
    try:
        line = raw.rstrip(b"\r").decode("utf-8")
    except UnicodeDecodeError as err:
        return Rejection(src, number, "invalid_utf8", f"invalid UTF-8 at byte {err.start} of the line")
    try:
        data = DECODER.decode(line)
    except json.JSONDecodeError as err:
        return Rejection(src, number, "invalid_json", _json_error(err))
    except ValueError as err:
        return Rejection(src, number, "invalid_json", str(err))
    except RecursionError:
        return Rejection(src, number, "invalid_json", f"the record is nested more than {MAX_DEPTH} levels deep")
    record = _record(data, src, number)
    if isinstance(record, Document):
        reading.record_hashes.setdefault(record.doc_id, digest)
    return record


def _json_error(err: json.JSONDecodeError) -> str:
    """What a person needs to know of a JSON syntax error: what, where, and whether the line looks cut short."""
    what = err.msg.removesuffix(" at")  # some of the json module's messages end in "at", before a position
    what = what[0].lower() + what[1:]
    hint = ""
    if what.startswith("unterminated") or err.pos >= len(err.doc.rstrip()):
        hint = " (the line ends before the record does: it looks truncated)"
    elif what.startswith("invalid control character"):
        what += f" {err.doc[err.pos]!r}"
        hint = " (inside a string it must be escaped, as \\n or \\t)"
    return f"{what} at column {err.colno}{hint}"


def _no_constant(name: str) -> None:
    """Refuse NaN and Infinity, which JSON does not allow and DuckDB's JSON type cannot store."""
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    """A JSON number as a float, refusing one past a float's range (1e400), which would be stored as Infinity."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:40]} is too large for a 64-bit float")
    return value


DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)  # one, not one a line as json.loads makes


def _flaw(data: Any) -> tuple[str, str] | None:
    """Why a parsed record cannot be stored as it is (nested too deeply, or a string holding a lone surrogate
    such as \\ud800, which cannot be written as UTF-8), or None. Iterative: a deep record cannot exhaust the stack."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return "invalid_text", "a string holds a lone surrogate (not valid Unicode text)"
        elif isinstance(value, dict | list):
            if depth > MAX_DEPTH:
                return "invalid_json", f"the record is nested more than {MAX_DEPTH} levels deep"
            items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)
    return None


def _record(data: Any, src: str, number: int) -> Document | Rejection:
    """A JSON value validated as a document."""
    if not isinstance(data, dict):
        return Rejection(src, number, "invalid_record", f"expected a JSON object, got {type(data).__name__}")
    doc_id = data.get("doc_id") if isinstance(data.get("doc_id"), str) else None
    flaw = _flaw(data)
    if flaw:
        return Rejection(src, number, *flaw, None if doc_id is None or _flaw(doc_id) else doc_id)
    if "text" not in data:
        return Rejection(src, number, "missing_text", "the record has no 'text' field", doc_id)
    try:
        doc = DocumentIn.model_validate(data)
    except ValidationError as err:
        where = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
        return Rejection(src, number, "invalid_record", where, doc_id)
    text = normalise(doc.text)
    why = _problem(text)
    if why:
        return Rejection(src, number, why[0], why[1], doc.doc_id)
    title = display(doc.title or "") or doc.doc_id
    return Document(doc.doc_id, title, text, src, number, tuple(doc.entities), doc.scope, doc.metadata)


def _folder(root: Path, max_bytes: int, reading: Reading, convert: Convert) -> Iterator[Document | Rejection]:
    """Documents from the files under `root` named like documents (FOLDER_SUFFIXES), in path order, each read
    and converted by `convert`.

    What cannot be read or converted is rejected and noted in `reading.unread`: its documents are kept, not
    deleted.
    """
    listed = _files(root)
    made = iter(convert(root, [src for src, refused in listed if refused is None], max_bytes))
    for src, refused in listed:
        record = refused or next(made)
        if isinstance(record, Rejection) and record.reason in KEPT:
            reading.unread.append(src)
        yield record


def _file(path: Path, src: str, max_bytes: int) -> Document | Rejection:
    """The document in one file of a folder, or why it cannot be indexed (the file is read up to `max_bytes`)."""
    try:
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            data = b"" if size > max_bytes else file.read(size + 1)  # a read of max_bytes would allocate them
            if size < len(data) <= max_bytes:  # it grew since: the rest, up to the limit
                data += file.read(max_bytes + 1 - len(data))
    except OSError as err:
        return Rejection(src, 0, "unreadable", f"the file cannot be read: {err.strerror or err}", src)
    size = max(size, len(data))
    if size > max_bytes:
        return Rejection(src, 0, "too_large", f"file has {size} bytes, more than {max_bytes}", src)
    try:
        made = _converted(src, data)
    except Unconvertible as err:
        return Rejection(src, err.line, err.reason, str(err), src)
    why = _problem(made.text)
    if why:
        return Rejection(src, 1, why[0], why[1], src)
    found = {"format": CONVERTED[suffix]} if (suffix := Path(src).suffix.lower()) in CONVERTED else {}
    found |= {"pages": list(made.pages)} if made.pages else {}
    found |= {"encoding": made.encoding} if made.encoding else {}
    return Document(src, heading(made.text) or path.stem, made.text, src, 1, metadata=found or None)


def converted_rows(files: list[tuple[str]], root: str, max_bytes: int) -> Iterator[dict[str, Any]]:
    """A files_converted row for each of the `files` (its path relative to the folder `root`): its document, or why
    it cannot be indexed (a shard's work: pipelines.documents)."""
    for (src,) in files:
        made = _file(Path(root) / src, src, max_bytes)
        if isinstance(made, Rejection):
            yield {"src": src, "title": None, "text": None, "metadata": None, "line": made.line,
                   "reason": made.reason, "detail": made.detail}
        else:
            metadata = None if made.metadata is None else json.dumps(made.metadata, ensure_ascii=False)
            yield {"src": src, "title": made.title, "text": made.text, "metadata": metadata, "line": made.line,
                   "reason": None, "detail": None}


def from_row(row: tuple) -> Document | Rejection:
    """The document (or rejection) of a files_converted row (`converted_rows`, its columns in that order), as
    `files_read` gives it."""
    src, title, text, metadata, line, reason, detail = row
    if reason is not None:
        return Rejection(src, line, reason, detail, src)
    return Document(src, title, text, src, line, metadata=None if metadata is None else json.loads(metadata))


def _converted(src: str, data: bytes) -> Converted:
    """The text of the file `src` made of `data`: converted from its format, or decoded (pipelines.conversion)."""
    kind = CONVERTED.get(Path(src).suffix.lower())
    if kind is not None:
        return converted(kind, data, normalise)
    text, encoding = decoded(data)
    return Converted(normalise(text), encoding=encoding)


def _files(root: Path) -> list[tuple[str, Rejection | None]]:
    """The relative path of every file named like a document under `root`, in path order, each with its rejection
    when it will not be read; a folder that cannot be listed comes as its own path and rejection ('.': `root` itself).

    Links to folders are not followed (a folder inside is read under its own path; one outside is not part of
    the source, and following links could loop). A link to a file is read when the file is inside `root`, and
    refused otherwise.
    """
    inside = os.path.realpath(root)
    found: list[tuple[str, Rejection | None]] = []
    folders = [""]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(root / folder) as listing:
                entries = list(listing)
        except OSError as err:
            why = f"the folder cannot be listed: {err.strerror or err}"
            found.append((folder or ".", Rejection(folder or ".", 0, "unreadable", why)))
            continue
        for entry in entries:
            src = f"{folder}/{entry.name}" if folder else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(src)
                    continue
            except OSError:  # gone while the folder was listed: not in the source any more
                continue
            if entry.name.lower().endswith(FOLDER_SUFFIXES):
                found.extend(_document_entry(entry, src, inside))
    return sorted(found, key=lambda item: item[0].split("/"))


def _document_entry(entry: os.DirEntry, src: str, inside: str) -> list[tuple[str, Rejection | None]]:
    """The entry named like a document at `src`, with its rejection when it will not be read; none when it is a
    link to a folder, or gone since the folder was listed. A link that cannot be resolved (a loop) is unreadable:
    its documents are kept, not deleted."""
    try:
        if entry.is_symlink() and entry.is_dir():
            return []
        why = _unfit(entry, inside)
    except FileNotFoundError:  # gone while the folder was listed: not in the source any more
        return []
    except OSError as err:  # a loop of links, or a target that cannot be looked at
        why = "unreadable", f"the file cannot be read: {err.strerror or err}"
    return [(src, why and Rejection(src, 0, *why, src))]


def _unfit(entry: os.DirEntry, inside: str) -> tuple[str, str] | None:
    """Why a folder entry named like a document will not be read (a link out of `inside`, a broken link, no
    regular file), or None."""
    if entry.is_symlink():
        target = os.path.realpath(entry.path)
        if os.path.commonpath([inside, target]) != inside:
            return "link_outside_source", "a symbolic link to a file outside the source folder (not followed)"
        if not os.path.exists(target):
            return "unreadable", "a broken symbolic link (its target does not exist)"
    if not entry.is_file():
        return "unreadable", "not a regular file"
    return None


def heading(text: str) -> str | None:
    """The first Markdown heading of `text`, if any."""
    for line in text.split("\n"):
        if line.startswith("#"):
            title = display(line.lstrip("#"))
            if title:
                return title
    return None


def fingerprint(source: Path, max_bytes: int) -> str:
    """The path, size limit and sha256 of a JSONL source: equal to the stored one, nothing in it changed."""
    with source.open("rb") as data:
        digest = file_digest(data, "sha256").hexdigest()
    return json.dumps({"path": str(source), "max_bytes": max_bytes, "sha256": digest})
