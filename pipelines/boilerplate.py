"""Stage `boilerplate`: the sentences that many documents write word for word (a host's greeting, a licence line, a
safe-harbour notice, "Applause."), found from the corpus itself, so that short answers and report lines quote
content rather than what every document repeats. They stay searchable: chunks and postings are untouched.

A sentence is known by its key (pipelines.layout.sentence_key: a hash of its folded words, case, accents and
punctuation aside). Each chunk's keys are kept (chunk_sentences, read again only for a new or changed chunk); a key
written in at least BOILERPLATE_DOCUMENTS documents is boilerplate, and each chunk's boilerplate keys are stored
(chunk_boilerplate). The chunks whose boilerplate changed in a run are logged, so that the answers and reports that
read them are made again, as a fresh build would make them. A scoped caller's answers count only the documents it
may read (pipelines.query.seeds.view).
"""

from collections.abc import Iterator
from typing import Any

from acervo.pipelines.db import sql
from acervo.pipelines.layout import BOILERPLATE_DOCUMENTS, sentence_keys
from acervo.pipelines.run import Run
from acervo.pipelines.runs import SKIPPED, Work

VERSION = "sentences-2"  # 2: sentences keyed by words without marks, Thai or Khmer runs by pairs (names.words)
READS = ("chunks",)  # the stages whose tables this stage reads
FETCH_ROWS = 10_000  # chunk texts read at a time


def run(run: Run) -> Work:
    """Read the sentences of new and changed chunks, then find the boilerplate of the whole corpus again."""
    setting = f"{VERSION} documents={BOILERPLATE_DOCUMENTS}"
    if run.unchanged(READS, "boilerplate", setting):
        return SKIPPED
    con = run.con
    with run.transaction():
        con.execute(sql("boilerplate.todo"), {"full": run.get("boilerplate") != setting})
        removed = len(con.execute(sql("boilerplate.delete")).fetchall())
        added = run.insert("chunk_sentences", _read(run))
        con.execute(sql("boilerplate.next"), {"documents": BOILERPLATE_DOCUMENTS})
        run.note("boilerplate.changed")
        con.execute(sql("boilerplate.clear"))
        con.execute(sql("boilerplate.store"))
        n_chunks, n_boilerplate = con.execute(sql("boilerplate.counts")).fetchone()
        run.put("boilerplate", setting)
    return Work(n_chunks, n_chunks - added, added, removed, {"boilerplate_sentences": n_boilerplate})


def _read(run: Run) -> Iterator[dict[str, Any]]:
    """The chunk_sentences row of each chunk of sentences_todo."""
    cursor = run.con.execute(sql("boilerplate.texts"))
    while rows := cursor.fetchmany(FETCH_ROWS):
        for chunk_id, doc_id, content_hash, text in rows:
            yield {"chunk_id": chunk_id, "doc_id": doc_id, "content_hash": content_hash,
                   "sentences": sentence_keys(text)}
