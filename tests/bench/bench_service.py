"""Benchmark: the query service (`acervo serve`) under concurrent clients while runs publish, on loopback.

    python tests/bench/bench_service.py [--sizes 1 10] [--clients 8] [--seconds 60] [--publish-every 10]
        [--readers 4] [--data DIR] [--out DIR]

For each size K (copies of 2WikiMultihopQA as bench_scale writes them, mode titles): builds the index, starts the
service on a free loopback port, and for --seconds has --clients threads ask the dev questions (POST /query,
budget 2048, each client its own httpx connection) while a publisher edits 0.1% of the documents and runs
`acervo index` every --publish-every seconds. A read saw a mixed state when the chunks its context cites are not
all of one published index (the chunk ids of every index published are read after each publish). Prints one
Markdown table: requests, throughput, latency p50 and p99, errors (any status but 200), 503s, mixed reads,
publishes, and the service's peak RSS. Figures are wall clock on this machine, never asserted.
"""

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import duckdb
import httpx
from bench_scale import default_data, edited, templates, write_jsonl

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> None:
    """An acervo command in a fresh process (it must succeed)."""
    subprocess.run([sys.executable, "-m", "acervo.flows", *args], cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def chunk_ids(db: Path) -> frozenset[str]:
    """The chunk ids of the index published at `db` now."""
    with duckdb.connect(str(db), read_only=True) as con:
        return frozenset(c for (c,) in con.execute("select chunk_id from chunks").fetchall())


def peak_mb(pid: int) -> float:
    """A process's peak resident memory (VmHWM) in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bench(k: int, docs: list, questions: list[str], args: argparse.Namespace, folder: Path) -> dict:
    """One size: build, serve, ask and publish, and every figure."""
    folder.mkdir(parents=True, exist_ok=True)
    records = [t.copy(c) for c in range(k) for t in docs]
    source, db = write_jsonl(folder / "corpus.jsonl", records), folder / "index.duckdb"
    cli("index", str(source), "--db", str(db), "--mentions", "titles", "--no-prefect")
    versions = [chunk_ids(db)]
    served, url = started_service(db, args.readers)
    stop = threading.Event()
    answers: list[tuple[float, int, frozenset[str]]] = []
    lock = threading.Lock()

    def client(n: int) -> None:
        rng = random.Random(n)
        with httpx.Client(timeout=120) as http:
            while not stop.is_set():
                started = time.perf_counter()
                response = http.post(f"{url}/query", json={"question": rng.choice(questions), "budget": 2048})
                took = time.perf_counter() - started
                cited = frozenset(r for b in response.json().get("blocks", []) for r in b["refs"]) \
                    if response.status_code == 200 else frozenset()
                with lock:
                    answers.append((took, response.status_code, cited))

    def publisher() -> None:
        rng = random.Random(0)
        while not stop.wait(args.publish_every):
            for i in rng.sample(range(len(records)), max(1, len(records) // 1000)):
                records[i] = edited(records[i])
            write_jsonl(source, records)
            cli("index", str(source), "--db", str(db), "--mentions", "titles", "--no-prefect")
            versions.append(chunk_ids(db))

    threads = [threading.Thread(target=client, args=(n,)) for n in range(args.clients)]
    threads.append(threading.Thread(target=publisher))
    started = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(args.seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    peak = peak_mb(served.pid)
    served.terminate()
    served.wait(60)
    return {"documents": len(records), "peak_mb": peak, **figures(answers, versions, elapsed)}


def started_service(db: Path, readers: int) -> tuple[subprocess.Popen, str]:
    """`acervo serve` over `db` on a free loopback port, once it answers; its process and URL."""
    port = free_port()
    served = subprocess.Popen([sys.executable, "-m", "acervo.flows", "serve", "--db", str(db), "--port", str(port),
                               "--readers", str(readers)], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=1).is_success:
                return served, url
        except httpx.HTTPError:
            time.sleep(0.1)


def figures(answers: list[tuple[float, int, frozenset[str]]], versions: list[frozenset[str]],
            elapsed: float) -> dict:
    """Throughput, latency, errors and mixed reads of the answers."""
    latencies = sorted(1000 * took for took, status, _ in answers if status == 200)
    mixed = sum(1 for _, status, cited in answers if status == 200 and cited and
                not any(cited <= version for version in versions))
    return {"requests": len(answers), "per_s": len(answers) / elapsed, "p50": statistics.median(latencies),
            "p99": latencies[int(0.99 * (len(latencies) - 1))],
            "errors": sum(1 for _, status, _ in answers if status != 200),
            "busy": sum(1 for _, status, _ in answers if status == 503), "mixed": mixed,
            "publishes": len(versions) - 1}


def main() -> None:
    """Every size, one table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10], help="copies of the corpus")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients")
    parser.add_argument("--seconds", type=float, default=60, help="how long the clients ask")
    parser.add_argument("--publish-every", type=float, default=10, help="seconds between publishes")
    parser.add_argument("--readers", type=int, default=4, help="the service's --readers")
    parser.add_argument("--data", type=Path, default=None, help="the shared data folder")
    parser.add_argument("--out", type=Path, default=None, help="scratch folder (default: a temporary one)")
    args = parser.parse_args()
    data = (args.data or default_data()) / "2wikimultihopqa"
    corpus = [json.loads(line) for line in (data / "corpus.jsonl").read_text(encoding="utf-8").split("\n")
              if line.strip()]
    questions = [json.loads(line)["question"] for line in
                 (data / "questions.dev.jsonl").read_text(encoding="utf-8").split("\n") if line.strip()][:500]
    docs, _ = templates(corpus)
    out = args.out or Path(tempfile.mkdtemp(prefix="bench_service-"))
    rows = ["| copies | documents | clients | requests | per second | p50 ms | p99 ms | errors | of them 503 | "
            "mixed reads | publishes | service peak RSS MB |", "|---:" * 12 + "|"]
    for k in args.sizes:
        r = bench(k, docs, questions, args, out / f"{k}x")
        rows.append(f"| {k} | {r['documents']} | {args.clients} | {r['requests']} | {r['per_s']:.1f} | "
                    f"{r['p50']:.0f} | {r['p99']:.0f} | {r['errors']} | {r['busy']} | {r['mixed']} | "
                    f"{r['publishes']} | {r['peak_mb']:.0f} |")
        print(rows[-1], file=sys.stderr, flush=True)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
