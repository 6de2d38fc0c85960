"""Query-time assembly: routes, cited chunks that resolve, the empty off-topic context, scopes, batch CLI."""

import json
import re
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acervo.flows.cli import main
from acervo.flows.index import publish
from acervo.pipelines.matcher import Matcher
from acervo.pipelines.names import words
from acervo.pipelines.query import labels, lexical, local
from acervo.pipelines.query.budget import Selection, Unit
from acervo.pipelines.query.context import Index
from acervo.pipelines.query.seeds import SEPARATOR, SeedFinder, specific
from acervo.pipelines.runs import SKIPPED
from acervo.pipelines.settings import Settings
from conftest import DATA, SAMPLE, SEED, examples, index_of, write_jsonl

QUESTIONS = {"o que os documentos sobre auditoria de acesso dizem": "local",
             "quais são os temas que dominam este acervo": "global",
             "auditoria de acesso, no contexto geral": "mixed",
             "como faço bolo de cenoura": "none"}


@pytest.fixture(scope="module")
def seed_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("ctx") / "seed.duckdb"
    publish(SEED, db, Settings())
    return db


def chunk_ids(index: Index) -> set[str]:
    return {c for (c,) in index.con.execute("select chunk_id from chunks").fetchall()}


@pytest.mark.parametrize("mode", ["priority", "sliced"])
@pytest.mark.parametrize("budget", [120, 400, 2000])
def test_the_seed_questions_route_and_every_ref_resolves(seed_db, mode, budget):
    with Index(seed_db) as index:
        known = chunk_ids(index)
        for question, expected in QUESTIONS.items():
            context = index.query(question, budget=budget, mode=mode, direct=False)
            assert context.route == expected, (question, context.reason)
            assert all(ref in known for block in context.blocks for ref in block.refs)
            if context.blocks:
                assert context.blocks[0].kind == "instruction"
                assert context.budget["spent"] <= max(budget, context.blocks[0].tokens)
                answers = [b for b in context.blocks if b.kind == "answer"]
                assert context.budget["components"] == len(answers) <= len(context.seeds)


def test_an_off_topic_question_gets_an_empty_context_that_says_so(seed_db):
    with Index(seed_db) as index:
        context = index.query("como faço bolo de cenoura")
    assert context.route == "none" and context.blocks == [] and "nothing was found" in context.reason
    assert context.reason.endswith("the best matching text holds none of 'bolo', 'cenoura')"), context.reason
    assert context.to_dict()["budget"]["spent"] == 0


def test_relations_come_with_the_entity_they_reach_and_never_alone(seed_db):
    with Index(seed_db) as index:
        context = index.query("o que dizem sobre auditoria", budget=300, direct=False)
    kinds = [b.kind for b in context.blocks]
    assert kinds[:2] == ["instruction", "chunk"]  # BM25's best chunk leads every route's units
    assert "relation" in kinds and kinds.index("answer") < kinds.index("relation")
    assert all(" -- " in b.text for b in context.blocks if b.kind == "relation")
    together = [re.search(r"\(together in (\d+) (chunks?)\)", b.text) for b in context.blocks if b.kind == "relation"]
    assert all(m and (m.group(2) == "chunk") == (m.group(1) == "1") for m in together)  # "1 chunk", "2 chunks"


def test_small_documents_come_whole_when_they_fit(seed_db):
    with Index(seed_db) as index:
        context = index.query("o que os documentos sobre auditoria de acesso dizem", budget=2000)
    kinds = [b.kind for b in context.blocks]
    assert kinds[0] == "instruction" and set(kinds[1:]) == {"document"}
    assert "fit the budget whole" in context.reason
    assert context.blocks[1].text.startswith("# Auditoria de acesso")


