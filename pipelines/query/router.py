"""Query: route a question to local (named entities), mixed, global (the whole collection) or none, with a reason.

Rules, in order, each tested on its own:
1. a named entity and a request for wider context or an overview, or a collection cue whose other words
   are widespread (see below), or a cue of frequency, recurrence or comparison with another word that refers to
   more than one of the collection's texts (rule 3's, less a single item: "which cities are mentioned most
   often", in a language that writes every noun with a capital, names the found name "Städte"; "what recurring
   character of the episode" asks about one) -> mixed;
2. a named entity -> local (the evidence is in the entity's chunks and neighbourhood); in an index without a
   floor for meaning (rule 4), none when its best BM25 chunk reaches less of the score its words could get
   (lexical.reach) than the index's lexical floor: what questions about nothing a collection holds reach there
   (Index.reach_floor). A name the text mentions does not make "how do I reverse a list in Python?" answerable
   on an encyclopedia: its other words are not in the chunk that names it. Rule 1's questions ask about many
   documents, which no one chunk holds: the floor does not judge them;
3. no named entity and a request for an overview of the collection, or a collection cue (recurring,
   common, often, trends, compared, across...) whose other words are widespread -> global (community reports).
   Widespread: the SPREAD_RANK-th most widespread of the question's other content words (compared by their
   first STEM_LETTERS letters) is in at least SPREAD_FLOOR of the documents. A question all of whose words
   most documents use cannot be about one document; the cue says it asks about many. A cue alone is no
   evidence ("the most populous city of X" is a factoid), nor is spread alone (in a few long documents
   every everyday word is everywhere, so an off-topic question is widespread too), unless all its words
   but its rarest (what it may ask about) are in at least BROAD_FLOOR of the documents: an off-topic
   question's subject words are rare, and a factoid's name is one document's; or a collection cue with
   another word that refers to the collection's text (the collection or its items, what they say or hold:
   "which countries are mentioned most often", "o que os documentos dizem sobre pesquisa") whose subject (the
   question without those words) at least SUBJECT_DOCUMENTS documents write about: one of the best BM25
   chunks for the subject in each passes the lexical floor (rule 5's) for it. Such a question asks what the
   text says across documents, and an off-topic question's subject is written about nowhere; with no subject
   left, it asks about the collection itself. A cue alone stays no evidence: "quais alguns exemplos de X"
   asks one document. With the packaged model, in any language its cues do not list: a question closer in
   meaning to the questions about a collection (collection.txt) than to the unrelated ones (unrelated.txt),
   by their centroids, and whose closest chunk is at most COLLECTION_MARGIN closer to it than the closest of
   them (a question one text answers is far closer to that text) -> global, or mixed when it names entities
   (rule 1); the floor for meaning does not refuse it;
4. in an index with chunk vectors and a floor for its model, whatever the question names: when even the chunk
   closest to it in meaning is below the floor and none of its best BM25 chunks holds HELD_SHARE of its
   information -> none (the model says no text is about it, and its words agree: a name the corpus mentions
   does not make "how do I reverse a list in Python?" answerable on an encyclopedia); when one of the two says
   the text answers it and rules 5 to 7 find nothing -> local, from its first hop's chunks (closest in meaning
   and best by BM25). A question that asks what many documents say (`asks_many`) and names nothing is not
   refused by meaning (no one chunk is close to a question about many): its words decide (rules 5 to 8);
   no named entity, but entities close to it in meaning (entity vectors, when the index has them and the
   caller passes the embedding model) -> local, seeded by them;
5. no named entity, but one of the best BM25 chunks holds at least MIN_COVERAGE of the question's
   information (its content words weighted by their inverse document frequency, so that a word every
   document uses weighs nothing and one no document uses weighs most), or more of it than any of the unrelated
   questions (pipelines.query.meaning.unrelated) finds in its own best chunks in this index (the floor
   calibrated on the index, Words.calibrate: a corpus in another language than theirs, or a small one, holds
   little of any question), and at least MIN_SPECIFIC_WORDS of its specific words (those in at most
   SPECIFIC_SHARE of the documents; all of them when it has fewer) -> local, seeded by the entities of the
   chunks that do;
6. no named entity, but a name it writes with capitals (not made only of words most documents use) that the
   best matching chunks write too, though no entity holds it (an index of found names keeps a name seen in
   too few chunks out of the graph, not out of the text; one of titles or a gazetteer holds only their
   names) -> local, from those chunks, without seeds (none below the lexical floor, as in rule 2);
7. no named entity, but best BM25 chunks that pass that floor (rule 5), though they
   mention no entity -> local, from the best BM25 chunks, without seeds;
   rules 4 to 7 give mixed instead of local to a question with a collection cue (CUES): its words found text,
   and it may ask about many documents ("what are common occupations of the people in these texts?"), so it
   gets community reports beside the chunks its words found, BM25's best first (pipelines.query.fusion);
8. otherwise -> none: nothing indexed is named or matched and no overview is asked; the context is empty.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from acervo.pipelines.names import words
from acervo.pipelines.query.cues import ACROSS, COLLECTION, CUES, FREQUENCY, HOLDS, OVERVIEW, REFERS, WIDER
from acervo.pipelines.query.scoring import COLLECTION_MARGIN
from acervo.pipelines.query.seeds import Seed
from acervo.pipelines.query.words import MIN_COVERAGE, content_words, stem
from acervo.pipelines.stopwords import FUNCTION_WORDS, STOP_WORDS

Route = Literal["local", "mixed", "global", "none"]

SPREAD_RANK = 3  # the question's words are widespread when this many of them are (or all, when fewer)
SPREAD_FLOOR = 0.3  # share of the documents that the SPREAD_RANK-th most widespread word must reach
MIN_DOCUMENTS = 20  # fewest readable documents whose word shares are fine enough to route on (spread, breadth)
BROAD_FLOOR = 0.4  # without a cue: share of the documents all the question's words but its rarest must reach
SUBJECT_DOCUMENTS = 3  # documents that must write about what a question asks many documents about (rule 3)
HELD_SHARE = 0.5  # a question one of whose best BM25 chunks holds this share of its information is answerable
COSINE_DIGITS = 4  # decimals of a cosine that a reason quotes


@dataclass(frozen=True)
class Closeness:
    """How close in meaning a question's closest readable chunk is (cosine, `best`) beside the index's floor for
    its model, and the most of the question's information (its words' IDF) one of its best BM25 chunks holds."""

    best: float
    floor: float
    held: float
    collection: float | None = None  # its cosine to the closest question about a collection (None: not looked at)
    contrast: float = 0.0  # its cosine to their centroid less its cosine to the unrelated questions' centroid

    @property
    def asks_collection(self) -> bool:
        """Whether it asks about the collection as a whole by meaning (rule 3): closer to the questions about a
        collection than to the unrelated ones (their centroids), and its closest chunk at most COLLECTION_MARGIN
        closer to it than the closest question about a collection."""
        return self.collection is not None and self.contrast > 0 and self.best - self.collection <= COLLECTION_MARGIN

    def about(self) -> str:
        """What the reason of a question about the collection by meaning says."""
        return (f"asks about the collection as a whole by meaning (closer to questions about a collection than to "
                f"unrelated ones by {round(self.contrast, COSINE_DIGITS)}; its cosine to the closest of them, "
                f"{round(self.collection or 0.0, COSINE_DIGITS)}, is within {COLLECTION_MARGIN} of its closest "
                f"chunk's, {round(self.best, COSINE_DIGITS)})")

    @property
    def refused(self) -> bool:
        """Whether neither meaning nor words say the text answers the question (rule 4)."""
        return self.best < self.floor and self.held < HELD_SHARE

    def why(self) -> str:
        """What the reason of a refusal says."""
        return (f"no indexed text is close to it in meaning (the closest chunk's cosine, "
                f"{round(self.best, COSINE_DIGITS)}, is below the index's floor, "
                f"{round(self.floor, COSINE_DIGITS)}) or holds "
                f"{round(100 * HELD_SHARE)}% of its words' information (the best matching chunks hold "
                f"{round(100 * self.held)}%)")

    def answers(self) -> str:
        """What the reason of an answer that meaning or words alone found says."""
        if self.best >= self.floor:
            return (f"indexed text is close to it in meaning (the closest chunk's cosine, "
                    f"{round(self.best, COSINE_DIGITS)}, is at least the index's floor, "
                    f"{round(self.floor, COSINE_DIGITS)})")
        return f"one of the best matching chunks holds {round(100 * self.held)}% of its words' information (IDF)"


@dataclass(frozen=True)
class Reach:
    """How much of the BM25 score a question could get its best readable chunk gets (`share`: lexical.reach),
    beside the index's floor for it (what questions about nothing a collection holds reach: Index.reach_floor)."""

    share: float
    floor: float

    @property
    def refused(self) -> bool:
        """Whether the best text holds no more of the question than text holds of a question it cannot answer."""
        return self.share < self.floor

    def why(self) -> str:
        """What the reason of a refusal says."""
        return (f"its best matching chunk reaches {round(100 * self.share)}% of the BM25 score its words could get, "
                f"below the index's floor ({round(100 * self.floor)}%, what questions about nothing it holds reach): "
                f"a name the text mentions does not make it answerable")


