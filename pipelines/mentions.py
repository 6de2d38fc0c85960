"""Stage `mentions`: which entities each chunk mentions, by one of the modes of MODES.

Writes mentions, entities, entity_aliases, names (the dictionary matched with), chunk_state,
chunk_folded, the gazetteer's rejected lines and the rejected titles, and in modes nlp and spacy
chunk_candidates and candidate_decisions (why each candidate became an entity or not, which `acervo entities`
reads: pipelines.stats.decisions).
"""

import hashlib
import itertools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from operator import attrgetter
from pathlib import Path
from typing import Any, NamedTuple

from acervo.pipelines.candidates import VERSION as CANDIDATES_VERSION
from acervo.pipelines.candidates import candidates, mid_sentence, spacy_extractor, word_cases
from acervo.pipelines.db import sql
from acervo.pipelines.matcher import Matcher
from acervo.pipelines.names import CONTROL, display, entity_id, fold, problem, short_form, words
from acervo.pipelines.run import Run
from acervo.pipelines.runs import SKIPPED, Work
from acervo.pipelines.sentences import paragraph_spans, sentences
from acervo.pipelines.settings import EdgeWindow, MentionMode
from acervo.pipelines.sources import Rejection

READS = ("documents", "chunks")  # chunk texts; documents' titles and given entities
KEY = "mentions"  # index_state key of what the stored mentions were found with
Places = dict[str, tuple[int, ...]]  # entity id -> the windows of a chunk that name it; () = the whole chunk
Mention = tuple[str, str, tuple[int, ...]]  # entity id, chunk id, windows
Found = tuple[list[str], list[tuple[str, str]]]  # a text's candidates, and the (acronym, expansion) pairs it defines
WINDOWS = {"paragraph": paragraph_spans, "sentence": sentences}
BETWEEN = "\ue000"  # a private-use character: one token of its own, never part of a name, marks a window's end
VERSION = "decisions-3"  # version of how mentions are decided: a change runs this stage and those after it again
TITLE_TOKENS = "2"  # version of how title_names is derived: a change tokenises every title again
SEPARATOR = "\x1f"  # joins a name's tokens in SQL: white space to text.words, so never inside a token
PAGE = 20_000  # chunks whose texts a run holds at a time while matching names in them
PROBE_BATCH = 200  # names per regex: many more in one overflow RE2's automaton memory
MAX_PROBE_PASSES = 30  # a probe pass scans every chunk's folded text, as matching every chunk again reads every
                       # text: past this many passes (batches of changed names), matching them all costs less
SELECTIVE = 10  # matching under 1/SELECTIVE of the chunks: load only the names their tokens may start
NLP_MIN_CORPUS = 20  # mode nlp: below this many chunks, no candidate is too frequent to be an entity
MID_SHARE = 0.5  # a one-word candidate is a name when capitalised mid-sentence at least this share of the
                 # times the corpus writes it so or in lower case (else a word capitalised by its place)
LOWERCASE_SHARE = 0.1  # a name (not a single capitalised word) seeds a lower-case question when the corpus
                       # writes its word in lower case at most this share of the times it writes it
RECHECK = "\nrecheck rejected titles"  # ends the stored setting after a run that rejected titles: no run computes
                                       # it, so the next one does not skip and records them again


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
    touched: Callable[[Run, set[tuple[str, str]], set[tuple[str, str]], int], set[str]] | None
    folds: bool = False  # chunks' folded texts are stored, which `_probed` reads