def test_a_forbidden_scope_is_never_read(tmp_path: Path):
    records = [{"doc_id": "pub", "text": "Alpha works with Beta in public.", "entities": ["Alpha", "Beta"]},
               {"doc_id": "sec", "text": "Alpha hides the secret code 1234.", "entities": ["Alpha", "Gamma"],
                "scope": "secret"}]
    db = tmp_path / "s.duckdb"
    publish(write_jsonl(tmp_path / "d.jsonl", records), db, Settings())
    with Index(db) as index:
        for direct in (True, False):
            shown = index.query("what about Alpha and Gamma?", scopes=["public"], budget=2000, direct=direct)
            assert "1234" not in json.dumps(shown.to_dict()) and all(
                not r.startswith("sec") for b in shown.blocks for r in b.refs)
        allowed = index.query("what about Alpha and Gamma?", scopes=["secret"], budget=2000, direct=False)
        assert "1234" in allowed.text


def test_batch_mode_answers_a_jsonl_of_questions_in_one_process(tmp_path: Path, capsys):
    db = tmp_path / "w.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles"))
    questions = write_jsonl(tmp_path / "q.jsonl", [{"id": "a", "question": "Who was Teutberga?"},
                                                   {"id": "b", "question": "How do I bake a carrot cake?"}])
    assert main(["query", "--questions", str(questions), "--db", str(db), "--json", "--budget", "512"]) == 0
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in results] == ["a", "b"]
    assert results[0]["route"] == "local" and results[1]["route"] == "none"
    assert {"route", "reason", "blocks", "budget", "refused"} <= results[0].keys()
    assert {"kind", "text", "refs", "score", "tokens"} == results[0]["blocks"][0].keys()
    assert {"total", "spent", "by_kind", "truncation_rate", "components"} == results[0]["budget"].keys()


def test_a_question_naming_no_entity_is_seeded_by_its_words_and_an_off_topic_one_is_not(tmp_path: Path):
    db = tmp_path / "w.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles"))
    with Index(db) as index:
        matched = index.query("Which queen of Lotharingia died in November 875?", budget=1024)
        assert matched.route == "local" and "words match" in matched.reason
        assert any("Teutberga" in b.text for b in matched.blocks)
        assert index.query("How do I bake a carrot cake at home?").route == "none"


def test_budgets_count_tokens_in_the_index_s_own_encoding(tmp_path: Path):
    db = tmp_path / "o200k.duckdb"
    publish(SEED, db, Settings(encoding="o200k_base"))
    with Index(db) as index:
        assert index.encoding == "o200k_base"
        assert index.count("A renovação automática vale quando não há recusa.") == 11


def test_a_scoped_caller_sees_no_edge_or_answer_drawn_only_from_forbidden_text(tmp_path: Path):
    records = [{"doc_id": "pub", "text": "Alpha works with Beta in public.", "entities": ["Alpha", "Beta"]},
               {"doc_id": "sec", "text": "Alpha meets Gamma in secret. Alpha is the codename 1234.",
                "entities": ["Alpha", "Gamma"], "scope": "secret"}]
    db = tmp_path / "s.duckdb"
    publish(write_jsonl(tmp_path / "d.jsonl", records), db, Settings())
    with Index(db) as index:
        public = index.query("Tell me about Alpha", scopes=["public"], budget=2000, direct=False)
        shown = json.dumps(public.to_dict())
        assert "Gamma" not in shown and "1234" not in shown and "secret" not in shown
        assert "answer" in [b.kind for b in public.blocks]
        assert public.blocks[1].refs[0].startswith("pub#")
        everyone = index.query("Tell me about Alpha", budget=2000, direct=False)
        assert "Gamma" in json.dumps(everyone.to_dict())


@pytest.mark.slow  # seconds of indexing or waiting
def test_in_an_index_of_found_names_the_best_bm25_chunk_competes_with_a_partial_seed(tmp_path: Path):
    records = [{"doc_id": "a", "title": "Harbor Notes",
                "text": "Lisbon hosts the Harbor Festival every June. The Harbor Festival draws sailors to Lisbon."},
               {"doc_id": "b", "title": "Storm Report",
                "text": "The fireworks budget doubled after the storm wrecked the old pier. Lisbon paid the bill."},
               {"doc_id": "c", "title": "Lisbon", "text": "Lisbon is the capital of Portugal."}]
    source = write_jsonl(tmp_path / "d.jsonl", records)
    question = "Why did the fireworks budget double in Lisbon?"
    first = {}
    for mentions in ("nlp", "titles"):
        db = tmp_path / f"{mentions}.duckdb"
        publish(source, db, Settings(mentions=mentions, nlp_min_chunks=1))
        with Index(db) as index:
            context = index.query(question, budget=2000, direct=False)
            assert context.seeds == ["lisbon"]
            first[mentions] = [b for b in context.blocks if b.kind != "instruction"][:2]
    for mentions in ("nlp", "titles"):  # BM25's best, on its own, leads in every mode
        assert first[mentions][0].kind == "chunk" and first[mentions][0].refs[0].startswith("b#")
    assert first["titles"][1].kind == "answer" and first["titles"][1].refs[0].startswith("c#")  # then a curated name


