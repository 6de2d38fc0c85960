"""Query `budget`: no orphan, the instruction never cut, truncation with a correct denominator."""

from hypothesis import given, settings
from hypothesis import strategies as st

from acervo.pipelines import tokens
from acervo.pipelines.query.budget import INSTRUCTION, Unit, select, sliced
from conftest import examples


def words(text: str) -> int:
    return len(text.split())


def tree(shape: list[tuple[int, int, float]]) -> list[Unit]:
    """Units from (parent index or -1, words, score) triples; parents always come earlier."""
    units = []
    for i, (parent, n, score) in enumerate(shape):
        up = units[parent % len(units)].key if parent >= 0 and units else None
        units.append(Unit("node", f"u{i:03d}", " ".join(["w"] * n), (f"c{i}",), score, up))
    return units


def test_hand_checked_budgets():
    instruction = Unit(INSTRUCTION, "i", "answer only from the context below please")  # 7 words
    units = [instruction, Unit("node", "a", "w " * 10, score=1.0), Unit("node", "b", "w " * 10, score=0.5, parent="a"),
             Unit("node", "c", "w " * 3, score=0.4, parent="a"), Unit("node", "d", "w " * 2, score=0.9)]
    s = select(units, budget=20, count=words)
    assert [u.key for u in s.units] == ["i", "a", "d"]
    assert s.refused == ["b", "c"] and s.truncation_rate == 0.5
    assert s.spent == 19 and s.by_kind == {INSTRUCTION: 7, "node": 12} and s.components == 2
    s = select(units, budget=30, count=words)
    assert [u.key for u in s.units] == ["i", "a", "d", "b"] and s.refused == ["c"] and s.truncation_rate == 0.25
    assert select(units, budget=3, count=words).units == [instruction]
    assert select(units, budget=3, count=words).truncation_rate == 1.0


def test_a_refused_unit_does_not_stop_a_smaller_sibling():
    units = [Unit("node", "a", "w", score=1.0), Unit("node", "big", "w " * 50, score=0.9, parent="a"),
             Unit("node", "small", "w", score=0.1, parent="a")]
    assert [u.key for u in select(units, budget=5, count=words).units] == ["a", "small"]


@settings(max_examples=examples(2))
@given(st.lists(st.tuples(st.integers(-1, 30), st.integers(1, 40), st.floats(0, 1)), min_size=1, max_size=30),
       st.integers(0, 400))
def test_any_budget_keeps_every_chosen_unit_attached_and_the_instruction_whole(shape, budget):
    instruction = Unit(INSTRUCTION, "i", "use only this context")
    units = [instruction, *tree(shape)]
    s = select(units, budget=budget, count=words)
    keys = [u.key for u in s.units]
    assert keys[0] == "i" and s.tokens[0] == 4
    parents = {u.key: u.parent for u in units}
    assert all(parents[k] is None or parents[k] in keys[: keys.index(k)] for k in keys[1:])
    assert s.spent <= max(budget, 4) and len(keys) == len(set(keys))
    assert len(s.refused) == len(set(s.refused)) == len(units) - len(s.units)
    assert s.truncation_rate == (len(units) - len(s.units)) / (len(units) - 1)
    assert s.components == sum(1 for u in s.units if u.parent is None and u.kind != INSTRUCTION)


@settings(max_examples=examples(1))
@given(st.lists(st.integers(1, 30), min_size=1, max_size=20), st.integers(10, 300))
def test_slices_cede_leftovers_forward_only(sizes, budget):
    units = [Unit("chunk" if i % 2 else "node", f"k{i:02d}", " ".join(["w"] * n), score=1 / (i + 1))
             for i, n in enumerate(sizes)]
    groups = [(0.5, [u for u in units if u.kind == "node"]), (0.5, [u for u in units if u.kind == "chunk"])]
    s = sliced([], groups, budget=budget, count=words)
    node_cost = sum(n for u, n in zip(s.units, s.tokens, strict=True) if u.kind == "node")
    assert node_cost <= budget // 2
    assert s.spent <= budget


def test_token_counts_come_from_tiktoken():
    unit = Unit("node", "a", "A renovação automática vale quando não há recusa.")
    assert select([unit], budget=13, count=tokens.count).tokens == [13]
    assert select([unit], budget=12, count=tokens.count).units == []


