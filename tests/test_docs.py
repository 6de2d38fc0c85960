"""Every fenced block of README.md and docs/*.md runs, or says on the line beside it why not: Python blocks run
in a folder holding the sample's index, `acervo` command lines run through the CLI, SQL runs on the index."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb
import httpx
import pytest

from conftest import DATA, SAMPLE, free_port, wait_for

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARK = re.compile(r"^<!-- (not run|exit): (.+?) -->$")  # the line right before a block's fence, or right after it
COMMAND = re.compile(r"^(\.venv/bin/)?acervo ")
FOLDER = {"guide.md": "# Guide\n\nAcervo indexes documents. The Guide names Acervo and DuckDB.\n",
          "duckdb.md": "# DuckDB\n\nDuckDB stores the index of Acervo in one file.\n",
          "notes.txt": "Notes about Acervo and DuckDB, written by the Guide's authors.\n"}


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its code, and its mark (kind and detail), if any."""

    page: str
    line: int
    lang: str
    code: str
    mark: tuple[str, str] | None

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a Markdown page, each with the mark on the line before or after it."""
    lines, found, i = page.read_text(encoding="utf-8").splitlines(), [], 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        beside = [lines[k] for k in (i - 1, end + 1) if 0 <= k < len(lines)]
        marks = [m.groups() for m in map(MARK.match, beside) if m]
        found.append(Block(page.relative_to(ROOT).as_posix(), i + 1, lines[i][3:].strip(),
                           "\n".join(lines[i + 1:end]) + "\n", marks[0] if marks else None))
        i = end + 1
    return found


def commands(code: str) -> list[list[str]]:
    """A shell block's command lines as argument lists (continuations joined, comments dropped)."""
    return [shlex.split(line, comments=True) for line in code.replace("\\\n", " ").splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def runnable(block: Block) -> bool:
    """Whether the test can run the block: Python, SQL, or a shell block of acervo command lines only."""
    if block.lang in ("python", "sql"):
        return True
    lines = [line for line in block.code.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return block.lang == "sh" and bool(lines) and all(COMMAND.match(line) for line in lines)


ALL = [b for page in PAGES for b in blocks(page)]
SERVE = next(b for b in ALL if b.page == "README.md" and "acervo serve" in b.code)
RUN = [b for b in ALL if not (b.mark and b.mark[0] == "not run")]


def test_every_block_runs_or_says_why_not():
    unmarked = [str(b) for b in RUN if not runnable(b)]
    assert not unmarked, f"blocks the test cannot run, with no <!-- not run: reason --> beside them: {unmarked}"
    assert all(b.mark[1].strip() for b in ALL if b.mark), "a mark without its reason"
    assert len(RUN) >= 10 and any(b.page.startswith("docs/") for b in RUN)


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, as GitHub makes them."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def test_links_between_pages_resolve():
    for page in PAGES:
        for target, anchor in re.findall(r"\]\(([^)#:]*\.md)(?:#([^)]+))?\)", page.read_text(encoding="utf-8")):
            linked = (page.parent / target).resolve()
            assert linked.is_file(), f"{page.name}: no page {target}"
            assert not anchor or anchor in anchors(linked), f"{page.name}: no heading #{anchor} in {target}"


def test_the_readme_test_command_is_ci_s():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()[-1]
    assert ci in ALL[0].code.splitlines(), "the README's test command differs from .ci/run's"


def test_the_layout_names_every_module():
    named = set(re.findall(r"\b[a-z_]+(?:\.py|/)", (ROOT / "docs" / "development.md").read_text(encoding="utf-8")))
    modules = {p.name + ("/" if p.is_dir() else "") for folder in ("flows", "pipelines", "pipelines/query")
               for p in (ROOT / folder).iterdir() if p.suffix == ".py" or p.is_dir() and p.name != "__pycache__"}
    assert sorted(modules - named) == []


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the sample's index (acervo.duckdb, mode titles), its data under tests/data, and a folder docs/
    indexed in mode nlp (docs.duckdb)."""
    base = tmp_path_factory.mktemp("docs")
    (base / "tests" / "data").mkdir(parents=True)
    for name in (SAMPLE.name, "2wiki_sample_questions.jsonl"):
        shutil.copy(DATA / name, base / "tests" / "data" / name)
    (base / "docs").mkdir()
    for name, text in FOLDER.items():
        (base / "docs" / name).write_text(text, encoding="utf-8")
    for args in (["index", str(SAMPLE), "--db", "acervo.duckdb", "--mentions", "titles"],
                 ["index", "docs", "--db", "docs.duckdb", "--mentions", "nlp"]):
        done = acervo([*args, "--no-prefect"], base)
        assert done.returncode == 0, done.stderr
    return base


@pytest.fixture
def folder(sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the sample folder of this test's own, as the working directory."""
    work = tmp_path / "work"
    shutil.copytree(sample, work)
    monkeypatch.chdir(work)
    return work


def acervo(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the acervo command line in `cwd`, as a one-shot run would be without a Prefect API."""
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    return subprocess.run([sys.executable, "-m", "acervo.flows", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("block", RUN, ids=str)
def test_block_runs(block: Block, folder: Path):
    if block.lang == "python":
        exec(compile(block.code, str(block), "exec"), {"__name__": "__docs__"})
    elif block.lang == "sql":
        with duckdb.connect(str(folder / "acervo.duckdb"), read_only=True) as con:
            for statement in filter(str.strip, block.code.split(";")):
                assert con.execute(statement).fetchall(), f"{block}: no rows from {statement}"
    else:
        expected = int(block.mark[1]) if block.mark else 0
        for line in commands(block.code):
            done = acervo(line[1:], folder)
            assert done.returncode == expected, f"{block}: {shlex.join(line)}: {done.stderr[-2000:]}"


def answers(url: str) -> bool:
    """Whether the service at `url` answers its health check."""
    try:
        return httpx.get(f"{url}/health", timeout=2).is_success
    except httpx.HTTPError:
        return False


@pytest.mark.slow
def test_the_readme_service_example_answers(sample: Path):
    serve, curl = commands(SERVE.code)
    args, port = [a for a in serve[1:] if a != "&"], free_port()
    at = args.index("--port") + 1
    documented, args[at] = args[at], str(port)
    process = subprocess.Popen([sys.executable, "-m", "acervo.flows", *args], cwd=sample, text=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: process.poll() is not None or answers(url), timeout=60, what="the service to start")
        assert process.poll() is None, process.stderr.read()
        path = next(a for a in curl if a.startswith("localhost:")).removeprefix(f"localhost:{documented}")
        body = curl[curl.index("-d") + 1]
        done = httpx.post(url + path, content=body, headers={"content-type": "application/json"}, timeout=60)
        assert done.status_code == 200, done.text
        assert done.json()["route"] == "local" and done.json()["blocks"]
    finally:
        process.terminate()
        assert process.wait(timeout=60) == 0
