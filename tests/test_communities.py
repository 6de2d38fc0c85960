"""Stage `communities`: seeded hierarchical Leiden, every entity once per level it reaches."""

import json
import subprocess
import sys
from pathlib import Path

from acervo.flows.index import build
from acervo.pipelines import communities
from acervo.pipelines.clustering import Community, Graph, cluster
from acervo.pipelines.db import connect
from acervo.pipelines.hashing import content_hash
from acervo.pipelines.run import Run
from acervo.pipelines.settings import Settings
from conftest import DATA, index_of, write_jsonl


def members_by_level(con, level: int) -> set[frozenset[str]]:
    rows = con.execute("select c.community_id, e.label from communities c "
                       "join community_members m using (community_id) "
                       "join entities e using (entity_id) where c.level = ?", [level]).fetchall()
    groups: dict[str, set[str]] = {}
    for cid, label in rows:
        groups.setdefault(cid, set()).add(label)
    return {frozenset(g) for g in groups.values()}


def test_level_zero_on_the_seed_corpus_is_the_seed_s_three_communities(seed):
    expected = json.loads((DATA / "seed_communities.json").read_text(encoding="utf-8"))
    assert members_by_level(seed, 0) == {frozenset(c["members"]) for c in expected.values()}
    assert seed.execute("select max(level) from communities").fetchone() == (0,)


def test_titles_come_from_the_most_central_members(seed):
    titles = {t for (t,) in seed.execute("select title from communities").fetchall()}
    assert "Autenticação, Acesso remoto, Rede" in titles


def groups_of_cliques(groups: int = 3, cliques: int = 4, size: int = 4) -> tuple[list[str], list[tuple[str, str, int]]]:
    """Dense groups of tighter cliques, the groups linked in a ring, plus one isolated entity."""
    ids, edges = [], []
    for g in range(groups):
        nodes = [(c, f"g{g}-c{c}-{i}") for c in range(cliques) for i in range(size)]
        ids += [n for _, n in nodes]
        edges += [(a, b, 6 if ca == cb else 1) for k, (ca, a) in enumerate(nodes) for cb, b in nodes[k + 1 :]]
        edges.append((f"g{g}-c0-0", f"g{(g + 1) % groups}-c1-1", 1))
    return ids + ["lonely"], edges


def test_big_communities_split_into_levels_with_parents_and_no_entity_is_dropped():
    ids, edges = groups_of_cliques()
    found = cluster(ids, edges, max_size=6, max_levels=10, seed=7)
    assert sorted(len(c.members) for c in found if c.level == 0) == [1, 16, 16, 16]
    assert sorted(len(c.members) for c in found if c.level == 1) == [4] * 12
    for level in (0, 1):
        members = [m for c in found if c.level == level for m in c.members]
        assert len(members) == len(set(members))
    assert sorted(m for c in found if c.level == 0 for m in c.members) == sorted(ids)
    by_id = {c.community_id: c for c in found}
    for c in found:
        if c.level == 1:
            parent = by_id[c.parent_id]
            assert parent.level == 0 and c.members <= parent.members


def test_clustering_is_identical_from_run_to_run_and_ignores_input_order():
    ids, edges = groups_of_cliques(4, 3, 5)
    first = cluster(ids, edges, max_size=8, max_levels=10, seed=42)
    assert cluster(list(reversed(ids)), list(reversed(edges)), max_size=8, max_levels=10, seed=42) == first


def test_an_unsplittable_community_stops_the_hierarchy(tmp_path: Path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"doc_id": "1", "text": "x", "entities": [f"E{i}" for i in range(8)]}])
    con = index_of(path, max_cluster_size=3)
    assert con.execute("select level, n_members, parent_id from communities").fetchall() == [(0, 8, None)]


def test_a_change_moves_only_changed_entities_and_keeps_every_other_community_and_id():
    ids, edges = groups_of_cliques(4, 3, 5)
    first = cluster(ids, edges, max_size=8, max_levels=10, seed=42)
    # g0-c0-0 loses two clique edges and gains a strong tie into group 1; new entity joins group 2.
    changed_edges = [e for e in edges if not (e[0] == "g0-c0-0" and e[1] in ("g0-c0-1", "g0-c0-2"))]
    changed_edges += [("g0-c0-0", "g1-c2-3", 9), ("newcomer", "g2-c1-0", 6), ("newcomer", "g2-c1-1", 6)]
    touched = frozenset({"g0-c0-0", "g0-c0-1", "g0-c0-2", "g1-c2-3", "newcomer", "g2-c1-0", "g2-c1-1"})
    again = cluster([*ids, "newcomer"], changed_edges, max_size=8, max_levels=10, seed=42, previous=first,
                    changed=touched)
    before = {c.community_id: c.members for c in first}
    after = {c.community_id: c.members for c in again}
    untouched = [cid for cid, members in before.items() if not members & touched]
    assert untouched and all(after.get(cid) == before[cid] for cid in untouched)
    moved = {e for cid, members in before.items() for e in members if cid not in after or e not in after[cid]}
    assert moved <= touched
    assert cluster([*ids, "newcomer"], changed_edges, max_size=8, max_levels=10, seed=42, previous=first,
                   changed=touched) == again


