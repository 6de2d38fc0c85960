"""Stage `mentions`: which entities each chunk mentions, by one of the modes of MODES (a module each).

Writes mentions, entities, entity_aliases, names (the dictionary matched with), chunk_state,
chunk_folded, the gazetteer's rejected lines and the rejected titles, and in modes nlp and spacy
chunk_candidates and candidate_decisions (why each candidate became an entity or not, which `acervo entities`
reads: pipelines.stats.decisions).
"""

import hashlib
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from acervo.pipelines.candidates import VERSION as CANDIDATES_VERSION
from acervo.pipelines.db import sql
from acervo.pipelines.mentions import gazetteer, given, nlp, spacy, titles
from acervo.pipelines.mentions.shared import PROBE_BATCH, SELECTIVE, Dictionary, Mode, Options, Pairs
from acervo.pipelines.names import fold
from acervo.pipelines.run import Run
from acervo.pipelines.runs import SKIPPED, Work
from acervo.pipelines.settings import EdgeWindow, MentionMode, MentionSetting

READS = ("documents", "chunks")  # chunk texts; documents' titles and given entities
KEY = "mentions"  # index_state key of what the stored mentions were found with (MentionSetting, as JSON)
VERSION = "decisions-5"  # how mentions are decided (5: names match on words without marks, and on pairs of Thai,
# Lao, Myanmar, Khmer letters): a change matches every chunk again and runs the stages after it again
MODES: dict[str, Mode] = {"given": given.MODE, "gazetteer": gazetteer.MODE, "titles": titles.MODE, "nlp": nlp.MODE,
                          "spacy": spacy.MODE}


def touched(run: Run, mode: MentionMode, entered: Pairs, *, left: Pairs = frozenset(),
            batch: int = PROBE_BATCH) -> set[str]:
    """Chunks where the (entity_id, name) pairs that `entered` or `left` the dictionary can change what
    matches, as the mode finds them (none in mode given)."""
    find = MODES[mode].touched
    return set() if find is None else find(run, entered, left, batch)


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
    setting = _setting(options, extractor.name if extractor else "")
    if run.unchanged(READS, KEY, setting.model_dump_json()):
        return SKIPPED
    if extractor:
        with run.transaction():
            nlp.extract(run, extractor)
    with run.transaction():  # names_next: every (entity_id, name) the mode knows, with its weight and tokens
        run.con.execute(sql("mentions.dictionary_new"))
        run.con.execute(sql("mentions.decisions_clear"))
        found_names = spec.dictionary(run, options)
    todo = _todo(run, setting)
    con = run.con
    with run.transaction():
        if spec.folds:  # the folded text is what `shared.probed` reads
            _fold(run, todo.full, todo.rematch)
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
        # a run that rejected titles records so: no run computes that setting, so the next does not skip
        run.put(KEY, setting.model_copy(update={"recheck": found_names.recheck}).model_dump_json())
        _rejected(run, found_names)
    kept = sum(con.execute(sql("mentions.sizes")).fetchone()) - n_found - written
    return Work(todo.n_chunks, kept, n_found + written, forgotten + removed,
                {"chunks_matched": matched, "entities_touched": affected})


def _setting(options: Options, extractor: str) -> MentionSetting:
    """What the stored mentions were found with, besides the documents and chunks: the mode, its candidate
    `extractor` and the window (another of them matches every chunk again), the versions, the thresholds, and
    the gazetteer file with the digest of its bytes."""
    path = options.gazetteer_path
    digest = ""
    if path is not None and path.is_file():
        with path.open("rb") as data:
            digest = hashlib.file_digest(data, "sha256").hexdigest()
    return MentionSetting(mode=options.mode, extractor=extractor, window=options.window, version=VERSION,
                          candidates=CANDIDATES_VERSION, title_tokens=titles.TITLE_TOKENS,
                          gazetteer=None if path is None else str(path), gazetteer_sha256=digest,
                          nlp_min_chunks=options.min_chunks, nlp_max_share=options.max_share)


def _stored(run: Run) -> MentionSetting | None:
    """What the stored mentions were found with; None when there are none, or they were stored by another version
    of the setting (as any other rule, every chunk is matched again)."""
    try:
        return MentionSetting.model_validate_json(run.get(KEY) or "")
    except ValidationError:
        return None


@dataclass(frozen=True)
class Todo:
    """How many chunks a run must match again before probing (mentions_matched), and how many names entered or left
    the dictionary (names_changed): both are kept in DuckDB, so that a full run holds no set of every chunk or
    name in Python."""

    full: bool  # every chunk is checked (no change log, another rule, or mentions of another version: all matched)
    dirty: int  # chunks whose own inputs changed
    n_chunks: int
    moved: int  # (entity_id, name) pairs that entered or left the dictionary
    rematch: bool  # the stored mentions (and folded texts) were made by another version: every chunk is matched again


def _todo(run: Run, setting: MentionSetting) -> Todo:
    """Which chunks' inputs changed (mentions.mention_expected) and how names_next differs from names."""
    con = run.con
    stored = _stored(run)
    rematch = stored is not None and (stored.version, stored.title_tokens) != (setting.version, setting.title_tokens)
    full = not run.logged or stored is None or stored.rule != setting.rule or rematch
    con.execute(sql("mentions.mention_expected"), {"mode": setting.mode, "window": setting.window, "full": full,
                                                   "extractor": setting.extractor, "rematch": rematch})
    dirty = con.execute(sql("mentions.matched_dirty")).fetchone()[0]
    n_chunks = con.execute(sql("mentions.chunk_count")).fetchone()[0]
    moved = con.execute(sql("mentions.names_changed")).fetchone()[0]
    return Todo(full, dirty, n_chunks, moved, rematch)


def _moved(run: Run) -> tuple[Pairs, Pairs]:
    """The (entity_id, name) pairs that entered the dictionary, and those that left it (names_changed): only these
    can match differently."""
    rows = run.con.execute(sql("mentions.names_moved")).fetchall()
    return {(e, n) for e, n, entered in rows if entered}, {(e, n) for e, n, entered in rows if not entered}


def _fold(run: Run, full: bool, again: bool) -> None:
    """Store the folded text of the chunks that have none (with `full`, of any chunk; else of this run's); with
    `again` (another version folded the stored texts), of every chunk."""
    run.con.execute(sql("mentions.chunk_folded_clear" if again else "mentions.chunk_folded_delete"))
    unfolded = run.con.execute(sql("mentions.chunks_unfolded"), {"full": full}).fetchall()
    run.insert("chunk_folded", ({"chunk_id": cid, "folded": fold(text)} for cid, text in unfolded))


def _write(run: Run) -> tuple[int, int, int]:
    """Store the mentions found (mentions_found, one row per entity and chunk) and the state of the chunks matched
    (mentions_matched), then rewrite the names, entity and aliases of each entity of mentions_affected; return how many
    mention rows were written, and how many entity rows were written and removed."""
    con = run.con
    con.execute(sql("mentions.chunk_state_delete"))
    n_found = con.execute(sql("mentions.found_insert")).fetchone()[0]
    con.execute(sql("mentions.found_drop"))
    con.execute(sql("mentions.chunk_state_update"))
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