@pytest.mark.slow  # seconds of indexing or waiting
def test_a_name_the_text_writes_but_no_entity_holds_is_still_found_in_text_in_any_mode(tmp_path: Path):
    records = [{"doc_id": "a", "title": "Family", "text": "Lamprocles was the eldest son of Socrates and Xanthippe."},
               {"doc_id": "b", "title": "Athens", "text": "Socrates taught in Athens. Xanthippe lived in Athens."},
               {"doc_id": "c", "title": "Cake", "text": "A carrot cake needs carrots, flour and sugar."}]
    source = write_jsonl(tmp_path / "d.jsonl", records)
    for mentions in ("nlp", "titles"):  # nlp: Lamprocles is seen in one chunk, no entity; titles: no title
        db = tmp_path / f"{mentions}.duckdb"
        publish(source, db, Settings(mentions=mentions))
        with Index(db) as index:
            context = index.query("What nationality is Lamprocles's father?", budget=500)
            assert context.route == "local" and context.seeds == [], context.reason
            assert "names Lamprocles, which" in context.reason and context.blocks[1].refs[0].startswith("a#")
            assert index.query("Who painted the Mona Lisa?", budget=500).route == "none"  # a name no text uses
            assert index.query("What is Lampro's father?", budget=500).route == "none"  # part of a word is no name


