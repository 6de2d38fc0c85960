"""Stage `documents`: every input class is read or rejected with file and line, never lost or raised."""

import ctypes
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from acervo.pipelines import documents, sources
from acervo.pipelines.db import connect
from acervo.pipelines.run import Run
from conftest import write_jsonl

REPO = Path(__file__).resolve().parent.parent


def reasons(con) -> list[tuple]:
    return con.execute("select line, doc_id, reason from rejected order by line, reason").fetchall()


def test_bad_records_are_rejected_with_their_line_and_the_rest_is_indexed(con, tmp_path: Path):
    path = tmp_path / "docs.jsonl"
    lines = [
        b'{"doc_id": "ok1", "title": "Fine", "text": "A valid document."}',
        b'{"doc_id": "bad-utf8", "text": "caf\xe9"}',
        b'{"doc_id": "broken", "text": ',
        b'{"doc_id": "no-text", "title": "x"}',
        b'{"doc_id": "empty", "text": "   \\n  "}',
        b'{"doc_id": "ok1", "text": "Same id again."}',
        b'["not", "an", "object"]',
        b'{"doc_id": "nul", "text": "a\\u0000b"}',
        b'',
        b'{"doc_id": "ok2", "text": "Another valid one.", "entities": ["Good", "bad\\u0000name", "  "]}',
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert documents.run(Run.alone(con), path, max_bytes=10_000)[:3] == (9, 0, 2)  # the blank line is no record
    assert con.execute("select doc_id, title, line from documents order by doc_id").fetchall() == [
        ("ok1", "Fine", 1), ("ok2", "ok2", 10)]
    assert reasons(con) == [
        (2, None, "invalid_utf8"), (3, None, "invalid_json"), (4, "no-text", "missing_text"),
        (5, "empty", "empty_text"), (6, "ok1", "duplicate_doc_id"), (7, None, "invalid_record"),
        (8, "nul", "invalid_text"), (10, "ok2", "invalid_entity"), (10, "ok2", "invalid_entity")]
    assert con.execute("select label from document_entities").fetchall() == [("Good",)]
    detail = con.execute("select detail from rejected where reason = 'duplicate_doc_id'").fetchone()[0]
    assert "line 1" in detail


def test_a_record_over_the_size_limit_is_rejected(con, tmp_path: Path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"doc_id": "big", "text": "x" * 500}, {"doc_id": "s", "text": "small"}])
    documents.run(Run.alone(con), path, max_bytes=200)
    assert reasons(con) == [(1, None, "too_large")]
    assert con.execute("select doc_id from documents").fetchall() == [("s",)]


