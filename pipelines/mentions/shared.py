"""What the mentions modes share: the interface each mode gives (Mode), the dictionary's storage, and finding
its names in the chunks' texts, whole or window by window (the Matcher)."""

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acervo.pipelines import shards
from acervo.pipelines.db import sql
from acervo.pipelines.matcher import Matcher
from acervo.pipelines.names import words
from acervo.pipelines.run import Run
from acervo.pipelines.sentences import paragraph_spans, sentences
from acervo.pipelines.settings import EdgeWindow, MentionMode
from acervo.pipelines.sources import Rejection

Places = dict[str, tuple[int, ...]]  # entity id -> the windows of a chunk that name it; () = the whole chunk
Mention = tuple[str, str, tuple[int, ...]]  # entity id, chunk id, windows
Found = tuple[list[str], list[tuple[str, str]]]  # a text's candidates, and the (acronym, expansion) pairs it defines
Pairs = set[tuple[str, str]]  # (entity_id, name) pairs of the dictionary
WINDOWS = {"paragraph": paragraph_spans, "sentence": sentences}
BETWEEN = "\ue000"  # a private-use character: one token of its own, never part of a name, marks a window's end
SEPARATOR = "\x1f"  # joins a name's tokens in SQL: white space to text.words, so never inside a token
PAGE = 20_000  # chunks whose texts a run holds at a time while matching names in them
PROBE_BATCH = 200  # names per regex: many more in one overflow RE2's automaton memory
MAX_PROBE_PASSES = 30  # a probe pass scans every chunk's folded text, as matching every chunk again reads every
                       # text: past this many passes (batches of changed names), matching them all costs less
SELECTIVE = 10  # matching under 1/SELECTIVE of the chunks: load only the names their tokens may start


@dataclass(frozen=True)
class Options:
    """The settings a mentions run reads."""

    mode: MentionMode
    gazetteer_path: Path | None
    min_chunks: int
    max_share: float
    spacy_model: str
    window: EdgeWindow


@dataclass(frozen=True)
class Extractor:
    """Modes nlp and spacy: what finds each chunk's candidates."""

    name: str  # stored with the candidates: another one extracts every chunk again
    load: Callable[[], Callable[[list[str]], list[Found]]]  # called only when some chunk needs extracting


@dataclass(frozen=True)
class Dictionary:
    """What a mode's dictionary function reports besides names_next: the rejected lines of `source`."""

    rejected: list[Rejection]
    source: str | None = None  # the file whose rejected lines these replace (None: no file read)
    recheck: bool = False  # rejections the documents stage forgets when it reads the source again


@dataclass(frozen=True)
class Mode:
    """How a mode finds mentions: its dictionary (into names_next), its candidate extractor (None: it
    extracts none), how it finds the mentions of the chunks in mentions_matched, and which chunks a name that
    entered or left its dictionary can change (None: none, the dictionary names no text)."""

    dictionary: Callable[[Run, Options], Dictionary]
    extractor: Callable[[Options], Extractor] | None
    find: Callable[[Run, Options, bool], Iterator[Mention]]  # bool: few chunks, load only the names they may hold
    touched: Callable[[Run, Pairs, Pairs, int], set[str]] | None
    folds: bool = False  # chunks' folded texts are stored, which `probed` reads


def store_names(run: Run, found: dict[tuple[str, str], int]) -> None:
    """Write the (entity_id, name) -> weight pairs `found` into names_next, with each name's tokens (what
    text and questions are matched by)."""
    run.insert("names_next", ({"entity_id": e, "name": n, "weight": w, "words": joined(words(n))}
                               for (e, n), w in found.items()))


def joined(tokens: tuple[str, ...]) -> str:
    """Tokens as one string for SQL (see SEPARATOR)."""
    return SEPARATOR.join(tokens)


def _split(words: str) -> tuple[str, ...]:
    """Tokens joined by `joined`, apart again."""
    return tuple(words.split(SEPARATOR))


def texts_todo(run: Run) -> Iterator[tuple[str, str, str]]:
    """The chunks to be matched again (mentions_matched), with their text and document title, in chunk id order,
    read PAGE at a time."""
    after = None
    while page := run.con.execute(sql("mentions.chunk_texts_todo"), {"after": after, "n": PAGE}).fetchall():
        yield from page
        after = page[-1][0]


