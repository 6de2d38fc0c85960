"""An index remembers its settings: a run uses those of the index's last run, except the ones it was given,
and changes them only when asked, saying which stages that recomputes."""

import os
from pathlib import Path
from typing import Any, NamedTuple

from acervo.pipelines import stats
from acervo.pipelines.db import Connection, reading
from acervo.pipelines.settings import RUN_KNOBS, Requested, Settings

STAGES = ("documents", "chunks", "terms", "mentions", "edges", "communities", "boilerplate", "entity_answers",
          "community_reports", "written_reports", "written_answers", "entity_vectors", "chunk_vectors")
FEEDS = {"documents": ("chunks",), "chunks": ("terms", "mentions", "boilerplate", "chunk_vectors"), "terms": (),
         "mentions": ("edges", "entity_answers"),
         "edges": ("communities",), "communities": ("community_reports",),
         "boilerplate": ("entity_answers", "community_reports"),
         "entity_answers": ("community_reports", "written_answers", "entity_vectors"),
         "community_reports": ("written_reports",), "written_reports": (), "written_answers": (),
         "entity_vectors": (), "chunk_vectors": ()}
FIRST = {"max_document_bytes": "documents", "encoding": "chunks", "chunk_tokens": "chunks",
         "stemmer": "terms",
         "mentions": "mentions", "gazetteer": "mentions", "nlp_min_chunks": "mentions", "nlp_max_share": "mentions",
         "spacy_model": "mentions", "edge_window": "mentions", "edge_min_weight": "edges", "edge_top_k": "edges",
         "max_cluster_size": "communities", "max_levels": "communities", "seed": "communities",
         "resolution": "communities", "answer_max_chars": "entity_answers", "report_max_lines": "community_reports",
         "report_evidence": "community_reports", "embed_url": ("entity_vectors", "chunk_vectors"),
         "embed_model": ("entity_vectors", "chunk_vectors"),
         "llm_url": ("written_reports", "written_answers"), "llm_model": ("written_reports", "written_answers")}
# the first stages each setting's change recomputes; the run knobs (settings.RUN_KNOBS) change no row


class Change(NamedTuple):
    """One setting whose value a run changes."""

    name: str
    old: Any
    new: Any

    def line(self) -> str:
        """`name: old -> new (recomputes ...)` for a person."""
        return f"{self.name}: {self.old!r} -> {self.new!r} (recomputes {', '.join(recomputes([self.name]))})"


class SettingsChanged(ValueError):
    """A run was given settings other than the index's and not allowed to change them."""

    def __init__(self, changes: list[Change]) -> None:
        self.changes = changes
        lines = "\n".join(f"  {c.line()}" for c in changes)
        super().__init__(f"the index was built with other settings:\n{lines}\npass --reconfigure to rebuild "
                         "with the new ones, or leave them out to keep the index's")


def stored(con: Connection) -> Settings | None:
    """The settings of the index's last run; None for an index without runs. Keys this version does not
    know are dropped, and keys a run did not store take their defaults."""
    data = stats.settings(con)
    return None if data is None else Settings.of_run(data)


def built_with(db: Path) -> Settings | None:
    """The settings of the last run of the index file `db`, of any index format (a fresh rebuild of a file of
    another keeps them); None when there is no file or no run yet; ValueError when it is not an acervo index."""
    if not db.exists():
        return None
    with reading(db, any_format=True) as con:
        return stored(con)


def recomputes(names: list[str]) -> list[str]:
    """The stages a change of the settings `names` recomputes, in run order: each one's first stage and
    every stage that reads what those write."""
    todo, seen = [first for n in names for first in _firsts(n)], set()
    while todo:
        stage = todo.pop()
        if stage not in seen:
            seen.add(stage)
            todo += FEEDS[stage]
    return [s for s in STAGES if s in seen]


