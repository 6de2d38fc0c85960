"""Stage `mentions`: which entities each chunk mentions (given, gazetteer, titles or nlp mode).

Writes mentions, entities, entity_aliases, names (the dictionary matched with), chunk_state,
chunk_folded, the gazetteer's rejected lines, and in modes nlp and spacy chunk_candidates and
candidate_decisions (why each candidate became an entity or not: `decisions`, `acervo entities --why`).
"""

import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from pathlib import Path

from pipelines.candidates import VERSION as CANDIDATES_VERSION
from pipelines.candidates import mid_sentence, spacy_extractor, word_cases
from pipelines.db import Connection, sql
from pipelines.documents import Rejection
from pipelines.run import Run
from pipelines.runs import Work
from pipelines.settings import EdgeWindow, MentionMode
from pipelines.text import (
    CANDIDATE_MODES,
    Matcher,
    candidates,
    display,
    entity_id,
    fold,
    paragraph_spans,
    problem,
    sentences,
    words,
)

DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")
Spell = Callable[[str], tuple[str, ...]]
Places = dict[str, tuple[int, ...]]  # entity id -> the windows of a chunk that name it; () = the whole chunk
WINDOWS = {"paragraph": paragraph_spans, "sentence": sentences}
BETWEEN = "\ue000"  # a private-use character: one token of its own, never part of a name, marks a window's end
VERSION = "decisions-2"  # version of how mentions are decided: a change runs the stages after documents again
TITLE_TOKENS = "2"  # version of how title_names is derived: a change tokenises every title again
SEPARATOR = "\x1f"  # joins a name's tokens in SQL: white space to text.words, so never inside a token
MAX_PROBED_NAMES = 2000  # more changed names than this: match every chunk again
PROBE_BATCH = 200  # names per regex: 800 in one overflowed RE2's automaton memory (2.0 s, 400 took 0.14 s)
SELECTIVE = 10  # matching under 1/SELECTIVE of the chunks: load only the names their tokens may start
NLP_MIN_CORPUS = 20  # mode nlp: below this many chunks, no candidate is too frequent to be an entity
MID_SHARE = 0.5  # a one-word candidate is a name when capitalised mid-sentence at least this share of the
                 # times the corpus writes it so or in lower case (else a word capitalised by its place)
LOWERCASE_SHARE = 0.1  # a name (not a single capitalised word) seeds a lower-case question when the corpus
                       # writes its word in lower case at most this share of the times it writes it


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


def titles_tokenised(run: Run) -> int:
    """Mode titles: bring title_names in line with the names of the documents' entities (their titles, a
    shared title with each document's id: sql/document_names.sql), tokenising only new ones."""
    con = run.con
    if run.get("title_names") != TITLE_TOKENS:
        con.execute("delete from title_names")
        run.put("title_names", TITLE_TOKENS)
    con.execute(sql("document_names"))
    con.execute(sql("title_names_delete"))
    new = [t for (t,) in con.execute(sql("titles_untokenised")).fetchall()]
    shorts = [DISAMBIGUATION.sub("", t) for t in new]
    return run.insert("title_names", (
        {"title": t, "entity_id": entity_id(t), "words": _joined(words(t)), "short": short,
         "short_words": _joined(words(short))} for t, short in zip(new, shorts, strict=True)))


