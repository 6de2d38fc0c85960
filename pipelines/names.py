"""Entity names: stable ids, labels as shown, accent- and case-folded tokens and stems, the words a name is matched
on; shared by the stages and the query side."""

import re
import unicodedata
from collections.abc import Sequence

HAN = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"  # Han and kana
SPELLED = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"  # Thai, Lao, Myanmar, Khmer: letters, no word spaces
UNSPACED = SPELLED + HAN  # scripts written without spaces between words (BM25 splits their runs into pairs)
# a word, or a symbol; each Han or kana character is a word of its own, so that a name written without spaces
# between words ("北京大学") matches as a run of them; a run of the alphabetic scripts, whose letters alone mean
# nothing, is a word that `words` splits into overlapping pairs of letters, as BM25 does
WORD = re.compile(rf"[{HAN}]|[{SPELLED}]+|[^\W{UNSPACED}]+|[^\w\s]")
UNSPACED_CHAR = re.compile(f"[{UNSPACED}]")
SPELLED_RUN = re.compile(f"[{SPELLED}]+")
MAY_MARK = re.compile(r"[^\x00-\u02ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")  # not Latin, Han or Hangul
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
MAX_NAME_CHARS = 300  # longest label an entity may have
DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")  # a title's trailing "(film)", "(writer)"


def entity_id(label: str) -> str:
    """The stable id of a label: Unicode NFC, case-folded, whitespace collapsed."""
    if label.isascii():  # the same result without normalising: ASCII has no decompositions
        return " ".join(label.lower().split())
    folded = unicodedata.normalize("NFC", label).casefold()
    return unicodedata.normalize("NFC", " ".join(folded.split()))


def short_form(title: str) -> str:
    """A title without its trailing disambiguation: "Friedrich Wolf (writer)" -> "Friedrich Wolf", the name a
    text writes."""
    return DISAMBIGUATION.sub("", title)


def display(label: str) -> str:
    """A label as shown: NFC with whitespace collapsed, case kept."""
    return " ".join(unicodedata.normalize("NFC", label).split())


def problem(label: str) -> str | None:
    """Why `label` cannot name an entity, or None when it can."""
    if CONTROL.search(label):
        return "contains a control character (NUL included)"
    if not label.strip():
        return "is empty"
    if len(label) > MAX_NAME_CHARS:
        return f"is longer than {MAX_NAME_CHARS} characters"
    if not words(label):
        return "has no matchable character"
    return None


def blank(text: str) -> bool:
    """Whether `text` shows nothing: only white space and invisible format characters (zero-width space, word
    joiner, byte order mark, soft hyphen)."""
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in text)


def fold(text: str) -> str:
    """Text as matching sees it: compatibility-decomposed, without marks (Unicode category M: accents, and the vowel
    signs and diacritics of other scripts, which would split a Hindi word apart; BM25 strips them too), case-folded."""
    if text.isascii():  # the same result, several times faster: ASCII has no decompositions or marks
        return text.lower()
    return unmarked(unicodedata.normalize("NFKD", text)).casefold()


def unmarked(text: str) -> str:
    """`text` (decomposed) without its marks (Unicode category M), as matching and BM25 both read it."""
    for char in set(MAY_MARK.findall(text)):  # each distinct mark removed at once: no lookup a character
        if unicodedata.category(char)[0] == "M":
            text = text.replace(char, "")
    return text


def words(text: str) -> tuple[str, ...]:
    """The folded word and symbol tokens of `text`; names match on whole tokens only. A run of Thai, Lao,
    Myanmar or Khmer letters gives its overlapping pairs of letters (a lone letter itself), so that a name within
    a run matches as a run of pairs and the router weighs pairs, as BM25 does, not letters every text uses."""
    found = WORD.findall(fold(text))
    if text.isascii() or not SPELLED_RUN.search(text):
        return tuple(found)
    return tuple(pair for w in found for pair in (_pairs(w) if SPELLED_RUN.fullmatch(w) else (w,)))


def _pairs(run: str) -> list[str]:
    """The overlapping pairs of characters of `run` (a lone character as itself)."""
    return [run[i:i + 2] for i in range(len(run) - 1)] or [run]


STEM_LETTERS = 5  # words are compared by their first letters, so that inflections meet (trend, trends)


def stem(word: str) -> str:
    """How the question router compares words: their first STEM_LETTERS letters."""
    return word[:STEM_LETTERS]


def word_stems(text: str) -> set[str]:
    """The distinct stems of the words of `text` (pipelines.terms stores them per document)."""
    return {w[:STEM_LETTERS] for w in words(text)}


def position(tokens: Sequence[str], name: Sequence[str]) -> int | None:
    """Index of the first occurrence of `name` (not empty) in `tokens`, or None; each place its first word is at
    is found by the sequence's own search (index), not a Python loop over every token."""
    n = len(name)
    i, stop = -1, len(tokens) - n + 1
    while i + 1 < stop:
        try:
            i = tokens.index(name[0], i + 1, stop)
        except ValueError:
            return None
        if tuple(tokens[i : i + n]) == tuple(name):
            return i
    return None
