"""Query `router` and `seeds`: every rule on its own, in Portuguese and English (the collection cues in Spanish and
German too), and the seed examples."""

import pytest

from acervo.pipelines.query.router import SUBJECT_DOCUMENTS, Closeness, asks_many, route, subject
from acervo.pipelines.query.seeds import Seed, SeedFinder, specific, usable

AUDITORIA = Seed("auditoria", "Auditoria", 2)


@pytest.mark.parametrize(("question", "seeds", "expected"), [
    ("o que os documentos sobre auditoria de acesso dizem", [AUDITORIA], "local"),
    ("quais são os temas que dominam este acervo", [], "global"),
    ("auditoria de acesso, no contexto geral", [AUDITORIA], "mixed"),
    ("como faço bolo de cenoura", [], "none"),
    ("me dê um panorama da auditoria", [AUDITORIA], "mixed"),
    ("quais os temas do acervo", [], "global"),
    ("What are the main themes across the documents?", [], "global"),
    ("Give me an overview", [], "global"),
    ("What does the audit policy say about Auditoria?", [AUDITORIA], "local"),
    ("Auditoria in the broader context, please", [AUDITORIA], "mixed"),
    ("How do I bake a carrot cake?", [], "none"),
])
def test_each_rule_routes_with_a_reason(question, seeds, expected):
    decision = route(question, seeds)
    assert decision.route == expected
    assert decision.reason


def test_the_seed_examples_route_local_global_mixed_and_none(seed):
    finder = SeedFinder(seed)
    questions = ["o que os documentos sobre auditoria de acesso dizem", "quais são os temas que dominam este acervo",
                 "auditoria de acesso, no contexto geral", "como faço bolo de cenoura"]
    routes = [route(q, finder.find(q)).route for q in questions]
    assert routes == ["local", "global", "mixed", "none"]


def test_seeds_are_found_by_any_spelling_and_the_floor_drops_stop_words(seed):
    finder = SeedFinder(seed)
    found = finder.find("retencao de registros e autenticacao?")
    assert {s.entity_id for s in found} == {"retenção de registros", "autenticação"}
    shouted = finder.find("RETENÇÃO DE REGISTROS E AUTENTICAÇÃO?")
    assert {s.entity_id for s in shouted} == {"retenção de registros", "autenticação"}
    assert [s.n_chunks for s in found] == sorted(s.n_chunks for s in found)
    assert finder.find("como faço bolo de cenoura") == []
    assert not specific(("de",)) and not specific(("a",)) and specific(("rede",))
    assert usable(("de",)) and not usable(("a",))  # "DE", written in capitals, may name an acronym


def test_words_that_match_indexed_text_seed_a_question_that_names_nothing():
    decision = route("what happened in the retention audit", [], by_words=[AUDITORIA], profile=1.8)
    assert decision.route == "local" and "words match indexed text" in decision.reason
    assert "search profile 1.8" in decision.reason
    assert route("quais são os temas", [], by_words=[AUDITORIA]).route == "global"


def test_in_a_question_that_capitalises_names_a_lower_case_phrase_does_not_seed(seed):
    finder = SeedFinder(seed)
    assert [s.entity_id for s in finder.find("Quem assina a Renovação do contrato?")] == ["renovação"]
    assert {s.entity_id for s in finder.find("Quem assina a renovação do contrato?")} == {"renovação", "contrato"}


def test_a_name_the_text_uses_but_no_entity_holds_routes_local_without_seeds():
    decision = route("What nationality is Lamprocles's father?", [], by_name=["Lamprocles"])
    assert decision.route == "local" and decision.seeds == () and "Lamprocles" in decision.reason
    assert route("What is Lamprocles?", [], by_words=[AUDITORIA], by_name=["Lamprocles"]).seeds == (AUDITORIA,)
    assert route("What are the main themes?", [], by_name=["Lamprocles"]).route == "global"


def test_in_an_index_of_names_found_by_their_capitals_only_a_capitalised_name_seeds(seed):
    finder = SeedFinder(seed, capitals=True)  # as for an nlp or spacy index
    assert finder.find("what is the best way to handle retenção de registros") == []
    assert [s.entity_id for s in finder.find("what is the best way to handle Retenção de Registros")] == [
        "retenção de registros"]


WIDESPREAD = {"recur": 0.1, "topic": 0.4, "tech": 0.95, "leade": 0.9, "empha": 0.6, "guest": 1.0, "discu": 0.8,
              "share": 0.9, "inves": 0.7, "tema": 0.6, "ciclo": 0.3, "discur": 0.9, "presi": 0.9, "gover": 0.8,
              "econo": 0.7, "water": 0.4, "shoul": 1.0, "succu": 0.03, "indoo": 0.02, "popul": 0.2, "city": 0.3,
              "discr": 0.9, "falam": 0.5, "chall": 0.8, "most": 1.0}


