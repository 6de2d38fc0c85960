"""Benchmark: k-hop latency on a power-law graph of about a million directed edge rows.

    python tests/bench/bench_khop.py [--entities 96500] [--degree 5] [--queries 100]

Compares, in one run, p50/p95 per walk for: the design articles' SQLite per-path CTE (the baseline),
acervo's query.khop (sql/query.sql) on DuckDB (any client can run it), and acervo's frontier walk
(`pipelines.query.khop.walk` over the stored edges, what the query API uses), from hub and random seeds at
2 and 3 hops with a fan-out cap of 4.
"""

import argparse
import random
import sqlite3
import statistics
import time
from pathlib import Path

from acervo.pipelines import edges
from acervo.pipelines.bulk import insert
from acervo.pipelines.db import connect
from acervo.pipelines.query.khop import neighbourhood, stored, walk
from acervo.pipelines.run import Run

HERE = Path(__file__).parent


def power_law_mentions(n: int, degree: int, seed: int) -> list[dict]:
    """Mentions that make a preferential-attachment graph: one tiny chunk per unit of edge weight."""
    rng = random.Random(seed)
    ends: list[int] = list(range(degree))
    rows = []
    chunk = 0
    for v in range(degree, n):
        targets = {ends[rng.randrange(len(ends))] for _ in range(degree)}
        for t in targets:
            for _ in range(1 + int(rng.paretovariate(2.0)) % 5):
                rows += [{"entity_id": f"e{v}", "chunk_id": f"c{chunk}"},
                         {"entity_id": f"e{t}", "chunk_id": f"c{chunk}"}]
                chunk += 1
            ends += [v, t]
    return rows


def timed(fn, seeds: list[str]) -> list[float]:
    """Milliseconds per call of `fn(seed)`."""
    out = []
    for s in seeds:
        start = time.perf_counter()
        fn(s)
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    """Build the graph, run every walk, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entities", type=int, default=96_500)
    parser.add_argument("--degree", type=int, default=5)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--cap", type=int, default=4)
    args = parser.parse_args()
    con = connect()
    insert(con, "mentions", power_law_mentions(args.entities, args.degree, seed=1))
    edges.run(Run.alone(con))
    rows = con.execute("select src, dst, weight, rank from edges").fetchall()
    entities = sorted({r[0] for r in rows})
    print(f"graph: {len(entities)} entities, {len(rows)} directed edge rows")
    lite = sqlite3.connect(":memory:")
    lite.execute("create table edges (src text, dst text, weight integer, rank integer, primary key (src, dst))")
    lite.executemany("insert into edges values (?, ?, ?, ?)", rows)
    lite.execute("create index edges_src on edges (src)")  # the design articles' schema
    baseline = (HERE / "sqlite_khop.sql").read_text(encoding="utf-8")
    degree: dict[str, int] = {}
    for src, *_ in rows:
        degree[src] = degree.get(src, 0) + 1
    hubs = [e for e, _ in sorted(degree.items(), key=lambda x: -x[1])[:20]]
    rng = random.Random(2)
    seeds = hubs + rng.sample(entities, args.queries - len(hubs))
    for hops in (2, 3):
        results = {
            "sqlite per-path CTE (baseline)": timed(lambda s, h=hops: lite.execute(
                baseline, {"seed": s, "hops": h, "cap": args.cap}).fetchall(), seeds),
            "duckdb query.khop": timed(lambda s, h=hops: neighbourhood(con, [s], hops=h, cap=args.cap), seeds),
            "frontier walk (API)": timed(lambda s, h=hops: walk(stored(con), [s], hops=h, cap=args.cap), seeds),
        }
        base = statistics.median(results["sqlite per-path CTE (baseline)"])
        print(f"{hops} hops, cap {args.cap}, {len(seeds)} seeds (20 hubs):")
        for name, ms in results.items():
            p50 = statistics.median(ms)
            p95 = statistics.quantiles(ms, n=20)[-1]
            print(f"  {name:<32} p50 {p50:8.3f} ms  p95 {p95:8.3f} ms  baseline/this {base / p50:7.1f}x")


if __name__ == "__main__":
    main()