@pytest.mark.parametrize("forced", ["local", "global", "mixed"])
def test_the_caller_s_route_overrides_the_router_s_and_the_reason_says_so(seed_db, forced, capsys):
    question = "o que os documentos sobre auditoria de acesso dizem"  # the router: local
    with Index(seed_db) as index:
        context = index.query(question, budget=2000, direct=False, route=forced)
        known = chunk_ids(index)
    kinds = {b.kind for b in context.blocks}
    assert context.route == forced and "as the caller asked (the router chose local: names" in context.reason
    assert ("report" in kinds) == (forced != "local") and ("chunk" in kinds)
    assert all(ref in known for b in context.blocks for ref in b.refs)
    assert main(["query", question, "--db", str(seed_db), "--route", forced, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["route"] == forced


def test_a_global_question_gets_reports_with_shared_terms_and_their_evidence_chunks(seed_db):
    with Index(seed_db) as index:
        known = chunk_ids(index)
        context = index.query("quais são os temas que dominam este acervo", budget=2000)
        communities = {c for (c,) in index.con.execute("select community_id from communities").fetchall()}
    reports = [b for b in context.blocks if b.kind == "report"]
    assert context.route == "global" and reports
    assert all("Shared terms: " in b.text and "Key evidence:" in b.text for b in reports)
    assert all(ref in known for b in context.blocks for ref in b.refs)
    assert not communities & {ref for b in context.blocks for ref in b.refs}  # a report id is never a citation
    cited = {ref for b in reports for ref in b.refs}
    assert any(b.kind == "chunk" and b.refs[0] in cited for b in context.blocks)


def test_a_global_question_about_a_subject_gets_first_the_report_its_best_chunks_fall_in_with_them(seed_db):
    with Index(seed_db) as index:
        (remote,) = index.con.execute("select cm.community_id from community_members cm join communities c "
                                      "using (community_id) where c.level = 0 and cm.entity_id = 'acesso remoto'"
                                      ).fetchone()
        heaviest = {c for (c,) in index.con.execute("select community_id from communities where level = 0 and "
                                                   "weight = (select max(weight) from communities)").fetchall()}
        subject = index.query("quais são os temas sobre VPN e falhas", budget=2000)  # d06's words, no entity
        overview = index.query("quais são os temas que dominam este acervo", budget=2000)  # about nothing in particular
        titles = dict(index.con.execute("select title, community_id from communities where level = 0").fetchall())
    assert subject.route == overview.route == "global"
    best, first = subject.blocks[1], subject.blocks[2]
    assert best.kind == "chunk" and best.refs[0].startswith("d06#")  # BM25's best chunk for the question leads
    assert first.kind == "report" and titles[first.text.splitlines()[0].removeprefix("Community: ")] == remote
    assert remote not in heaviest  # it leads the reports by what the question asks, not by its weight
    assert [b for b in subject.blocks if b.kind == "report"] == [first]  # no report its chunks fall outside of
    assert "Members:" not in first.text and "Key evidence:" not in first.text  # its chunks stand for them
    assert set(first.refs) <= {b.refs[0] for b in subject.blocks if b.kind == "chunk"}  # it cites only them
    lead = next(b for b in overview.blocks if b.kind == "report")
    assert titles[lead.text.splitlines()[0].removeprefix("Community: ")] in heaviest  # no subject: by weight
    assert len([b for b in overview.blocks if b.kind == "report"]) == len(titles)  # every top-level report
    assert all("Members:" in b.text and "Key evidence:" in b.text for b in overview.blocks if b.kind == "report")


def test_a_question_asking_what_many_documents_say_gets_the_reports_of_the_documents_that_write_about_it(seed_db):
    with Index(seed_db) as index:
        asked = index.query("O que os documentos mencionam sobre autenticação?", budget=2000)  # d05-d07 write it
        examples = index.query("Quais alguns exemplos de acesso?", budget=2000)  # a cue, no word for the text
        cooking = index.query("Quais erros são mais comuns nos textos sobre pão caseiro?", budget=2000)
    assert asked.route == "global" and "'autenticacao', which 3 documents write about" in asked.reason
    assert [b.kind for b in asked.blocks[1:3]] == ["chunk", "report"]  # BM25's best chunk, then the reports
    assert {b.refs[0].split("#")[0] for b in asked.blocks if b.kind == "chunk"} >= {"d05", "d06", "d07"}
    assert examples.route != "global"
    assert cooking.route == "none" and not cooking.blocks  # no document writes about it


def test_most_english_questions_about_the_whole_collection_route_global_with_a_report(tmp_path):
    db = tmp_path / "sample.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles"))
    asked = [json.loads(line) for line in (SAMPLE.parent / "global_questions.jsonl").open(encoding="utf-8")]
    english = [q["question"] for q in asked if q["language"] == "en"]
    with Index(db) as index:
        contexts = [index.query(q, budget=1000) for q in english]
    wide = [c for c in contexts if c.route == "global" and any(b.kind == "report" for b in c.blocks)]
    assert len(wide) >= 2 * len(english) // 3, [c.question for c in contexts if c not in wide]


@pytest.mark.slow  # seconds of indexing or waiting
def test_off_topic_questions_stay_empty_while_answerable_ones_do_not(tmp_path):
    db = tmp_path / "sample.duckdb"
    publish(SAMPLE, db, Settings(mentions="nlp"))
    off = [json.loads(line)["question"] for line in (SAMPLE.parent / "offtopic_questions.jsonl").open()]
    asked = [json.loads(line) for line in (SAMPLE.parent / "2wiki_sample_questions.jsonl").open()]
    with Index(db) as index:
        empty = [q for q in off if index.query(q).blocks]
        answered = [q["question"] for q in asked if not index.query(q["question"]).blocks]
    assert len(empty) <= len(off) // 20, empty  # at most one in twenty leaks
    assert answered == []