def dictionary(run: Run, mode: MentionMode, gazetteer_path: Path | None, *, min_chunks: int,
               max_share: float) -> list[Rejection]:
    """Fill names_next with every (entity_id, name) the mode knows and its weight (the label is the
    heaviest name), with the name's tokens where the mode matches text; return the gazetteer's rejects."""
    con = run.con
    con.execute("delete from names_next")
    con.execute("delete from candidate_decisions")
    if mode == "titles":
        titles_tokenised(run)
        con.execute(sql("names_titles"))
        return []
    rejected: list[Rejection] = []
    if mode in CANDIDATE_MODES:
        con.execute(sql("nlp_variants"))
        con.execute(sql("nlp_decisions"), {"min_chunks": min_chunks, "max_share": max_share,
                                           "min_corpus": NLP_MIN_CORPUS, "mid_share": MID_SHARE,
                                           "lowercase_share": LOWERCASE_SHARE})
        rows = con.execute(sql("nlp_dictionary")).fetchall()
        found = {(eid, name): n for eid, name, n in rows}
        kept = {eid for eid, _ in found}
        for _, name, canonical in con.execute("select * from nlp_variants order by all").fetchall():
            if canonical in kept:  # the variant's spelling is one more name of its entity
                found.setdefault((canonical, name), 0)
    elif mode == "given":
        rows = con.execute("select entity_id, label, count(*) from document_entities group by all").fetchall()
        found = {(eid, label): n for eid, label, n in rows}
    else:
        if gazetteer_path is None:
            raise ValueError("mentions mode 'gazetteer' needs a gazetteer file (--gazetteer)")
        entries, rejected = gazetteer(gazetteer_path)
        found = {}
        for label, aliases in entries:
            eid = entity_id(label)
            for alias in aliases:
                found.setdefault((eid, alias), 0)
            found[(eid, label)] = 1
    spelled = mode == "gazetteer"
    run.insert("names_next", ({"entity_id": e, "name": n, "weight": w,
                                "words": _joined(words(n)) if spelled else None}
                               for (e, n), w in found.items()))
    return rejected


def require_decisions(con: Connection) -> None:
    """ValueError, saying how to update it, when the index was made before candidate decisions were stored."""
    if not con.execute(sql("has_decisions")).fetchone()[0]:
        raise ValueError("this index was made by an older acervo, before candidate decisions were stored: "
                         "run `acervo index` on its source once again (no flags needed) to update it")


def decisions(con: Connection, asked: list[str] | None = None, *, top: int = 20,
              rejected: bool = False) -> list[dict[str, object]]:
    """Why candidates became entities or not (modes nlp and spacy): the stored decision about each name in
    `asked` (matched however it is cased; a name no chunk has as a candidate says so), or about the `top`
    candidates seen in most chunks (with `rejected`, only those not kept); each with its counts and `why`,
    a sentence for a person."""
    require_decisions(con)
    ids = None if asked is None else [entity_id(name) for name in asked]
    rows = con.execute(sql("candidate_decisions"), {"ids": ids, "rejected": rejected,
                                                    "top": top if ids is None else len(ids)}).fetchall()
    found = {}
    for eid, name, kept, reason, canonical, n_chunks, n_lower, n_mid, n_other, lowercase in rows:
        found[eid] = {"entity_id": eid, "name": name, "kept": kept, "reason": reason, "canonical": canonical,
                      "n_chunks": n_chunks, "n_lower": n_lower, "n_mid": n_mid, "n_other": n_other,
                      "lowercase": lowercase, "why": _why(eid, reason, kept, canonical, n_chunks, n_lower,
                                                          n_mid, n_other, lowercase)}
    if ids is None:
        return list(found.values())
    missing = {"kept": False, "reason": "none", "canonical": None, "n_chunks": 0, "n_lower": None, "n_mid": None,
               "n_other": None, "lowercase": False,
               "why": "no chunk has it as a candidate: mode nlp finds capitalised word sequences, acronyms and "
                      "code identifiers, without a common word (\"The\", \"However\") that starts a sentence"}
    return [found.get(eid) or {"entity_id": eid, "name": name, **missing}
            for eid, name in dict(zip(ids, asked, strict=True)).items()]


