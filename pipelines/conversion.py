"""Files in other formats (PDF, Word, HTML) and text in other encodings, as the text a document holds: each read by
a well-kept converter (the extra `formats`), headings written as Markdown headings and pages as paragraphs, so
that both are paragraph boundaries; where each PDF page starts is kept, for provenance."""

import io
import re
from dataclasses import dataclass

BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark, which some editors put at the start of a file
CONVERTED = {".pdf": "pdf", ".docx": "docx", ".html": "html", ".htm": "html"}  # suffix -> format
EXTRA = "pip install 'acervo[formats]'"
PACKAGES = {"pdf": "pypdf", "docx": "python-docx", "html": "html2text", "encoding": "charset-normalizer"}
HEADING_STYLE = re.compile(r"^(?:Heading|Título|Titulo|Überschrift|Titre|Encabezado) ?(\d)$", re.IGNORECASE)
CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
LEGACY_DEFAULT = "cp1252"  # the WHATWG Encoding standard's encoding for legacy text (windows-1252)
AGREEMENT = 0.5  # share of a file's characters beyond ASCII that windows-1252 and the detector must read alike
WIDE = ("utf_16", "utf_32")  # encodings a text file without their byte order mark is not taken to be in
MIN_CHARS = 1  # a converted file with fewer characters of text has none (a scanned PDF: images only)


class Unconvertible(Exception):
    """A file that cannot be read as text: `reason` (a rejection reason), what went wrong, and the line it went
    wrong on (0: the file as a whole)."""

    def __init__(self, reason: str, detail: str, line: int = 0) -> None:
        super().__init__(detail)
        self.reason, self.line = reason, line


@dataclass(frozen=True)
class Converted:
    """A file's text, its pages (where each starts in the text; PDF only) and the encoding it was decoded from
    (a text file's, when not UTF-8)."""

    text: str
    pages: tuple[int, ...] = ()
    encoding: str | None = None


def converted(kind: str, data: bytes, normalise) -> Converted:
    """The text of a file of format `kind` (pdf, docx, html) made of `data`, each piece normalised by `normalise`;
    Unconvertible when its converter is missing or the file is damaged, encrypted or holds no text."""
    try:
        made = {"pdf": _pdf, "docx": _docx, "html": _html}[kind](data, normalise)
    except Unconvertible:
        raise
    except ImportError:
        raise Unconvertible("converter_missing", f"reading .{kind} files needs the package {PACKAGES[kind]}: "
                                                 f"{EXTRA}") from None
    except Exception as err:  # noqa: BLE001 - a converter's own error on a damaged file: say what it said
        raise Unconvertible("unconvertible", f"{PACKAGES[kind]} could not read it: {type(err).__name__}: "
                                             f"{err}") from None
    if len(made.text.strip()) < MIN_CHARS:
        raise Unconvertible("no_text", f"{PACKAGES[kind]} found no text in it (a scanned document holds images)")
    return made


def decoded(data: bytes) -> tuple[str, str | None]:
    """The text of a text file and, when not UTF-8, the encoding charset-normalizer found it is in (None: UTF-8;
    windows-1252 when the two read it as Latin script alike: _latin). A file that starts with UTF-8's byte order mark is
    UTF-8, which it declares (the mark dropped). Unconvertible when it is neither UTF-8 nor any encoding found."""
    bom = len(BOM) if data.startswith(BOM) else 0
    try:
        return data[bom:].decode("utf-8"), None
    except UnicodeDecodeError as err:
        at = bom + err.start
    line = data[:at].count(b"\n") + 1
    if bom:
        raise Unconvertible("invalid_utf8", f"invalid UTF-8 at byte {at} of the file", line)
    try:
        from charset_normalizer import from_bytes
    except ImportError:
        raise Unconvertible("invalid_utf8", f"invalid UTF-8 at byte {at} of the file (detecting its encoding "
                                            f"needs {PACKAGES['encoding']}: {EXTRA})", line) from None
    found = [m for m in from_bytes(data) if m.bom or not m.encoding.startswith(WIDE)]
    if not found:
        raise Unconvertible("invalid_utf8", f"invalid UTF-8 at byte {at} of the file, and no other encoding fits "
                                            f"it", line)
    best = str(found[0])
    legacy = _latin(data, best)
    return (legacy, LEGACY_DEFAULT) if legacy is not None else (best, found[0].encoding)


def _latin(data: bytes, best: str) -> str | None:
    """`data` read as windows-1252 when that reading agrees with the detector's `best` on at least AGREEMENT of the
    characters beyond ASCII (both read Latin script; the WHATWG Encoding standard takes windows-1252 for legacy
    text, and short text seldom tells Latin-1 from Latin-2 apart); else None."""
    try:
        legacy = data.decode(LEGACY_DEFAULT)
    except UnicodeDecodeError:
        return None
    if len(legacy) != len(best):
        return None
    wide = [(a, b) for a, b in zip(legacy, best, strict=True) if ord(a) > 127 or ord(b) > 127]
    return legacy if not wide or sum(a == b for a, b in wide) >= AGREEMENT * len(wide) else None


def _pdf(data: bytes, normalise) -> Converted:
    """A PDF's pages (pypdf's text extraction), each a paragraph of its own."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        raise Unconvertible("unconvertible", "the PDF is encrypted")
    texts = [normalise(page.extract_text() or "").strip() for page in reader.pages]
    return _paged(texts)


def _paged(texts: list[str]) -> Converted:
    """Pages' texts joined by blank lines, with where each starts (an empty page starts where the next does)."""
    starts, parts, at = [], [], 0
    for text in texts:
        starts.append(at)
        if text:
            parts.append(text)
            at += len(text) + 2
    return Converted("\n\n".join(parts), tuple(starts))


def _docx(data: bytes, normalise) -> Converted:
    """A Word file's paragraphs and tables' cells in order (python-docx); a heading style as a Markdown heading."""
    import docx
    from docx.table import Table

    blocks = []
    document = docx.Document(io.BytesIO(data))
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            blocks += [" | ".join(cell.text.strip() for cell in row.cells) for row in block.rows]
            continue
        level = HEADING_STYLE.match(block.style.name if block.style is not None else "")
        text = block.text.strip()
        if text:
            blocks.append(f"{'#' * int(level.group(1))} {text}" if level else text)
    return Converted(normalise("\n\n".join(blocks)))


def _html(data: bytes, normalise) -> Converted:
    """An HTML page's text as Markdown (html2text: headings as #, no links' addresses, no images), in the
    charset its meta tag names, else UTF-8 or what the detector finds."""
    import html2text

    named = CHARSET.search(data[:4096])
    text = None
    if named:
        try:
            text = data.decode(named.group(1).decode("ascii"))
        except (LookupError, UnicodeDecodeError):
            text = None
    if text is None:
        text, _ = decoded(data)
    converter = html2text.HTML2Text()
    converter.ignore_links = converter.ignore_images = converter.ignore_emphasis = True
    converter.body_width = 0  # no line wrapping: a paragraph stays one line
    return Converted(normalise(converter.handle(text)))
