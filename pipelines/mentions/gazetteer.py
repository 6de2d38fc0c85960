"""Mentions mode gazetteer: a file of entity names, found in the chunks' texts."""

import json
from pathlib import Path

from acervo.pipelines.mentions.shared import Dictionary, Mode, Options, probed, store_names, text_mentions
from acervo.pipelines.names import display, entity_id, problem
from acervo.pipelines.run import Run
from acervo.pipelines.sources import Rejection


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


def _names(run: Run, options: Options) -> Dictionary:
    """Each entry's label (weight 1) and aliases (weight 0), with their tokens."""
    if options.gazetteer_path is None:
        raise ValueError("mentions mode 'gazetteer' needs a gazetteer file (--gazetteer)")
    entries, rejected = gazetteer(options.gazetteer_path)
    found = {}
    for label, aliases in entries:
        eid = entity_id(label)
        for alias in aliases:
            found.setdefault((eid, alias), 0)
        found[(eid, label)] = 1
    store_names(run, found)
    return Dictionary(rejected, str(options.gazetteer_path))


MODE = Mode(_names, None, text_mentions, probed, folds=True)
