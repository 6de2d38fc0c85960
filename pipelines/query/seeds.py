"""Query: the seed entities of a question, found by name (labels and aliases, case- and accent-insensitive).

A calibrated floor keeps noise out: a name that is a single stop word or a token of one or two
characters never seeds, so an off-topic question yields no seeds instead of false positives.
"""

import unicodedata
from dataclasses import dataclass

from pipelines import names
from pipelines.db import Connection, sql

STOP_WORDS = frozenset(
    "a an and are as at be by de da das do dos e em for from in is it na nas no nos o of on or os para por "
    "que the to um uma with como qual quais quem onde quando what which who where when how".split())


def content_words(text: str) -> list[str]:
    """The folded words of `text` that carry meaning: longer than two letters and not a stop word."""
    return [w for w in names.words(text) if len(w) > 2 and w not in STOP_WORDS]


@dataclass(frozen=True)
class Seed:
    """An indexed entity the question names."""

    entity_id: str
    label: str
    n_chunks: int


class SeedFinder:
    """Finds indexed entities named in questions; built once per index, reused for every question."""

    def __init__(self, con: Connection, *, capitals: bool = False, scopes: list[str] | None = None,
                 mode: str = "") -> None:
        """Load every usable name of the index; with `capitals` (an index of names found by their capitals,
        modes nlp and spacy), only a name the question writes with a capital or a digit seeds, or one of an
        entity the corpus seldom writes in lower case and that is no single capitalised word (`lowercase`:
        "mkdocs" names MkDocs, "banco central" Banco Central; "water" never names Water). With
        `scopes`, only the entities a caller with those scopes may see, labelled and counted as the text it
        may read shows them (sql/scope_names.sql, by the index's mentions `mode`)."""
        self.capitals = capitals
        if scopes is None:
            rows = con.execute(sql("seed_names")).fetchall()
        else:
            rows = con.execute(sql("scope_names"), {"scopes": scopes, "mode": mode}).fetchall()
        self.entities = {eid: Seed(eid, label, n) for _, eid, label, n in rows}
        decided = con.execute(sql("has_decisions")).fetchone()[0]  # index files made before it have none
        self.lowercase = {eid for (eid,) in con.execute(sql("seed_lowercase")).fetchall()} if decided else set()
        usable = [(alias, eid) for alias, eid, _, _ in rows if self._usable(alias)]
        self.matcher = names.Matcher(usable)

    @staticmethod
    def _usable(name: str) -> bool:
        """Whether a name is specific enough to seed (the floor)."""
        tokens = names.words(name)
        return not (len(tokens) == 1 and (len(tokens[0]) <= 2 or tokens[0] in STOP_WORDS))

    def find(self, question: str) -> list[Seed]:
        """The entities named in `question`, rarest first (fewer chunks = more specific), then by id.

        In a question that capitalises names (a capital after its first word), a name written all in
        lower case is a common phrase ("the place of birth of"), not a name, and does not seed, unless its
        entity is one the corpus seldom writes in lower case (`lowercase`).
        """
        folded = names.words(question)
        written = names.WORD.findall(unicodedata.normalize("NFC", question))
        cased = len(written) == len(folded) and (self.capitals or any(w[:1].isupper() for w in written[1:]))
        found = {eid for start, length, eid in self.matcher.spans(folded)
                 if not cased or eid in self.lowercase
                 or any(w[:1].isupper() or w[:1].isdigit() for w in written[start : start + length])}
        return sorted((self.entities[eid] for eid in found), key=lambda s: (s.n_chunks, s.entity_id))
