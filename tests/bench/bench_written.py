"""Benchmark: written reports and answers of the 2Wiki sample against the fake chat server, at several
concurrency limits, each reply held back `--delay` seconds (a slow endpoint).

    python tests/bench/bench_written.py [--delay 0.05] [--concurrency 1 4]

Prints, per limit, the wall time of the two written stages, the calls made, the rows written and kept
extractive, and the most requests the server had in flight; then the calls of a rerun with no change.
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE.parent)]  # the repository, and tests/ for the fake server

from llm_server import FakeLLM  # noqa: E402

from acervo.flows.index import publish  # noqa: E402
from acervo.pipelines.citations import CITABLE  # noqa: E402
from acervo.pipelines.settings import Settings  # noqa: E402

SAMPLE = HERE.parent / "data" / "2wiki_sample.jsonl"


def respond(messages: list[dict]) -> str:
    """Two sentences citing the first and last chunk the prompt lets the reply cite."""
    ids = messages[-1]["content"].split("\n")[-1].removeprefix(CITABLE).split(", ")
    return json.dumps({"sentences": [{"text": "One.", "cites": ids[:1]}, {"text": "Two.", "cites": ids[-1:]}]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for limit in args.concurrency:
            db = Path(tmp) / f"c{limit}.duckdb"
            with FakeLLM(respond=respond, delay=args.delay) as server:
                settings = Settings(mentions="titles", llm_url=server.url, llm_model="fake", llm_concurrency=limit)
                _, stages = publish(SAMPLE, db, settings)
                written = [s for s in stages if s.stage.startswith("written_")]
                detail = {k: sum(s.work.detail[k] for s in written) for k in ("calls", "written", "fallbacks")}
                print(f"concurrency {limit}: {sum(s.seconds for s in written):.2f} s, {detail['calls']} calls, "
                      f"{detail['written']} written, {detail['fallbacks']} kept extractive, "
                      f"{server.max_in_flight} in flight at most")
                asked = len(server.requests)
                start = time.perf_counter()
                publish(SAMPLE, db, settings)
                print(f"  rerun with no change: {len(server.requests) - asked} calls, "
                      f"{time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
