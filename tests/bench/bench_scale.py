"""Scale benchmark: builds, reruns and queries of K copies of 2WikiMultihopQA, through the command line.

    python tests/bench/bench_scale.py [--sizes 1 10 50] [--data DIR] [--questions 200] [--out DIR] [--keep]
        [--json FILE]

For each K it writes K copies of the corpus (copy 0 as it is; copy k > 0 with ids `ID~k` and each word of
a title, wherever a title or its short form is named, given a letter tag of copy k's own: each copy names
its own entities, the copies' graphs are disjoint and their common words shared; a text naming no title
gets its first word tagged, so no two copies share a text), and, each in a fresh process:
builds the index (`acervo index --mentions titles --no-prefect`), asks --questions dev questions in one
reader (`pipelines.query.context.Index`, default settings; question i names the entities of copy i mod K),
reruns with nothing changed, then with 0.1% and then 1% of the documents changed (a third each edited,
added, deleted), then with one document edited (the run a trigger on a document's change makes, from a
spare: the file the last publish replaced). It prints a Markdown table, one row per size: full build wall
time and peak RSS, the file's size, each rerun's wall time (publish and process start included), query CPU
and wall p50/p95, the time to open the index and answer a first question (imports apart), the reader's peak
RSS, the recall of gold documents in the contexts; then per size each run's seconds by stage, and what
DuckDB held in the reader at its end (lookup-index nodes, cached table blocks). --json FILE writes every
figure. A peak RSS is the process's own high-water mark (VmHWM, where /proc has it): its rusage would also
hold the benchmark's own RSS at the moment it started the process, which holds the corpus.
It uses only the command line and `Index`, so it runs on any version of the code.
"""

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter

import duckdb
from equivalence import default_data  # the data folder beside the repository, as the other benchmarks find it

ROOT = Path(__file__).resolve().parents[2]
TOKEN = re.compile(r"(\w+)|[^\w\s]")  # acervo's tokens (pipelines.names.WORD); group 1: a word
MARKS = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")  # combining marks
DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")  # a title's trailing "(...)": its short form drops it
CHANGES = (("0.1%", 0.1), ("1%", 1.0))  # the reruns after the no-change one: label, percent of documents
ONE_EDIT = "1 edit"  # the last rerun: one document edited, what a trigger on a document's change runs
EDIT = " This sentence was added by an edit."  # appended to each edited document
INDEX_OPTIONS = ("--mentions", "titles", "--no-prefect", "--allow-rejects", "--json")  # docs/benchmarks.md's figures
SEED = 19  # the changes' random draws
PEAK = r"""
def peak_kb():
    try:  # this process's own peak (VmHWM); ru_maxrss also holds the benchmark's RSS when it forked this one
        return int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0])
    except (OSError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""  # a child's peak RSS in kB
MEASURED = r"""
import atexit, resource, runpy, sys
""" + PEAK + r"""
out, mode, target, *rest = sys.argv[1:]
atexit.register(lambda: open(out, "w").write(str(peak_kb())))
sys.argv = [target, *rest]
if mode == "-m":
    runpy.run_module(target, run_name="__main__", alter_sys=True)
else:
    exec(compile(target, "<benchmark>", "exec"), {"__name__": "__main__"})
"""  # runs `python -m MODULE ARGS` or `python -c CODE ARGS` and writes its peak RSS (kB) to a file at exit
READER = r"""
import json, resource, sys, time
""" + PEAK + r"""
start = time.perf_counter()
from acervo.pipelines.query.context import Index
imported = time.perf_counter()
questions = [json.loads(line)["question"] for line in open(sys.argv[2], encoding="utf-8")]
index = Index(sys.argv[1])
opened = time.perf_counter()
rss_open = peak_kb()
index.query(questions[0])
first = time.perf_counter()
asked = []
for question in questions:
    cpu, wall = time.process_time(), time.perf_counter()
    blocks = index.query(question).to_dict()["blocks"]
    asked.append({"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall,
                  "refs": sorted({ref for block in blocks for ref in block["refs"]})})