def test_a_folder_gives_relative_path_ids_and_heading_titles(con, tmp_path: Path):
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "setup.md").write_text("intro line\n\n## Installing acervo\n\nRun it.", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("Plain notes.\r\nSecond line.", encoding="utf-8")
    (tmp_path / "latin1.txt").write_bytes(b"line one\nline two\ncaf\xe9\n")  # decoded, as windows-1252
    (tmp_path / "binary.txt").write_bytes(b"line one\nline two\n" + bytes(range(256)) * 3)
    (tmp_path / "empty.md").write_text("\n\n", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    documents.run(Run.alone(con), tmp_path, max_bytes=10_000)
    assert con.execute("select doc_id, title, text, metadata from documents order by doc_id").fetchall() == [
        ("guide/setup.md", "Installing acervo", "intro line\n\n## Installing acervo\n\nRun it.", None),
        ("latin1.txt", "latin1", "line one\nline two\ncafé\n", '{"encoding":"cp1252"}'),
        ("notes.txt", "notes", "Plain notes.\nSecond line.", None)]
    assert con.execute("select source, line, reason from rejected order by source").fetchall() == [
        ("binary.txt", 4, "invalid_utf8"), ("empty.md", 1, "empty_text")]


def test_text_is_kept_in_nfc_and_the_hash_follows_content(con, tmp_path: Path):
    nfd = "Autentica\u0063\u0327\u0061\u0303o"
    path = write_jsonl(tmp_path / "d.jsonl", [{"doc_id": "a", "text": nfd}, {"doc_id": "b", "text": "Autenticação"}])
    documents.run(Run.alone(con), path, max_bytes=10_000)
    texts = con.execute("select text from documents order by doc_id").fetchall()
    assert texts == [("Autenticação",), ("Autenticação",)]


def test_a_missing_source_raises_a_clear_error(con, tmp_path: Path):
    try:
        documents.run(Run.alone(con), tmp_path / "nope.jsonl", max_bytes=10)
    except FileNotFoundError as err:
        assert "nope.jsonl" in str(err)
    else:
        raise AssertionError("expected FileNotFoundError")


def test_lone_surrogates_and_nan_are_rejected_and_the_rest_is_indexed(con, tmp_path: Path):
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join([
        '{"doc_id": "s", "text": "bad \\ud800 text"}',
        '{"doc_id": "n", "text": "fine", "metadata": {"x": NaN}}',
        '{"doc_id": "ok", "text": "A valid one."}']) + "\n", encoding="utf-8")
    documents.run(Run.alone(con), path, max_bytes=10_000)
    assert reasons(con) == [(1, "s", "invalid_text"), (2, None, "invalid_json")]
    assert con.execute("select doc_id from documents").fetchall() == [("ok",)]


def test_a_lowered_size_limit_rejects_a_record_indexed_before(con, tmp_path: Path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"doc_id": "big", "text": "x" * 500}])
    documents.run(Run.alone(con), path, max_bytes=10_000)
    documents.run(Run.alone(con), path, max_bytes=200)
    assert reasons(con) == [(1, None, "too_large")]
    assert con.execute("select count(*) from documents").fetchone() == (0,)


def test_a_huge_file_in_a_folder_is_rejected_without_reading_it(con, tmp_path: Path):
    (tmp_path / "big.txt").write_bytes(b"x" * 5_000)
    (tmp_path / "ok.md").write_text("# Fine\n\nSmall.", encoding="utf-8")
    documents.run(Run.alone(con), tmp_path, max_bytes=1_000)
    assert con.execute("select source, line, reason from rejected").fetchall() == [("big.txt", 0, "too_large")]
    assert con.execute("select doc_id from documents").fetchall() == [("ok.md",)]


def test_a_record_nested_too_deeply_is_rejected_with_its_line(con, tmp_path: Path):
    path = tmp_path / "deep.jsonl"
    nested = {"doc_id": "fine", "text": "Nested but shallow.", "metadata": {"a": [[[{"b": [1]}]]]}}
    path.write_text("\n".join([
        '{"doc_id": "ok", "text": "Before."}',
        '{"doc_id": "deep", "text": "x", "metadata": ' + "[" * 1500 + "]" * 1500 + "}",  # past the stack
        '{"doc_id": "deeper", "text": "x", "metadata": ' + "[" * 150 + "]" * 150 + "}",  # parses, still refused
        json.dumps(nested)]) + "\n", encoding="utf-8")
    documents.run(Run.alone(con), path, max_bytes=100_000)
    assert reasons(con) == [(2, None, "invalid_json"), (3, "deeper", "invalid_json")]
    assert {d for (d,) in con.execute("select detail from rejected").fetchall()} == {
        f"the record is nested more than {sources.MAX_DEPTH} levels deep"}
    assert con.execute("select doc_id, metadata from documents order by doc_id").fetchall() == [
        ("fine", json.dumps(nested["metadata"], separators=(",", ":"))), ("ok", None)]


def test_a_json_syntax_error_says_what_and_where_and_when_the_line_looks_truncated(con, tmp_path: Path):
    path = tmp_path / "syntax.jsonl"
    path.write_bytes(b"\n".join([
        b'{"doc_id": "cut", "text": "the line was cut he',
        b'{"doc_id": "tab", "text": "a\tb"}',
        b'{"doc_id": "open", "text": "fine",',
        b'{"doc_id": "two", "text": "x"} {}']) + b"\r\n")
    documents.run(Run.alone(con), path, max_bytes=10_000)
    assert con.execute("select line, detail from rejected order by line").fetchall() == [
        (1, "unterminated string starting at column 27 (the line ends before the record does: it looks truncated)"),
        (2, "invalid control character '\\t' at column 29 (inside a string it must be escaped, as \\n or \\t)"),
        (3, "expecting property name enclosed in double quotes at column 35 (the line ends before the record does: "
            "it looks truncated)"),
        (4, "extra data at column 32")]