def gazetteer(path: Path) -> tuple[list[tuple[str, list[str]]], list[Rejection]]:
    """(label, aliases) entries of a gazetteer file, and a rejection for each bad line.

    A `.jsonl` file holds {"label": ..., "aliases": [...]} objects; any other file one name per line.
    """
    entries, bad = [], []
    src = str(path)
    for number, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
            if path.suffix.lower() == ".jsonl":
                data = json.loads(line)
                label, aliases = data["label"], data.get("aliases", [])
                if not isinstance(label, str) or not isinstance(aliases, list) \
                        or not all(isinstance(a, str) for a in aliases):
                    raise TypeError("label must be a string and aliases a list of strings")
            else:
                label, aliases = line.strip(), []
        except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as err:
            bad.append(Rejection(src, number, "invalid_entity", f"unreadable gazetteer line: {err}"))
            continue
        problems = [(n, problem(n)) for n in [label, *aliases]]
        for name, why in problems:
            if why:
                bad.append(Rejection(src, number, "invalid_entity", f"entity {name!r} {why}"))
        if not problems[0][1]:
            entries.append((display(label), [display(a) for a, why in problems[1:] if not why]))
    return entries, bad


def _store_names(run: Run, found: dict[tuple[str, str], int]) -> None:
    """Write the (entity_id, name) -> weight pairs `found` into names_next, with each name's tokens (what
    text and questions are matched by)."""
    run.insert("names_next", ({"entity_id": e, "name": n, "weight": w, "words": _joined(words(n))}
                               for (e, n), w in found.items()))


def _given_names(run: Run, options: Options) -> Dictionary:
    """Mode given: the labels the documents list, each weighted by how many documents list it."""
    rows = run.con.execute(sql("mentions.names_given")).fetchall()
    _store_names(run, {(eid, label): n for eid, label, n in rows})
    return Dictionary([])


def _gazetteer_names(run: Run, options: Options) -> Dictionary:
    """Mode gazetteer: each entry's label (weight 1) and aliases (weight 0), with their tokens."""
    if options.gazetteer_path is None:
        raise ValueError("mentions mode 'gazetteer' needs a gazetteer file (--gazetteer)")
    entries, rejected = gazetteer(options.gazetteer_path)
    found = {}
    for label, aliases in entries:
        eid = entity_id(label)
        for alias in aliases:
            found.setdefault((eid, alias), 0)
        found[(eid, label)] = 1
    _store_names(run, found)
    return Dictionary(rejected, str(options.gazetteer_path))


def _title_names(run: Run, options: Options) -> Dictionary:
    """Mode titles: each document's name and its short form (mentions.names_titles), from title_names; a name with a
    control character names nothing and is rejected, with its document's file and line."""
    bad = titles_tokenised(run)
    run.con.execute(sql("mentions.names_titles"))
    rows = run.con.execute(sql("mentions.titles_rejected"), {"names": bad}).fetchall() if bad else []
    return Dictionary([Rejection(source, line, "invalid_entity", f"title {name!r} {problem(name)}", doc_id)
                       for source, line, doc_id, name in rows], recheck=bool(rows))


def _candidate_names(run: Run, options: Options) -> Dictionary:
    """Modes nlp and spacy: decide which candidates become entities (candidate_decisions), and name each
    with its spellings and those of its acronyms and plurals."""
    con = run.con
    con.execute(sql("mentions.nlp_variants"))
    con.execute(sql("mentions.nlp_decisions"), {"min_chunks": options.min_chunks, "max_share": options.max_share,
                                                "min_corpus": NLP_MIN_CORPUS, "mid_share": MID_SHARE,
                                                "lowercase_share": LOWERCASE_SHARE})
    rows = con.execute(sql("mentions.nlp_dictionary")).fetchall()
    found = {(eid, name): n for eid, name, n in rows}
    kept = {eid for eid, _ in found}
    for _, name, canonical in con.execute(sql("mentions.nlp_variant_names")).fetchall():
        if canonical in kept:  # the variant's spelling is one more name of its entity
            found.setdefault((canonical, name), 0)
    _store_names(run, found)
    return Dictionary([])


