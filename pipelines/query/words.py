"""Query: the words of a question, how they are compared, and how many documents use each (the lexical floor)."""

import math
from collections.abc import Iterable

from pipelines.db import Connection, sql
from pipelines.text import stem, words

STOP_WORDS = frozenset(
    "a an and are as at be by de da das do dos e em for from in is it na nas no nos o of on or os para por "
    "que the to um uma with como qual quais quem onde quando what which who where when how".split())
MIN_COVERAGE = 0.4  # least share of the question's information (IDF-weighted words) one matching chunk holds
SPECIFIC_SHARE = 0.5  # a word in more than this share of the documents says nothing about which one answers
MIN_SPECIFIC_WORDS = 2  # specific words the matching chunk must share (or all the question has, when fewer)


def content_words(text: str) -> list[str]:
    """The folded words of `text` that carry meaning: longer than two letters and not a stop word."""
    return [w for w in words(text) if len(w) > 2 and w not in STOP_WORDS]


class Words:
    """How many of the documents `scopes` may read (None: all) use each word, by its stem, for routing: read from
    the index (word_documents) the first time a word is asked about, so a question costs only its own words."""

    def __init__(self, con: Connection, scopes: list[str] | None) -> None:
        self.con, self.scopes = con, scopes
        self.n_documents: int = con.execute(sql("query.readable_documents"), {"scopes": scopes}).fetchone()[0]
        self.documents: dict[str, int] = {}

    def load(self, stems: Iterable[str]) -> None:
        """Read the counts of the `stems` not read yet, in one statement."""
        missing = sorted(set(stems) - self.documents.keys())
        if missing:
            self.documents |= dict.fromkeys(missing, 0)
            found = self.con.execute(sql("query.word_documents"), {"words": missing, "scopes": self.scopes})
            self.documents |= dict(found.fetchall())

    def count(self, word_stem: str) -> int:
        """How many readable documents use a word with this stem."""
        self.load([word_stem])
        return self.documents[word_stem]

    def share(self, word_stem: str) -> float:
        """The share of the documents that use a word with this stem."""
        return self.count(word_stem) / self.n_documents if self.n_documents else 0.0

    def idf(self, word_stem: str) -> float:
        """Its inverse document frequency, ln((n + 1) / (df + 1)): 0 for a word every document uses."""
        return math.log((self.n_documents + 1) / (self.count(word_stem) + 1))

    def matches(self, question: str, text: str) -> bool:
        """Whether `text` passes the lexical floor for `question`: it holds MIN_COVERAGE of its information
        (its content words' IDF) and MIN_SPECIFIC_WORDS of its specific words (all of them, when it has fewer)."""
        asked = {stem(w) for w in content_words(question)}
        held = asked & {stem(w) for w in words(text)}
        total = sum(self.idf(w) for w in asked)
        specific = {w for w in asked if self.share(w) <= SPECIFIC_SHARE}
        return (total > 0 and sum(self.idf(w) for w in held) / total >= MIN_COVERAGE
                and len(specific & held) >= min(MIN_SPECIFIC_WORDS, len(specific)))