held = dict(index.con.execute("select tag, memory_usage_bytes from duckdb_memory()").fetchall())
index.close()
json.dump({"import_s": imported - start, "open_s": opened - imported, "first_answer_s": first - imported,
           "rss_open_kb": rss_open, "asked": asked, "held": held}, open(sys.argv[3], "w", encoding="utf-8"))
"""  # one reader process: open, a first answer, then every question timed (the first one asked again); what DuckDB
# held at the end, by kind (ART_INDEX: lookup-index nodes; BASE_TABLE: cached table blocks)


def fold(token: str) -> str:
    """Text as acervo matches it: without accents, case-folded (pipelines.names.fold)."""
    return token.lower() if token.isascii() else MARKS.sub("", unicodedata.normalize("NFKD", token)).casefold()


def tag(k: int) -> str:
    """Copy k's word suffix: letters only (the BM25 index drops digits) and ending in one the stemmer keeps."""
    return "qx" + "".join("abcdefghij"[int(d)] for d in str(k)) + "z"


class Names:
    """Finds the titles of a corpus (and their short forms) in a text, leftmost and longest, on tokens."""

    def __init__(self, titles: list[str]) -> None:
        self.names: set[tuple[str, ...]] = set()
        for title in titles:
            for name in (title, DISAMBIGUATION.sub("", title)):
                tokens = tuple(t.group() for t in TOKEN.finditer(fold(name)))
                if tokens:
                    self.names.add(tokens)
        self.lengths: dict[str, list[int]] = {}
        for name in self.names:
            self.lengths.setdefault(name[0], []).append(len(name))
        for lengths in self.lengths.values():
            lengths.sort(reverse=True)

    def word_ends(self, text: str) -> list[int]:
        """Where each word of a name found in `text` ends (offsets, ascending)."""
        keys, owners = [], []  # the folded tokens, and the token of `text` each comes from ("…" gives three)
        for token in TOKEN.finditer(text):
            for key in TOKEN.finditer(fold(token.group())):
                keys.append(key.group())
                owners.append(token)
        ends, i = set(), 0
        while i < len(keys):
            n = next((n for n in self.lengths.get(keys[i], ()) if tuple(keys[i:i + n]) in self.names), 0)
            ends.update(t.end() for t in owners[i:i + n] if t.group(1))
            i += n or 1
        return sorted(ends)


def tagged(text: str, ends: list[int], suffix: str) -> str:
    """`text` with `suffix` after the words ending at `ends`."""
    pieces, last = [], 0
    for end in ends:
        pieces += [text[last:end], suffix]
        last = end
    return "".join(pieces) + text[last:]


@dataclass
class Template:
    """One document of the corpus with where its name words end, to write any copy of it."""

    record: dict
    title_ends: list[int]
    text_ends: list[int]

    def copy(self, k: int) -> dict:
        """Copy k: copy 0 is the document itself; another has id `ID~k` and its names' words tagged (a text
        naming nothing gets its first word tagged, so that no two copies share a text)."""
        if k == 0:
            return self.record
        suffix, r = tag(k), self.record
        text_ends = self.text_ends or [m.end() for m in re.finditer(r"\w+", r["text"])][:1]
        return {**r, "doc_id": f"{r['doc_id']}~{k}", "title": tagged(r["title"], self.title_ends, suffix),
                "text": tagged(r["text"], text_ends, suffix)}


def templates(records: list[dict]) -> tuple[list[Template], Names]:
    """The corpus's documents ready to copy, and the finder of its names (for the questions)."""
    names = Names([r["title"] for r in records])
    word = re.compile(r"\w+")
    return [Template(r, [m.end() for m in word.finditer(r["title"])], names.word_ends(r["text"]))
            for r in records], names