def _why(name: str, reason: str, kept: bool, canonical: str | None, n_chunks: int, n_lower: int, n_mid: int,
         n_other: int, lowercase: bool) -> str:
    """A candidate's decision (candidate_decisions) in a sentence."""
    counts = (f"in lower case {n_lower} times, capitalised in mid-sentence {n_mid}, capitalised elsewhere "
              f"(sentence or line starts, headings) {n_other}")
    cases = f"the corpus writes {'its word least often in lower case' if ' ' in name else 'it'} {counts}"
    if reason == "variant":
        whose = "kept with it" if kept else "left out with it"
        return f"an acronym or plural of {canonical!r}, so one more name of that entity ({whose})"
    if reason == "position":
        return (f"rejected: a common word capitalised by its place, not a name: {cases} (kept only when "
                f"capitalised in mid-sentence at least {MID_SHARE:.0%} of the times it is written so or in "
                f"lower case)")
    if reason == "opening":
        return (f"rejected: written only where a sentence, line or item starts, and its first word is a common "
                f"word capitalised by its place: the corpus writes that word {counts}")
    if reason == "rare":
        return f"rejected: in {n_chunks} chunks, fewer than the index's nlp_min_chunks; {cases}"
    if reason == "frequent":
        return f"rejected: in {n_chunks} chunks, more than the index's nlp_max_share of them; {cases}"
    asked = "; a question naming it in lower case finds it" if lowercase else ""
    return f"kept: a name in {n_chunks} chunks; {cases}{asked}"


def _joined(tokens: tuple[str, ...]) -> str:
    """Tokens as one string for SQL (see SEPARATOR)."""
    return SEPARATOR.join(tokens)


def touched(run: Run, mode: MentionMode, entered: set[tuple[str, str]], *,
            left: set[tuple[str, str]] = frozenset(), batch: int = PROBE_BATCH) -> set[str]:
    """Chunks where the (entity_id, name) pairs that `entered` or `left` the dictionary can change what matches.

    Mode nlp matches stored candidates, so SQL finds the chunks with a changed entity among them.
    Otherwise a name that left can change only the chunks that mention its entity (matching is
    leftmost-longest: nothing changes where it was not the one matched; sql/chunks_naming.sql); for a
    name that entered, DuckDB's linear-time regex engine finds the chunks whose folded text may hold it
    (its tokens, white space allowed between them), `batch` names a pass, and the exact token-sequence
    test runs on those.
    """
    con = run.con
    if mode in CANDIDATE_MODES:
        run.keys("name", {eid for eid, _ in entered | left})
        return {cid for (cid,) in con.execute(sql("chunks_touched_nlp")).fetchall()}
    found = set()
    if run.keys("left", {eid for eid, _ in left}):
        found = {cid for (cid,) in con.execute(sql("chunks_naming")).fetchall()}
    probed = {name for _, name in entered}
    if len(probed) > MAX_PROBED_NAMES:
        return {cid for (cid,) in con.execute("select chunk_id from chunks").fetchall()}
    spelled = [r"\s*".join(re.escape(t) for t in words(name)) for name in sorted(probed)]
    exact = Matcher((name, name) for name in probed)
    for start in range(0, len(spelled), batch):
        pattern = "|".join(spelled[start : start + batch])
        found |= {cid for cid, text in con.execute(sql("chunks_probed"), {"pattern": pattern}).fetchall()
                  if exact.find(text)}
    return found


def extract(run: Run, extractor: str) -> int:
    """Modes nlp and spacy: find and store the candidates of every chunk (its text and its document's title)
    that has none stored yet; forget gone chunks'. `extractor` is "nlp" or "spacy:<pipeline>"; when it
    differs from the one the stored candidates came from, every chunk is extracted again."""
    con = run.con
    if run.get("candidates") != f"{extractor}:{CANDIDATES_VERSION}":
        con.execute("delete from chunk_candidates")
        run.put("candidates", f"{extractor}:{CANDIDATES_VERSION}")
    con.execute("delete from chunk_candidates where chunk_id not in (select chunk_id from chunks)")
    todo = con.execute(sql("chunks_unextracted")).fetchall()
    if not todo:
        return 0
    if extractor == "nlp":
        found_in = [candidates(text) for _, text, _ in todo]
        titled = [candidates(title)[0] for _, _, title in todo]
    else:
        pipeline = spacy_extractor(extractor.removeprefix("spacy:"))
        found_in = pipeline([text for _, text, _ in todo])
        titles = sorted({title for _, _, title in todo})
        title_names = dict(zip(titles, (found for found, _ in pipeline(titles)), strict=True))
        titled = [title_names[title] for _, _, title in todo]
    rows = []
    for (cid, text, title), (found, defined), named in zip(todo, found_in, titled, strict=True):
        spelled = dict.fromkeys(named + found)  # a document is about what its title names
        rows.append({"chunk_id": cid, "title": title,
                     "names": [{"entity_id": entity_id(n), "name": display(n)} for n in spelled],
                     "acronyms": [{"acronym": entity_id(a), "expansion": entity_id(e)}
                                  for a, e in dict.fromkeys(defined)],
                     "words": [{"word": w, "lower": lo, "mid": mid, "other": other}
                               for w, lo, mid, other in word_cases(text)],
                     "mid_names": list(dict.fromkeys(entity_id(n) for n in mid_sentence(text)))})
    return run.insert("chunk_candidates", rows)


