"""Query: the words of a question, how they are compared, and how many documents use each (the lexical floor)."""

import math
from collections.abc import Callable, Iterable

from acervo.pipelines.db import Connection, sql
from acervo.pipelines.names import UNSPACED_CHAR, stem, words
from acervo.pipelines.stopwords import FUNCTION_WORDS, STOP_WORDS

CHILDREN = "son sons daughter daughters child children filho filhos filha filhas"
KIN = CHILDREN + " born nasceu nascido nascida"  # how a sentence names a parent: "son of X", "born to X"
SPOUSES = "married marriage wife husband spouse widow casou casado casada casamento esposa marido viuva"
PARENTS = "father mother parent son daughter child pai mae filho filha"  # how a sentence names a child
RELATIONS = {  # a relation a question asks about -> the words a sentence may state it with (folded; by stem)
    **dict.fromkeys("father mother parent parents pai mae pais grandfather grandmother grandparent avo".split(), KIN),
    **dict.fromkeys("spouse wife husband married esposa marido conjuge".split(), SPOUSES),
    **dict.fromkeys(CHILDREN.split(), PARENTS),
}
MIN_COVERAGE = 0.4  # a share of the question's information (IDF-weighted words) one matching chunk holds that passes
SPECIFIC_SHARE = 0.5  # a word in more than this share of the documents says nothing about which one answers
MIN_SPECIFIC_WORDS = 2  # specific words the matching chunk must share (or all the question has, when fewer)


def content_words(text: str) -> list[str]:
    """The folded words of `text` that carry meaning: longer than two letters (or a Han or kana character, a word
    of its own, or a pair of Thai, Lao, Myanmar or Khmer letters: pipelines.names.words), and not a stop word. A
    character every document uses weighs nothing (IDF), so that the function characters of text without spaces
    count no more than stop words."""
    return [w for w in words(text) if (len(w) > 2 or UNSPACED_CHAR.match(w)) and w not in STOP_WORDS]


def subject_words(text: str) -> list[str]:
    """The content words of `text` that say what it is about: no function word (how it asks is no evidence)."""
    return [w for w in content_words(text) if w not in FUNCTION_WORDS]