def test_a_new_entity_joins_the_community_it_is_tied_to_and_known_ones_stay():
    ids, edges = groups_of_cliques(12, 3, 5)  # large enough that placing one entity gains little modularity
    first = cluster(ids, edges, max_size=8, max_levels=10, seed=42)
    ties = [("newcomer", f"g2-c1-{i}", 6) for i in range(5)]  # as tight to that clique as its own members
    again = cluster([*ids, "newcomer"], edges + ties, max_size=8, max_levels=10, seed=42, previous=first,
                    changed=frozenset({"newcomer", *(b for _, b, _ in ties)}))
    home = {c.level: c.members for c in again if "newcomer" in c.members}
    assert all("g2-c1-0" in members for members in home.values()) and len(home[1]) == 6
    before = {(c.level, e): c.community_id for c in first for e in c.members}
    assert all(before[(c.level, e)] == c.community_id for c in again for e in c.members if e != "newcomer")


def test_a_split_community_that_shrinks_to_max_size_keeps_its_untouched_children():
    ids, edges = groups_of_cliques(3, 3, 3)  # groups of 9 entities, split into cliques of 3 above max_size 8
    first = cluster(ids, edges, max_size=8, max_levels=10, seed=42)
    gone = "g1-c2-2"
    left = [e for e in edges if gone not in e[:2]]
    again = cluster([e for e in ids if e != gone], left, max_size=8, max_levels=10, seed=42, previous=first,
                    changed=frozenset({gone, "g1-c2-0", "g1-c2-1"}))
    children = {c.community_id: c.members for c in first if c.level == 1 and "g1-c0-0" in c.members | {
        m for p in first if p.community_id == c.parent_id for m in p.members}}
    after = {c.community_id: c.members for c in again}
    kept = [cid for cid, members in children.items() if gone not in members]
    assert len(kept) == 2 and all(after.get(cid) == children[cid] for cid in kept)


def stored(con) -> list[Community]:
    """The communities an index holds, as the stage reads them back."""
    rows = con.execute("select c.community_id, c.level, c.parent_id, c.graph_hash, list(m.entity_id) "
                       "from communities c join community_members m using (community_id) group by all").fetchall()
    return sorted((Community(cid, level, frozenset(members), parent, graph_hash)
                   for cid, level, parent, graph_hash, members in rows), key=lambda c: c.community_id)


def test_a_rerun_reads_only_the_changed_part_of_the_graph_and_clusters_it_as_the_whole_graph_would(tmp_path: Path):
    groups = {"a": [["a1", "a2", "a3"], ["a3", "a4", "a5"], ["a1", "a5"]], "b": [["b1", "b2", "b3"], ["b3", "b4"]],
              "c": [["c1"]], **{f"x{i}-": [[f"x{i}a", f"x{i}b"]] for i in range(50)}}  # so that a change is small
    records = [{"doc_id": f"{g}{i}", "text": f"{g} {i}", "entities": names}
               for g, docs in groups.items() for i, names in enumerate(docs)]
    con = connect()
    build(Run.alone(con), write_jsonl(tmp_path / "d.jsonl", records), Settings(max_cluster_size=3))
    before, edges_before = stored(con), set(con.execute("select src, dst, weight from edges").fetchall())
    records[1]["entities"] = ["a3", "a4", "a5", "a6"]  # a new entity, tied into group a only
    stages = build(Run.alone(con), write_jsonl(tmp_path / "d.jsonl", records), Settings(max_cluster_size=3))
    edges = con.execute("select src, dst, weight from edges").fetchall()
    changed = frozenset(e for s, d, w in set(edges) ^ edges_before for e in (s, d))
    whole = cluster([e for (e,) in con.execute("select entity_id from entities").fetchall()], edges, max_size=3,
                    max_levels=Settings().max_levels, seed=Settings().seed, previous=before, changed=changed)
    assert stored(con) == sorted(whole, key=lambda c: c.community_id)
    assert next(s for s in stages if s.stage == "communities").work.read == 6  # a1..a6 of 111 entities
    untouched = [c for c in before if not c.members & {"a1", "a2", "a3", "a4", "a5", "a6"}]
    assert untouched and all(c in stored(con) for c in untouched)