def run(run: Run, *, mode: MentionMode, gazetteer_path: Path | None = None, nlp_min_chunks: int = 2,
        nlp_max_share: float = 0.5, spacy_model: str = "en_core_web_sm", window: EdgeWindow = "chunk") -> Work:
    """Bring `mentions`, `entities`, `entity_aliases` and `names` in line with the chunks and the dictionary.

    A chunk is matched again only when it is new, its own inputs changed (its document's given
    entities or title), it contains a name that entered the dictionary (leftmost-longest matching
    means a new name can also hide a shorter one), or it mentions the entity of a name that left (only
    where that name was the one matched can its absence change anything). Only the entities whose
    mentions or names changed are rewritten. With a `window` other than "chunk", each mention also
    records the paragraphs or sentences of the chunk that name the entity, so that edges count only those.
    """
    con = run.con
    extractor = {"nlp": "nlp", "spacy": f"spacy:{spacy_model}"}.get(mode, "")
    if extractor:
        with run.transaction():
            extract(run, extractor)
    spell = cache(words)  # modes nlp and spacy: a run's candidate names are tokenised once, however often met
    with run.transaction():
        rejected = dictionary(run, mode, gazetteer_path, min_chunks=nlp_min_chunks, max_share=nlp_max_share)
    rule = f"{mode}:{extractor}:{window}"
    full = not run.logged or run.get("mentions") != rule
    con.execute(sql("mention_expected"), {"mode": mode, "extractor": extractor, "window": window, "full": full})
    dirty = {cid for (cid,) in con.execute("select chunk_id from mention_expected where dirty").fetchall()}
    n_chunks = con.execute("select count(*) from chunks").fetchone()[0]
    diff = con.execute(sql("names_diff")).fetchall()
    renamed = {(e, n) for e, n, _, _ in diff}
    entered = {(e, n) for e, n, moved, new in diff if moved and new}  # only these and those that left can match
    left = {(e, n) for e, n, moved, new in diff if moved and not new}  # differently; a new weight only relabels
    with run.transaction():
        if mode in ("gazetteer", "titles"):  # the folded text is what touched() probes
            con.execute(sql("chunk_folded_delete"))
            unfolded = con.execute(sql("chunks_unfolded"), {"full": full}).fetchall()
            run.insert("chunk_folded", ({"chunk_id": cid, "folded": fold(text)} for cid, text in unfolded))
        if mode != "given" and (entered or left) and len(dirty) < n_chunks:
            dirty |= touched(run, mode, entered, left=left)
        run.keys("chunk", dirty)
        found = sorted(_merged(_find(run, mode, bool(dirty), spell, window,
                                     selective=len(dirty) * SELECTIVE < n_chunks)).items())
        forgotten = con.execute(sql("mentions_delete")).fetchall()
        affected = {e for (e,) in forgotten} | {e for (e, _), _ in found} | {e for e, _ in renamed}
        removed = len(forgotten)
        con.execute(sql("chunk_state_delete"))
        run.insert("mentions", ({"entity_id": e, "chunk_id": c, "windows": list(w)} for (e, c), w in found))
        con.execute(sql("chunk_state_update"))
        run.keys("entity", affected)
        run.note("changed_entities")
        con.execute("delete from names where entity_id in (select id from keys where kind = 'entity')")
        con.execute(sql("names_update"))
        con.execute("delete from entities where entity_id in (select id from keys where kind = 'entity')")
        con.execute(sql("entities"))
        con.execute("delete from entity_aliases where entity_id in (select id from keys where kind = 'entity')")
        con.execute(sql("entity_aliases"))
        run.put("mentions", rule)
        if mode == "gazetteer":
            con.execute("delete from rejected where source = ?", [str(gazetteer_path)])
        run.insert("rejected", (r.__dict__ for r in rejected))
    total = con.execute("select count(*) from mentions").fetchone()[0]
    return Work(n_chunks, total - len(found), len(found), removed,
                {"chunks_matched": len(dirty), "entities_touched": len(affected)})