@dataclass(frozen=True)
class Decision:
    """Where a question goes and why."""

    route: Route
    reason: str
    seeds: tuple[Seed, ...]


def subject(question: str) -> str:
    """What `question` asks about the collection: its folded words without its collection cues, requests for an
    overview or wider context, words for the collection and its items, and how it says they hold something
    ("what are the main themes of the collection" asks about nothing in particular: ""; "which cities come up
    in the articles" about "cities")."""
    text = " ".join(words(question))
    for pattern in (OVERVIEW, WIDER, CUES, HOLDS):
        text = pattern.sub(" ", text)
    return " ".join(w for w in text.split() if w[0].isalnum() and w not in STOP_WORDS | FUNCTION_WORDS | COLLECTION)


def spread(question: str, skip: set[str], share: Callable[[str], float]) -> tuple[float, str, int] | None:
    """(share of documents, word, rank) of the SPREAD_RANK-th most widespread content word of `question`
    outside `skip` (cue words and the names it names), or of its least widespread when it has fewer; None
    when it has none."""
    found: dict[str, tuple[float, str]] = {}
    for word in content_words(question):
        if word not in skip:
            found.setdefault(stem(word), (share(stem(word)), word))
    if not found:
        return None
    ranked = sorted(found.values(), key=lambda pair: (-pair[0], pair[1]))
    rank = min(SPREAD_RANK, len(ranked))
    return (*ranked[rank - 1], rank)