def titles_tokenised(run: Run) -> list[str]:
    """Mode titles: bring title_names in line with the names of the documents' entities (their titles, a
    shared title with each document's id: mentions.document_names), tokenising only new ones; return the names
    with a control character, which are left out (and so come back in every run)."""
    con = run.con
    if run.get("title_names") != TITLE_TOKENS:
        con.execute(sql("mentions.title_names_reset"))
        run.put("title_names", TITLE_TOKENS)
    con.execute(sql("mentions.document_names"))
    con.execute(sql("mentions.title_names_delete"))
    untokenised = [t for (t,) in con.execute(sql("mentions.titles_untokenised")).fetchall()]
    new = [t for t in untokenised if not CONTROL.search(t)]
    shorts = [short_form(t) for t in new]
    run.insert("title_names", (
        {"title": t, "entity_id": entity_id(t), "words": _joined(words(t)), "short": short,
         "short_words": _joined(words(short))} for t, short in zip(new, shorts, strict=True)))
    return [t for t in untokenised if CONTROL.search(t)]


def dictionary(run: Run, options: Options) -> Dictionary:
    """Fill names_next with every (entity_id, name) the mode knows and its weight (the label is the
    heaviest name), with the name's tokens where the mode matches text."""
    run.con.execute(sql("mentions.dictionary_new"))
    run.con.execute(sql("mentions.decisions_clear"))
    return MODES[options.mode].dictionary(run, options)


def _joined(tokens: tuple[str, ...]) -> str:
    """Tokens as one string for SQL (see SEPARATOR)."""
    return SEPARATOR.join(tokens)


def touched(run: Run, mode: MentionMode, entered: set[tuple[str, str]], *,
            left: set[tuple[str, str]] = frozenset(), batch: int = PROBE_BATCH) -> set[str]:
    """Chunks where the (entity_id, name) pairs that `entered` or `left` the dictionary can change what
    matches, as the mode finds them (none in mode given)."""
    find = MODES[mode].touched
    return set() if find is None else find(run, entered, left, batch)


def _touched_candidates(run: Run, entered: set[tuple[str, str]], left: set[tuple[str, str]],
                        batch: int) -> set[str]:
    """Modes nlp and spacy match stored candidates, so SQL finds the chunks with a changed entity among them."""
    run.ids("mentions.renamed", {eid for eid, _ in entered | left})
    return {cid for (cid,) in run.con.execute(sql("mentions.chunks_touched_nlp")).fetchall()}


def _probed(run: Run, entered: set[tuple[str, str]], left: set[tuple[str, str]], batch: int) -> set[str]:
    """Modes matching text: a name that left can change only the chunks that mention its entity (matching is
    leftmost-longest: nothing changes where it was not the one matched; mentions.chunks_naming); for a
    name that entered, DuckDB's linear-time regex engine finds the chunks whose folded text may hold it
    (its tokens, white space allowed between them), `batch` names a pass, and the exact token-sequence
    test runs on those.
    """
    con = run.con
    found = set()
    if run.ids("mentions.left", {eid for eid, _ in left}):
        found = {cid for (cid,) in con.execute(sql("mentions.chunks_naming")).fetchall()}
    probed = {name for _, name in entered}
    if len(probed) > MAX_PROBE_PASSES * batch:
        return {cid for (cid,) in con.execute(sql("mentions.chunks_all")).fetchall()}
    spelled = [r"\s*".join(re.escape(t) for t in words(name)) for name in sorted(probed)]
    exact = Matcher((name, name) for name in probed)
    for start in range(0, len(spelled), batch):
        pattern = "|".join(spelled[start : start + batch])
        found |= {cid for cid, text in con.execute(sql("mentions.chunks_probed"), {"pattern": pattern}).fetchall()
                  if exact.find(text)}
    return found


def extract(run: Run, extractor: Extractor) -> int:
    """Modes nlp and spacy: find and store the candidates of every chunk (its text and its document's title)
    that has none stored yet; forget gone chunks'. When `extractor` differs from the one the stored
    candidates came from, every chunk is extracted again."""
    con = run.con
    if run.get("candidates") != f"{extractor.name}:{CANDIDATES_VERSION}":
        con.execute(sql("mentions.candidates_reset"))
        run.put("candidates", f"{extractor.name}:{CANDIDATES_VERSION}")
    con.execute(sql("mentions.candidates_gone"))
    todo = con.execute(sql("mentions.chunks_unextracted")).fetchall()
    if not todo:
        return 0
    find = extractor.load()
    found_in = find([text for _, text, _ in todo])
    titles = sorted({title for _, _, title in todo})
    title_names = dict(zip(titles, (found for found, _ in find(titles)), strict=True))
    rows = [candidate_row(cid, text, title, title_names[title], found)
            for (cid, text, title), found in zip(todo, found_in, strict=True)]
    return run.insert("chunk_candidates", rows, replace=True)


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