def test_bm25_ranks_the_same_in_every_run_ties_broken_by_chunk_id(seed_db):
    with Index(seed_db) as index:
        search = lexical.searcher(index.con)
        question = "Who is the mother of the director of film Polish-Russian War?"
        first = lexical.top_chunks(search, question, limit=50)
        assert all(lexical.top_chunks(lexical.searcher(index.con), question, limit=50) == first for _ in range(3))
        assert first == sorted(first, key=lambda row: (-row[4], row[0]))
        assert all(round(row[4], lexical.BM25_DIGITS) == row[4] for row in first)


@pytest.mark.slow  # seconds of indexing
@pytest.mark.parametrize("mentions", ["given", "titles"])
def test_names_looked_up_per_question_find_what_a_matcher_of_every_alias_finds(mentions):
    con = index_of(SEED if mentions == "given" else SAMPLE, mentions=mentions)
    rows = con.execute("select alias, entity_id, words from entity_aliases order by entity_id, alias").fetchall()
    assert all(stored == SEPARATOR.join(words(alias)) for alias, _, stored in rows)
    everything = Matcher([(alias, eid) for alias, eid, _ in rows if specific(words(alias))])
    finder = SeedFinder(con)
    aliases = [alias.lower() for alias, _, _ in rows]
    n = len(aliases)
    questions = [f"o que diz {a} sobre {aliases[(i + 7) % n]}, e quem é {aliases[(i + 3) % n]}?"
                 for i, a in enumerate(aliases)]
    assert questions
    for question in questions:
        expected = {eid for _, _, eid in everything.spans(words(question))}
        assert {s.entity_id for s in finder.find(question)} == expected, question


RULES = [  # a small set of regulations, in Portuguese, that names no entity ("given" mode, none given)
    {"doc_id": "r1", "title": "Aproveitamento", "text": "O aluno pode solicitar o aproveitamento de estudos uma única "
                                                        "vez por disciplina, na secretaria do curso."},
    {"doc_id": "r2", "title": "Matrícula", "text": "A matrícula é renovada a cada semestre pelo sistema acadêmico."},
    {"doc_id": "r3", "title": "Frequência", "text": "A frequência mínima exigida em cada disciplina é de setenta e "
                                                    "cinco por cento das aulas."},
    {"doc_id": "r4", "title": "Estágio", "text": "O estágio obrigatório é acompanhado por um professor orientador."},
    {"doc_id": "r5", "title": "Trancamento", "text": "O trancamento de disciplina pode ser solicitado na secretaria "
                                                     "até a metade do semestre."},
]


def test_words_that_only_say_how_a_question_asks_do_not_count_against_the_lexical_floor(tmp_path: Path):
    db = tmp_path / "rules.duckdb"
    publish(write_jsonl(tmp_path / "rules.jsonl", RULES), db, Settings())
    with Index(db) as index:
        # "quantas" and "posso" are in no document: as subject words they would outweigh the rest
        for question in ("quantas vezes posso solicitar aproveitamento?", "como faço para solicitar aproveitamento?"):
            context = index.query(question, budget=2000, direct=False)
            assert context.route == "local", context.reason
            assert context.blocks[1].refs[0].startswith("r1#")
        assert index.query("posso congelar banana madura?", budget=2000).route == "none"


def test_a_question_matched_by_its_words_alone_keeps_the_other_best_chunks_after_those_that_matched(tmp_path: Path):
    db = tmp_path / "rules.duckdb"
    publish(write_jsonl(tmp_path / "rules.jsonl", RULES), db, Settings())
    with Index(db) as index:
        context = index.query("solicitar aproveitamento de estudos na secretaria", budget=2000, direct=False)
    assert context.route == "local" and context.seeds == [], context.reason
    cited = [b.refs[0].split("#")[0] for b in context.blocks if b.kind == "chunk"]
    assert cited[0] == "r1" and "r5" in cited  # r5 shares "solicitar" and "secretaria" only: below the floor


LABEL = re.compile(r"\[(c\d+)\]")


def with_ids(context) -> list[str]:
    """The context's block texts with each label written back as the chunk id it stands for."""
    return [LABEL.sub(lambda m: f"[{context.labels[m.group(1)]}]", b.text) for b in context.blocks]


