"""Stage `mentions`: which entities each chunk mentions (given, gazetteer or titles mode) -> entities, mentions."""

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from pipelines import names
from pipelines.db import Connection, insert, sql, transaction
from pipelines.documents import Rejection
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


def _labels(entries: Iterable[tuple[str, list[str]]]) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Entity labels by id (first spelling wins) and every (name, entity_id) that finds them."""
    labels: dict[str, str] = {}
    pairs = []
    for label, aliases in entries:
        eid = names.entity_id(label)
        labels.setdefault(eid, label)
        pairs += [(name, eid) for name in [label, *aliases]]
    return labels, pairs


def found(con: Connection, mode: MentionMode, entries: list[tuple[str, list[str]]]) -> Iterator[tuple[str, str]]:
    """(entity_id, chunk_id) of every mention, by the rules of `mode`."""
    if mode == "given":
        for _, label, chunk_id in con.execute(sql("given_mentions")).fetchall():
            yield names.entity_id(label), chunk_id
        return
    _, pairs = _labels(entries)
    matcher = names.Matcher(pairs)
    for chunk_id, text, title in con.execute(sql("chunk_texts")).fetchall():
        for eid in matcher.find(text):
            yield eid, chunk_id
        if mode == "titles":
            yield names.entity_id(title), chunk_id


def run(con: Connection, *, mode: MentionMode, gazetteer_path: Path | None = None) -> tuple[int, int]:
    """Write `entities`, `entity_aliases` and `mentions`; return (chunks read, mentions written)."""
    rejected: list[Rejection] = []
    if mode == "gazetteer":
        if gazetteer_path is None:
            raise ValueError("mentions mode 'gazetteer' needs a gazetteer file (--gazetteer)")
        entries, rejected = gazetteer(gazetteer_path)
    elif mode == "titles":
        entries = title_entries(t for (t,) in con.execute("select title from documents").fetchall())
    else:
        given = con.execute("select label from document_entities").fetchall()
        spellings = Counter(label for (label,) in given)
        best = sorted(spellings, key=lambda label: (-spellings[label], label))
        entries = [(label, []) for label in best]
    labels, pairs = _labels(entries)
    mentions = sorted(set(found(con, mode, entries)))
    n_chunks = Counter(eid for eid, _ in mentions)
    with transaction(con):
        con.execute("delete from mentions")
        con.execute("delete from entity_aliases")
        con.execute("delete from entities")
        insert(con, "rejected", (r.__dict__ for r in rejected))
        insert(con, "entities", ({"entity_id": eid, "label": labels[eid], "n_chunks": n, "degree": 0}
                                 for eid, n in sorted(n_chunks.items())))
        insert(con, "entity_aliases", ({"entity_id": eid, "alias": name} for name, eid in sorted(set(pairs))
                                       if eid in n_chunks))
        insert(con, "mentions", ({"entity_id": eid, "chunk_id": cid} for eid, cid in mentions))
    return con.execute("select count(*) from chunks").fetchone()[0], len(mentions)
