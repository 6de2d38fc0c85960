"""Mentions mode given: each document lists its entities, and each of its chunks mentions them all."""

from collections.abc import Iterator

from acervo.pipelines.db import sql
from acervo.pipelines.mentions.shared import Dictionary, Mention, Mode, Options, store_names
from acervo.pipelines.run import Run


def _names(run: Run, options: Options) -> Dictionary:
    """The labels the documents list, each weighted by how many documents list it."""
    rows = run.con.execute(sql("mentions_given.names")).fetchall()
    store_names(run, {(eid, label): n for eid, label, n in rows})
    return Dictionary([])


def _mentions(run: Run, options: Options, selective: bool) -> Iterator[Mention]:
    """Each chunk (mentions_matched) mentions, as a whole, every entity its document lists."""
    yield from ((eid, cid, ()) for eid, cid in run.con.execute(sql("mentions_given.mentions")).fetchall())


MODE = Mode(_names, None, _mentions, None)
