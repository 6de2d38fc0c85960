"""Mentions mode nlp: candidates extracted from each chunk's text, of which SQL decides over the whole corpus
which become entities (candidate_decisions); each chunk mentions the entities among its candidates."""

import itertools
from collections.abc import Iterator
from functools import cache
from operator import attrgetter
from typing import Any, NamedTuple

from acervo.pipelines.candidates import VERSION as CANDIDATES_VERSION
from acervo.pipelines.candidates import candidates, mid_sentence, word_cases
from acervo.pipelines.db import sql
from acervo.pipelines.matcher import Matcher
from acervo.pipelines.mentions.shared import (
    Dictionary,
    Extractor,
    Found,
    Mention,
    Mode,
    Options,
    Pairs,
    chunk_places,
    store_names,
    texts_todo,
)
from acervo.pipelines.names import display, entity_id, words
from acervo.pipelines.run import Run

NLP_MIN_CORPUS = 20  # below this many chunks, no candidate is too frequent to be an entity
MID_SHARE = 0.5  # a one-word candidate is a name when capitalised mid-sentence at least this share of the
                 # times the corpus writes it so or in lower case (else a word capitalised by its place)
LOWERCASE_SHARE = 0.1  # a name (not a single capitalised word) seeds a lower-case question when the corpus
                       # writes its word in lower case at most this share of the times it writes it


class Candidate(NamedTuple):
    """A stored candidate of a chunk (mentions_nlp.chunk_candidates_todo)."""

    chunk_id: str
    entity_id: str
    name: str


def extract(run: Run, extractor: Extractor) -> None:
    """Find and store the candidates of every chunk (its text and its document's title) that has none stored
    yet; forget gone chunks'. When `extractor` differs from the one the stored candidates came from, every
    chunk is extracted again."""
    con = run.con
    if run.get("candidates") != f"{extractor.name}:{CANDIDATES_VERSION}":
        con.execute(sql("mentions_nlp.candidates_reset"))
        run.put("candidates", f"{extractor.name}:{CANDIDATES_VERSION}")
    con.execute(sql("mentions_nlp.candidates_gone"))
    if run.fanout:
        run.spread("mentions_nlp.shard_unextracted", candidate_rows, {"extractor": extractor}, "chunk_candidates",
                   replace=True)
    elif todo := con.execute(sql("mentions_nlp.chunks_unextracted")).fetchall():
        run.insert("chunk_candidates", candidate_rows(todo, extractor), replace=True)


def candidate_rows(todo: list[tuple[str, str, str]], extractor: Extractor) -> list[dict[str, Any]]:
    """The chunk_candidates rows of the chunks `todo` (chunk_id, text, its document's title), found by `extractor`
    in each text and title (a shard's work too)."""
    find = extractor.load()
    found_in = find([text for _, text, _ in todo])
    titles = sorted({title for _, _, title in todo})
    title_names = dict(zip(titles, (found for found, _ in find(titles)), strict=True))
    return [candidate_row(cid, text, title, title_names[title], found)
            for (cid, text, title), found in zip(todo, found_in, strict=True)]


def candidate_row(chunk_id: str, text: str, title: str, titled: list[str], found: Found) -> dict[str, Any]:
    """The chunk_candidates row of a chunk (`chunk_id`, `text`, its document's `title`) from the names its title
    holds (`titled`) and what the extractor `found` in its text (names, acronym definitions): the names, the
    title's first (a document is about what its title names), each once; how the text writes its words."""
    names, defined = found
    return {"chunk_id": chunk_id, "title": title,
            "names": [{"entity_id": entity_id(n), "name": display(n)} for n in dict.fromkeys(titled + names)],
            "acronyms": [{"acronym": entity_id(a), "expansion": entity_id(e)} for a, e in dict.fromkeys(defined)],
            "words": [{"word": w, "lower": lo, "mid": mid, "other": other} for w, lo, mid, other in word_cases(text)],
            "mid_names": list(dict.fromkeys(entity_id(n) for n in mid_sentence(text)))}


def _names(run: Run, options: Options) -> Dictionary:
    """Decide which candidates become entities (candidate_decisions), and name each with its spellings and
    those of its acronyms and plurals; a plural of a common word is decided on its own."""
    con = run.con
    con.execute(sql("mentions_nlp.variants"))
    limits = {"min_chunks": options.min_chunks, "max_share": options.max_share, "min_corpus": NLP_MIN_CORPUS,
              "mid_share": MID_SHARE, "lowercase_share": LOWERCASE_SHARE}
    con.execute(sql("mentions_nlp.decisions"), limits)
    if con.execute(sql("mentions_nlp.common_plurals")).fetchall():  # decided again, each on its own
        con.execute(sql("mentions.decisions_clear"))
        con.execute(sql("mentions_nlp.decisions"), limits)
    rows = con.execute(sql("mentions_nlp.dictionary")).fetchall()
    found = {(eid, name): n for eid, name, n in rows}
    kept = {eid for eid, _ in found}
    for _, name, canonical in con.execute(sql("mentions_nlp.variant_names")).fetchall():
        if canonical in kept:  # the variant's spelling is one more name of its entity
            found.setdefault((canonical, name), 0)
    store_names(run, found)
    return Dictionary([])


def _touched(run: Run, entered: Pairs, left: Pairs, batch: int) -> set[str]:
    """Stored candidates are matched, so SQL finds the chunks with a changed entity among them."""
    run.ids("mentions.renamed", {eid for eid, _ in entered | left})
    return {cid for (cid,) in run.con.execute(sql("mentions_nlp.chunks_touched")).fetchall()}


def _mentions(run: Run, options: Options, selective: bool) -> Iterator[Mention]:
    """Each chunk (mentions_matched) mentions the entities among its stored candidates, in the windows where
    their names are found again (a candidate named by the title, or not found again in the text: the whole
    chunk)."""
    con = run.con
    kept = {eid for (eid,) in con.execute(sql("mentions_nlp.names_kept")).fetchall()}
    rows = [c for c in map(Candidate._make, con.execute(sql("mentions_nlp.chunk_candidates_todo")).fetchall())
            if c.entity_id in kept]
    if options.window == "chunk":
        yield from ((c.entity_id, c.chunk_id, ()) for c in rows)
        return
    spell = cache(words)  # a run's candidate names are tokenised once, however often met
    texts = {cid: (text, title) for cid, text, title in texts_todo(run)}
    for cid, group in itertools.groupby(rows, key=attrgetter("chunk_id")):
        found = [(c.name, c.entity_id) for c in group]
        matcher = Matcher(found, spell=spell)
        text, title = texts[cid]
        places, titled = chunk_places(matcher, text, options.window), matcher.find(title)
        for eid in sorted({eid for _, eid in found}):
            yield eid, cid, () if eid in titled else places.get(eid, ())


def _extractor(options: Options) -> Extractor:
    """The candidates of each text, from the text alone (pipelines.candidates.candidates)."""
    return Extractor("nlp", lambda: lambda texts: [candidates(text) for text in texts])


MODE = Mode(_names, _extractor, _mentions, _touched)