def _nlp(texts: list[str]) -> list[Found]:
    """Mode nlp: the candidates of each text, from the text alone (pipelines.candidates.candidates)."""
    return [candidates(text) for text in texts]


def run(run: Run, *, mode: MentionMode, gazetteer_path: Path | None = None, nlp_min_chunks: int = 2,
        nlp_max_share: float = 0.5, spacy_model: str = "en_core_web_sm", window: EdgeWindow = "chunk") -> Work:
    """Bring `mentions`, `entities`, `entity_aliases` and `names` in line with the chunks and the dictionary.

    A chunk is matched again only when it is new, its own inputs changed (its document's given
    entities or title), it contains a name that entered the dictionary (leftmost-longest matching
    means a new name can also hide a shorter one), or it mentions the entity of a name that left (only
    where that name was the one matched can its absence change anything). Only the entities whose
    mentions or names changed are rewritten. With a `window` other than "chunk", each mention also
    records the paragraphs or sentences of the chunk that name the entity, so that edges count only those.
    Work counts the rows of mentions and entities (what later stages read) kept, written and removed.
    """
    options = Options(mode, gazetteer_path, nlp_min_chunks, nlp_max_share, spacy_model, window)
    spec = MODES[mode]
    extractor = spec.extractor(options) if spec.extractor else None
    rule = f"{mode}:{extractor.name if extractor else ''}:{window}"  # another rule matches every chunk again
    setting = _setting(rule, options)
    if run.unchanged(READS, KEY, setting):
        return SKIPPED
    if extractor:
        with run.transaction():
            extract(run, extractor)
    with run.transaction():
        found_names = dictionary(run, options)
    todo = _todo(run, options, extractor, rule)
    con = run.con
    with run.transaction():
        if spec.folds:  # the folded text is what `_probed` reads
            _fold(run, todo.full)
        matched = todo.dirty
        if spec.touched and todo.moved and matched < todo.n_chunks:
            run.ids("mentions.matched_add", spec.touched(run, *_moved(run), PROBE_BATCH))
            matched = con.execute(sql("mentions.matched_count")).fetchone()[0]
        con.execute(sql("mentions.found"))
        if matched:  # streamed to a file and read into mentions_found: a run holds a page of texts, not the corpus
            mentions = spec.find(run, options, matched * SELECTIVE < todo.n_chunks)
            run.insert("mentions_found", ({"entity_id": e, "chunk_id": c, "windows": list(w)} for e, c, w in mentions))
        forgotten = con.execute(sql("mentions.mentions_delete")).fetchone()[0]
        affected = con.execute(sql("mentions.affected")).fetchone()[0]
        n_found, written, removed = _write(run)
        run.put(KEY, setting + RECHECK if found_names.recheck else setting)
        _rejected(run, found_names)
    kept = con.execute(sql("mentions.mention_count")).fetchone()[0] - n_found \
        + con.execute(sql("mentions.entity_count")).fetchone()[0] - written
    return Work(todo.n_chunks, kept, n_found + written, forgotten + removed,
                {"chunks_matched": matched, "entities_touched": affected})


def _setting(rule: str, options: Options) -> str:
    """What the stored mentions were found with, besides the documents and chunks: the `rule` (the first
    line: another one matches every chunk again), the versions, the thresholds, and the gazetteer file
    with the digest of its bytes."""
    path = options.gazetteer_path
    digest = ""
    if path is not None and path.is_file():
        with path.open("rb") as data:
            digest = hashlib.file_digest(data, "sha256").hexdigest()
    inputs = {"version": VERSION, "candidates": CANDIDATES_VERSION, "title_tokens": TITLE_TOKENS,
              "gazetteer": None if path is None else str(path), "gazetteer_sha256": digest,
              "nlp_min_chunks": options.min_chunks, "nlp_max_share": options.max_share}
    return f"{rule}\n{json.dumps(inputs, sort_keys=True)}"


