"""Stage `mentions`: which entities each chunk mentions (given, gazetteer or titles mode) -> entities, mentions."""

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from pipelines import names, state
from pipelines.db import Connection, content_hash, insert, keys, sql, transaction
from pipelines.documents import Rejection
from pipelines.runs import Work
from pipelines.settings import MentionMode

DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")


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
                if not isinstance(label, str) or not all(isinstance(a, str) for a in aliases):
                    raise TypeError("label and aliases must be strings")
            else:
                label, aliases = line.strip(), []
        except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as err:
            bad.append(Rejection(src, number, "invalid_entity", f"unreadable gazetteer line: {err}"))
            continue
        problems = [(n, names.problem(n)) for n in [label, *aliases]]
        for name, why in problems:
            if why:
                bad.append(Rejection(src, number, "invalid_entity", f"entity {name!r} {why}"))
        if not problems[0][1]:
            entries.append((names.display(label), [names.display(a) for a, why in problems[1:] if not why]))
    return entries, bad


def title_entries(titles: Iterable[str]) -> list[tuple[str, list[str]]]:
    """Titles as gazetteer entries; 'Name (disambiguation)' also answers to 'Name' when no other title does."""
    titles = sorted(set(titles))
    short = {t: DISAMBIGUATION.sub("", t) for t in titles}
    claims = Counter(names.words(s) for s in short.values())
    taken = {names.words(t) for t in titles}
    return [(t, [short[t]] if short[t] and short[t] != t and claims[names.words(short[t])] == 1
             and names.words(short[t]) not in taken else []) for t in titles]


def dictionary(con: Connection, mode: MentionMode, gazetteer_path: Path | None) -> tuple[dict[tuple[str, str], int],
                                                                                   list[Rejection]]:
    """Every (entity_id, name) the mode knows, with its weight (the label is the heaviest name)."""
    if mode == "given":
        rows = con.execute("select entity_id, label, count(*) from document_entities group by all").fetchall()
        return {(eid, label): n for eid, label, n in rows}, []
    if mode == "gazetteer":
        if gazetteer_path is None:
            raise ValueError("mentions mode 'gazetteer' needs a gazetteer file (--gazetteer)")
        entries, rejected = gazetteer(gazetteer_path)
    else:
        entries, rejected = title_entries(t for (t,) in con.execute("select title from documents").fetchall()), []
    found: dict[tuple[str, str], int] = {}
    for label, aliases in entries:
        eid = names.entity_id(label)
        for alias in aliases:
            found.setdefault((eid, alias), 0)
        found[(eid, label)] = 1
    return found, rejected


def expected_state(mode: MentionMode, title: str, given: list[str]) -> str:
    """What a chunk's mentions depend on besides its text and the dictionary."""
    return content_hash(mode, title if mode == "titles" else "", *(given if mode == "given" else []))


def touched(texts: dict[str, str], changed: set[str]) -> set[str]:
    """Chunks whose text may hold one of the `changed` names: each name's longest token occurs in it."""
    probes = {max(names.words(name), key=len) for name in changed}
    pattern = re.compile("|".join(re.escape(p) for p in sorted(probes, key=len, reverse=True)))
    return {cid for cid, text in texts.items() if pattern.search(names.fold(text))}


def run(con: Connection, *, mode: MentionMode, gazetteer_path: Path | None = None) -> Work:
    """Bring `mentions`, `entities`, `entity_aliases` and `names` in line with the chunks and the dictionary.

    A chunk is matched again only when it is new, its own inputs changed (its document's given
    entities or title), or it contains a name that entered or left the dictionary (leftmost-longest
    matching means a new name can also hide a shorter one).
    """
    current, rejected = dictionary(con, mode, gazetteer_path)
    previous = {(e, n): w for e, n, w in con.execute("select entity_id, name, weight from names").fetchall()}
    full = state.get(con, "mentions") != mode
    chunks = con.execute(sql("mention_inputs")).fetchall()
    dirty = {cid for cid, title, given, stored in chunks if full or stored != expected_state(mode, title, given)}
    changed = {n for (_, n) in current.keys() ^ previous.keys()}
    if mode != "given" and changed and not full:
        texts = dict(con.execute("select chunk_id, text from chunks").fetchall())
        dirty |= touched(texts, changed)
    titles = {cid: title for cid, title, _, _ in chunks}
    keys(con, "chunk", dirty)
    found = sorted(set(_find(con, mode, bool(dirty), current, titles)))
    with transaction(con):
        removed = con.execute(sql("mentions_delete")).fetchone()[0]  # DuckDB returns the count
        con.execute("delete from chunk_state where chunk_id not in (select chunk_id from chunks)")
        insert(con, "mentions", ({"entity_id": e, "chunk_id": c} for e, c in found))
        insert(con, "chunk_state", ({"chunk_id": cid, "mention_hash": expected_state(mode, title, given)}
                                    for cid, title, given, _ in chunks if cid in dirty))
        if current != previous:
            con.execute("delete from names")
            insert(con, "names", ({"entity_id": e, "name": n, "weight": w} for (e, n), w in sorted(current.items())))
        con.execute("delete from entities")
        con.execute(sql("entities"))
        con.execute("delete from entity_aliases")
        con.execute(sql("entity_aliases"))
        insert(con, "rejected", (r.__dict__ for r in rejected))
        state.put(con, "mentions", mode)
    total = con.execute("select count(*) from mentions").fetchone()[0]
    return Work(len(chunks), total - len(found), len(found), removed, {"chunks_matched": len(dirty)})


def _find(con: Connection, mode: MentionMode, any_chunk: bool, current: dict[tuple[str, str], int],
          titles: dict[str, str]) -> Iterator[tuple[str, str]]:
    """(entity_id, chunk_id) of every mention in the chunks listed in keys 'chunk', by the rules of `mode`."""
    if not any_chunk:
        return
    if mode == "given":
        yield from con.execute(sql("given_mentions")).fetchall()
        return
    matcher = names.Matcher((n, e) for e, n in current)
    for cid, text in con.execute(sql("chunk_texts_todo")).fetchall():
        for eid in matcher.find(text):
            yield eid, cid
        if mode == "titles":
            yield names.entity_id(titles[cid]), cid
