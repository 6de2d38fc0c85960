"""Benchmark: community stability when one document leaves the corpus.

    python tests/bench/bench_stability.py CORPUS.jsonl [--mentions nlp] [--edge-window chunk] [--drop ID]
        [--config TOML] [--json]

Builds the index, drops one document (the first by default) and reindexes incrementally; then
builds the reduced corpus afresh. Prints, of the communities before the change, the share kept with
the same members and the same id by the incremental run, and the share whose exact member set a
fresh build finds again (what a tool without warm starts gets), overall and per level. A community
that held an entity seen only in the dropped document cannot keep its members under any partition:
the benchmark counts those, and the share that can be kept at most.
"""

import argparse
import json
import tempfile
from pathlib import Path
from time import perf_counter

import igraph as ig

from acervo.flows.index import publish
from acervo.pipelines.db import connect
from acervo.pipelines.settings import Settings


def partition(db: Path) -> dict[str, tuple[int, frozenset[str]]]:
    """community_id -> (level, members) of the index at `db`."""
    con = connect(db, read_only=True)
    rows = con.execute("select community_id, level, list(entity_id) from communities "
                       "join community_members using (community_id) group by all").fetchall()
    con.close()
    return {cid: (level, frozenset(members)) for cid, level, members in rows}


def modularity(db: Path) -> float:
    """Weighted modularity of the level-0 partition of the index at `db` (how good the partition is)."""
    con = connect(db, read_only=True)
    ids = [e for (e,) in con.execute("select entity_id from entities order by entity_id").fetchall()]
    index = {e: i for i, e in enumerate(ids)}
    pairs = con.execute("select src, dst, weight from edges where src < dst").fetchall()
    where = dict(con.execute("select entity_id, community_id from community_members "
                             "join communities using (community_id) where level = 0").fetchall())
    con.close()
    graph = ig.Graph(n=len(ids), edges=[(index[s], index[d]) for s, d, _ in pairs])
    numbers: dict[str, int] = {}
    membership = [numbers.setdefault(where[e], len(numbers)) for e in ids]
    return graph.modularity(membership, weights=[w for _, _, w in pairs])


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--mentions", default="nlp", choices=["given", "gazetteer", "titles", "nlp", "spacy"])
    parser.add_argument("--drop", help="doc_id to drop (default: the first document)")
    parser.add_argument("--edge-window", default="chunk", choices=["chunk", "paragraph", "sentence"])
    parser.add_argument("--config", type=Path, help="TOML file of further settings (see docs/cli.md)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    settings = Settings.from_toml(args.config, mentions=args.mentions, edge_window=args.edge_window) if args.config \
        else Settings(mentions=args.mentions, edge_window=args.edge_window)
    lines = [line for line in args.corpus.read_text(encoding="utf-8").split("\n") if line.strip()]
    drop = args.drop or json.loads(lines[0])["doc_id"]
    kept_lines = [line for line in lines if json.loads(line)["doc_id"] != drop]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src, db, fresh = tmp / "corpus.jsonl", tmp / "index.duckdb", tmp / "fresh.duckdb"
        src.write_text("\n".join(lines) + "\n", encoding="utf-8")
        start = perf_counter()
        publish(src, db, settings, fresh=True)
        full_s = perf_counter() - start
        before = partition(db)
        src.write_text("\n".join(kept_lines) + "\n", encoding="utf-8")
        start = perf_counter()
        publish(src, db, settings)
        incremental_s = perf_counter() - start
        after = partition(db)
        publish(src, fresh, settings, fresh=True)
        rebuilt = {members for _, members in partition(fresh).values()}
        quality = {"incremental": round(modularity(db), 4), "fresh": round(modularity(fresh), 4)}
    levels = sorted({level for level, _ in before.values()})
    remaining = {e for _, members in after.values() for e in members}
    lost = sum(1 for _, members in before.values() if not members <= remaining)
    result = {"corpus": str(args.corpus), "mentions": args.mentions, "dropped": drop,
              "documents": len(lines), "full_s": round(full_s, 3), "incremental_s": round(incremental_s, 3),
              "communities_before": len(before), "communities_after": len(after),
              "level0_modularity": quality, "levels": {},
              "held_an_entity_that_left": lost, "most_that_can_be_kept": round(100 * (1 - lost / len(before)), 1)}
    for level in [None, *levels]:
        mine = {cid: m for cid, (lv, m) in before.items() if level is None or lv == level}
        same_id = sum(1 for cid, m in mine.items() if cid in after and after[cid][1] == m)
        same_members = sum(1 for m in mine.values() if m in rebuilt)
        row = {"communities": len(mine), "kept_same_members_and_id": round(100 * same_id / len(mine), 1),
               "fresh_build_same_members": round(100 * same_members / len(mine), 1)}
        if level is None:
            result.update(row)
        else:
            result["levels"][level] = row
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{args.corpus} ({args.mentions}): dropped {drop!r} of {len(lines)} documents; "
          f"full {full_s:.2f} s, incremental {incremental_s:.2f} s")
    print(f"  communities before {len(before)}, after {len(after)}; level-0 modularity: incremental "
          f"{quality['incremental']}, fresh build {quality['fresh']}")
    print(f"  kept with the same members and id (incremental): {result['kept_same_members_and_id']}%; "
          f"{lost} held an entity that left the index, so at most {result['most_that_can_be_kept']}% can be kept")
    print(f"  found again with the same members (fresh build): {result['fresh_build_same_members']}%")
    for level, row in result["levels"].items():
        print(f"    level {level}: {row['communities']} communities, kept {row['kept_same_members_and_id']}%, "
              f"fresh build {row['fresh_build_same_members']}%")


if __name__ == "__main__":
    main()
