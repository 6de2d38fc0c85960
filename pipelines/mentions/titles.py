"""Mentions mode titles: each document is an entity named by its title, found in the chunks' texts, and
each chunk mentions the entity its document is named after."""

import itertools
from collections.abc import Iterator

from acervo.pipelines.db import sql
from acervo.pipelines.mentions.shared import Dictionary, Mention, Mode, Options, joined, probed, text_mentions
from acervo.pipelines.names import CONTROL, entity_id, problem, short_form, words
from acervo.pipelines.run import Run
from acervo.pipelines.sources import Rejection

TITLE_TOKENS = "3"  # how title_names is derived (3: words without marks, Thai or Khmer runs as pairs): a change
# tokenises every title again


def _names(run: Run, options: Options) -> Dictionary:
    """Each document's name and its short form (mentions_titles.names), from title_names; a name with a
    control character names nothing and is rejected, with its document's file and line."""
    bad = titles_tokenised(run)
    run.con.execute(sql("mentions_titles.names"))
    rows = run.con.execute(sql("mentions_titles.rejected"), {"names": bad}).fetchall() if bad else []
    return Dictionary([Rejection(source, line, "invalid_entity", f"title {name!r} {problem(name)}", doc_id)
                       for source, line, doc_id, name in rows], recheck=bool(rows))


def titles_tokenised(run: Run) -> list[str]:
    """Bring title_names in line with the names of the documents' entities (their titles, a shared title with
    each document's id: mentions_titles.document_names), tokenising only new ones; return the names with a
    control character, which are left out (and so come back in every run)."""
    con = run.con
    if run.get("title_names") != TITLE_TOKENS:
        con.execute(sql("mentions_titles.title_names_reset"))
        run.put("title_names", TITLE_TOKENS)
    con.execute(sql("mentions_titles.document_names"))
    con.execute(sql("mentions_titles.title_names_delete"))
    untokenised = [t for (t,) in con.execute(sql("mentions_titles.untokenised")).fetchall()]
    new = [t for t in untokenised if not CONTROL.search(t)]
    shorts = [short_form(t) for t in new]
    run.insert("title_names", (
        {"title": t, "entity_id": entity_id(t), "words": joined(words(t)), "short": short,
         "short_words": joined(words(short))} for t, short in zip(new, shorts, strict=True)))
    return [t for t in untokenised if CONTROL.search(t)]


def _mentions(run: Run, options: Options, selective: bool) -> Iterator[Mention]:
    """The names found in the text, and, as a whole, what the chunk's document is named after (its title,
    unless documents share it: mentions_titles.document_names)."""
    return itertools.chain(text_mentions(run, options, selective), _named_after(run))


def _named_after(run: Run) -> Iterator[Mention]:
    """Each chunk (mentions_matched) mentions, as a whole, what its document is named after."""
    for cid, name in run.con.execute(sql("mentions_titles.chunk_names_todo")).fetchall():
        if not CONTROL.search(name):  # rejected: no entity (titles_tokenised)
            yield entity_id(name), cid, ()


MODE = Mode(_names, None, _mentions, probed, folds=True)