@pytest.mark.parametrize("budget", [300, 20000])
def test_a_context_cites_short_labels_numbered_in_reading_order_that_map_back_to_its_refs(seed_db, budget):
    with Index(seed_db) as index:
        known = chunk_ids(index)
        for question in [q for q, route in QUESTIONS.items() if route != "none"]:
            short = index.query(question, budget=budget, direct=False)
            ids = index.query(question, budget=budget, direct=False, cite="ids")
            assert short.labels and ids.labels == {}, question
            written = LABEL.findall(short.text)
            assert list(dict.fromkeys(written)) == [f"c{n}" for n in range(1, len(short.labels) + 1)]
            assert list(short.labels) == list(dict.fromkeys(written))  # every label the text writes, in order
            for block in short.blocks:
                assert not any(f"[{ref}]" in block.text for ref in known)  # no chunk id left in the text
                assert {short.labels[name] for name in LABEL.findall(block.text)} <= set(block.refs)
                assert block.tokens == index.count(block.text)
            for block in ids.blocks:
                assert block.tokens == index.count(block.text)
            assert short.budget["spent"] == sum(b.tokens for b in short.blocks) <= budget
            if budget == 20000:  # every candidate fits either way: the same blocks, labels in place of ids
                assert with_ids(short) == [b.text for b in ids.blocks]
                assert short.budget["spent"] < ids.budget["spent"]


def test_a_whole_document_cites_its_chunks_in_its_heading_as_labels_or_ids(seed_db):
    question = "o que os documentos sobre auditoria de acesso dizem"
    with Index(seed_db) as index:
        short, ids = index.query(question, budget=2000), index.query(question, budget=2000, cite="ids")
        for context in (short, ids):
            documents = [b for b in context.blocks if b.kind == "document"]
            assert documents and len(documents) == len(context.blocks) - 1, context.reason
            assert all(b.tokens == index.count(b.text) for b in context.blocks)
    for block in short.blocks[1:]:
        head = block.text.split("\n")[0]
        assert [short.labels[name] for name in LABEL.findall(head)] == block.refs
    assert list(short.labels) == [f"c{n}" for n in range(1, len(short.labels) + 1)]
    assert with_ids(short) == [b.text for b in ids.blocks] and ids.labels == {}


def test_labels_are_numbered_again_in_reading_order_only_where_that_costs_no_token():
    cited = [Unit("chunk", f"k{n}", f"[doc{n}#aaa] text {n}", (f"doc{n}#aaa",), score) for n, score in
             enumerate([0.9, 0.5, 0.7, 0.8, 0.6, 0.4, 0.3, 0.2, 0.1, 0.95, 0.05])]
    units, numbers = labels.candidates(cited)
    assert units[9].text == "[c1] text 9" and units[0].text == "[c2] text 0"  # the best first
    by_key = {u.key: u for u in cited}
    for count in (lambda text: len(text.split()), len):  # "[c10]" costs as "[c2]" in words, not in characters
        chosen = Selection(list(reversed(units)), [count(u.text) for u in reversed(units)], 1000)
        again, named = labels.renumbered(chosen, by_key, numbers, count)
        if count is len:  # numbering again would change a count: the candidate numbering stays
            assert again is chosen and named["c11"] == "doc10#aaa" and len(named) == len(cited)
        else:
            assert [u.text for u in again.units][:2] == ["[c1] text 10", "[c2] text 9"] and named["c1"] == "doc10#aaa"
            assert again.tokens == chosen.tokens
    assert labels.kept(units[:2], named) == {"c2": "doc0#aaa", "c6": "doc1#aaa"}


def test_a_citation_resolves_only_to_a_chunk_of_the_index_that_its_own_block_cites():
    known = {"a#1", "b#2"}
    blocks = [("[c1] first", ["a#1"]), ("[c2] second, as [c1] says", ["b#2", "a#1"])]
    assert labels.resolved(blocks, {"c1": "a#1", "c2": "b#2"}, known)
    assert not labels.resolved(blocks, {"c1": "b#2", "c2": "a#1"}, known)  # c1 stands for another block's chunk
    assert not labels.resolved(blocks, {"c1": "a#1"}, known)  # c2 stands for nothing
    assert not labels.resolved([("[c1] x", ["z#9"])], {"c1": "z#9"}, known)  # no such chunk in the index