def share(word_stem: str) -> float:
    return WIDESPREAD.get(word_stem, 0.0)


@pytest.mark.parametrize("question", [
    "Which challenges do tech leaders most often emphasize?",
    "Com que frequência os presidentes falam de economia e governo nos discursos?",
    "Quais desafios são comuns nos discursos dos presidentes sobre o governo?",
])
def test_a_collection_question_in_english_or_portuguese_routes_global_naming_cue_and_spread(question):
    decision = route(question, [], share=share)
    assert decision.route == "global", decision.reason
    assert "asks about many documents" in decision.reason and "% of the documents" in decision.reason


def test_a_cue_without_widespread_words_or_widespread_words_without_a_cue_stay_out_of_global():
    assert route("How often should I water a succulent indoors?", [], share=share).route == "none"
    assert route("What is the most common population of a city?", [], share=lambda s: 0.01).route == "none"
    assert route("Which tech leaders share quinoa recipes?", [], share=share).route == "none"  # two rare words
    assert route("Which tech leaders most often emphasize investing?", [], share=None).route == "none"


def test_a_question_that_names_nothing_but_whose_words_found_text_gets_reports_beside_it_when_it_has_a_cue():
    cued = route("What are common occupations of the people in these texts?", [], by_words=[AUDITORIA], share=None)
    assert cued.route == "mixed" and cued.seeds == (AUDITORIA,) and "('common')" in cued.reason
    plain = route("What was the occupation of the audited man?", [], by_words=[AUDITORIA], share=None)
    assert plain.route == "local" and plain.seeds == (AUDITORIA,)
    assert route("What are common occupations?", [], share=None).route == "none"  # a cue alone finds nothing


def test_meaning_does_not_refuse_a_question_about_what_many_documents_say_its_words_decide():
    far = Closeness(0.80, 0.83, 0.45)  # no chunk close, words held below HELD_SHARE
    many = "Which professions appear most often among the people described?"
    assert route(many, [], by_words=[AUDITORIA], closeness=far, share=None).route == "mixed"
    assert route(many, [], closeness=far, share=None).route == "none"  # its words found nothing either
    close = route(many, [], closeness=Closeness(0.85, 0.83, 0.1), share=None)
    assert close.route == "mixed" and "close to it in meaning" in close.reason  # meaning may still find its text
    one = "Which profession did the audited man have?"
    assert route(one, [], by_words=[AUDITORIA], closeness=far, share=None).route == "none"


def test_meaning_routes_a_question_about_the_collection_in_any_language_global_and_refuses_none_of_them():
    german = "Quali argomenti ricorrono più spesso nei testi?"  # Italian: no cue of the router's lists
    about = Closeness(0.80, 0.83, 0.1, collection=0.81, contrast=0.05)  # below the floor, like its chunks
    assert route(german, [], closeness=about, share=None).route == "global"
    assert "by meaning" in route(german, [], closeness=about, share=None).reason
    named = route(german, [AUDITORIA], closeness=about, share=None)
    assert named.route == "mixed" and named.seeds == (AUDITORIA,)  # rule 1: its name, and reports beside it
    everyday = Closeness(0.80, 0.83, 0.1, collection=0.81, contrast=-0.01)  # more like an unrelated question
    assert route(german, [], closeness=everyday, share=None).route == "none"
    answered = Closeness(0.90, 0.83, 0.1, collection=0.81, contrast=0.05)  # one chunk is far closer: a factoid
    assert route(german, [], closeness=answered, share=None).route == "local"
    unknown = Closeness(0.80, 0.83, 0.1)  # not compared (no packaged model): the router's words decide
    assert route(german, [], closeness=unknown, share=None).route == "none"


@pytest.mark.parametrize("question", [
    "¿Cuáles son los temas principales de esta colección?",
    "Haz un resumen de lo que cuentan los textos.",
    "Gib mir einen Überblick über die Sammlung.",
    "Was sind die Hauptthemen dieser Texte?",
])
def test_a_request_for_an_overview_in_spanish_or_german_routes_global(question):
    decision = route(question, [], share=None)
    assert decision.route == "global" and "asks about the collection as a whole" in decision.reason


