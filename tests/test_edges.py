"""Stage `edges`: weights equal an independent pair count; ranks follow weight desc, then dst."""

import itertools
from collections import Counter
from pathlib import Path

from acervo.flows.index import build
from acervo.pipelines import edges
from acervo.pipelines.db import connect
from acervo.pipelines.run import Run
from acervo.pipelines.settings import Settings
from conftest import SEED, index_of, write_jsonl


def independent_pairs(con) -> Counter:
    by_chunk: dict[str, set[str]] = {}
    for eid, cid in con.execute("select entity_id, chunk_id from mentions").fetchall():
        by_chunk.setdefault(cid, set()).add(eid)
    pairs = Counter()
    for ents in by_chunk.values():
        for a, b in itertools.permutations(sorted(ents), 2):
            pairs[(a, b)] += 1
    return pairs


def test_seed_corpus_has_34_edge_rows_with_pair_count_weights(seed):
    rows = seed.execute("select src, dst, weight from edges").fetchall()
    assert len(rows) == 34
    assert {(s, d): w for s, d, w in rows} == dict(independent_pairs(seed))


def test_ranks_follow_weight_then_dst(seed):
    rows = seed.execute("select src, dst, weight, rank from edges order by src, rank").fetchall()
    for src, group in itertools.groupby(rows, key=lambda r: r[0]):
        group = list(group)
        expected = sorted(group, key=lambda r: (-r[2], r[1]))
        assert [r[3] for r in group] == list(range(1, len(group) + 1))
        assert [r[1] for r in group] == [r[1] for r in expected], src
    assert seed.execute("select dst, rank from edges where src = 'contrato' order by rank").fetchall() == [
        ("consentimento", 1), ("faturação", 2), ("renovação", 3), ("retenção de registros", 4)]


def test_weights_count_chunks_and_odd_names_keep_their_neighbours(tmp_path: Path):
    path = write_jsonl(tmp_path / "d.jsonl", [
        {"doc_id": "1", "text": "x", "entities": ["A|B", "B", "🚀"]},
        {"doc_id": "2", "text": "y", "entities": ["A|B", "B"]},
        {"doc_id": "3", "text": "z", "entities": ["B", 'Say "hi"']}])
    con = index_of(path)
    assert con.execute("select src, dst, weight, rank from edges where src in ('a|b', 'b') order by src, rank"
                       ).fetchall() == [("a|b", "b", 2, 1), ("a|b", "🚀", 1, 2),
                                        ("b", "a|b", 2, 1), ("b", 'say "hi"', 1, 2), ("b", "🚀", 1, 3)]
    assert con.execute("select degree from entities where entity_id = 'b'").fetchone() == (3,)


def test_min_weight_and_top_k_keep_each_entity_s_strongest_rows_and_a_rerun_with_new_settings_equals_fresh(seed):
    strict = index_of(SEED, edge_min_weight=2, edge_top_k=1)
    rows = strict.execute("select src, dst, weight, rank from edges order by src").fetchall()
    expected = {}
    for (src, dst), weight in sorted(independent_pairs(seed).items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][1])):
        if weight >= 2 and src not in expected:
            expected[src] = (src, dst, weight, 1)
    assert rows == sorted(expected.values())
    assert strict.execute("select count(*) from entities where degree > 1").fetchone() == (0,)
    build(Run.alone(strict), SEED, Settings())  # same documents, default settings: every edge row comes back
    assert strict.execute("select * from edges order by src, dst").fetchall() == \
        seed.execute("select * from edges order by src, dst").fetchall()


def pairs_of(con) -> set[tuple[str, str]]:
    return set(con.execute("select src, dst from edges where src < dst").fetchall())