def test_a_rerun_where_only_mentions_changed_reads_only_the_communities_holding_them(tmp_path: Path):
    """An entity whose mentions or names changed but not its edges cannot move: its community's row is
    written again (its title may change), and the rest of its connected part is not read."""
    a, b = ["a1", "a2", "a3", "a4"], ["b1", "b2", "b3", "b4"]  # two dense groups, one weak tie: two communities
    groups = {"a": [a, a], "b": [b, b], "ab": [["a4", "b1"]], **{f"x{i}-": [[f"x{i}a", f"x{i}b"]] for i in range(50)}}
    records = [{"doc_id": f"{g}{i}", "text": f"{g} {i}", "entities": names}
               for g, docs in groups.items() for i, names in enumerate(docs)]
    con = connect()
    build(Run.alone(con), write_jsonl(tmp_path / "d.jsonl", records), Settings(max_cluster_size=3))
    before = stored(con)
    records += [{"doc_id": f"alone{i}", "text": "A2 on its own", "entities": ["A2"]} for i in range(2)]
    stages = build(Run.alone(con), write_jsonl(tmp_path / "d.jsonl", records), Settings(max_cluster_size=3))
    home = next(c for c in before if c.level == 0 and "a2" in c.members)
    assert next(s for s in stages if s.stage == "communities").work.read == len(home.members) < 8
    assert stored(con) == before  # same communities, members, parents and hashes
    title = con.execute("select title from communities where community_id = ?", [home.community_id]).fetchone()[0]
    assert "A2" in title.split(", ")  # the label "A2" now outnumbers "a2"


def test_a_graph_hash_is_the_content_hash_of_the_members_then_their_edges_in_order():
    """Stored graph hashes decide what a rerun reuses: their recipe must not drift with igraph's edge order."""
    g = Graph(["a", "b", "c", "d"], [("b", "a", 2), ("d", "b", 1), ("c", "a", 3), ("a", "b", 2)])
    members_then_edges = ("4", "a", "b", "c", "d", "a", "b", "2", "a", "c", "3", "b", "d", "1")
    assert g.graph_hash([0, 1, 2, 3]) == content_hash(*members_then_edges)
    assert g.graph_hash([0, 2]) == content_hash("2", "a", "c", "a", "c", "3")


def test_a_rerun_skips_communities_until_a_table_or_a_setting_it_reads_changes(tmp_path: Path):
    records = [{"doc_id": str(i), "text": f"t{i}", "entities": [f"a{i}", f"a{i + 1}", "hub"]} for i in range(6)]
    con = connect()
    build(Run.alone(con), write_jsonl(tmp_path / "d.jsonl", records), Settings(max_cluster_size=3))
    knobs = {"max_size": 3, "max_levels": Settings().max_levels, "seed": Settings().seed, "resolution": 1.0}
    run = Run.alone(con)
    with run.logging():
        assert communities.run(run, **knobs).detail == {"skipped": 1}
        run.changed |= {"documents", "chunks", "entity_answers"}  # stages whose tables it does not read
        assert communities.run(run, **knobs).detail == {"skipped": 1}
        for stage in communities.READS:
            run.changed = {stage}
            assert communities.run(run, **knobs).detail != {"skipped": 1}
        run.changed = set()
        assert communities.run(run, **{**knobs, "seed": 7}).detail != {"skipped": 1}


CLUSTERS_WITHOUT_MATPLOTLIB = """
import sys
from acervo.pipelines.clustering import Edge, cluster
found = cluster(["a", "b", "c", "d"], [Edge("a", "b", 2), Edge("c", "d", 1)], max_size=2, max_levels=2, seed=1)
assert found, found
assert "matplotlib" not in sys.modules, "igraph imported matplotlib"
import matplotlib
print(matplotlib.__name__)
"""


def test_clustering_imports_igraph_without_its_plotting_and_leaves_matplotlib_importable():
    done = subprocess.run([sys.executable, "-c", CLUSTERS_WITHOUT_MATPLOTLIB], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "matplotlib"


def test_igraph_still_imports_matplotlib_when_it_is_installed():
    """Why pipelines.clustering.igraph hides matplotlib while it imports igraph: igraph imports it whenever it is
    installed. Once igraph stops, this fails, and the hiding goes."""
    script = "import sys\nimport igraph\nprint('matplotlib' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "True", "igraph no longer imports matplotlib: drop the hiding in pipelines.clustering"