def text_mentions(run: Run, options: Options, selective: bool) -> Iterator[Mention]:
    """Modes gazetteer and titles: the dictionary's names found in the text of each chunk (mentions_matched);
    `selective`: few chunks, so only the names that start with one of their tokens are loaded. With the run's
    fan-out and many chunks, the workers find them (`names_found`), straight into mentions_found, when called."""
    if run.fanout and not selective:
        dictionary = run.shared("mentions.dictionary_out", "dictionary")
        run.spread("mentions.shard_texts", names_found, {"dictionary": dictionary, "window": options.window},
                   "mentions_found")
        return iter(())
    return _matched_here(run, options, selective)


def names_found(texts: list[tuple[str, str]], dictionary: str, window: EdgeWindow) -> Iterator[dict[str, Any]]:
    """The mentions_found rows of the chunks `texts` (chunk_id, text): the names of the Parquet file `dictionary`
    (words, entity_id: mentions.dictionary_out) found in each, with the windows that name them (a shard's work)."""
    matcher = Matcher(shards.rows(dictionary), spell=_split)
    for cid, text in texts:
        for eid, where in chunk_places(matcher, text, window).items():
            yield {"entity_id": eid, "chunk_id": cid, "windows": list(where)}


def _matched_here(run: Run, options: Options, selective: bool) -> Iterator[Mention]:
    """`text_mentions` in this process, the chunks' texts read a page at a time."""
    todo = list(texts_todo(run)) if selective else texts_todo(run)
    run.ids("mentions.tokens", {token for _, text, _ in todo for token in words(text)} if selective else ())
    matcher = Matcher(run.con.execute(sql("mentions.names_matchable"), {"all": not selective}).fetchall(),
                      spell=_split)
    for cid, text, _ in todo:
        for eid, where in chunk_places(matcher, text, options.window).items():
            yield eid, cid, where


def probed(run: Run, entered: Pairs, left: Pairs, batch: int) -> set[str]:
    """Modes matching text: a name that left can change only the chunks that mention its entity (matching is
    leftmost-longest: nothing changes where it was not the one matched; mentions.chunks_naming); for a
    name that entered, DuckDB's linear-time regex engine finds the chunks whose folded text may hold it
    (its tokens, white space allowed between them), `batch` names a pass, and the exact token-sequence
    test runs on those.
    """
    con = run.con
    found = set()
    if run.ids("mentions.renamed", {eid for eid, _ in left}):
        found = {cid for (cid,) in con.execute(sql("mentions.chunks_naming")).fetchall()}
    names = {name for _, name in entered}
    if len(names) > MAX_PROBE_PASSES * batch:
        return {cid for (cid,) in con.execute(sql("mentions.chunks_all")).fetchall()}
    spelled = [r"\s*".join(re.escape(t) for t in words(name)) for name in sorted(names)]
    exact = Matcher((name, name) for name in names)
    for start in range(0, len(spelled), batch):
        pattern = "|".join(spelled[start : start + batch])
        found |= {cid for cid, text in con.execute(sql("mentions.chunks_probed"), {"pattern": pattern}).fetchall()
                  if exact.find(text)}
    return found


def chunk_places(matcher: Matcher, text: str, window: EdgeWindow) -> Places:
    """The entities `matcher` finds in `text`, each with the windows (paragraphs or sentences) that name it.

    The tokens of the windows, one after the other, are the tokens of the text (windows end at white
    space), so the same names are found as in the whole text."""
    if window == "chunk":
        return dict.fromkeys(matcher.find(text), ())
    pieces = [text[start:end] for start, end in WINDOWS[window](text)]
    if BETWEEN in text:  # the separator must not occur in the text: tokenise window by window
        spelled = [words(piece) for piece in pieces]
    else:  # one pass over the whole chunk, cut at the separator: much faster than a call per window
        spelled, current = [], []
        for token in words(f"\n{BETWEEN}\n".join(pieces)):
            if token == BETWEEN:
                spelled.append(tuple(current))
                current = []
            else:
                current.append(token)
        spelled.append(tuple(current))
    tokens = tuple(t for words in spelled for t in words)
    where = [number for number, words in enumerate(spelled) for _ in words]
    found: dict[str, set[int]] = {}
    for first, _, eid in matcher.spans(tokens):
        found.setdefault(eid, set()).add(where[first])
    return {eid: tuple(sorted(numbers)) for eid, numbers in found.items()}
