"""Read-side summary of an index: row counts, communities per level, the largest communities, rejects,
the settings it was built with, which document ids it holds, why candidates became entities or not."""

import json
from collections.abc import Sequence
from typing import Any

from acervo.pipelines.db import Connection, rows
from acervo.pipelines.mentions.nlp import MID_SHARE
from acervo.pipelines.names import entity_id


def summary(con: Connection, *, largest: int = 10) -> dict[str, Any]:
    """Counts per table (the index's, then the bookkeeping reruns keep), communities per level and the
    `largest` communities."""
    counts = rows(con, "stats.tables")
    return {
        "tables": {r["table_name"]: r["n_rows"] for r in counts if r["kind"] == "product"},
        "bookkeeping": {r["table_name"]: r["n_rows"] for r in counts if r["kind"] == "bookkeeping"},
        "levels": rows(con, "stats.levels"),
        "largest_communities": rows(con, "stats.largest", {"limit": largest}),
    }


def rejected(con: Connection) -> list[dict[str, Any]]:
    """Every rejected record, in input order."""
    return rows(con, "stats.rejected")


def settings(con: Connection) -> dict[str, Any] | None:
    """The settings of the index's last run, as stored; None before any run."""
    found = rows(con, "stats.settings")
    return json.loads(found[0]["settings"]) if found else None


def documents_known(con: Connection, ids: Sequence[str]) -> list[str]:
    """Those of `ids` that name documents of the index."""
    return [r["doc_id"] for r in rows(con, "stats.documents_known", {"ids": list(ids)})]


def decisions(con: Connection, asked: list[str] | None = None, *, top: int = 20,
              rejected: bool = False) -> list[dict[str, object]]:
    """Why candidates became entities or not (modes nlp and spacy): the stored decision about each name in
    `asked` (matched however it is cased; a name no chunk has as a candidate says so), or about the `top`
    candidates seen in most chunks (with `rejected`, only those not kept); each with its counts and `why`,
    a sentence for a person."""
    ids = None if asked is None else [entity_id(name) for name in asked]
    found = {r["entity_id"]: r | {"why": _why(r)} for r in rows(con, "stats.candidate_decisions", {
        "ids": ids, "rejected": rejected, "top": top if ids is None else len(ids)})}
    if ids is None:
        return list(found.values())
    missing = {"kept": False, "reason": "none", "canonical": None, "n_chunks": 0, "n_lower": None, "n_mid": None,
               "n_other": None, "lowercase": False,
               "why": "no chunk has it as a candidate: mode nlp finds capitalised word sequences, acronyms and "
                      "code identifiers, without a common word (\"The\", \"However\") that starts a sentence"}
    return [found.get(eid) or {"entity_id": eid, "name": name, **missing}
            for eid, name in dict(zip(ids, asked, strict=True)).items()]


def _why(d: dict[str, Any]) -> str:
    """A candidate's decision (a candidate_decisions row) in a sentence."""
    reason, n_chunks = d["reason"], d["n_chunks"]
    counts = (f"in lower case {d['n_lower']} times, capitalised in mid-sentence {d['n_mid']}, capitalised elsewhere "
              f"(sentence or line starts, headings) {d['n_other']}")
    what = "the word of it least often in lower case" if " " in d["entity_id"] else "it"
    cases = f"the corpus writes {what}: {counts}"
    if reason == "variant":
        whose = "kept with it" if d["kept"] else "left out with it"
        return f"an acronym or plural of {d['canonical']!r}, so one more name of that entity ({whose})"
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
    asked = "; a question naming it in lower case finds it" if d["lowercase"] else ""
    return f"kept: a name in {n_chunks} chunks; {cases}{asked}"