class Words:
    """How many of the documents `scopes` may read (None: all) use each word, by its stem, for routing: read from
    the index (word_documents) the first time a word is asked about, so a question costs only its own words; and
    whether a text holds a question's word (`held`), by their first letters and, for a word whose start the
    index's BM25 stemmer `stems` takes off, by its stem's; and whether a text passes the lexical floor for a
    question (`matches`), calibrated on the index (`calibrate`)."""

    def __init__(self, con: Connection, scopes: list[str] | None, stems: Callable[[list[str]], list[str]]) -> None:
        self.con, self.scopes, self.stems = con, scopes, stems
        self.n_documents: int = con.execute(sql("query.readable_documents"), {"scopes": scopes}).fetchone()[0]
        self.documents: dict[str, int] = {}
        self.floor = MIN_COVERAGE  # a share of a question's information that passes once exceeded (`calibrate`)

    def calibrate(self, found: Iterable[float]) -> None:
        """Take as the floor the most of their information that questions about nothing
        (pipelines.query.meaning.unrelated) `found` in their best chunks here, where that is below MIN_COVERAGE:
        a question asked like them holds more with a chance of at most 1 in their number + 1 (split conformal
        prediction), and a corpus in a language they are not asked in, or a small one, holds little of any."""
        self.floor = min(MIN_COVERAGE, max(found, default=0.0))

    def load(self, stems: Iterable[str]) -> None:
        """Read the counts of the `stems` not read yet, in one statement; a read that fails records none of them, so
        that a question asked again (pipelines.query.context.Index._bounded) reads them again."""
        missing = sorted(set(stems) - self.documents.keys())
        if missing:
            found = self.con.execute(sql("query.word_documents"), {"words": missing, "scopes": self.scopes}).fetchall()
            self.documents |= dict.fromkeys(missing, 0) | dict(found)

    def count(self, word_stem: str) -> int:
        """How many readable documents use a word with this stem."""
        self.load([word_stem])
        return self.documents[word_stem]

    def written(self, word: str) -> bool:
        """Whether a readable document writes a word with `word`'s first letters (`stem`): another ending of it."""
        return self.count(stem(word)) > 0

    def share(self, word_stem: str) -> float:
        """The share of the documents that use a word with this stem."""
        return self.count(word_stem) / self.n_documents if self.n_documents else 0.0

    def idf(self, word_stem: str) -> float:
        """Its inverse document frequency, ln((n + 1) / (df + 1)): 0 for a word every document uses."""
        return math.log((self.n_documents + 1) / (self.count(word_stem) + 1))

    def coverage(self, question: str, text: str) -> float:
        """The share of `question`'s information (its subject words' IDF: no function word) that `text` holds."""
        return self._covered(*self._asked_held(question, text))

    def matches(self, question: str, text: str) -> bool:
        """Whether `text` passes the lexical floor for `question`: it holds MIN_COVERAGE of its information
        (`coverage`), or more than any question about nothing finds here (`floor`), and MIN_SPECIFIC_WORDS of its
        specific words (all of them, when it has fewer)."""
        asked, held = self._asked_held(question, text)
        specific = {w for w in asked if self.share(w) <= SPECIFIC_SHARE}
        covered = self._covered(asked, held)
        return ((covered >= MIN_COVERAGE or covered > self.floor)
                and len(specific & held) >= min(MIN_SPECIFIC_WORDS, len(specific)))

    def _covered(self, asked: set[str], held: set[str]) -> float:
        """The share of the IDF of the stems `asked` that the stems `held` carry (0 when they carry none); summed
        exactly (fsum), so that it does not depend on the order the sets are read in, which varies by process."""
        total = math.fsum(self.idf(w) for w in asked)
        return math.fsum(self.idf(w) for w in held) / total if total > 0 else 0.0

    def _asked_held(self, question: str, text: str) -> tuple[set[str], set[str]]:
        """The stems of `question`'s subject words, and those of them that `text` holds: each read once."""
        asked = subject_words(question)
        return {stem(w) for w in asked}, {stem(w) for w in self.held(asked, words(text))}

    def uncovered(self, question: str, texts: list[str]) -> list[str]:
        """The subject words of `question` (folded, each once, in order) that none of `texts` holds: what a
        question routed nowhere asks that the best matching text does not say."""
        asked = list(dict.fromkeys(subject_words(question)))
        held = set(self.held(asked, [w for text in texts for w in words(text)]))
        return [w for w in asked if w not in held]

    def held(self, asked: list[str], said: list[str]) -> list[str]:
        """The words `asked` that words `said` hold: one has the same first letters (`stem`), or, where the index's
        stemmer takes letters off the start of either (Arabic's article and prepositions: "النجاح" -> "نجاح"), where
        first letters cannot meet, their stems have. A stemmer that only takes endings off leaves this the
        comparison by first letters."""
        keys = {stem(w) for w in said} | set(_started(said, self.stems))
        return [w for w in asked if stem(w) in keys or any(k in keys for k in _started([w], self.stems))]


def _started(found: list[str], stems: Callable[[list[str]], list[str]]) -> list[str]:
    """The first letters (`stem`) of the stems by `stems` of those words `found` whose first letter their stem
    does not keep: the stemmer took a prefix off."""
    unique = sorted(set(found))
    return [stem(s) for w, s in zip(unique, stems(unique), strict=True) if s and s[0] != w[0]]


def stated(word: str) -> frozenset[str]:
    """The stems a sentence may state a question's `word` with: its own, and for a relation (kin, spouse) the
    words that state it ("father" -> "son of", "wife" -> "married"): RELATIONS."""
    return frozenset({stem(word)} | {stem(w) for w in RELATIONS.get(word, "").split()})
