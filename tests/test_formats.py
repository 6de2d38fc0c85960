"""Sources in the formats people keep documents in: PDF (pages as provenance), Word and HTML (headings as
paragraph boundaries and provenance), text in a legacy encoding (detected, said in the metadata); a file that
cannot be converted is rejected with its reason and its earlier document kept."""

import json
import sys
from pathlib import Path

import docx
import duckdb
import pytest

from acervo.flows.cli import main

LATIN = "Relatório anual: a ação da coordenação e a informação são públicas.\n\nO orçamento caiu."


def tiny_pdf(pages: list[list[str]]) -> bytes:
    """A PDF of `pages`, each a list of lines in Helvetica (objects and cross-reference table written by hand)."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", "", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for lines in pages:
        shown = " ".join(f"({line}) Tj 0 -16 Td" for line in lines)  # lines without parentheses or backslashes
        stream = f"BT /F1 12 Tf 72 720 Td {shown} ET"
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {len(objects)} 0 R "
                       f"/Resources << /Font << /F1 3 0 R >> >> >>")
        kids.append(f"{len(objects)} 0 R")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def word_file(path: Path) -> Path:
    """A .docx with a heading, paragraphs under it and a table."""
    made = docx.Document()
    made.add_heading("Budget", level=1)
    made.add_paragraph("The Lisbon office spends less this year.")
    made.add_heading("Travel", level=2)
    made.add_paragraph("Trains replace flights between Porto and Lisbon.")
    table = made.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "Porto", "120"
    made.save(path)
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "report.pdf").write_bytes(tiny_pdf([["Annual report 2024", "Revenue grew in Porto."],
                                                ["The Lisbon office opened in March.", "Costs fell."]]))
    word_file(docs / "memo.docx")
    (docs / "guide.html").write_bytes(
        b"<html><head><meta charset='utf-8'><title>x</title><script>var hidden = 1;</script></head><body>"
        b"<h1>Setup guide</h1><p>Install <b>acervo</b> with <a href='https://pypi.org'>pip</a>.</p>"
        b"<h2>Windows</h2><p>Use py -m pip on Windows.</p></body></html>")
    (docs / "relatorio.txt").write_bytes(LATIN.encode("latin-1"))
    return docs


def index(docs: Path, db: Path, *extra: str) -> int:
    return main(["index", str(docs), "--db", str(db), "--no-prefect", "--mentions", "nlp", "--chunk-tokens", "16",
                 *extra])


def rows(db: Path, query: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(query).fetchall()


def test_pdf_word_html_and_latin1_files_give_their_text_with_pages_and_headings(folder: Path, tmp_path: Path):
    db = tmp_path / "i.duckdb"
    assert index(folder, db) == 0
    docs = {d: (title, text, json.loads(meta) if meta else None)
            for d, title, text, meta in rows(db, "select doc_id, title, text, metadata from documents")}
    assert docs["report.pdf"][1] == ("Annual report 2024\nRevenue grew in Porto.\n\nThe Lisbon office opened in "
                                     "March.\nCosts fell.")
    assert docs["report.pdf"][2] == {"format": "pdf", "pages": [0, 43]}
    assert docs["memo.docx"][:2] == ("Budget", "# Budget\n\nThe Lisbon office spends less this year.\n\n## Travel\n\n"
                                               "Trains replace flights between Porto and Lisbon.\n\nPorto | 120")
    title, text, meta = docs["guide.html"]
    assert (title, meta) == ("Setup guide", {"format": "html"})
    assert "# Setup guide\n\nInstall acervo with pip.\n\n## Windows" in text
    assert "hidden" not in text and "pypi.org" not in text
    assert docs["relatorio.txt"][1:] == (LATIN, {"encoding": "cp1252"})
    located = dict(rows(db, "select text, locator from chunks"))
    assert located[next(t for t in located if "Lisbon office opened" in t)] == "page 2"
    assert located[next(t for t in located if "Revenue grew" in t)] == "page 1"
    assert located[next(t for t in located if "Trains replace" in t)] == "Travel"
    assert located[next(t for t in located if "Use py -m pip" in t)] == "Windows"
    assert located[next(t for t in located if "orçamento" in t)] is None
    assert rows(db, "select count(*) from rejected") == [(0,)]


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_file_that_cannot_be_converted_is_rejected_with_its_reason_and_its_document_kept(folder: Path,
                                                                                           tmp_path: Path, capsys):
    db = tmp_path / "i.duckdb"
    assert index(folder, db) == 0
    before = rows(db, "select text from documents where doc_id = 'report.pdf'")
    (folder / "report.pdf").write_bytes(b"%PDF-1.4\nthis is no PDF at all\n")
    (folder / "scan.pdf").write_bytes(tiny_pdf([[]]))  # a page with no text: a scan's images only
    assert index(folder, db, "--allow-rejects") == 0
    err = capsys.readouterr().err
    assert "rejected report.pdf:0: unconvertible: pypdf could not read it: " in err
    assert "rejected scan.pdf:0: no_text: pypdf found no text in it" in err
    assert rows(db, "select text from documents where doc_id = 'report.pdf'") == before
    assert rows(db, "select doc_id from documents where doc_id = 'scan.pdf'") == []


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_missing_converter_is_said_with_the_extra_to_install(folder: Path, tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "docx", None)  # python-docx not installed: importing it fails
    db = tmp_path / "i.duckdb"
    assert index(folder, db, "--allow-rejects") == 0
    err = capsys.readouterr().err
    assert "rejected memo.docx:0: converter_missing: reading .docx files needs the package python-docx: pip " \
           "install 'acervo[formats]'" in err
    assert {d for (d,) in rows(db, "select doc_id from documents")} == {"report.pdf", "guide.html", "relatorio.txt"}