def test_a_slice_lets_a_child_in_after_its_parent_even_when_the_child_scores_higher():
    units = [Unit("node", "a", "w", score=0.9), Unit("node", "b", "w", score=0.3),
             Unit("node", "c", "w", score=0.4, parent="b")]
    s = sliced([], [(1.0, units)], budget=100, count=words)
    assert [u.key for u in s.units] == ["a", "b", "c"] and s.refused == []


def test_a_short_answer_whose_chunk_is_in_makes_room_unless_a_relation_hangs_from_it():
    evidence = Unit("chunk", "ca", "w " * 10, ("a",), score=0.8, parent="ea")  # the answer's own chunk, under it
    s = select([Unit("answer", "ea", "w " * 4, ("a",), score=0.9, quotes="a"), evidence,
                Unit("chunk", "cb", "w " * 4, ("b",), score=0.5)], budget=14, count=words)
    assert [(u.key, u.parent) for u in s.units] == [("ca", None), ("cb", None)] and s.refused == ["ea"]
    read_later = [Unit("answer", "ea", "w " * 4, ("a",), score=0.9, quotes="a"),  # its chunk is read in its place
                  Unit("chunk", "cx", "w " * 3, ("x",), score=0.85), evidence, Unit("chunk", "cb", "w " * 4, ("b",))]
    s = select(read_later, budget=17, count=words)
    assert [u.key for u in s.units] == ["ca", "cx", "cb"] and s.refused == ["ea"] and s.spent == 17
    chunk_a = Unit("chunk", "ca", "w " * 10, ("a",), score=1.0)
    answer_a = Unit("answer", "ea", "w " * 4, ("a",), score=0.9, quotes="a")
    chunk_b = Unit("chunk", "cb", "w " * 4, ("b",), score=0.5)
    s = select([chunk_a, answer_a, chunk_b], budget=14, count=words)
    assert [u.key for u in s.units] == ["ca", "cb"] and s.refused == ["ea"] and s.spent == 14
    relation = Unit("relation", "rb", "w", ("b",), score=0.8, parent="ea")
    s = select([chunk_a, answer_a, relation, chunk_b], budget=16, count=words)
    assert [u.key for u in s.units] == ["ca", "ea", "rb"] and s.refused == ["cb"]
    alone = select([answer_a, chunk_b], budget=14, count=words)  # its chunk is not in: it is the evidence
    assert [u.key for u in alone.units] == ["ea", "cb"]
    s = sliced([], [(0.5, [answer_a]), (0.5, [chunk_a, chunk_b])], budget=16, count=words)  # b: after the answer
    assert [u.key for u in s.units] == ["ca", "cb"] and s.refused == ["ea"]


@settings(max_examples=examples(2))
@given(st.lists(st.tuples(st.integers(-1, 30), st.integers(1, 40), st.floats(0, 1), st.integers(-1, 30)),
                min_size=1, max_size=30), st.integers(0, 400))
def test_no_chosen_unit_repeats_a_chosen_chunk_unless_a_chosen_unit_hangs_from_it(shape, budget):
    units = tree([(parent, n, score) for parent, n, score, _ in shape])
    units = [Unit("chunk", u.key, u.text, u.refs, u.score, u.parent) if i % 3 == 0 else
             Unit("answer", u.key, u.text, u.refs, u.score, u.parent, quotes=f"c{q}" if q >= 0 else None)
             for i, (u, (*_, q)) in enumerate(zip(units, shape, strict=True))]
    s = select(units, budget=budget, count=words)
    held = {r for u in s.units if u.kind == "chunk" for r in u.refs}
    parents = {u.parent for u in s.units if u.kind != "chunk"}
    assert all(u.quotes not in held or u.key in parents for u in s.units)
    keys = [u.key for u in s.units]
    assert all(u.parent is None or u.parent in keys[: keys.index(u.key)] for u in s.units)
    given = {u.key: u.parent for u in units}  # a chunk loses its parent only when the parent was left out
    assert all(u.parent == given[u.key] or (u.kind == "chunk" and u.parent is None and given[u.key] not in keys)
               for u in s.units)
    assert s.spent <= budget and sorted(keys + s.refused) == sorted(u.key for u in units)