def changed(records: list[dict], percent: float, rng: random.Random, label: str) -> tuple[list[dict], dict]:
    """`records` with `percent` % of them edited, deleted or added (a third each); an added document is a
    donor's text under a new title and id."""
    n = max(3, round(len(records) * percent / 100))
    picked = rng.sample(range(len(records)), n)
    edits, deletes = set(picked[: n // 3]), set(picked[n // 3: 2 * n // 3])
    out = [edited(r) if i in edits else r
           for i, r in enumerate(records) if i not in deletes]
    added = n - 2 * (n // 3)
    for i in range(added):
        donor = records[rng.randrange(len(records))]
        title = f"{donor['title']} (new {label} {i})"
        text = f"{title} is a new document. {donor['text']}"
        out.append({"doc_id": f"new-{label}-{i}", "title": title, "text": text})
    return out, {"edited": len(edits), "deleted": len(deletes), "added": added}


def one_edit(records: list[dict], rng: random.Random) -> list[dict]:
    """`records` with one of them edited."""
    i = rng.randrange(len(records))
    return [*records[:i], edited(records[i]), *records[i + 1:]]


def edited(record: dict) -> dict:
    """`record` with EDIT appended to its text."""
    return {**record, "text": record["text"] + EDIT}


def write_jsonl(path: Path, records: list[dict]) -> Path:
    """`records` as JSON lines at `path`."""
    with path.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def child(args: list[str], log: Path) -> dict:
    """Run `python ARGS` (-m MODULE or -c CODE, then its arguments) from the repository root; its wall seconds, CPU
    seconds, peak RSS (MB, its own: MEASURED) and stdout. Fails loudly on a non-zero exit."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    peak = log.with_suffix(".peak")
    with log.with_suffix(".out").open("w") as out, log.with_suffix(".err").open("w") as err:
        start = perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", MEASURED, str(peak), *args], cwd=ROOT, env=env, stdout=out,
                                stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[:4])} exited {proc.returncode}:\n"
                         f"{log.with_suffix('.err').read_text()[-3000:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": int(peak.read_text()) / 1024,
            "stdout": log.with_suffix(".out").read_text(encoding="utf-8")}


def index(source: Path, db: Path, log: Path) -> dict:
    """One `acervo index` run: wall, CPU, peak RSS, seconds by stage, the file's size after it."""
    done = child(["-m", "acervo.flows.cli", "index", str(source), "--db", str(db), *INDEX_OPTIONS], log)
    summary = json.loads(done.pop("stdout"))
    done["stages"] = {s["stage"]: s["seconds"] for s in summary.get("stages", [])}
    done["file_mb"] = db.stat().st_size / 2**20
    return done


def questions(path: Path, limit: int, k: int, names: Names) -> list[dict]:
    """The first `limit` questions; question i asks about copy i mod `k`: its names tagged like that copy's,
    its gold documents that copy's."""
    asked = []
    for i, line in enumerate([line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()][:limit]):
        q, copy = json.loads(line), i % k
        if copy:
            q = {**q, "question": tagged(q["question"], names.word_ends(q["question"]), tag(copy)),
                 "supporting_doc_ids": [f"{d}~{copy}" for d in q["supporting_doc_ids"]]}
        asked.append(q)
    return asked


def percentile(values: list[float], p: int) -> float:
    """The p-th percentile of `values` (interpolated between the two nearest)."""
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def read(db: Path, asked: list[dict], folder: Path) -> dict:
    """One reader process over `asked`: open and first-answer seconds, CPU and wall p50/p95 (ms), peak
    RSS, and the mean share of each question's gold documents its context cites."""
    qfile = write_jsonl(folder / "questions.jsonl", [{"question": q["question"]} for q in asked])
    result_file = folder / "reader.json"
    done = child(["-c", READER, str(db), str(qfile), str(result_file)], folder / "reader")
    done.pop("stdout")
    got = json.loads(result_file.read_text(encoding="utf-8"))
    con = duckdb.connect(str(db), read_only=True)
    doc_of = dict(con.execute("select chunk_id, doc_id from chunks").fetchall())
    con.close()
    recalls = []
    for q, a in zip(asked, got["asked"], strict=True):
        cited, gold = {doc_of.get(ref) for ref in a["refs"]}, set(q["supporting_doc_ids"])
        recalls.append(len(gold & cited) / len(gold) if gold else 1.0)
    cpu, wall = [a["cpu"] * 1000 for a in got["asked"]], [a["wall"] * 1000 for a in got["asked"]]
    return {"process_wall_s": done["wall_s"], "peak_rss_mb": done["peak_rss_mb"],
            "rss_after_open_mb": got["rss_open_kb"] / 1024, "import_s": got["import_s"], "open_s": got["open_s"],
            "first_answer_s": got["first_answer_s"],
            "cpu_ms": {"p50": percentile(cpu, 50), "p95": percentile(cpu, 95), "mean": statistics.mean(cpu)},
            "wall_ms": {"p50": percentile(wall, 50), "p95": percentile(wall, 95), "mean": statistics.mean(wall)},
            "recall": statistics.mean(recalls), "questions": len(asked),
            "index_nodes_mb": got["held"].get("ART_INDEX", 0) / 2**20,
            "cached_mb": got["held"].get("BASE_TABLE", 0) / 2**20}


def bench_size(k: int, docs: list[Template], names: Names, qpath: Path, n_questions: int, folder: Path) -> dict:
    """Every figure of one size: build, read, rerun unchanged, rerun after each change."""
    folder.mkdir(parents=True, exist_ok=True)
    records = [t.copy(c) for c in range(k) for t in docs]
    source, db = folder / "corpus.jsonl", folder / "index.duckdb"
    write_jsonl(source, records)
    print(f"{k}x: {len(records)} documents", file=sys.stderr, flush=True)
    runs = {"full": index(source, db, folder / "full")}
    print(f"  full build {runs['full']['wall_s']:.1f} s", file=sys.stderr, flush=True)
    reader = read(db, questions(qpath, n_questions, k, names), folder)
    print(f"  reader: first answer {reader['first_answer_s']:.2f} s, CPU p50 {reader['cpu_ms']['p50']:.1f} ms",
          file=sys.stderr, flush=True)
    runs["no change"] = index(source, db, folder / "same")
    rng, counts = random.Random(SEED), {}
    for label, percent in CHANGES:
        records, counts[label] = changed(records, percent, rng, label)
        write_jsonl(source, records)
        runs[label] = index(source, db, folder / f"rerun{percent}")
        print(f"  {label} rerun {runs[label]['wall_s']:.1f} s", file=sys.stderr, flush=True)
    write_jsonl(source, one_edit(records, rng))
    runs[ONE_EDIT] = index(source, db, folder / "rerun_one")
    print(f"  {ONE_EDIT} rerun {runs[ONE_EDIT]['wall_s']:.1f} s", file=sys.stderr, flush=True)
    return {"copies": k, "documents": k * len(docs), "changes": counts, "runs": runs, "reader": reader}


def startup(folder: Path) -> float:
    """Wall seconds of `acervo index --help`: the interpreter's start and the command line's imports."""
    return child(["-m", "acervo.flows.cli", "index", "--help"], folder / "help")["wall_s"]


def mb(value: float) -> str:
    """Megabytes, or gigabytes from 1,000 MB."""
    return f"{value / 1024:.2f} GB" if value >= 1000 else f"{value:.0f} MB"


def timed(run: dict) -> str:
    """A run's wall seconds, with its CPU seconds (less disturbed by other work on the machine)."""
    return f"{run['wall_s']:.1f} s (CPU {run['cpu_s']:.1f})"


def summary_table(sizes: list[dict]) -> str:
    """The Markdown table: one row per size."""
    head = ["corpus", "full build", "peak RSS", "file", "no-change rerun", "0.1% rerun", "1% rerun",
            "one-document edit", "query CPU p50 / p95", "query wall p50 / p95", "first answer after open",
            "reader RSS", "recall"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for s in sizes:
        runs, r = s["runs"], s["reader"]
        cells = [f"{s['copies']}x ({s['documents']:,} docs)", timed(runs["full"]),
                 mb(runs["full"]["peak_rss_mb"]), mb(runs["full"]["file_mb"]),
                 *(timed(runs[label]) for label in ("no change", *(c for c, _ in CHANGES), ONE_EDIT)),
                 f"{r['cpu_ms']['p50']:.0f} / {r['cpu_ms']['p95']:.0f} ms",
                 f"{r['wall_ms']['p50']:.0f} / {r['wall_ms']['p95']:.0f} ms",
                 f"{r['first_answer_s']:.2f} s", mb(r["peak_rss_mb"]), f"{r['recall']:.1%}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def stage_table(size: dict) -> str:
    """One size's runs by stage: wall, CPU, each stage's seconds, the rest of the wall time, RSS, file."""
    runs = size["runs"]
    stages = list(dict.fromkeys(name for run in runs.values() for name in run["stages"]))
    head = ["run", "wall", "CPU", *stages, "rest of wall", "peak RSS", "file after"]
    lines = [f"{size['copies']}x, seconds (changes: {size['changes']}):",
             "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for label, run in runs.items():
        cells = [label, f"{run['wall_s']:.2f}", f"{run['cpu_s']:.2f}",
                 *(f"{run['stages'][s]:.2f}" if s in run["stages"] else "-" for s in stages),
                 f"{run['wall_s'] - sum(run['stages'].values()):.2f}", mb(run["peak_rss_mb"]), mb(run["file_mb"])]
        lines.append("| " + " | ".join(cells) + " |")
    r = size["reader"]
    lines.append(f"reader: import {r['import_s']:.2f} s, open {r['open_s']:.2f} s, RSS after open "
                 f"{mb(r['rss_after_open_mb'])}, CPU mean {r['cpu_ms']['mean']:.1f} ms, wall mean "
                 f"{r['wall_ms']['mean']:.1f} ms; at the end DuckDB held {mb(r['index_nodes_mb'])} of lookup-index "
                 f"nodes and {mb(r['cached_mb'])} of cached table blocks")
    return "\n".join(lines)


def main() -> None:
    """Run every size, print the tables, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 50], help="copies of the corpus")
    parser.add_argument("--data", type=Path, default=None, help="the shared data folder")
    parser.add_argument("--questions", type=int, default=200, help="dev questions the reader asks")
    parser.add_argument("--out", type=Path, default=None, help="scratch folder (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep each size's corpus and index")
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    args = parser.parse_args()
    data = (args.data or default_data()) / "2wikimultihopqa"
    corpus = [json.loads(line) for line in (data / "corpus.jsonl").read_text(encoding="utf-8").split("\n")
              if line.strip()]
    docs, names = templates(corpus)
    out = args.out or Path(tempfile.mkdtemp(prefix="bench_scale-"))
    out.mkdir(parents=True, exist_ok=True)
    started = perf_counter()
    result = {"startup_s": startup(out), "sizes": []}
    try:
        for k in args.sizes:
            result["sizes"].append(bench_size(k, docs, names, data / "questions.dev.jsonl", args.questions,
                                              out / f"{k}x"))
            if not args.keep:
                shutil.rmtree(out / f"{k}x")
            if args.json:
                args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    finally:
        if not args.keep and args.out is None:
            shutil.rmtree(out, ignore_errors=True)
    result["total_s"] = perf_counter() - started
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(summary_table(result["sizes"]))
    print(f"\nwall times include the process's start: `acervo index --help` takes {result['startup_s']:.2f} s; "
          f"whole benchmark {result['total_s']:.0f} s\n")
    for size in result["sizes"]:
        print(stage_table(size) + "\n")


if __name__ == "__main__":
    main()