def _find(run: Run, mode: MentionMode, any_chunk: bool, spell: Spell, window: EdgeWindow, *,
          selective: bool = False) -> Iterator[tuple[str, str, tuple[int, ...]]]:
    """(entity_id, chunk_id, windows) of every mention in the chunks listed in keys 'chunk', by the rules of
    `mode`; windows () = the whole chunk (given entities, a document's title, or `window` "chunk")."""
    con = run.con
    if not any_chunk:
        return
    if mode == "given":
        yield from ((eid, cid, ()) for eid, cid in con.execute(sql("given_mentions")).fetchall())
        return
    if mode in CANDIDATE_MODES:
        kept = {eid for (eid,) in con.execute("select distinct entity_id from names_next").fetchall()}
        rows = [row for row in con.execute(sql("chunk_candidates_todo")).fetchall() if row[1] in kept]
        if window == "chunk":
            yield from ((eid, cid, ()) for cid, eid, _ in rows)
            return
        texts = {cid: (text, title) for cid, text, title in con.execute(sql("chunk_texts_todo")).fetchall()}
        for cid, group in itertools.groupby(rows, key=lambda row: row[0]):
            found = [(name, eid) for _, eid, name in group]
            matcher = Matcher(found, spell=spell)
            text, title = texts[cid]
            places, titled = _places(matcher, text, window), matcher.find(title)
            for eid in sorted({eid for _, eid in found}):  # a candidate named by the title, or not found again
                yield eid, cid, () if eid in titled else places.get(eid, ())  # in the text: the whole chunk
        return
    todo = con.execute(sql("chunk_texts_todo")).fetchall()
    if selective:  # few chunks: load only the names that start with one of their tokens
        run.keys("token", {token for _, text, _ in todo for token in words(text)})
    matcher = Matcher(con.execute(sql("names_matchable"), {"all": not selective}).fetchall(), spell=_split)
    named = dict(con.execute(sql("chunk_names_todo")).fetchall()) if mode == "titles" else {}
    for cid, text, _ in todo:
        for eid, where in _places(matcher, text, window).items():
            yield eid, cid, where
        if mode == "titles":  # a document is about what its name names (its title, unless shared)
            yield entity_id(named[cid]), cid, ()


def _split(words: str) -> tuple[str, ...]:
    """Tokens joined by `_joined`, apart again."""
    return tuple(words.split(SEPARATOR))


def _places(matcher: Matcher, text: str, window: EdgeWindow) -> Places:
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


def _merged(mentions: Iterable[tuple[str, str, tuple[int, ...]]]) -> dict[tuple[str, str], tuple[int, ...]]:
    """One row per (entity_id, chunk_id): the union of its windows, or () when one of them is the whole chunk."""
    out: dict[tuple[str, str], tuple[int, ...]] = {}
    for eid, cid, where in mentions:
        known = out.get((eid, cid))
        if known is None:
            out[(eid, cid)] = where
        elif known and where:
            out[(eid, cid)] = tuple(sorted(set(known) | set(where)))
        else:
            out[(eid, cid)] = ()
    return out