def breadth(question: str, share: Callable[[str], float]) -> tuple[float, str] | None:
    """(share of documents, word) of the second least widespread content word of `question` (its rarest
    may be what it asks about), or None when it has fewer than SPREAD_RANK words."""
    found: dict[str, tuple[float, str]] = {}
    for word in content_words(question):
        found.setdefault(stem(word), (share(stem(word)), word))
    if len(found) < SPREAD_RANK:
        return None
    return sorted(found.values())[1]


def route(question: str, seeds: list[Seed], *, by_vector: list[tuple[Seed, float]] | None = None,
          by_words: list[Seed] | None = None, by_name: list[str] | None = None, by_chunks: int = 0,
          profile: float | None = None, share: Callable[[str], float] | None = None,
          closeness: Closeness | None = None, about: tuple[str, int] | None = None,
          reach: Reach | None = None) -> Decision:
    """The route for `question` given the entities it names; `by_vector` are (entity, cosine) close to it in
    meaning, `by_words` entities of the indexed text the question's own words match (BM25, one chunk past
    the lexical floor of rule 5) and `by_name` names it shares with that text that are no
    entity, each used only when it names none and asks for no overview; `by_chunks` counts the best BM25
    chunks past that floor (used last, when they mention no entity);
    `share` gives the share of the documents that use a word (by its stem), for the collection cue's spread
    and the breadth rule (without it, as for a collection of fewer than MIN_DOCUMENTS, neither applies);
    `profile` (best BM25 score over the fourth best) is reported with them, not decided on: its range for
    such questions overlaps that of overview questions; `closeness` is the cosine of the chunk closest to it
    in meaning with the index's floor and what its words hold (None: no chunk vectors, or no floor); `about` is
    the subject of a question that asks what many documents say (`asks_many`, `subject`) with how many documents
    write about it (None: not looked at); `reach` is how much of its BM25 score its best chunk reaches, beside
    the index's lexical floor, which refuses a question that names something (an entity, or a name the best
    matching text writes) in an index without a floor for meaning (None: not looked at)."""
    text = " ".join(words(question))
    overview = OVERVIEW.search(text)
    collection = _collection(question, text, seeds, share)
    wide = closeness is not None and closeness.asks_collection
    if seeds:
        if closeness is not None and closeness.refused and not wide:
            return Decision("none", f"names {', '.join(s.label for s in seeds)}, but {closeness.why()}", ())
        often = asks_many(question, FREQUENCY, ACROSS)
        return _named(seeds, WIDER.search(text) or overview, collection or (closeness.about() if wide else "")
                      or (f"asks what recurs across documents ('{often[0]}', '{often[1]}')" if often else ""),
                      reach)
    many = asks_many(question)
    found = (_whole(question, overview, collection, many, share, about)
             or (Decision("global", f"names no entity and {closeness.about()}", ()) if wide else None)
             or _found(by_vector or [], by_words or [], by_name or [], by_chunks, profile, closeness, reach,
                       many=many is not None))
    cue = CUES.search(text)
    if found.route == "local" and cue:
        return Decision("mixed", f"{found.reason}; it may ask about many documents ('{cue.group(0)}'): community "
                                 f"reports beside that text", found.seeds)
    return found


