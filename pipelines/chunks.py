"""Stage `chunks`: split each document into token-bounded chunks along paragraph and sentence boundaries."""

import bisect
import re
import zlib
from collections.abc import Callable

from acervo.pipelines import tokens
from acervo.pipelines.db import sql
from acervo.pipelines.hashing import content_hash, text_hash
from acervo.pipelines.names import display
from acervo.pipelines.run import Run
from acervo.pipelines.runs import SKIPPED, Work
from acervo.pipelines.sentences import paragraph_spans, sentences

SEPARATOR = "\n\n"
Count = Callable[[str], int]
BATCH = 20_000  # documents split at a time: a run holds their text, not the corpus's
READS = ("documents",)  # the stages whose tables this stage reads (its own aside)
HEADING = re.compile(r"^#{1,6}[ \t]+(.+)$", re.MULTILINE)  # a Markdown heading line (converted files write theirs so)


def _pieces(text: str, count: Count, limit: int) -> list[str]:
    """`text` cut into pieces of at most `limit` tokens: whole if it fits, else by sentence, word, character."""
    if count(text) <= limit:
        return [text]
    parts = [text[a:b] for a, b in sentences(text)]
    if len(parts) <= 1:
        parts = text.split()
    if len(parts) <= 1:
        half = len(text) // 2
        return _pieces(text[:half], count, limit) + _pieces(text[half:], count, limit)
    groups: list[list[str]] = [[]]
    used = 0
    for part in parts:
        cost = count(part) + 1
        if groups[-1] and used + cost > limit:
            groups.append([])
            used = 0
        groups[-1].append(part)
        used += cost
    if len(groups) == 1:
        groups = [parts[: len(parts) // 2], parts[len(parts) // 2 :]]
    return [piece for group in groups for piece in _pieces(" ".join(group), count, limit)]


def paragraphs(text: str) -> list[str]:
    """The non-empty paragraphs of `text` (blocks separated by blank lines), stripped."""
    return [text[a:b] for a, b in paragraph_spans(text)]


def split(text: str, count: Count, *, max_tokens: int) -> list[str]:
    """Chunks of `text`, each at most `max_tokens` tokens, made of whole paragraphs where they fit."""
    return [chunk for chunk, _ in located(text, count, max_tokens=max_tokens)]


def located(text: str, count: Count, *, max_tokens: int) -> list[tuple[str, int]]:
    """Chunks of `text` (as `split`), each with where the paragraph it starts in starts in `text`.

    A chunk may also end early, once half full, after a paragraph whose checksum says so. Those
    content-defined cuts let the chunking resynchronise after an edit, so a local change touches
    few chunks instead of shifting every boundary after it.
    """
    units = [(piece, a) for a, b in paragraph_spans(text) for piece in _pieces(text[a:b], count, max_tokens)]
    chunks: list[tuple[str, int]] = []
    current: list[str] = []
    used = start = 0
    for unit, at in units:
        cost = count(unit)
        if current and used + cost + 1 > max_tokens:
            chunks.append((SEPARATOR.join(current), start))
            current, used = [], 0
        if not current:
            start = at
        current.append(unit)
        used += cost + 1
        if used >= max_tokens // 2 and zlib.crc32(unit.encode("utf-8")) % 4 == 0:
            chunks.append((SEPARATOR.join(current), start))
            current, used = [], 0
    if current:
        chunks.append((SEPARATOR.join(current), start))
    return chunks


def headings(text: str) -> tuple[list[int], list[str]]:
    """Where each Markdown heading of `text` starts, and its text."""
    found = [(m.start(), display(m.group(1).strip(" #"))) for m in HEADING.finditer(text)]
    return [at for at, _ in found], [title for _, title in found]


def locator(at: int, pages: list[int] | None, heads: tuple[list[int], list[str]]) -> str | None:
    """Where a chunk that starts at `at` in its document is, for a citation: its page, when the document has `pages`
    (where each starts), else the nearest of its `heads` (as `headings` gives them) at or above it; None when
    neither."""
    if pages:
        return f"page {bisect.bisect_right(pages, at)}"
    place = bisect.bisect_right(heads[0], at)
    return heads[1][place - 1] if place else None


def chunk_id(doc_id: str, text_sha: str, occurrence: int) -> str:
    """A chunk's id: its document's id and a short hash of its content and repeat number."""
    return f"{doc_id}#{content_hash(doc_id, text_sha, str(occurrence))[:12]}"


def run(run: Run, *, encoding: str, max_tokens: int) -> Work:
    """Split every document not yet split (n_chunks = 0) and drop the chunks of documents that are gone.

    Chunk ids come from content, so an edited document keeps the ids of the chunks it still has; each split
    document's row lists its chunk ids in order (documents.chunk_ids), which direct context reads.
    A change of encoding or chunk size re-splits every document. Work counts as recomputed the chunks
    that were not stored as they are now (id, place and token count).
    """
    con = run.con
    setting = f"{encoding}:{max_tokens}"
    if run.unchanged(READS, "chunks", setting):
        return SKIPPED
    if run.get("chunks") != setting:
        con.execute(sql("chunks.reset"))
    ids = [doc_id for (doc_id,) in con.execute(sql("chunks.todo_ids")).fetchall()]
    with run.transaction():
        run.ids("chunks.split", ids)
        before = {chunk_id: (ord_, n) for chunk_id, ord_, n in con.execute(sql("chunks.delete")).fetchall()}
        if run.fanout:
            run.spread("chunks.shard_input", rows_of, {"encoding": encoding, "max_tokens": max_tokens}, "chunks")
        else:
            after = None
            while docs := con.execute(sql("chunks.todo"), {"after": after, "n": BATCH}).fetchall():
                run.insert("chunks", rows_of(docs, encoding, max_tokens))
                after = docs[-1][0]
        split = {chunk_id: (ord_, n) for chunk_id, ord_, n in con.execute(sql("chunks.split_rows")).fetchall()}
        recomputed = sum(1 for chunk_id, place in split.items() if before.get(chunk_id) != place)
        back = len(split.keys() & before.keys())
        run.note("chunks.changed")
        con.execute(sql("chunks.sizes"))
        run.put("chunks", setting)
        run.put("encoding", encoding)
    total = con.execute(sql("chunks.count")).fetchone()[0]
    return Work(len(ids), total - recomputed, recomputed, len(before) - back)


def rows_of(docs: list[tuple[str, str, list[int] | None]], encoding: str, max_tokens: int) -> list[dict]:
    """The chunks rows of the documents `docs` (doc_id, text, pages): each split, its pieces counted in `encoding`,
    each chunk located (a shard's work, pipelines.shards)."""
    texts = [p for _, text, _ in docs for p in paragraphs(text)]
    known = dict(zip(texts, tokens.counts(texts, encoding), strict=True))

    def count(text: str) -> int:
        n = known.get(text)
        if n is None:
            n = known[text] = tokens.count(text, encoding)
        return n

    split_docs = [(doc_id, text, pages, located(text, count, max_tokens=max_tokens)) for doc_id, text, pages in docs]
    joined = [part for *_, parts in split_docs for part, _ in parts if part not in known]
    known.update(zip(joined, tokens.counts(joined, encoding), strict=True))
    return [row for doc_id, text, pages, parts in split_docs
            for row in document_chunks(doc_id, text, pages, parts, known.__getitem__)]


def document_chunks(doc_id: str, text: str, pages: list[int] | None, parts: list[tuple[str, int]],
                    count: Count) -> list[dict]:
    """The chunks rows of one document (`doc_id`, `text`, where its `pages` start) from its `parts` (`located`),
    each counted by `count`: ids by content and repeat, places in order, locators by page or heading."""
    heads = headings(text) if not pages else ([], [])
    seen: dict[str, int] = {}
    rows = []
    for ord_, (part, at) in enumerate(parts):
        sha = text_hash(part)
        seen[sha] = seen.get(sha, -1) + 1
        rows.append({"chunk_id": chunk_id(doc_id, sha, seen[sha]), "doc_id": doc_id, "ord": ord_,
                     "text": part, "n_tokens": count(part), "content_hash": sha,
                     "locator": locator(at, pages, heads)})
    return rows
