"""Benchmark: bounded concurrency of language-model calls through `Meter`, against the fake server.

    python tests/bench/bench_llm.py [--calls 64] [--delay 0.05] [--concurrency 1 4 8 16] [--json OUT]

The fake OpenAI-compatible server (tests/llm_server.py) holds every reply for `--delay` seconds, standing in
for a model's latency; the same calls go through `openai_compatible` and `Meter.map` at each concurrency.
Prints wall seconds (and the ideal: the replies' delay alone), calls per second, the speed-up against
concurrency 1 (or the lowest measured) and the most requests the server saw at once.
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: acervo's code
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the fake server

from llm_server import FakeLLM  # noqa: E402

from acervo.pipelines.llm import Meter, openai_compatible  # noqa: E402


def measure(calls: int, delay: float, concurrency: int) -> dict:
    """`calls` distinct questions through a Meter of `concurrency`: wall seconds, throughput, peak in flight."""
    with FakeLLM(respond=lambda messages: f"answer to {messages[-1]['content']}", delay=delay) as server:
        meter = Meter(openai_compatible(server.url, "fake-model", timeout=60.0), concurrency=concurrency)
        start = time.perf_counter()
        texts = meter.map(lambda i: meter([{"role": "user", "content": f"question {i}"}]).text, range(calls))
        seconds = time.perf_counter() - start
    assert texts == [f"answer to question {i}" for i in range(calls)], "replies out of order"
    waves = -(-calls // concurrency)  # rounds of `concurrency` calls the replies' delay alone would take
    return {"concurrency": concurrency, "calls": calls, "seconds": round(seconds, 3),
            "ideal_seconds": round(waves * delay, 3),
            "calls_per_second": round(calls / seconds, 1), "max_in_flight": server.max_in_flight,
            "milliseconds_in_calls": meter.usage.milliseconds}


def main() -> None:
    """Measure each concurrency, print the table, write the JSON when asked."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=64)
    parser.add_argument("--delay", type=float, default=0.05, help="seconds the server holds each reply")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8, 16])
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the figures to OUT as JSON")
    args = parser.parse_args()
    rows = [measure(args.calls, args.delay, c) for c in sorted(args.concurrency)]
    base = rows[0]["seconds"]
    print(f"{args.calls} calls, the server holding each reply {args.delay} s")
    print(f"{'concurrency':>11} {'seconds':>8} {'ideal':>6} {'calls/s':>8} {'speed-up':>8} {'in flight':>9}")
    for row in rows:
        row["speed_up"] = round(base / row["seconds"], 2)
        print(f"{row['concurrency']:>11} {row['seconds']:>8.3f} {row['ideal_seconds']:>6.2f} "
              f"{row['calls_per_second']:>8.1f} {row['speed_up']:>7.2f}x {row['max_in_flight']:>9}")
    if args.json:
        args.json.write_text(json.dumps({"calls": args.calls, "delay": args.delay, "rows": rows}, indent=2) + "\n",
                             encoding="utf-8")


if __name__ == "__main__":
    main()