def test_odd_values_a_bool_or_blank_doc_id_and_invisible_text_are_rejected(con, tmp_path: Path):
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join([
        '{"doc_id": "big", "text": "fine", "metadata": {"x": 1e400}}',
        '{"doc_id": "small", "text": "fine", "metadata": {"x": [-1e400]}}',
        '{"doc_id": true, "text": "fine"}',
        '{"doc_id": "  ", "text": "fine"}',
        '{"doc_id": "\\u200b", "text": "fine"}',
        '{"doc_id": "zw", "text": "\\u200b\\u200b"}',
        '{"doc_id": "joiners", "text": " \\u2060\\ufeff\\u00ad \\n"}',
        '{"doc_id": 7, "text": "An integer id is its digits.", "metadata": {"x": 1e300, "y": 1e-400}}',
        '{"doc_id": " padded ", "text": "An id is kept exactly as written."}']) + "\n", encoding="utf-8")
    documents.run(Run.alone(con), path, max_bytes=10_000)
    assert reasons(con) == [
        (1, None, "invalid_json"), (2, None, "invalid_json"), (3, None, "invalid_record"),
        (4, "  ", "invalid_record"), (5, "\u200b", "invalid_record"), (6, "zw", "empty_text"),
        (7, "joiners", "empty_text")]
    details = [d for (d,) in con.execute("select detail from rejected order by line").fetchall()]
    assert details[0] == "the number 1e400 is too large for a 64-bit float"
    assert details[2] == "doc_id: Value error, must be a string or an integer, not a boolean"
    assert details[3] == details[4] == "doc_id: Value error, is blank (only white space or invisible characters)"
    assert con.execute("select doc_id, metadata from documents order by doc_id").fetchall() == [
        (" padded ", None), ("7", '{"x":1e300,"y":0.0}')]


def test_a_doc_id_with_a_control_character_is_rejected_with_its_line(con, tmp_path: Path):
    path = write_jsonl(tmp_path / "ids.jsonl", [{"doc_id": "nul\u0000id", "text": "fine"},
                                                {"doc_id": "esc\u001b[31m", "text": "fine"},
                                                {"doc_id": "tab\tkept", "text": "fine"}])
    documents.run(Run.alone(con), path, max_bytes=10_000)
    assert reasons(con) == [(1, "nul\x00id", "invalid_record"), (2, "esc\x1b[31m", "invalid_record")]
    assert con.execute("select distinct source, detail from rejected").fetchall() == [
        (str(path), "doc_id: Value error, contains a control character (NUL included)")]
    assert con.execute("select doc_id from documents").fetchall() == [("tab\tkept",)]

def test_a_byte_order_mark_is_dropped_from_a_jsonl_file_and_a_folder_file(con, tmp_path: Path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(sources.BOM + b'{"doc_id": "first", "text": "Kept."}\n{"doc_id": "second", "text": "Too."}\n')
    documents.run(Run.alone(con), path, max_bytes=10_000)
    assert reasons(con) == []
    assert con.execute("select doc_id, line from documents order by line").fetchall() == [("first", 1), ("second", 2)]
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "guide.md").write_bytes(sources.BOM + "# Guia rápido\n\nTexto.".encode())
    (folder / "plain.txt").write_bytes(sources.BOM + b"caf\xe9")
    documents.run(Run.alone(con), folder, max_bytes=10_000)
    assert con.execute("select doc_id, title, text from documents").fetchall() == [
        ("guide.md", "Guia rápido", "# Guia rápido\n\nTexto.")]
    assert con.execute("select source, line, detail from rejected").fetchall() == [
        ("plain.txt", 1, "invalid UTF-8 at byte 6 of the file")]


