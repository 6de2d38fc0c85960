"""Entity names: stable ids, accent- and case-folded matching keys, and the multi-pattern matcher."""

import re
import unicodedata
from collections.abc import Callable, Iterable

WORD = re.compile(r"\w+|[^\w\s]")
MARKS = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
MAX_NAME_CHARS = 300


def entity_id(label: str) -> str:
    """The stable id of a label: Unicode NFC, case-folded, whitespace collapsed."""
    if label.isascii():  # the same result without normalising: ASCII has no decompositions
        return " ".join(label.lower().split())
    folded = unicodedata.normalize("NFC", label).casefold()
    return unicodedata.normalize("NFC", " ".join(folded.split()))


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
    """Text as matching sees it: compatibility-decomposed, without accents, case-folded."""
    if text.isascii():  # the same result, several times faster: ASCII has no decompositions or marks
        return text.lower()
    return MARKS.sub("", unicodedata.normalize("NFKD", text)).casefold()


def words(text: str) -> tuple[str, ...]:
    """The folded word and symbol tokens of `text`; names match on whole tokens only."""
    return tuple(WORD.findall(fold(text)))


class Matcher:
    """Finds every known name in a text at once: leftmost, longest, on token boundaries."""

    def __init__(self, names: Iterable[tuple[str, str]], *,
                 spell: Callable[[str], tuple[str, ...]] = words) -> None:
        """Index (name, entity_id) pairs; a name claimed by two entities goes to the smaller id.

        `spell` turns a name into its tokens (`words`, or a caller's cache of it).
        """
        self.names: dict[tuple[str, ...], str] = {}
        for name, eid in sorted(names, key=lambda pair: (pair[1], pair[0])):
            self.names.setdefault(spell(name), eid)
        self.names.pop((), None)
        lengths: dict[str, set[int]] = {}
        for key in self.names:
            lengths.setdefault(key[0], set()).add(len(key))
        self.lengths = {first: sorted(ls, reverse=True) for first, ls in lengths.items()}

    def find(self, text: str) -> set[str]:
        """Ids of the entities whose names occur in `text`."""
        return {eid for _, _, eid in self.spans(words(text))}

    def spans(self, tokens: tuple[str, ...]) -> list[tuple[int, int, str]]:
        """(first token, token count, entity id) of every name found in folded `tokens`."""
        found = []
        i, n = 0, len(tokens)
        while i < n:
            step = 1
            for length in self.lengths.get(tokens[i], ()):
                eid = self.names.get(tokens[i : i + length])
                if eid is not None:
                    found.append((i, length, eid))
                    step = length
                    break
            i += step
        return found
