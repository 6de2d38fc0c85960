"""Stage `edges`: weights equal an independent pair count; ranks follow weight desc, then dst."""

import itertools
from collections import Counter
from pathlib import Path

from conftest import SEED, index_of, write_jsonl
from flows.index import build
from pipelines.settings import Settings


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
    build(strict, SEED, Settings())  # same documents, default settings: every edge row comes back
    assert strict.execute("select * from edges order by src, dst").fetchall() == \
        seed.execute("select * from edges order by src, dst").fetchall()