def test_an_over_long_line_is_rejected_while_streaming_at_bounded_memory(con, tmp_path: Path):
    huge = 64 << 20  # many times the block the reader holds
    path = tmp_path / "long.jsonl"
    with path.open("wb") as out:
        out.write(b'{"doc_id": "a", "text": "First."}\n')
        out.write(b'{"doc_id": "huge", "text": "')
        for _ in range(huge >> 20):
            out.write(b"x" * (1 << 20))
        out.write(b'"}\n')
        out.write(b'{"doc_id": "medium", "text": "' + b"y" * 2000 + b'"}\n')
        out.write(b'{"doc_id": "b", "text": "After."}\n')
        out.write(b'{"doc_id": "last", "text": "' + b"z" * (5 << 20) + b'"}')  # no line end
    tracemalloc.start()
    try:
        documents.run(Run.alone(con), path, max_bytes=1_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < huge / 4, peak
    frame = len(b'{"doc_id": "huge", "text": "' b'"}')
    assert con.execute("select line, reason, detail from rejected order by line").fetchall() == [
        (2, "too_large", f"record has {huge + frame} bytes, more than 1000"),
        (3, "too_large", f"record has {2000 + frame + 2} bytes, more than 1000"),
        (5, "too_large", f"record has {(5 << 20) + frame} bytes, more than 1000")]
    assert con.execute("select doc_id, line from documents order by line").fetchall() == [("a", 1), ("b", 4)]


def test_links_out_of_a_folder_are_refused_and_links_inside_are_read(con, tmp_path: Path):
    root, outside = tmp_path / "src", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nNot part of the source.", encoding="utf-8")
    (root / "sub" / "real.md").write_text("# Real\n\nInside the source.", encoding="utf-8")
    (root / "secret.md").symlink_to(outside / "secret.md")
    (root / "alias.md").symlink_to(root / "sub" / "real.md")
    (root / "outer").symlink_to(outside, target_is_directory=True)
    (root / "sub" / "loop").symlink_to(root, target_is_directory=True)
    (root / "broken.md").symlink_to(root / "missing.md")
    os.mkfifo(root / "pipe.md")  # opening it would wait for a writer
    (root / "folder.md").mkdir()
    (root / "folder.md" / "inner.txt").write_text("A folder named like a file is a folder.", encoding="utf-8")
    documents.run(Run.alone(con), root, max_bytes=10_000)
    assert con.execute("select doc_id, title from documents order by doc_id").fetchall() == [
        ("alias.md", "Real"), ("folder.md/inner.txt", "inner"), ("sub/real.md", "Real")]
    assert con.execute("select source, line, doc_id, reason from rejected order by source").fetchall() == [
        ("broken.md", 0, "broken.md", "unreadable"), ("pipe.md", 0, "pipe.md", "unreadable"),
        ("secret.md", 0, "secret.md", "link_outside_source")]
    assert "Secret" not in str(con.execute("select * from documents").fetchall())


UNPRIVILEGED = """
import json, os, sys
from pathlib import Path
from acervo.pipelines import documents
from acervo.pipelines.db import connect
from acervo.pipelines.run import Run
root, db, locked = map(Path, sys.argv[1:])
try:
    os.listdir(locked) if locked.is_dir() else locked.open("rb")
except PermissionError:
    pass
else:
    sys.exit(77)  # file permissions do not bind this process
con = connect(db)
print(json.dumps(documents.run(Run.alone(con), root, max_bytes=10_000)[:4]))
con.close()
"""


def _without_override() -> None:
    """In the child, before exec: as root, drop the capabilities that override file permissions."""
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
            if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP: gone from what exec grants
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def index_locked(root: Path, db: Path, locked: list[Path]) -> list[int]:
    """documents.run over `root` into `db` by a process that cannot read `locked` (mode 000); its Work counts.

    Root reads anything: as root, the child runs without the capabilities that let it.
    """
    for path in locked:
        path.chmod(0)
    try:
        done = subprocess.run([sys.executable, "-c", UNPRIVILEGED, str(root), str(db), str(locked[0])],
                              cwd=REPO, preexec_fn=_without_override, capture_output=True, text=True, timeout=120)
    except subprocess.SubprocessError as err:
        pytest.skip(f"cannot start a process that file permissions bind: {err}")
    finally:
        for path in locked:
            path.chmod(0o755)
    if done.returncode == 77:
        pytest.skip("file permissions do not bind a process here")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def folder_index(root: Path, db: Path, files: dict[str, str]) -> list[tuple]:
    """`files` written under `root` and indexed into `db`; the documents rows."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    con = connect(db)
    documents.run(Run.alone(con), root, max_bytes=10_000)
    rows = con.execute("select * from documents order by doc_id").fetchall()
    con.close()
    return rows


def test_an_unreadable_file_is_rejected_the_rest_indexed_and_its_documents_kept(tmp_path: Path):
    root, db = tmp_path / "src", tmp_path / "index.duckdb"
    before = folder_index(root, db, {"a.md": "# A\n\nAlpha.", "locked.md": "# Locked\n\nBeta."})
    (root / "new.md").write_text("# New\n\nGamma.", encoding="utf-8")
    (root / "never.md").write_text("# Never\n\nRead.", encoding="utf-8")
    assert index_locked(root, db, [root / "locked.md", root / "never.md"]) == [4, 2, 1, 0]  # new.md; none removed
    con = connect(db)
    assert con.execute("select * from documents where doc_id != 'new.md' order by doc_id").fetchall() == before
    assert con.execute("select source, line, doc_id, reason, detail from rejected order by source").fetchall() == [
        ("locked.md", 0, "locked.md", "unreadable", "the file cannot be read: Permission denied"),
        ("never.md", 0, "never.md", "unreadable", "the file cannot be read: Permission denied")]
    con.close()


def test_an_unreadable_folder_is_rejected_and_its_documents_are_kept(tmp_path: Path):
    root, db = tmp_path / "src", tmp_path / "index.duckdb"
    before = folder_index(root, db, {"a.md": "Alpha.", "sub/one.txt": "One.", "sub/deeper/two.txt": "Two."})
    assert index_locked(root, db, [root / "sub"]) == [2, 3, 0, 0]  # read a.md and sub; nothing removed
    con = connect(db)
    assert con.execute("select * from documents order by doc_id").fetchall() == before
    assert con.execute("select source, line, doc_id, reason, detail from rejected").fetchall() == [
        ("sub", 0, None, "unreadable", "the folder cannot be listed: Permission denied")]
    con.close()
    assert index_locked(root, db, [root]) == [1, 3, 0, 0]  # the source folder itself: everything kept
    con = connect(db)
    assert con.execute("select * from documents order by doc_id").fetchall() == before
    assert con.execute("select source, doc_id, reason from rejected").fetchall() == [(".", None, "unreadable")]
    con.close()


def test_the_work_of_a_rerun_names_documents_that_moved_and_rejections_that_came_or_went(con, tmp_path: Path):
    records = [{"doc_id": f"d{i}", "text": f"Document number {i}."} for i in range(4)]
    source = write_jsonl(tmp_path / "docs.jsonl", records)
    assert documents.run(Run.alone(con), source, max_bytes=10_000) == (4, 0, 4, 0, None)
    source.write_text("".join(json.dumps(r) + "\n" for r in [records[1], records[0], *records[2:]]) + "[1]\n",
                      encoding="utf-8")
    assert documents.run(Run.alone(con), source, max_bytes=10_000) == (5, 4, 0, 0, {"moved": 2, "rejected": 1})
    write_jsonl(source, records)
    assert documents.run(Run.alone(con), source, max_bytes=10_000) == (4, 4, 0, 0, {"moved": 2, "rejected": 1})
    assert reasons(con) == [] and con.execute("select doc_id, line from documents order by line").fetchall() == [
        (f"d{i}", i + 1) for i in range(4)]
