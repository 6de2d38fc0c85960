"""Benchmark: the build in one process against the build on a local Dask cluster of 1 and 2 workers (Prefect's Dask
task runner, flows.workers), in one run; prints wall time per stage, the share of the build made on workers, the
writer's cost of sending shards out and merging them, memory per worker, and an Amdahl estimate for more workers
on a corpus 50 and 500 times as large.

    python tests/bench/bench_workers.py CORPUS [--mentions nlp] [--shard-size 500] [--workers 1 2] [--json]
        [--embed-model multilingual-e5-small]

Each build runs in a fresh child process; the cluster ones through a Prefect flow against a temporary server.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, os, resource, sys, time
from pathlib import Path
from acervo.flows.server import prefect_api
from acervo.pipelines.settings import Settings
from acervo.pipelines.shards import Fanout, made

def timed(log, shard):
    # one shard made on a worker, its seconds and the worker's peak memory appended to the log (a shared file)
    start = time.perf_counter()
    out = made(shard)
    line = json.dumps({"table": shard.inputs.rsplit("/", 2)[1].rsplit("-", 1)[0],
                       "seconds": time.perf_counter() - start,
                       "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "pid": os.getpid()})
    with open(log, "a") as f:
        f.write(line + "\n")
    return out

def started_on():
    # a first task, which starts the cluster
    return os.getpid()

def main():
    source, db, mentions = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    workers, size, embed_model = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
    settings, log = Settings(mentions=mentions, embed_model=embed_model), db.with_suffix(".shards.jsonl")
    from acervo.flows.index import publish
    if workers == 0:
        start = time.perf_counter()
        _, stages = publish(source, db, settings)
        print(json.dumps({"wall_s": time.perf_counter() - start, "stages": {s.stage: s.seconds for s in stages}}))
        return
    from functools import partial
    with prefect_api():
        from prefect import flow, task
        from prefect.cache_policies import NO_CACHE
        from acervo.flows.workers import fanout, runner
        walls = []

        def clocked(make_all, shards):
            start = time.perf_counter()
            make_all(shards)
            walls.append({"shards": len(shards), "seconds": time.perf_counter() - start})

        @flow(task_runner=runner(str(workers)))
        def build():
            started = time.perf_counter()
            task(started_on, name="cluster-start", cache_policy=NO_CACHE).submit().result()
            cluster = time.perf_counter() - started
            f = fanout(size=size, make=partial(timed, str(log)))
            return cluster, publish(source, db, settings, fanout=Fanout(partial(clocked, f.make), f.location,
                                                                        f.size))[1]

        start = time.perf_counter()
        cluster_s, stages = build()
        wall = time.perf_counter() - start - cluster_s
    shards = [json.loads(line) for line in log.read_text().splitlines()]
    print(json.dumps({"wall_s": wall, "cluster_s": cluster_s, "stages": {s.stage: s.seconds for s in stages},
                      "fanouts": walls, "shards": shards}))

if __name__ == "__main__":
    main()
"""


def measure(corpus: Path, mentions: str, workers: int, size: int, embed_model: str) -> dict:
    """One build in a fresh process: in one process (`workers` 0) or on a local cluster of `workers`."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "child.py"
        script.write_text(CHILD, encoding="utf-8")
        command = [sys.executable, str(script), str(corpus), str(Path(tmp) / "bench.duckdb"), mentions, str(workers),
                   str(size), embed_model]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def parts(run: dict) -> tuple[float, float, float]:
    """A cluster run's serial part on the writer (its wall, the cluster's start left out, less its fan-outs' walls),
    the shards' work (seconds on workers), and the writer's hand-over a shard (the fan-outs' walls less the work
    the run's workers shared)."""
    fanned = sum(f["seconds"] for f in run["fanouts"])
    work = sum(s["seconds"] for s in run["shards"])
    return run["wall_s"] - fanned, work, max(0.0, fanned - work / run["workers"]) / max(1, len(run["shards"]))


def estimate(run: dict, workers: int, scale: int, larger: int = 1) -> float:
    """Amdahl: the wall time at `workers` workers on a corpus `scale` times as large, each part of `run` growing with
    it: the serial part, the work shared by the workers, and the hand-over of as many more shards, each `larger`
    times as large (so 1/`larger` as many)."""
    serial, work, handover = parts(run)
    return scale * (serial + work / workers + handover * len(run["shards"]) / larger)


def main() -> None:
    """Build in one process and on each cluster size; print the per-stage table and the estimate."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--mentions", default="nlp", choices=["given", "titles", "nlp"])
    parser.add_argument("--shard-size", type=int, default=500)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--embed-model", default="", help="multilingual-e5-small: chunk vectors by the packaged model")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    one = measure(args.corpus, args.mentions, 0, args.shard_size, args.embed_model)
    runs = {n: measure(args.corpus, args.mentions, n, args.shard_size, args.embed_model) | {"workers": n}
            for n in args.workers}
    if args.json:
        print(json.dumps({"one": one, "workers": runs}))
        return
    embedded = f", --embed-model {args.embed_model}" if args.embed_model else ""
    print(f"{args.corpus.name}, --mentions {args.mentions}{embedded}, shards of {args.shard_size}; seconds")
    header = ["stage", "one process", *(f"{n} worker{'s' * (n > 1)}" for n in runs)]
    print("| " + " | ".join(header) + " |\n|" + " --- |" * len(header))
    for stage, seconds in one["stages"].items():
        if seconds >= 0.005:
            cells = [f"{r['stages'][stage]:.2f}" for r in runs.values()]
            print(f"| {stage} | {seconds:.2f} | " + " | ".join(cells) + " |")
    print("| **whole build** (the cluster's start left out) | **" + f"{one['wall_s']:.2f}" + "** | "
          + " | ".join(f"**{r['wall_s']:.2f}**" for r in runs.values()) + " |")
    for n, r in runs.items():
        serial, work, handover = parts(r)
        by_table: dict[str, float] = {}
        for s in r["shards"]:
            by_table[s["table"]] = by_table.get(s["table"], 0.0) + s["seconds"]
        print(f"\n{n} worker(s), the cluster's start ({r['cluster_s']:.2f} s) left out: {len(r['shards'])} shards, "
              f"{work:.2f} s of work on workers ({', '.join(f'{t} {v:.2f}' for t, v in by_table.items())}); the "
              f"writer's serial part {serial:.2f} s; its hand-over {handover * 1000:.0f} ms a shard; peak memory a "
              f"worker {max(s['peak_mb'] for s in r['shards']):.0f} MB")
    last = runs[max(runs)]
    for larger in (1, 10):
        print(f"\nAmdahl estimate from the run on {max(runs)} workers, shards {larger}x as large (seconds):")
        print("| corpus | " + " | ".join(f"{w} workers" for w in (1, 2, 8, 64)) + " |\n|" + " --- |" * 5)
        for scale in (1, 50, 500):
            cells = [f"{estimate(last, w, scale, larger):.0f}" for w in (1, 2, 8, 64)]
            print(f"| {scale}x | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