def asks_many(question: str, cues: re.Pattern[str] = CUES, refer: re.Pattern[str] = REFERS) -> tuple[str, str] | None:
    """A collection cue of `question` (of `cues`) and a word of it that refers to the collection's text (of
    `refer`), two different words ("which countries are mentioned most often": 'often', 'mentioned'), or None."""
    text = " ".join(words(question))
    refers = [(found.start(), found.end(), found.group(0)) for found in refer.finditer(text)]
    for cue in cues.finditer(text):
        for start, end, word in refers:
            if end <= cue.start() or start >= cue.end():
                return cue.group(0), word
    return None


def _collection(question: str, text: str, seeds: list[Seed], share: Callable[[str], float] | None) -> str:
    """Why `question` asks about many documents in words most documents use (rule 1 and 3's cue), or ""."""
    cues = [m.group(0) for m in CUES.finditer(text)]
    if not cues or share is None:
        return ""
    skip = {w for cue in cues for w in cue.split()} | {w for s in seeds for w in words(s.label)}
    wide = spread(question, skip, share) or (1.0, "", 0)
    if wide[0] < SPREAD_FLOOR:
        return ""
    return (f"asks about many documents ('{cues[0]}') in words most documents use"
            + (f" (its {_ordinal(wide[2])} most widespread other word, '{wide[1]}', is in "
               f"{round(100 * wide[0])}% of the documents)" if wide[1] else ""))


def _named(seeds: list[Seed], wider: re.Match[str] | None, collection: str, reach: Reach | None) -> Decision:
    """Rules 1 and 2: a question that names entities is mixed when it asks for wider context or about the
    collection (`wider`: its request for wider context or an overview), else local, or none below the lexical
    floor (`reach`): no one chunk holds a question about many documents, so the floor judges only rule 2's."""
    labels = ", ".join(s.label for s in seeds)
    if wider:
        return Decision("mixed", f"names {labels} and asks for wider context ('{wider.group(0)}')", tuple(seeds))
    if collection:
        return Decision("mixed", f"names {labels} and {collection}", tuple(seeds))
    if reach is not None and reach.refused:
        return Decision("none", f"names {labels}, but {reach.why()}", ())
    return Decision("local", f"names {labels}: the evidence is in their chunks and neighbourhood", tuple(seeds))