def test_query_cites_ids_on_request_and_json_maps_labels_to_chunk_ids(seed_db, capsys):
    question = "o que os documentos sobre auditoria de acesso dizem"
    assert main(["query", question, "--db", str(seed_db), "--json", "--no-direct"]) == 0
    short = json.loads(capsys.readouterr().out)
    assert main(["query", question, "--db", str(seed_db), "--json", "--no-direct", "--cite", "ids"]) == 0
    ids = json.loads(capsys.readouterr().out)
    cited = {ref for b in short["blocks"] for ref in b["refs"]}
    assert short["labels"] and set(short["labels"].values()) <= cited and ids["labels"] == {}
    assert all(f"[{ref}]" in b["text"] for b in ids["blocks"] if b["kind"] == "chunk" for ref in b["refs"])


@pytest.mark.slow  # seconds of indexing or waiting
def test_whole_documents_come_with_the_chunk_ids_their_rows_list_in_order(tmp_path):
    db, settings = tmp_path / "index.duckdb", Settings(mentions="titles")
    publish(SAMPLE, db, settings)
    asked = [json.loads(line)["question"] for line in (SAMPLE.parent / "2wiki_sample_questions.jsonl").open()]
    with Index(db) as index:
        split = {doc_id: chunk_ids for doc_id, chunk_ids in index.con.execute(
            "select doc_id, list(chunk_id order by ord) from chunks group by doc_id").fetchall()}
        documents = 0
        for question in asked:
            for budget in (512, 2048):
                context = index.query(question, budget=budget)
                for block in context.blocks:
                    if block.kind == "document":
                        assert block.refs == split[block.refs[0].rpartition("#")[0]]
                        documents += 1
        assert documents
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("select count(*) from documents where chunk_ids is null").fetchone()[0] == 0
    _, stages = publish(SAMPLE, db, settings)  # the run after a build finds nothing to do
    assert [s.work for s in stages if s.stage == "chunks"] == [SKIPPED]


@pytest.mark.slow  # seconds of indexing or waiting
@pytest.mark.parametrize(("corpus", "mode"), [(SEED, "given"), (SAMPLE, "titles")])
def test_an_entity_s_stored_evidence_gives_what_ranking_its_mentions_gives(tmp_path, corpus, mode):
    db = tmp_path / "index.duckdb"
    publish(corpus, db, Settings(mentions=mode))
    asked = [json.loads(line)["question"] for line in (SAMPLE.parent / "2wiki_sample_questions.jsonl").open()]
    with Index(db) as index:
        ids = [eid for (eid,) in index.con.execute("select entity_id from entities order by entity_id").fetchall()]
        stored = local.read(index.con, ids, None, None, index.answer_max_chars, stored=True)
        ranked = local.read(index.con, ids, None, None, index.answer_max_chars)
        assert stored[0] == ranked[0] and stored[1] == [row[:4] for row in ranked[1]]
        kinds = set()
        for question in [*QUESTIONS, *asked]:
            for budget in (300, 2048):
                context = index.query(question, budget=budget, direct=False)
                kinds |= {block.kind for block in context.blocks}
        assert {"answer", "relation", "chunk"} <= kinds


ZH = {"黄河有多长？": "z3", "北京大学创建于哪一年？": "z1", "熊猫吃什么？": "z6", "故宫以前叫什么？": "z4"}


def test_chinese_text_is_searchable_and_its_titles_name_entities(tmp_path: Path):
    db = tmp_path / "zh.duckdb"
    publish(DATA / "zh_sample.jsonl", db, Settings(mentions="titles"))
    with Index(db) as index:
        for question, doc in ZH.items():
            assert index.top(question, None)[0][1] == doc, question  # BM25 over pairs of characters
            context = index.query(question, budget=1024)
            assert context.route == "local" and context.seeds, (question, context.reason)
            assert any(ref.startswith(f"{doc}#") for block in context.blocks for ref in block.refs)
        for question in ("如何在Python中反转列表？", "怎样做红烧肉？"):
            assert index.query(question).blocks == [], question


