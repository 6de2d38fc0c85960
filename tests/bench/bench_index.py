"""Benchmark: index a corpus with the plain pipeline and with the Prefect flow, in one run; print seconds
per stage, peak memory and the cost of Prefect's start-up beside the pipeline's own time.

    python tests/bench/bench_index.py CORPUS [--mentions titles] [--edge-window chunk] [--repeat 3] [--json]

Each measurement runs in a fresh child process, so imports and earlier runs do not skew memory.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
t0 = time.perf_counter()
from acervo.flows.index import publish
from acervo.flows.flow_run import index
from acervo.pipelines.settings import Settings

def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20

source, db, mode, mentions, window = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
settings = Settings(mentions=mentions, edge_window=window)
imported, base_rss = time.perf_counter() - t0, rss_mb()
start = time.perf_counter()
if mode == "plain":
    _, stages = publish(source, db, settings)
    stages = [{"stage": s.stage, "seconds": s.seconds, "rows_recomputed": s.work.recomputed} for s in stages]
else:
    stages = index(source, db, settings)["stages"]
wall = time.perf_counter() - start
print(json.dumps({"import_s": imported, "wall_s": wall, "stages": stages, "rss_after_import_mb": base_rss,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(corpus: Path, mode: str, mentions: str, window: str) -> dict:
    """One indexing run in a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-c", CHILD, str(corpus), str(Path(tmp) / "bench.duckdb"), mode, mentions,
                   window]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Run both modes `--repeat` times and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--mentions", default="titles", choices=["given", "gazetteer", "titles", "nlp", "spacy"])
    parser.add_argument("--edge-window", default="chunk", choices=["chunk", "paragraph", "sentence"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    runs = {mode: [measure(args.corpus, mode, args.mentions, args.edge_window) for _ in range(args.repeat)]
            for mode in ("plain", "prefect")}

    def median(mode: str, key) -> float:
        return statistics.median(key(r) for r in runs[mode])

    stage_names = [s["stage"] for s in runs["plain"][0]["stages"]]
    result = {
        "corpus": str(args.corpus), "mentions": args.mentions, "edge_window": args.edge_window, "repeat": args.repeat,
        "stages_s": {n: median("plain", lambda r, n=n: next(s["seconds"] for s in r["stages"] if s["stage"] == n))
                     for n in stage_names},
        "rows_out": {s["stage"]: s["rows_recomputed"] for s in runs["plain"][0]["stages"]},
        "pipeline_s": median("plain", lambda r: sum(s["seconds"] for s in r["stages"])),
        "publish_s": median("plain", lambda r: r["wall_s"]),
        "import_s": median("plain", lambda r: r["import_s"]),
        "rss_after_import_mb": median("plain", lambda r: r["rss_after_import_mb"]),
        "peak_rss_mb": median("plain", lambda r: r["peak_rss_mb"]),
        "prefect_flow_wall_s": median("prefect", lambda r: r["wall_s"]),
        "prefect_stages_s": median("prefect", lambda r: sum(s["seconds"] for s in r["stages"])),
        "prefect_peak_rss_mb": median("prefect", lambda r: r["peak_rss_mb"]),
    }
    result["prefect_overhead_s"] = result["prefect_flow_wall_s"] - result["prefect_stages_s"]
    result["prefect_wall_over_pipeline"] = result["prefect_flow_wall_s"] / result["pipeline_s"]
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"corpus {args.corpus} (--mentions {args.mentions} --edge-window {args.edge_window}), "
          f"median of {args.repeat} runs per mode")
    for name, seconds in result["stages_s"].items():
        print(f"  {name:<18} {seconds:7.3f} s   {result['rows_out'][name]:>8} rows")
    print(f"  {'pipeline':<18} {result['pipeline_s']:7.3f} s   (publish incl. staging + checkpoint: "
          f"{result['publish_s']:.3f} s; imports {result['import_s']:.2f} s)")
    print(f"  peak RSS {result['peak_rss_mb']:.0f} MB (after imports {result['rss_after_import_mb']:.0f} MB, "
          f"so the pipeline adds {result['peak_rss_mb'] - result['rss_after_import_mb']:.0f} MB)")
    print(f"  Prefect flow: {result['prefect_flow_wall_s']:.2f} s wall, of which stages "
          f"{result['prefect_stages_s']:.2f} s and Prefect (temporary server, task runs) "
          f"{result['prefect_overhead_s']:.2f} s; {result['prefect_wall_over_pipeline']:.1f}x the plain pipeline; "
          f"peak RSS {result['prefect_peak_rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
