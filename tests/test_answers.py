"""Stage `entity_answers`: one verbatim sentence per entity, from a chunk that mentions it."""

import json
from pathlib import Path

from acervo.flows.index import build
from acervo.pipelines.answer_choice import Candidate, choose, clipped
from acervo.pipelines.run import Run
from acervo.pipelines.settings import Settings
from conftest import SAMPLE, SEED, index_of, write_jsonl


def assert_answers_are_verbatim_and_grounded(con) -> None:
    rows = con.execute("""
        select a.entity_id, a.answer, c.text, m.entity_id is not null
        from entity_answers a
        join chunks c on c.chunk_id = a.evidence_ref
        left join mentions m on m.chunk_id = a.evidence_ref and m.entity_id = a.entity_id""").fetchall()
    assert len(rows) == con.execute("select count(*) from entities").fetchone()[0]
    for eid, answer, text, mentioned in rows:
        assert answer and answer in text, eid
        assert mentioned, eid


def test_every_seed_answer_occurs_in_its_evidence_chunk_which_mentions_the_entity(seed):
    assert_answers_are_verbatim_and_grounded(seed)


def test_every_sample_answer_is_grounded_too():
    con = index_of(SAMPLE, mentions="titles")
    assert_answers_are_verbatim_and_grounded(con)
    answer = con.execute("select answer from entity_answers where entity_id = 'teutberga'").fetchone()[0]
    assert answer.startswith("Teutberga( died 11 November 875) was a queen of Lotharingia")


def test_a_defining_sentence_that_names_the_entity_is_preferred():
    texts = {
        "c1": "Many things happen here. Others mention the rede only in passing.",
        "c2": "Something else entirely. A rede é o conjunto de enlaces da empresa.",
    }
    cands = [Candidate("c1", "h1", 0, "Other", 1), Candidate("c2", "h2", 0, "Other", 3)]
    assert choose(["Rede"], cands, texts, max_chars=400) == ("A rede é o conjunto de enlaces da empresa.", "c2")


def test_the_chunk_titled_after_the_entity_wins_ties():
    texts = {"c1": "Ada Lovelace was a writer.", "c2": "Ada Lovelace was a mathematician."}
    cands = [Candidate("c1", "h1", 0, "Poets", 1), Candidate("c2", "h2", 0, "Ada Lovelace", 1)]
    assert choose(["Ada Lovelace"], cands, texts, max_chars=400)[1] == "c2"


def test_the_lead_sentence_of_the_entity_s_own_document_wins_over_a_passing_mention():
    texts = {"c1": "Lambert was the son of Bertha, daughter of Lothair II, and of Adalbert.",
             "c2": "Bertha (863-925) was countess of Arles. She married twice."}
    cands = [Candidate("c1", "h1", 0, "Lambert", 2), Candidate("c2", "h2", 0, "Bertha, daughter of Lothair II", 1)]
    assert choose(["Bertha, daughter of Lothair II"], cands, texts, max_chars=400) == (
        "Bertha (863-925) was countess of Arles.", "c2")


def test_a_sentence_longer_than_max_chars_is_cut_at_a_clause_or_a_word_and_stays_verbatim():
    clauses = ("o regime de exercícios domiciliares deve ser protocolizado imediatamente, ficando sem efeito a "
               "solicitação retroativa; o prazo conta da data do protocolo e termina na data do laudo médico")
    words_only = "o aluno " + "regularmente matriculado " * 20 + "pode pedir o regime"
    for text, ends in ((clauses, "ficando sem efeito a solicitação retroativa"), (words_only, "regularmente")):
        answer, ref = choose(["Regime"], [Candidate("c1", "h1", 0, "Regime", 1)], {"c1": text}, max_chars=120)
        assert ref == "c1" and text.startswith(answer) and len(answer) <= 120 and answer.endswith(ends), answer
        assert text[len(answer)] in " ;" and len(answer) > 60  # at a clause or a word, not a cut word
    assert clipped("," * 200 + " x", 120) == "," * 120  # nothing but marks before the limit: cut at it, never empty


def test_the_input_hash_follows_exactly_the_inputs(tmp_path: Path):
    records = [json.loads(line) for line in SEED.read_text(encoding="utf-8").splitlines()]
    con = index_of(write_jsonl(tmp_path / "a.jsonl", records))
    before = dict(con.execute("select entity_id, input_hash from entity_answers").fetchall())
    records[6]["title"] = "Acesso a dados, renamed"
    build(Run.alone(con), write_jsonl(tmp_path / "b.jsonl", records), Settings())
    after = dict(con.execute("select entity_id, input_hash from entity_answers").fetchall())
    assert {e for e in after if after[e] != before[e]} == {"acesso a dados", "autenticação"}
    build(Run.alone(con), write_jsonl(tmp_path / "b.jsonl", records), Settings(answer_max_chars=300))
    assert all(h != after[e] for e, h in con.execute("select entity_id, input_hash from entity_answers").fetchall())


def test_answers_work_for_odd_names(tmp_path: Path):
    path = write_jsonl(tmp_path / "d.jsonl", [
        {"doc_id": "1", "text": 'The "A|B" group works with B daily. 🚀 Launch is a rocket.',
         "entities": ["A|B", "B", "🚀 Launch"]},
        {"doc_id": "2", "text": "שלום עולם היא ברכה.", "entities": ["שלום עולם"]}])
    con = index_of(path)
    assert_answers_are_verbatim_and_grounded(con)
    assert con.execute("select answer from entity_answers where entity_id = '🚀 launch'").fetchone() == (
        "🚀 Launch is a rocket.",)