TH = {"ทีมรับของแพนเธอร์สยอมแพ้ที่คะแนนเท่าไร": "a00-p0", "โรงละครคาบาเรต์แห่งแรกของวอร์ซอว์คือที่ไหน": "a01-p0",
      "การมาถึงของใครที่ทำให้ผู้ตั้งถิ่นฐานชาวไวกิงมีเอกลักษณ์ร่วมกัน": "a02-p0",
      "นอกเหนือจากความสำเร็จด้านวิทยาศาสตร์แล้ว เทสลายังมีชื่อเสียงในด้านใด": "a03-p0",
      "คำศัพท์ใดใช้เรียกภารกิจซึ่งโดยทั่วไปแล้วยินยอมให้ตัวมันเองได้รับการแก้ไขด้วยคอมพิวเตอร์": "a04-p0",
      "การลงโทษทางร่างกายมีผลต่อนักเรียนอย่างไรบ้าง?": "a05-p0"}  # XQuAD's Thai questions (tests/data/SOURCE.md)


def test_thai_text_is_searchable_and_each_question_is_routed_to_its_paragraph(tmp_path: Path):
    db = tmp_path / "th.duckdb"
    publish(DATA / "th_sample.jsonl", db, Settings())
    with Index(db) as index:
        for question, doc in TH.items():
            assert index.top(question, None)[0][1] == doc, question  # BM25 over pairs of letters
            context = index.query(question, budget=1024)
            assert context.route == "local", (question, context.reason)  # pairs, not letters every text uses
            assert any(ref.startswith(f"{doc}#") for ref in context.blocks[1].refs), question
        assert index.query("How do I reverse a list in Python?").blocks == []


@pytest.fixture(scope="module", params=["nlp", "titles"])
def sample_index(request, tmp_path_factory) -> Path:
    """The 2Wiki sample indexed in mode nlp and in mode titles (read-only use)."""
    db = tmp_path_factory.mktemp("lexical") / f"{request.param}.duckdb"
    publish(SAMPLE, db, Settings(mentions=request.param))
    return db


SAMPLE_WORDS = sorted({w for line in SAMPLE.read_text(encoding="utf-8").split("\n") if line
                       for w in re.findall(r"[A-Za-z]{4,}", json.loads(line)["text"])})[:3000]


@settings(max_examples=examples(0.5))
@given(picked=st.lists(st.sampled_from(SAMPLE_WORDS + ["cake", "recipe", "football", "python", "list"]),
                       min_size=1, max_size=8),
       budget=st.sampled_from([512, 1024, 2048, 4096]), wide=st.booleans())
def test_a_context_routed_anywhere_holds_bm25_s_best_chunk(sample_index, picked, budget, wide):
    question = ("What are the main themes across the documents about " if wide else "") + " ".join(picked) + "?"
    with Index(sample_index) as index:
        best = index.top(question, None)
        context = index.query(question, budget=budget)
    if context.route != "none" and best:
        assert best[0][0] in {ref for block in context.blocks for ref in block.refs}, (context.route, context.reason)


@pytest.mark.parametrize("forced", ["global", "mixed"])
def test_a_route_that_adds_reports_keeps_bm25_s_chunks_in_their_places_among_them(sample_index, forced):
    """A factoid sent where reports lead (a router's mistake, or the caller's) still holds BM25's best chunks where
    interleaving puts them: BM25's i-th chunk, as a block of its own, among the first 2i - 1 blocks after the
    instruction, reports beside."""
    question = "When did Lothair II's mother die?"
    with Index(sample_index) as index:
        best = [chunk_id for chunk_id, *_ in index.top(question, None)][:3]
        context = index.query(question, budget=4096, direct=False, route=forced)
    blocks = context.blocks[1:]
    assert any(b.kind == "report" for b in blocks), [b.kind for b in blocks]
    for i, chunk_id in enumerate(best, start=1):
        assert any(b.kind == "chunk" and b.refs == [chunk_id] for b in blocks[: 2 * i - 1]), \
            (i, [(b.kind, b.refs[:3]) for b in blocks[:6]])
