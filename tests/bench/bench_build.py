"""Benchmark: a whole-process build of this working tree beside another commit's, alternated in one run, per stage.

    python tests/bench/bench_build.py CORPUS --against REV [--mentions titles] [--rounds 3] [--json]

REV is exported with `git archive` into a temporary folder; each round builds CORPUS into a fresh file with
`acervo index CORPUS --db F --mentions M --no-prefect --json`, first with REV's code, then with the working tree's,
each in a fresh process of this Python (so both read the same installed libraries). A commit from before the
packages were installed under the name acervo runs as `python -m flows.cli` from its own folder. Both trees are
compiled to bytecode first, so that neither pays for compiling its modules. It prints the median seconds of each
stage (from `--json`), and the median wall, CPU (user + system) and peak RSS of the whole process.
"""

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parents[2]
SHOWN = 0.02  # seconds: a stage that took less on both sides (one with nothing to do) is left out of the table
FOLDERS = ("flows", "pipelines", "sql")  # the card's folders, installed as acervo.flows, acervo.pipelines, acervo.sql


def tree(source: Path, where: Path) -> tuple[list[str], dict[str, str], Path]:
    """How to run the CLI of the code in `source`: the module arguments, the environment and the folder to run in.
    Code installed as acervo.* is reached through a folder `acervo` of links to its folders, ahead of any
    installed copy; older code, whose packages were flows and pipelines, from its own folder."""
    if "acervo.flows" not in (source / "pyproject.toml").read_text(encoding="utf-8"):
        return ["-m", "flows.cli"], {**os.environ, "PYTHONPATH": str(source)}, source
    package = where / "acervo"
    package.mkdir(parents=True)
    for name in FOLDERS:
        (package / name).symlink_to(source / name, target_is_directory=True)
    return ["-m", "acervo.flows.cli"], {**os.environ, "PYTHONPATH": str(where)}, source


def exported(rev: str, where: Path) -> Path:
    """The tree of the commit `rev`, written below `where` by git archive."""
    out = where / "tree"
    out.mkdir(parents=True)
    archive = where / "tree.tar"
    with archive.open("wb") as file:
        subprocess.run(["git", "archive", rev], cwd=ROOT, stdout=file, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(out, filter="data")
    return out


def build(how: tuple[list[str], dict[str, str], Path], corpus: Path, db: Path, mentions: str) -> dict:
    """One build in a fresh process: its wall and CPU seconds, peak RSS (MB) and seconds per stage."""
    module, env, cwd = how
    command = [sys.executable, *module, "index", str(corpus), "--db", str(db), "--mentions", mentions,
               "--no-prefect", "--json"]
    with tempfile.TemporaryFile() as out:
        start = perf_counter()
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(command)} exited {os.waitstatus_to_exitcode(status)}")
        out.seek(0)
        summary = json.loads(out.read())
    for path in db.parent.glob(db.name + "*"):
        path.unlink()
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024,
            "stages": {s["stage"]: s["seconds"] for s in summary["stages"]}}


def medians(runs: list[dict]) -> dict:
    """The median of each figure over `runs`, stages by name (0 for a stage a run lacks)."""
    names = list(dict.fromkeys(name for r in runs for name in r["stages"]))
    return {"wall_s": statistics.median(r["wall_s"] for r in runs),
            "cpu_s": statistics.median(r["cpu_s"] for r in runs),
            "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in runs),
            "stages": {n: statistics.median(r["stages"].get(n, 0.0) for r in runs) for n in names}}


def table(rev: str, theirs: dict, ours: dict) -> str:
    """A Markdown table: each stage's median seconds (at least SHOWN on a side), then the whole process's, for `rev`
    and the working tree."""
    names = list(dict.fromkeys([*ours["stages"], *theirs["stages"]]))  # in the working tree's order
    lines = [f"| stage | {rev} | working tree |", "| --- | ---: | ---: |"]
    for name in names:
        if max(theirs["stages"].get(name, 0), ours["stages"].get(name, 0)) >= SHOWN:
            cells = [f"{r['stages'][name]:.2f}" if name in r["stages"] else "—" for r in (theirs, ours)]
            lines.append(f"| {name} | {cells[0]} | {cells[1]} |")
    lines.append(f"| **whole process, wall** | **{theirs['wall_s']:.2f}** | **{ours['wall_s']:.2f}** |")
    lines.append(f"| whole process, CPU | {theirs['cpu_s']:.2f} | {ours['cpu_s']:.2f} |")
    lines.append(f"| peak RSS (MB) | {theirs['peak_rss_mb']:.0f} | {ours['peak_rss_mb']:.0f} |")
    return "\n".join(lines)


def main() -> None:
    """Alternate the two builds `--rounds` times and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--against", required=True, help="the commit to compare with (any git revision)")
    parser.add_argument("--mentions", default="titles", choices=["given", "gazetteer", "titles", "nlp", "spacy"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    corpus = args.corpus.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        theirs_how = tree(exported(args.against, scratch / "theirs"), scratch / "theirs" / "path")
        ours_how = tree(ROOT, scratch / "ours" / "path")
        for how in (theirs_how, ours_how):
            for name in FOLDERS:
                compileall.compile_dir(how[2] / name, quiet=1, workers=0)
        runs: dict[str, list[dict]] = {"theirs": [], "ours": []}
        for k in range(args.rounds):
            for side, how in (("theirs", theirs_how), ("ours", ours_how)):
                runs[side].append(build(how, corpus, scratch / f"{side}.duckdb", args.mentions))
                print(f"round {k + 1} {side}: {runs[side][-1]['wall_s']:.2f} s", file=sys.stderr, flush=True)
    theirs, ours = medians(runs["theirs"]), medians(runs["ours"])
    if args.json:
        print(json.dumps({"against": args.against, "corpus": str(args.corpus), "mentions": args.mentions,
                          "rounds": args.rounds, "theirs": theirs, "ours": ours, "runs": runs}, indent=2))
        return
    print(f"{args.corpus.name}, --mentions {args.mentions} --no-prefect, medians of {args.rounds} alternated rounds")
    print(table(args.against, theirs, ours))
    ratio = ours["wall_s"] / theirs["wall_s"]
    print(f"\nthe working tree's build takes {ratio:.2f}x the wall time of {args.against}'s")


if __name__ == "__main__":
    main()