def _whole(question: str, overview: re.Match[str] | None, collection: str, many: tuple[str, str] | None,
           share: Callable[[str], float] | None, about: tuple[str, int] | None) -> Decision | None:
    """Rule 3: global, for a question that names no entity and asks about the collection as a whole, or
    about many documents (in words most documents use, or, `many` being its cue and word for the collection's
    text, about a subject many documents write about), or whose words but its rarest most documents use; else
    None."""
    if overview:
        return Decision("global", f"names no entity and asks about the collection as a whole "
                                  f"('{overview.group(0)}')", ())
    if collection:
        return Decision("global", f"names no entity and {collection}", ())
    if many and about is not None and (not about[0] or about[1] >= SUBJECT_DOCUMENTS):
        (cue, refers), (subject_, documents) = many, about
        about_ = f"about '{subject_}', which {documents} documents write about" if subject_ else \
            "about the collection itself"
        return Decision("global", f"names no entity and asks what many documents say ('{cue}', '{refers}') {about_}",
                        ())
    broad = breadth(question, share) if share is not None else None
    if broad is not None and broad[0] >= BROAD_FLOOR:
        return Decision("global", f"names no entity and all its words but its rarest are in at least "
                                  f"{round(100 * BROAD_FLOOR)}% of the documents (the least widespread of them, "
                                  f"'{broad[1]}', in {round(100 * broad[0])}%): it is about no document in "
                                  f"particular", ())
    return None


def _found(by_vector: list[tuple[Seed, float]], by_words: list[Seed], by_name: list[str], by_chunks: int,
           profile: float | None, closeness: Closeness | None, reach: Reach | None, *, many: bool = False) -> Decision:
    """Rules 4 to 8, for a question that names no entity and asks for no overview: none when neither meaning nor
    words say the text answers it (unless it asks what `many` documents say: no one chunk is close to such a
    question, and its words decide); local from what the entity vectors or the best BM25 chunks found, or from
    its first hop's chunks when only meaning or words held say so; else none."""
    if closeness is not None and closeness.refused and not many:
        return Decision("none", f"names no indexed entity, asks for no overview, and {closeness.why()}", ())
    found = _matched(by_vector, by_words, by_name, by_chunks, profile, reach)
    if found.route == "none" and closeness is not None and not closeness.refused:
        return Decision("local", f"names no indexed entity, but {closeness.answers()}: the evidence is in that text",
                        ())
    return found


def _matched(by_vector: list[tuple[Seed, float]], by_words: list[Seed], by_name: list[str], by_chunks: int,
             profile: float | None, reach: Reach | None) -> Decision:
    """Rules 4 to 8 by what the entity vectors or the best BM25 chunks found, else none; a name the text writes
    is refused below the lexical floor (`reach`)."""
    if by_vector:
        found_v = ", ".join(f"{s.label} ({similarity})" for s, similarity in by_vector)
        return Decision("local", f"names no indexed entity, but is close in meaning to {found_v} (cosine of the "
                                 f"entity vectors)", tuple(s for s, _ in by_vector))
    if by_words:
        found_w = ", ".join(s.label for s in by_words)
        shape = f" (search profile {profile}: best/fourth BM25 score)" if profile else ""
        return Decision("local", f"names no indexed entity, but its words match indexed text about {found_w}{shape}",
                        tuple(by_words))
    if by_name and reach is not None and reach.refused:
        return Decision("none", f"names {', '.join(by_name)}, which the best matching text writes, but {reach.why()}",
                        ())
    if by_name:
        return Decision("local", f"names {', '.join(by_name)}, which the best matching text writes "
                                 f"too but no entity holds: the evidence is in that text", ())
    if by_chunks:
        return Decision("local", f"names no indexed entity, but {by_chunks} of the best matching chunks hold at least "
                                 f"{round(100 * MIN_COVERAGE)}% of its words' information (IDF), or more than any "
                                 f"question about nothing finds in this index: the evidence is in that text", ())
    return Decision("none", "names no indexed entity, asks for no overview, and no indexed text holds enough of "
                            "its words", ())


def _ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th..."""
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(n, "th")
    return f"{n}{suffix}"
