"""Stage `edges`: weights equal an independent pair count; ranks follow weight desc, then dst."""

import itertools
from collections import Counter
from pathlib import Path

from conftest import index_of, write_jsonl


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