def test_a_named_entity_asking_what_recurs_across_documents_routes_mixed_one_document_or_verb_alone_local():
    stadt = Seed("Städte", "Städte", 9)  # German writes every noun with a capital: found names hold common nouns
    german = route("Welche Städte werden in den Texten am häufigsten erwähnt?", [stadt], share=None)
    assert german.route == "mixed" and german.seeds == (stadt,)
    assert german.reason == "names Städte and asks what recurs across documents ('haufigsten', 'texten')"
    english = route("Which findings of Auditoria are mentioned most often?", [AUDITORIA], share=None)
    assert english.route == "mixed" and "('often', 'mentioned')" in english.reason
    assert route("What did Auditoria say about retention?", [AUDITORIA], share=None).route == "local"
    assert route("What recurring role does Auditoria play in the episode?", [AUDITORIA], share=None).route == "local"


def test_a_named_entity_with_a_collection_question_routes_mixed():
    decision = route("How often do guests discuss Auditoria with tech leaders?", [AUDITORIA], share=share)
    assert decision.route == "mixed" and "Auditoria" in decision.reason and "often" in decision.reason


def test_a_question_all_of_whose_words_but_its_rarest_are_widespread_routes_global_without_a_cue():
    decision = route("Which tech leaders share investing advice?", [], share=share)
    assert decision.route == "global" and "all its words but its rarest" in decision.reason
    assert "'investing', in 70%" in decision.reason
    assert route("Which tech leaders share investing advice?", [], share=lambda s: 0.2).route == "none"


def test_a_global_question_s_subject_is_what_it_asks_without_its_cue_or_request_for_an_overview():
    assert subject("What are the recurring themes about AI ethics across the episodes?") == "ai ethics"
    assert subject("Quais são os temas comuns sobre renovação de contratos?") == "renovacao contratos"
    assert subject("What are the main themes?") == subject("Quais são os principais temas discutidos?") == ""
    assert subject("What are the main themes of the collection?") == subject("Quais os temas do acervo?") == ""


@pytest.mark.parametrize(("question", "cue", "refers"), [
    ("Which countries are mentioned most frequently?", "frequently", "mentioned"),
    ("Quais instituições são citadas com mais frequência?", "com mais frequencia", "citadas"),
    ("What do most of these articles have in common?", "common", "articles"),
    ("O que os documentos dizem sobre pesquisa?", "documentos", "dizem"),
    ("Which cities come up repeatedly in the articles?", "repeatedly", "come up"),
    ("Que assuntos aparecem com mais frequência nos textos?", "assuntos", "aparecem"),
    ("¿Qué ciudades se mencionan con más frecuencia?", "con mas frecuencia", "mencionan"),
    ("¿Qué tendencias se repiten en los documentos?", "tendencias", "documentos"),
    ("Welche Länder tauchen in den Texten am häufigsten auf?", "haufigsten", "texten"),
    ("Welche Organisationen erscheinen immer wieder?", "immer wieder", "erscheinen"),
])
def test_a_cue_with_another_word_for_the_collection_s_text_asks_what_many_documents_say(question, cue, refers):
    assert asks_many(question) == (cue, refers)


@pytest.mark.parametrize("question", [
    "Quais alguns exemplos de atividades de extensão?",  # two cues, no word for the text: one document's list
    "Quando o computador foi originalmente descrito?",  # one word, both
    "Quais são os dispositivos de entrada mais comuns?",  # an input device is no entry of the collection
    "How often should I water a succulent indoors?",
])
def test_a_cue_alone_or_one_word_for_both_does_not_ask_what_many_documents_say(question):
    assert asks_many(question) is None


def test_a_question_asking_what_many_documents_say_routes_global_when_enough_documents_write_about_its_subject():
    question = "Which countries are mentioned most frequently?"
    decision = route(question, [], about=("countries", SUBJECT_DOCUMENTS))
    assert decision.route == "global"
    assert decision.reason == ("names no entity and asks what many documents say ('frequently', 'mentioned') about "
                               "'countries', which 3 documents write about")
    assert route(question, [], about=("countries", SUBJECT_DOCUMENTS - 1)).route == "none"  # off-topic: written nowhere
    assert route(question, [], about=None).route == "none"  # not looked at
    itself = route("What do most of these articles have in common?", [], about=("", 0))
    assert itself.route == "global" and itself.reason.endswith("about the collection itself")
    assert route("Quais alguns exemplos de atividades?", [], about=("atividades", 9)).route == "none"  # cue alone


def test_a_subject_leaves_out_the_collection_s_items_and_how_they_hold_it():
    assert subject("Which cities come up repeatedly in the articles?") == "cities"
    assert subject("Que assuntos aparecem com mais frequência nos documentos?") == ""
    assert subject("Which languages are mentioned across the episodes?") == "languages"
    assert subject("Compare os cursos descritos nos documentos.") == "cursos"
    assert subject("What similarities are there among the films described?") == "films"
    assert subject("O que os documentos dizem sobre cursos com estágio?") == "cursos estagio"