def _firsts(name: str) -> tuple[str, ...]:
    """The stages a change of setting `name` recomputes first (FIRST names one or several)."""
    first = FIRST[name]
    return (first,) if isinstance(first, str) else first


def changes(old: Settings, new: Settings) -> list[Change]:
    """The settings whose values differ, in field order, the run knobs aside (settings.RUN_KNOBS: they
    change no row); a gazetteer path is the same file however spelt."""
    was, now = old.model_dump(mode="json"), new.model_dump(mode="json")
    return [Change(k, was[k], now[k]) for k in Settings.model_fields
            if k not in RUN_KNOBS and not _same(k, was[k], now[k])]


def _same(name: str, a: Any, b: Any) -> bool:
    """Whether two stored values of setting `name` mean the same (paths are compared absolute and normalised)."""
    if name == "gazetteer" and a is not None and b is not None:
        return os.path.abspath(a) == os.path.abspath(b)
    return a == b


def resolve(was: Settings | None, requested: Requested, *, fresh: bool = False) -> tuple[Settings, list[Change]]:
    """The settings a run uses and what they change of `was` (the index's): the given keys over `was`, or over
    the defaults for a new index. SettingsChanged when they change any and neither `requested.reconfigure`
    nor `fresh` (a rebuild from nothing) allows it. The run knobs (settings.RUN_KNOBS) are not taken from
    `was`: a run's budget, concurrency and timeout are its own, given or the defaults."""
    if was is None:
        return Settings(**requested.given), []
    kept = {k: v for k, v in was.model_dump(mode="json").items() if k not in RUN_KNOBS}
    given = {k: v for k, v in Settings(**requested.given).model_dump(mode="json").items() if k in requested.given}
    new = Settings(**{**kept, **{k: v for k, v in given.items() if k not in kept or not _same(k, kept[k], v)}})
    changed = changes(was, new)
    if changed and not (requested.reconfigure or fresh):
        raise SettingsChanged(changed)
    return new, changed


class Chosen(NamedTuple):
    """A mentions mode chosen for a new index from its source, and why."""

    mode: str
    why: str


def mentions_chosen(source: Path | None, requested: Requested, was: Settings | None) -> tuple[Requested, Chosen | None]:
    """`requested`, with the mentions mode a new index's `source` calls for when none is given (`was`: the index's
    settings, None for a new one): given when a record gives entities, titles when every document has a title of
    its own (a JSONL `title`, a Markdown heading) and no two share one, else nlp, found in the text; with why. An
    index that exists keeps its own mode, and a given one is taken as it is (None: nothing chosen)."""
    if was is not None or "mentions" in requested.given or source is None or not source.exists():
        return requested, None
    from acervo.pipelines import sources  # here: only a new index without --mentions reads its source twice

    max_bytes = Settings(**requested.given).max_document_bytes
    titles: set[str] = set()
    shared = untitled = n = 0
    for doc in sources.read(source, sources.Reading(), max_bytes=max_bytes):
        if doc.entities:
            return _given(requested, Chosen("given", f"record {doc.doc_id!r} of the source gives its entities"))
        n += 1
        title = sources.heading(doc.text) if source.is_dir() else (doc.title if doc.title != doc.doc_id else None)
        untitled += title is None
        shared += title is not None and title.casefold() in titles
        titles.add((title or "").casefold())
    if n and not untitled and not shared:
        return _given(requested, Chosen("titles", f"no record gives entities, and each of the {n} documents has a "
                                                  f"title of its own"))
    lacking = f"{untitled} of {n} documents have no title" if untitled else f"{shared} titles are shared"
    return _given(requested, Chosen("nlp", f"no record gives entities, and {lacking}: names are found in the text"))


def _given(requested: Requested, chosen: Chosen) -> tuple[Requested, Chosen]:
    """`requested` with the mentions mode `chosen` given."""
    return Requested(given={**requested.given, "mentions": chosen.mode}, reconfigure=requested.reconfigure), chosen
