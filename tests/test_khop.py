"""Query `khop`: breadth-first reach over ranked edges, a fan-out cap, deterministic paths, any names."""

from collections import Counter
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from acervo.pipelines.bulk import insert
from acervo.pipelines.db import connect
from acervo.pipelines.query.khop import held, neighbourhood, stored, walk
from conftest import examples, index_of, write_jsonl


def cumulative(reached, hops: int) -> list[int]:
    per_depth = Counter(r.depth for r in reached)
    return [sum(per_depth[d] for d in range(h + 1)) for h in range(hops + 1)]


def test_reach_from_contrato_is_the_true_breadth_first_reach(seed):
    assert cumulative(neighbourhood(seed, ["contrato"], hops=4), 4) == [1, 5, 8, 9, 12]
    assert cumulative(neighbourhood(seed, ["contrato"], hops=4, cap=2), 4) == [1, 3, 6, 8, 9]


def test_every_entity_comes_once_with_a_path_of_real_edges(seed):
    reached = neighbourhood(seed, ["auditoria", "acesso a dados"], hops=3)
    assert len({r.entity_id for r in reached}) == len(reached)
    edges = set(seed.execute("select src, dst from edges").fetchall())
    for r in reached:
        assert len(r.path) == r.depth + 1 and r.path[-1] == r.entity_id
        assert all((a, b) in edges for a, b in zip(r.path, r.path[1:], strict=False))


def test_the_frontier_walk_equals_the_sql_walk_over_stored_and_held_edges(seed):
    rows = seed.execute("select src, dst, weight, rank from edges order by src, rank").fetchall()
    graph = {}
    for src, dst, weight, rank in rows:
        graph.setdefault(src, []).append((dst, weight, rank))
    for seeds in (["contrato"], ["auditoria", "acesso a dados"], ["rede", "faturação"]):
        for cap in (None, 1, 2, 4):
            in_sql = neighbourhood(seed, seeds, hops=4, cap=cap)
            assert walk(stored(seed), seeds, hops=4, cap=cap) == in_sql
            assert walk(held(graph), seeds, hops=4, cap=cap) == in_sql


def test_a_walk_reads_only_the_edges_of_the_entities_it_reaches(seed):
    asked = []
    neighbours = stored(seed)
    reached = walk(lambda ids, cap: asked.append(ids) or neighbours(ids, cap), ["contrato"], hops=2, cap=2)
    assert asked[0] == ["contrato"]
    assert asked[1] == sorted(r.entity_id for r in reached if r.depth == 1)
    assert len(asked) == 2


def test_paths_do_not_depend_on_seed_order(seed):
    one = neighbourhood(seed, ["auditoria", "acesso a dados"], hops=3)
    assert neighbourhood(seed, ["acesso a dados", "auditoria"], hops=3) == one


def test_a_name_with_a_bar_keeps_its_real_neighbour(tmp_path: Path):
    con = index_of(write_jsonl(tmp_path / "d.jsonl", [
        {"doc_id": "1", "text": "x", "entities": ["A|B", "B"]},
        {"doc_id": "2", "text": "y", "entities": ["B", "C"]}]))
    reached = {r.entity_id: r for r in neighbourhood(con, ["a|b"], hops=2)}
    assert set(reached) == {"a|b", "b", "c"}
    assert reached["c"].path == ("a|b", "b", "c")


@settings(max_examples=examples(0.4))
@given(st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11), st.integers(1, 4)), min_size=1, max_size=40),
       st.integers(0, 4), st.one_of(st.none(), st.integers(1, 3)))
def test_the_walk_equals_a_python_breadth_first_search(pairs, hops, cap):
    weights = {}
    for a, b, w in pairs:
        if a != b:
            weights[(f"n{min(a, b)}", f"n{max(a, b)}")] = w
    con = connect()
    assume(weights)
    rows = [(s, d, w) for (s, d), w in weights.items()] + [(d, s, w) for (s, d), w in weights.items()]
    ranked = {}
    for s, d, w in rows:
        ranked.setdefault(s, []).append((d, w))
    insert(con, "edges", ({"src": s, "dst": d, "weight": w, "rank": r}
                          for s, nbrs in ranked.items()
                          for r, (d, w) in enumerate(sorted(nbrs, key=lambda x: (-x[1], x[0])), start=1)))
    seed = rows[0][0]
    depth = {seed: 0}
    frontier = [seed]
    for h in range(1, hops + 1):
        nxt = []
        for s in frontier:
            for r, (d, _) in enumerate(sorted(ranked.get(s, []), key=lambda x: (-x[1], x[0])), start=1):
                if (cap is None or r <= cap) and d not in depth:
                    depth[d] = h
                    nxt.append(d)
        frontier = nxt
    in_sql = neighbourhood(con, [seed], hops=hops, cap=cap)
    assert {r.entity_id: r.depth for r in in_sql} == depth
    assert walk(stored(con), [seed], hops=hops, cap=cap) == in_sql
