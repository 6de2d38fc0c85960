"""Sentence and paragraph spans of a text (chunking, short answers, report evidence)."""

import re
from collections.abc import Iterable, Iterator

PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)|\n")
WORD_REACH = 40  # characters before a stop that its word (an initial, an abbreviation) is looked for in
NEXT_CHAR = re.compile(r"\s*(\S?)")  # the first character after white space, without copying the rest
ABBREVIATIONS = frozenset(
    "mr mrs ms dr drs prof st mt ft jr sr sra srta dra vs etc inc ltd co corp no nos fig figs ca cf al approx "
    "gen col lt sgt capt rev gov sen rep av pág pag vol ed eds dept univ est".split())


def sentences(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each sentence of `text` in order, white space trimmed; lazy, so a caller may stop early.

    A sentence ends at a line break, or at . ! ? … before white space, unless the next word starts in
    lower case or with a digit ("d. 851", "e.g. this"), or the period closes an initial or a common
    abbreviation ("J. R. R.", "Dr.", "Sra.").
    """
    return _between(text, ((m.end(), m.end()) for m in END.finditer(text) if _ends_sentence(text, m)))


def _ends_sentence(text: str, match: re.Match[str]) -> bool:
    """Whether the END `match` closes a sentence (see `sentences`)."""
    if match.group() == "\n":
        return True
    following = NEXT_CHAR.match(text, match.end()).group(1)
    word = _word_before(text, match.start()).casefold()
    return not (following.islower() or following.isdigit() or len(word) == 1 or word in ABBREVIATIONS)


def _word_before(text: str, end: int) -> str:
    """The last run of word characters (regex \\w: alphanumeric or _) of `text` before `end`, within WORD_REACH
    characters of it ("" when none): read backwards a character at a time, where a regex search would try every
    place in the reach."""
    low = max(0, end - WORD_REACH)
    stop = end
    while stop > low and not (text[stop - 1].isalnum() or text[stop - 1] == "_"):
        stop -= 1
    start = stop
    while start > low and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    return text[start:stop]


def paragraph_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each paragraph of `text` (blocks between blank lines) in order, white space trimmed."""
    return _between(text, ((m.start(), m.end()) for m in PARAGRAPH.finditer(text)))


def _between(text: str, cuts: Iterable[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The non-empty, trimmed spans of `text` around `cuts` ((where a piece ends, where the next begins))."""
    start = 0
    for end, following in cuts:
        a, b = _trimmed(text, start, end)
        if a < b:
            yield a, b
        start = following
    a, b = _trimmed(text, start, len(text))
    if a < b:
        yield a, b


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """`start`, `end` moved inwards past white space."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