@dataclass(frozen=True)
class Todo:
    """How many chunks a run must match again before probing (mentions_matched), and how many names entered or left
    the dictionary (names_changed): both are kept in DuckDB, so that a full run holds no set of every chunk or
    name in Python."""

    full: bool  # every chunk is checked (no change log, or another rule)
    dirty: int  # chunks whose own inputs changed
    n_chunks: int
    moved: int  # (entity_id, name) pairs that entered or left the dictionary


def _todo(run: Run, options: Options, extractor: Extractor | None, rule: str) -> Todo:
    """Which chunks' inputs changed (mentions.mention_expected) and how names_next differs from names."""
    con = run.con
    full = not run.logged or (run.get(KEY) or "").partition("\n")[0] != rule
    con.execute(sql("mentions.mention_expected"), {"mode": options.mode, "window": options.window, "full": full,
                                                   "extractor": extractor.name if extractor else ""})
    dirty = con.execute(sql("mentions.matched_dirty")).fetchone()[0]
    n_chunks = con.execute(sql("mentions.chunk_count")).fetchone()[0]
    moved = con.execute(sql("mentions.names_changed")).fetchone()[0]
    return Todo(full, dirty, n_chunks, moved)


def _moved(run: Run) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """The (entity_id, name) pairs that entered the dictionary, and those that left it (names_changed): only these
    can match differently."""
    rows = run.con.execute(sql("mentions.names_moved")).fetchall()
    return {(e, n) for e, n, entered in rows if entered}, {(e, n) for e, n, entered in rows if not entered}


def _fold(run: Run, full: bool) -> None:
    """Store the folded text of the chunks that have none (with `full`, of any chunk; else of this run's)."""
    run.con.execute(sql("mentions.chunk_folded_delete"))
    unfolded = run.con.execute(sql("mentions.chunks_unfolded"), {"full": full}).fetchall()
    run.insert("chunk_folded", ({"chunk_id": cid, "folded": fold(text)} for cid, text in unfolded))


def _write(run: Run) -> tuple[int, int, int]:
    """Store the mentions found (mentions_found, one row per entity and chunk) and the state of the chunks matched
    (mentions_matched), then rewrite the names, entity and aliases of each entity of mentions_rewritten; return how many
    mention rows were written, and how many entity rows were written and removed."""
    con = run.con
    con.execute(sql("mentions.chunk_state_delete"))
    n_found = con.execute(sql("mentions.found_insert")).fetchone()[0]
    con.execute(sql("mentions.found_drop"))
    con.execute(sql("mentions.chunk_state_update"))
    con.execute(sql("mentions.rewritten"))
    run.note("mentions.changed_entities")
    con.execute(sql("mentions.names_delete"))
    con.execute(sql("mentions.names_update"))
    removed = con.execute(sql("mentions.entities_delete")).fetchone()[0]
    written = con.execute(sql("mentions.entities_insert")).fetchone()[0]
    con.execute(sql("mentions.entity_aliases_delete"))
    con.execute(sql("mentions.entity_aliases_insert"))
    return n_found, written, removed


def _rejected(run: Run, found: Dictionary) -> None:
    """Replace the rejected lines of the file the dictionary was read from, and the titles rejected before (mode
    titles finds them again in every run)."""
    if found.source is not None:
        run.con.execute(sql("mentions.rejected_delete"), {"source": found.source})
    run.con.execute(sql("mentions.titles_rejected_delete"))
    run.insert("rejected", (r.__dict__ for r in found.rejected))


class Candidate(NamedTuple):
    """A stored candidate of a chunk (mentions.chunk_candidates_todo)."""

    chunk_id: str
    entity_id: str
    name: str