def test_edge_window_counts_only_entities_named_in_the_same_paragraph_or_sentence(tmp_path: Path):
    source = write_jsonl(tmp_path / "d.jsonl", [
        {"doc_id": "1", "title": "Report", "text": "Alpha met Beta. Gamma stayed home.\n\nDelta was there too."},
        {"doc_id": "2", "title": "Notes", "text": "Alpha and Delta. Nothing else."}])
    gazetteer = tmp_path / "names.txt"
    gazetteer.write_text("Alpha\nBeta\nGamma\nDelta\n", encoding="utf-8")
    by_window = {window: index_of(source, mentions="gazetteer", gazetteer=gazetteer, edge_window=window)
                 for window in ("chunk", "paragraph", "sentence")}
    everything = {tuple(sorted(p)) for p in itertools.combinations(["alpha", "beta", "delta", "gamma"], 2)}
    assert pairs_of(by_window["chunk"]) == everything
    assert pairs_of(by_window["paragraph"]) == {("alpha", "beta"), ("alpha", "gamma"), ("beta", "gamma"),
                                                ("alpha", "delta")}
    assert pairs_of(by_window["sentence"]) == {("alpha", "beta"), ("alpha", "delta")}
    assert by_window["sentence"].execute("select weight from edges where src = 'alpha' and dst = 'delta'"
                                         ).fetchone() == (1,)  # only document 2 names both in one sentence
    assert by_window["sentence"].execute("select windows from mentions where entity_id = 'gamma'").fetchall() == [
        ([1],)]
    for window, con in by_window.items():  # the mentions themselves do not depend on the window
        assert con.execute("select entity_id, chunk_id from mentions order by all").fetchall() == \
            by_window["chunk"].execute("select entity_id, chunk_id from mentions order by all").fetchall(), window


def test_windows_are_found_alike_when_the_text_holds_the_private_character_acervo_cuts_windows_with(tmp_path: Path):
    texts = ["Alpha met Beta. Gamma stayed home.", "Alpha met Beta \ue000. Gamma stayed home."]
    gazetteer = tmp_path / "names.txt"
    gazetteer.write_text("Alpha\nBeta\nGamma\n", encoding="utf-8")
    for text in texts:
        source = write_jsonl(tmp_path / "d.jsonl", [{"doc_id": "1", "title": "T", "text": text}])
        con = index_of(source, mentions="gazetteer", gazetteer=gazetteer, edge_window="sentence")
        assert pairs_of(con) == {("alpha", "beta")}, text
        assert con.execute("select entity_id, windows from mentions order by all").fetchall() == [
            ("alpha", [0]), ("beta", [0]), ("gamma", [1])]


def test_a_title_counts_in_every_window_and_a_new_window_setting_equals_a_fresh_build(tmp_path: Path):
    source = write_jsonl(tmp_path / "d.jsonl", [
        {"doc_id": "1", "title": "Alpha", "text": "Beta is here. Gamma is there."},
        {"doc_id": "2", "title": "Beta", "text": "Plain words."},
        {"doc_id": "3", "title": "Gamma", "text": "More plain words."}])
    sentence = index_of(source, mentions="titles", edge_window="sentence")
    assert pairs_of(sentence) == {("alpha", "beta"), ("alpha", "gamma")}
    changed = index_of(source, mentions="titles")
    assert ("beta", "gamma") in pairs_of(changed)
    build(Run.alone(changed), source, Settings(mentions="titles", edge_window="sentence"))
    for table in ("mentions", "edges", "entities", "entity_answers"):
        assert changed.execute(f"select * from {table} order by all").fetchall() == \
            sentence.execute(f"select * from {table} order by all").fetchall(), table


def test_nlp_mode_windows_come_from_where_the_text_names_each_candidate(tmp_path: Path):
    records = [{"doc_id": str(i), "title": f"Memo {i}",
                "text": "The Bank of England raised rates. Maria Silva left the Ministry of Health."} for i in range(3)]
    source = write_jsonl(tmp_path / "d.jsonl", records)
    chunk = index_of(source, mentions="nlp", edge_window="chunk")
    sentence = index_of(source, mentions="nlp", edge_window="sentence")
    assert ("bank of england", "maria silva") in pairs_of(chunk)
    assert ("bank of england", "maria silva") not in pairs_of(sentence)
    assert ("maria silva", "ministry of health") in pairs_of(sentence)


def test_mentions_without_windows_count_their_whole_chunk(tmp_path: Path):
    con = connect(tmp_path / "index.duckdb")
    build(Run.alone(con), SEED, Settings())
    assert con.execute("select count(*) from mentions where windows = []").fetchone()[0] == \
        con.execute("select count(*) from mentions").fetchone()[0]
    before = con.execute("select * from edges order by all").fetchall()
    con.execute("update mentions set windows = null")  # null, as an outside writer may leave it: the whole chunk
    edges.run(Run.alone(con))
    assert con.execute("select * from edges order by all").fetchall() == before
    build(Run.alone(con), SEED, Settings(edge_window="sentence"))
    assert con.execute("select count(*) from edges").fetchone()[0] > 0
