"""Mode nlp: which candidates become entities, and why; a known name seeds a question however it is cased."""

import json
from pathlib import Path

from acervo.flows.cli import main
from acervo.flows.index import publish
from acervo.pipelines import stats
from acervo.pipelines.candidates import word_cases
from acervo.pipelines.query.context import Index
from acervo.pipelines.query.seeds import SeedFinder
from acervo.pipelines.settings import Settings
from conftest import index_of, write_jsonl

DOCS = [  # notes of a documentation site: "Fix" starts sentences, "Water" is a band
    {"doc_id": "d1", "title": "Notes", "text": "Fix the login bug. We fix bugs in MkDocs every week. Last night "
                                               "we saw Water play live in Lisbon."},
    {"doc_id": "d2", "title": "Setup", "text": "## Install\nInstall MkDocs with pip, then fix the config. "
                                               "Tickets for Water sold out in Lisbon."},
    {"doc_id": "d3", "title": "Team", "text": "Fix typos first. The team in Lisbon drinks water and writes "
                                              "MkDocs plugins."}]
NOTICIAS = [  # Portuguese news: "Segundo" and "Assim" start sentences, "segundo" and "assim" are common words
    {"doc_id": "p1", "title": "Relatório", "text": "Segundo o relatório, a Petrobras investiu em Brasília. O "
                                                   "segundo relatório saiu depois."},
    {"doc_id": "p2", "title": "Escritório", "text": "Segundo a Petrobras, o escritório de Brasília cresceu. "
                                                    "Assim, o segundo andar ficou pronto."},
    {"doc_id": "p3", "title": "Parceria", "text": "Assim começou a parceria entre a Petrobras e o Banco Branco, "
                                                  "em Brasília, e assim por diante. O carro branco parou."}]


def test_word_cases_tell_capitals_in_mid_sentence_from_capitals_by_place_in_both_languages():
    cases = {w: (lower, mid, other) for w, lower, mid, other in word_cases(
        "Fix the bug. We fix it in Lisbon, Lisbon.\n## Install Guide\n- Note: run `Fix` and `fix`")}
    assert cases["fix"] == (1, 0, 1)  # code spans do not count
    assert cases["lisbon"] == (0, 2, 0)  # after a word in lower case, and after a comma
    assert cases["install"] == (0, 0, 1) and cases["guide"] == (0, 0, 1)  # a heading: capitals by place
    assert cases["note"] == (0, 0, 1)
    assert ("siscad", 0, 1, 0) in word_cases("kept in the registry (Siscad).")  # a parenthesis inside a sentence
    pt = {w: (lower, mid, other) for w, lower, mid, other in word_cases(
        "Segundo o relatório, o segundo lugar ficou com Brasília. Assim, em Brasília se vive.")}
    assert pt["segundo"] == (1, 0, 1) and pt["assim"] == (0, 0, 1) and pt["brasília"] == (0, 2, 0)


def test_words_capitalised_by_their_place_are_no_entities_and_names_are_in_both_languages(tmp_path: Path):
    con = index_of(write_jsonl(tmp_path / "en.jsonl", DOCS), mentions="nlp", nlp_min_chunks=2)
    assert [e for (e,) in con.execute("select entity_id from entities order by 1").fetchall()] == [
        "lisbon", "mkdocs", "water"]
    decided = dict(con.execute("select entity_id, reason from candidate_decisions").fetchall())
    assert decided["fix"] == "position" and decided["install"] == "rare" and decided["water"] == "entity"
    pt = index_of(write_jsonl(tmp_path / "pt.jsonl", NOTICIAS), mentions="nlp", nlp_min_chunks=2)
    assert [e for (e,) in pt.execute("select entity_id from entities order by 1").fetchall()] == [
        "brasília", "petrobras"]
    decided = dict(pt.execute("select entity_id, reason from candidate_decisions").fetchall())
    assert decided["segundo"] == "position" and decided["assim"] == "position"


def test_a_rejected_candidate_is_explained_with_its_counts(tmp_path: Path, capsys):
    db = tmp_path / "docs.duckdb"
    source = write_jsonl(tmp_path / "en.jsonl", DOCS)
    assert main(["index", str(source), "--db", str(db), "--mentions", "nlp", "--no-prefect"]) == 0
    capsys.readouterr()
    assert main(["entities", "--db", str(db), "--why", "fix", "LISBON", "plugins"]) == 0
    fix, lisbon, plugins = capsys.readouterr().out.splitlines()
    assert fix.startswith("Fix (no entity, in 2 chunks): rejected: a common word capitalised by its place")
    assert "the corpus writes it: in lower case 2 times, capitalised in mid-sentence 0" in fix
    assert lisbon.startswith("Lisbon (entity, in 3 chunks): kept") and "in lower case finds it" not in lisbon
    assert plugins.startswith("plugins (no entity, in 0 chunks): no chunk has it as a candidate")
    con = index_of(source, mentions="nlp")
    assert [d["name"] for d in stats.decisions(con, rejected=True, top=2)] == ["Fix", "Install"]


def test_a_name_the_corpus_seldom_writes_in_lower_case_seeds_a_lower_case_question(tmp_path: Path):
    con = index_of(write_jsonl(tmp_path / "en.jsonl", DOCS), mentions="nlp", nlp_min_chunks=2)
    seeds = SeedFinder(con, capitals=True)
    assert [s.entity_id for s in seeds.find("how do I install mkdocs plugins")] == ["mkdocs"]
    # one capitalised word is what a common word looks like at a sentence start: only its capital names it
    assert seeds.find("is the water in lisbon safe") == []
    assert sorted(s.entity_id for s in seeds.find("When did Water play in Lisbon?")) == ["lisbon", "water"]
    assert seeds.find("what did they fix") == []
    pt = index_of(write_jsonl(tmp_path / "pt.jsonl", NOTICIAS), mentions="nlp", nlp_min_chunks=1)
    found = SeedFinder(pt, capitals=True)
    assert [s.entity_id for s in found.find("o banco branco fica em brasília?")] == ["banco branco"]
    assert found.find("o carro branco parou?") == []


