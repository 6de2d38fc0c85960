"""A scoped result says nothing about other scopes: every field is what the readable documents alone give."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acervo.flows.index import build, publish
from acervo.pipelines.db import connect
from acervo.pipelines.query.context import Index
from acervo.pipelines.run import Run
from acervo.pipelines.settings import Settings
from conftest import unasked, write_jsonl

NAMES = ["Alpha", "Beta", "Beta Group", "Gamma", "Delta", "Project Zeus", "Acme"]
MARK = "Globex"  # only the other scope's documents ever use it
EXAMPLES = max(5, settings().max_examples // 10)  # the profile's count, scaled: an example builds one or two indexes
SENTENCES = [f"{a} works with {b}." for a in NAMES for b in NAMES if a != b] + [
    f"{a} met the board in public." for a in NAMES] + ["Nothing to see here.", "The board met in public."]
texts = st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=3).map(" ".join)
readable = st.lists(st.tuples(texts, st.sampled_from([None, "a"]), st.sampled_from(NAMES + ["Notes", "Minutes"])),
                    min_size=1, max_size=4)
others = st.lists(st.tuples(texts, st.sampled_from(["b", "c"]), st.sampled_from(NAMES + ["Notes", "Minutes"])),
                  min_size=0, max_size=4)
local = st.sampled_from(["What about {x}?", "Tell me about {x} and {y}.", "Who works with {x}?",
                         "Which board met in public?", "How do I bake a carrot cake?"])
overview = st.sampled_from(["What are the main themes?", "{x}, in general?", "What are the main themes of the board?"])
named = st.sampled_from([*NAMES, MARK, "Project Zeus (Globex deal)"])


def records(docs: list[tuple], *, mark: bool, prefix: str) -> list[dict]:
    """Documents as JSONL records; with `mark`, each names MARK in its text, title and entities, and spells
    the entities it lists its own way (capitals), as the other scope may."""
    out = []
    for i, (text, scope, title) in enumerate(docs):
        entities = [n for n in NAMES if n in text]
        if mark:
            text, title = f"{text} {MARK} owns {title}.", f"{title} ({MARK} deal)"
            entities = [n.upper() for n in entities] + [MARK]
        out.append({"doc_id": f"{prefix}{i}", "title": title, "text": text, "entities": entities, "scope": scope})
    return out


def index(tmp: Path, name: str, docs: list[dict], mode: str) -> Path:
    gazetteer = tmp / "names.txt"
    gazetteer.write_text("\n".join([*NAMES, MARK]), encoding="utf-8")
    db = tmp / f"{name}.duckdb"
    con = connect(db)
    build(Run.alone(con), write_jsonl(tmp / f"{name}.jsonl", docs),
          Settings(mentions=mode, gazetteer=gazetteer, chunk_tokens=16, nlp_min_chunks=1))
    con.close()
    return db


def ask(db: Path, questions: list[tuple[str, bool]], scopes: list[str]) -> list[dict]:
    with Index(db) as opened:
        return [opened.query(q, scopes=scopes, budget=600, direct=direct).to_dict() for q, direct in questions]


def shown(result: dict) -> str:
    """Every field of a result but what is the caller's own (conftest.unasked), as lower-case text."""
    return json.dumps(unasked(result), ensure_ascii=False).lower()


def test_what_is_project_zeus_says_nothing_of_the_tenant_b_document_titled_after_it(tmp_path: Path):
    docs = [{"doc_id": "a1", "title": "Acme", "text": "Acme makes anvils. Acme talks with Project Zeus people.",
             "scope": "tenant-a"},
            {"doc_id": "a2", "title": "Anvils", "text": "Anvils are heavy. Acme sells anvils.", "scope": "tenant-a"},
            {"doc_id": "b1", "title": "Project Zeus (acquisition of Acme by Globex, closing Q3)",
             "text": "Globex will buy Acme. Project Zeus closes in Q3.", "scope": "tenant-b"}]
    full = index(tmp_path, "full", docs, "titles")
    alone = index(tmp_path, "alone", docs[:2], "titles")
    questions = [("What is Project Zeus?", False), ("What is Project Zeus?", True), ("Tell me about Acme", False),
                 ("What are the main themes?", False), ("Acme, in general?", False)]
    scoped = ask(full, questions, ["tenant-a"])
    for result in scoped:
        text = shown(result)
        assert "globex" not in text and "acquisition" not in text and "b1" not in text, text
    assert not any("zeus" in seed for seed in scoped[0]["seeds"]) and "names Project Zeus" not in scoped[0]["reason"]
    expected = ask(alone, questions, ["tenant-a"])
    for got, want in zip(scoped, expected, strict=True):  # as an index of tenant-a's documents alone answers
        assert (got["route"], got["reason"], got["seeds"]) == (want["route"], want["reason"], want["seeds"])
    assert scoped[:3] == expected[:3]  # communities are the whole corpus's: reports may group members otherwise
    with Index(full) as opened:
        assert "globex" in opened.query("What is Project Zeus?", budget=600).to_json().lower()  # unscoped: all


