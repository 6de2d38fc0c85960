"""Benchmark: `acervo map` of K copies of 2WikiMultihopQA (bench_scale's copies), its size, and how long Chromium
takes to open it and a community.

    python tests/bench/bench_map.py [--sizes 1 50] [--data DIR] [--out DIR]

For each K: writes the copies, indexes them (`acervo index --mentions titles --no-prefect`, unless --out already
holds that size's index), writes the map (`acervo map`, wall time in a fresh process), then opens it in Chromium
(Debian's, driven by Playwright; .ci/browser installs it) and times the page until it is ready to use (its data
parsed, the overview drawn) and the opening of the largest community (its block parsed, its members and report
shown). Prints one Markdown table; figures are wall clock on this machine, never asserted.
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from time import perf_counter

from bench_scale import default_data, templates, write_jsonl
from playwright.sync_api import sync_playwright

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def timed(args: list[str]) -> float:
    """Seconds a command of the CLI takes in a fresh process (it must succeed)."""
    started = perf_counter()
    subprocess.run([sys.executable, "-m", "acervo.flows.cli", *args], check=True, stdout=subprocess.DEVNULL)
    return perf_counter() - started


def opened(page_file: Path) -> dict[str, float]:
    """Seconds Chromium takes to make the map ready, then to open its largest community."""
    path = next(found for name in BROWSERS if (found := shutil.which(name)))
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=path, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        started = perf_counter()
        page.goto(page_file.as_uri(), timeout=600_000)
        page.wait_for_selector("body[data-ready='1']", timeout=600_000)
        ready = perf_counter() - started
        started = perf_counter()
        page.locator("#map .community").first.dispatch_event("click")  # the largest: drawn first, under others
        page.wait_for_selector("#panel h2")
        community = perf_counter() - started
        browser.close()
    return {"ready_s": ready, "community_s": community}


def main() -> None:
    """Every size, one table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 50], help="copies of the corpus")
    parser.add_argument("--data", type=Path, default=None, help="the shared data folder")
    parser.add_argument("--out", type=Path, default=None, help="folder to keep corpora, indexes and maps in")
    args = parser.parse_args()
    data = (args.data or default_data()) / "2wikimultihopqa"
    corpus = [json.loads(line) for line in (data / "corpus.jsonl").read_text(encoding="utf-8").split("\n")
              if line.strip()]
    docs, _ = templates(corpus)
    out = args.out or Path(tempfile.mkdtemp(prefix="bench_map-"))
    rows = ["| copies | documents | communities | map (s) | file (MB) | ready in Chromium (s) | largest community "
            "opened (s) |", "|---:|---:|---:|---:|---:|---:|---:|"]
    for k in args.sizes:
        folder = out / f"{k}x"
        folder.mkdir(parents=True, exist_ok=True)
        db, page_file = folder / "index.duckdb", folder / "map.html"
        if not db.exists():
            source = write_jsonl(folder / "corpus.jsonl", [t.copy(c) for c in range(k) for t in docs])
            timed(["index", str(source), "--db", str(db), "--mentions", "titles", "--no-prefect"])
        made = timed(["map", "--db", str(db), "--out", str(page_file)])
        stats = [sys.executable, "-m", "acervo.flows.cli", "stats", "--db", str(db), "--json"]
        summary = json.loads(subprocess.run(stats, check=True, capture_output=True, text=True).stdout)
        browser = opened(page_file)
        rows.append(f"| {k} | {k * len(docs)} | {summary['tables']['communities']} | {made:.1f} | "
                    f"{page_file.stat().st_size / 1e6:.1f} | {browser['ready_s']:.2f} | {browser['community_s']:.2f} |")
        print(rows[-1], file=sys.stderr, flush=True)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