CALLS = [  # earnings calls: "Teams" and "Dynamics" are products, "the team" and "team members" are not names
    {"doc_id": f"c{i}", "title": f"Call {i}",
     "text": f"Our team grew this quarter. Usage of Teams rose to {300 + i} million monthly users, and Dynamics "
             "revenue grew. Team members joined Teams calls. The team thanks everyone."} for i in range(4)]


def test_a_plural_written_as_a_name_is_kept_though_its_singular_is_a_common_word(tmp_path: Path):
    con = index_of(write_jsonl(tmp_path / "c.jsonl", CALLS), mentions="nlp", nlp_min_chunks=2)
    decided = {eid: (kept, reason) for eid, kept, reason in
               con.execute("select entity_id, kept, reason from candidate_decisions").fetchall()}
    assert decided["team"] == (False, "position") and decided["teams"] == (True, "entity")
    assert decided["dynamics"] == (True, "entity")
    seeds = SeedFinder(con, capitals=True)
    assert [s.entity_id for s in seeds.find("How many monthly users does Teams have?")] == ["teams"]
    assert seeds.find("How many people are on the team?") == []


HEALTH = [  # reports that name the World Health Organization by its acronym, a stop word in lower case
    {"doc_id": f"h{i}", "title": f"Report {i}",
     "text": f"The World Health Organization (WHO) met in Geneva in {2000 + i}. Doctors who work there said the "
             f"WHO would publish its guidance on malaria. Nobody knows who wrote it. Each of the {i + 1} delegates "
             "from the US agreed."} for i in range(4)]


def test_an_acronym_spelled_as_a_stop_word_is_a_name_where_the_question_and_the_text_write_it_in_capitals(
        tmp_path: Path):
    db = tmp_path / "h.duckdb"
    publish(write_jsonl(tmp_path / "h.jsonl", HEALTH), db, Settings(mentions="nlp", nlp_min_chunks=2))
    with Index(db) as index:
        asked = index.query("Why might an organization like the WHO be necessary?")
        assert asked.route == "local" and "World Health Organization" in asked.reason
        assert "US" in index.query("Which delegates came from the US?").reason
        assert "World Health Organization" not in index.query("who wrote the malaria guidance?").reason
        assert "World Health Organization" not in index.query("WHO WROTE THE MALARIA GUIDANCE?").reason
    titled = tmp_path / "t.duckdb"  # no entity holds WHO: the text that writes it in capitals is the evidence
    publish(write_jsonl(tmp_path / "h.jsonl", HEALTH), titled, Settings(mentions="titles"))
    with Index(titled) as index:
        asked = index.query("Why might an organization like the WHO be necessary?")
        assert asked.route == "local" and "names WHO" in asked.reason
        assert index.query("why might an organization like who be necessary?").route == "none"


def test_a_phrase_that_only_opens_sentences_is_no_entity_but_a_name_written_mid_sentence_is(tmp_path: Path):
    records = [
        {"doc_id": "s1", "title": "One", "text": "Keeping America strong is our task. We are keeping taxes low "
                                                 "in New York."},
        {"doc_id": "s2", "title": "Two", "text": "Keeping America safe comes first. New York agrees."},
        {"doc_id": "s3", "title": "Três", "text": "Segundo Lula, o Banco Central errou. O segundo ano foi "
                                                  "melhor para o Banco Central."},
        {"doc_id": "s4", "title": "Quatro", "text": "Segundo Lula, a meta do Banco Central caiu."}]
    con = index_of(write_jsonl(tmp_path / "s.jsonl", records), mentions="nlp", nlp_min_chunks=2)
    decided = dict(con.execute("select entity_id, reason from candidate_decisions").fetchall())
    assert decided["keeping america"] == "opening" and decided["segundo lula"] == "opening"
    assert decided["new york"] == "entity" and decided["banco central"] == "entity"


def test_stats_of_an_nlp_index_count_its_candidate_decisions_and_a_rerun_needs_no_flags(tmp_path: Path, capsys):
    source, db = tmp_path / "docs.jsonl", tmp_path / "docs.duckdb"
    write_jsonl(source, DOCS)
    args = ["index", str(source), "--db", str(db), "--mentions", "nlp", "--no-prefect"]
    assert main(args) == 0
    assert main(args[:4] + ["--no-prefect"]) == 0  # its stored settings: nothing else to give
    capsys.readouterr()
    assert main(["stats", "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tables"]["candidate_decisions"] > 0


def test_an_acronym_with_stops_is_an_entity_a_question_names(tmp_path: Path):
    records = [{"doc_id": f"n{i}", "title": f"News {i}",
                "text": f"The U.S. Senate voted on bill {i} in Washington D.C. on Monday. Observers from the U.N. "
                        "watched."} for i in range(3)]
    con = index_of(write_jsonl(tmp_path / "n.jsonl", records), mentions="nlp", nlp_min_chunks=2)
    assert {"u.s.", "u.n.", "washington d.c."} <= {e for (e,) in con.execute("select entity_id from entities")
                                                    .fetchall()}
    seeds = SeedFinder(con, capitals=True)
    assert [s.entity_id for s in seeds.find("What did the U.N. observers see?")] == ["u.n."]