@pytest.mark.slow  # seconds of indexing or waiting
@settings(max_examples=EXAMPLES, deadline=None)
@given(readable, others, others, st.sampled_from(["given", "gazetteer"]),
       st.lists(st.tuples(local, named, named, st.booleans()), min_size=1, max_size=4),
       st.lists(st.tuples(overview, named), min_size=0, max_size=2))
def test_a_scoped_result_is_the_same_whatever_the_other_scopes_hold(tmp_path_factory, mine, theirs, swapped, mode,
                                                                    asked, overviews):
    tmp = tmp_path_factory.mktemp("scopes")
    base = records(mine, mark=False, prefix="r")
    first = index(tmp, "first", base + records(theirs, mark=True, prefix="o"), mode)
    second = index(tmp, "second", base + records(swapped, mark=False, prefix="p"), mode)
    questions = [(q.format(x=x, y=y), direct) for q, x, y, direct in asked]
    wide = [(q.format(x=x), False) for q, x in overviews]
    got, other = ask(first, questions + wide, ["a"]), ask(second, questions + wide, ["a"])
    assert got[:len(questions)] == other[:len(questions)]  # every field: route, reason, seeds, blocks, budget, refused
    for a, b in zip(got[len(questions):], other[len(questions):], strict=True):
        assert (a["route"], a["reason"], a["seeds"]) == (b["route"], b["reason"], b["seeds"])
    for result in got:
        assert MARK.lower() not in shown(result), result


@pytest.mark.slow  # seconds of indexing or waiting
@settings(max_examples=EXAMPLES, deadline=None)
@given(readable, others, st.sampled_from(["titles", "nlp"]),
       st.lists(st.tuples(st.one_of(local, overview), named, named), min_size=1, max_size=4))
def test_found_names_of_other_scopes_never_show(tmp_path_factory, mine, theirs, mode, asked):
    tmp = tmp_path_factory.mktemp("found")
    db = index(tmp, "db", records(mine, mark=False, prefix="r") + records(theirs, mark=True, prefix="o"), mode)
    with Index(db) as opened:
        readable_docs = {d for (d,) in opened.con.execute("select doc_id from documents where scope is null "
                                                          "or scope = 'a'").fetchall()}
    for result in ask(db, [(q.format(x=x, y=y), True) for q, x, y in asked], ["a"]):
        assert MARK.lower() not in shown(result), result
        refs = {r for block in result["blocks"] for r in block["refs"]}
        refused = {ident for kind, ident in result["refused"] if kind in ("chunk", "document")}
        assert {r.split("#")[0] for r in refs | refused} <= readable_docs


def test_a_scoped_caller_s_answers_are_chosen_with_the_index_s_answer_length(tmp_path: Path):
    long = ("Acme is a company that builds very heavy anvils, rockets and roller skates for coyotes "
            "who live in the desert.")
    docs = [{"doc_id": "a1", "title": "Acme", "text": f"{long} Acme is an anvil maker.", "entities": ["Acme"],
             "scope": "a"},
            {"doc_id": "b1", "title": "Globex", "text": "Globex buys from Acme.", "entities": ["Acme", "Globex"],
             "scope": "b"}]  # another scope's document: the caller's answers are chosen among what it may read
    db = tmp_path / "short.duckdb"
    publish(write_jsonl(tmp_path / "a.jsonl", docs), db, Settings(answer_max_chars=40))
    with Index(db) as opened:
        stored = opened.con.execute("select answer from entity_answers where entity_id = 'acme'").fetchone()[0]
        assert stored == "Acme is an anvil maker."  # the long sentence is over answer_max_chars
        scoped = opened.query("What is Acme?", scopes=["a"], budget=60, direct=False).to_dict()  # not its chunk
        roomy = opened.query("What is Acme?", scopes=["a"], budget=600, direct=False).to_dict()
    answers = [block["text"] for block in scoped["blocks"] if block["kind"] == "answer"]
    assert answers and all(stored in text and long not in text for text in answers), scoped["blocks"]
    # with room for the chunk the answer quotes, the sentence is not written twice
    assert [b["kind"] for b in roomy["blocks"]] == ["instruction", "chunk"] and ["entity", "acme"] in roomy["refused"]
