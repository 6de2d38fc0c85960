"""Stage `documents`: every input class is read or rejected with file and line, never lost or raised."""

from pathlib import Path

from conftest import write_jsonl
from pipelines import documents


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
    assert documents.run(con, path, max_bytes=10_000)[:3] == (9, 0, 2)  # the blank line is no record
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
    documents.run(con, path, max_bytes=200)
    assert reasons(con) == [(1, None, "too_large")]
    assert con.execute("select doc_id from documents").fetchall() == [("s",)]


def test_a_folder_gives_relative_path_ids_and_heading_titles(con, tmp_path: Path):
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "setup.md").write_text("intro line\n\n## Installing acervo\n\nRun it.", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("Plain notes.\r\nSecond line.", encoding="utf-8")
    (tmp_path / "latin1.txt").write_bytes(b"line one\nline two\ncaf\xe9\n")
    (tmp_path / "empty.md").write_text("\n\n", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    documents.run(con, tmp_path, max_bytes=10_000)
    assert con.execute("select doc_id, title, text from documents order by doc_id").fetchall() == [
        ("guide/setup.md", "Installing acervo", "intro line\n\n## Installing acervo\n\nRun it."),
        ("notes.txt", "notes", "Plain notes.\nSecond line.")]
    assert con.execute("select source, line, reason from rejected order by source").fetchall() == [
        ("empty.md", 1, "empty_text"), ("latin1.txt", 3, "invalid_utf8")]


def test_text_is_kept_in_nfc_and_the_hash_follows_content(con, tmp_path: Path):
    nfd = "Autentica\u0063\u0327\u0061\u0303o"
    path = write_jsonl(tmp_path / "d.jsonl", [{"doc_id": "a", "text": nfd}, {"doc_id": "b", "text": "Autenticação"}])
    documents.run(con, path, max_bytes=10_000)
    texts = con.execute("select text from documents order by doc_id").fetchall()
    assert texts == [("Autenticação",), ("Autenticação",)]


def test_a_missing_source_raises_a_clear_error(con, tmp_path: Path):
    try:
        documents.run(con, tmp_path / "nope.jsonl", max_bytes=10)
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
    documents.run(con, path, max_bytes=10_000)
    assert reasons(con) == [(1, "s", "invalid_text"), (2, None, "invalid_json")]
    assert con.execute("select doc_id from documents").fetchall() == [("ok",)]


def test_a_lowered_size_limit_rejects_a_record_indexed_before(con, tmp_path: Path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"doc_id": "big", "text": "x" * 500}])
    documents.run(con, path, max_bytes=10_000)
    documents.run(con, path, max_bytes=200)
    assert reasons(con) == [(1, None, "too_large")]
    assert con.execute("select count(*) from documents").fetchone() == (0,)


def test_a_huge_file_in_a_folder_is_rejected_without_reading_it(con, tmp_path: Path):
    (tmp_path / "big.txt").write_bytes(b"x" * 5_000)
    (tmp_path / "ok.md").write_text("# Fine\n\nSmall.", encoding="utf-8")
    documents.run(con, tmp_path, max_bytes=1_000)
    assert con.execute("select source, line, reason from rejected").fetchall() == [("big.txt", 0, "too_large")]
    assert con.execute("select doc_id from documents").fetchall() == [("ok.md",)]