def _given_mentions(run: Run, options: Options, selective: bool) -> Iterator[Mention]:
    """Mode given: each chunk (mentions_matched) mentions, as a whole, every entity its document lists."""
    yield from ((eid, cid, ()) for eid, cid in run.con.execute(sql("mentions.given_mentions")).fetchall())


def _candidate_mentions(run: Run, options: Options, selective: bool) -> Iterator[Mention]:
    """Modes nlp and spacy: each chunk (mentions_matched) mentions the entities among its stored candidates,
    in the windows where their names are found again (a candidate named by the title, or not found again
    in the text: the whole chunk)."""
    con = run.con
    kept = {eid for (eid,) in con.execute(sql("mentions.names_kept")).fetchall()}
    rows = [c for c in map(Candidate._make, con.execute(sql("mentions.chunk_candidates_todo")).fetchall())
            if c.entity_id in kept]
    if options.window == "chunk":
        yield from ((c.entity_id, c.chunk_id, ()) for c in rows)
        return
    spell = cache(words)  # a run's candidate names are tokenised once, however often met
    texts = {cid: (text, title) for cid, text, title in _texts_todo(run)}
    for cid, group in itertools.groupby(rows, key=attrgetter("chunk_id")):
        found = [(c.name, c.entity_id) for c in group]
        matcher = Matcher(found, spell=spell)
        text, title = texts[cid]
        places, titled = chunk_places(matcher, text, options.window), matcher.find(title)
        for eid in sorted({eid for _, eid in found}):
            yield eid, cid, () if eid in titled else places.get(eid, ())


def _text_mentions(run: Run, options: Options, selective: bool) -> Iterator[Mention]:
    """Modes gazetteer and titles: the dictionary's names found in the text of each chunk (mentions_matched);
    `selective`: few chunks, so only the names that start with one of their tokens are loaded."""
    con = run.con
    todo = list(_texts_todo(run)) if selective else _texts_todo(run)
    run.ids("mentions.tokens", {token for _, text, _ in todo for token in words(text)} if selective else ())
    matcher = Matcher(con.execute(sql("mentions.names_matchable"), {"all": not selective}).fetchall(),
                            spell=_split)
    for cid, text, _ in todo:
        for eid, where in chunk_places(matcher, text, options.window).items():
            yield eid, cid, where


def _texts_todo(run: Run) -> Iterator[tuple[str, str, str]]:
    """The chunks to be matched again (mentions_matched), with their text and document title, in chunk id order,
    read PAGE at a time."""
    after = None
    while page := run.con.execute(sql("mentions.chunk_texts_todo"), {"after": after, "n": PAGE}).fetchall():
        yield from page
        after = page[-1][0]


def _title_mentions(run: Run, options: Options, selective: bool) -> Iterator[Mention]:
    """Mode titles: the names found in the text, and, as a whole, what the chunk's document is named after
    (its title, unless documents share it: mentions.document_names)."""
    yield from _text_mentions(run, options, selective)
    for cid, name in run.con.execute(sql("mentions.chunk_names_todo")).fetchall():
        if not CONTROL.search(name):  # rejected: no entity (titles_tokenised)
            yield entity_id(name), cid, ()


def _split(words: str) -> tuple[str, ...]:
    """Tokens joined by `_joined`, apart again."""
    return tuple(words.split(SEPARATOR))


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


def _spacy(options: Options) -> Extractor:
    """Mode spacy: the candidates an installed spaCy pipeline finds."""
    return Extractor(f"spacy:{options.spacy_model}", lambda: spacy_extractor(options.spacy_model))


MODES: dict[str, Mode] = {
    "given": Mode(_given_names, None, _given_mentions, None),
    "gazetteer": Mode(_gazetteer_names, None, _text_mentions, _probed, folds=True),
    "titles": Mode(_title_names, None, _title_mentions, _probed, folds=True),
    "nlp": Mode(_candidate_names, lambda options: Extractor("nlp", lambda: _nlp), _candidate_mentions,
                _touched_candidates),
    "spacy": Mode(_candidate_names, _spacy, _candidate_mentions, _touched_candidates),
}
