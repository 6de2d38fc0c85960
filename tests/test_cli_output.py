"""What the `acervo` verbs print: explanations, eval progress and missing figures, watch's messages, the
JSON of runs, every table in stats, control characters escaped (the stages run without the Prefect engine here)."""

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acervo.flows.cli import main
from acervo.flows.index import publish
from acervo.flows.schedule import parameters
from acervo.pipelines.settings import Requested, Settings
from conftest import DATA, SAMPLE, SEED

ROOT = Path(__file__).parent.parent
QUESTIONS = DATA / "2wiki_sample_questions.jsonl"


@pytest.fixture(scope="module")
def wiki(tmp_path_factory) -> Path:
    """The 2Wiki sample indexed with titles as entities (read-only use)."""
    db = tmp_path_factory.mktemp("wiki") / "w.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles"))
    return db


HOSTILE = "\u001b]0;PWNED\u0007"  # an escape sequence that sets a terminal's title, ended by BEL
RAW = ("\x1b", "\x07", "\x00")  # ESC, BEL, NUL: none may reach the terminal as it is
ASKED = "Who runs Alpha Station?"  # a question whose context holds the escape sequences


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    """An index of a folder whose file names, titles and texts hold escape sequences, with a setting that holds
    a NUL (read-only use)."""
    root = tmp_path_factory.mktemp("hostile")
    docs = root / "docs"
    docs.mkdir()
    (docs / "alpha.md").write_text(f"# Alpha Station\n\nAlpha Station is run by Beta Corp.{HOSTILE}\x1b[2J\n\n"
                                   "It hums.", encoding="utf-8")
    (docs / "beta.md").write_text("# Beta Corp\n\nBeta Corp owns Alpha Station.", encoding="utf-8")
    (docs / f"evil{HOSTILE}.md").write_text(f"# Evil{HOSTILE}\n\nAlpha Station meets Beta Corp.", encoding="utf-8")
    db = root / "h.duckdb"
    publish(docs, db, Settings(mentions="titles", llm_model="m\x00\x1b[31m"))
    return db


def few_questions(tmp_path: Path, n: int) -> Path:
    """The first `n` sample questions, as a JSONL file."""
    path = tmp_path / "q.jsonl"
    path.write_text("".join(QUESTIONS.read_text(encoding="utf-8").splitlines(keepends=True)[:n]), encoding="utf-8")
    return path


def test_explain_lists_the_refused_blocks(wiki: Path, capsys):
    assert main(["query", "Who directed Wrong Turn 3?", "--db", str(wiki), "--budget", "300", "--explain"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("route local: ")
    seeds = re.search(r"^seeds: .+ \((\d+) of (\d+) with their answer in the context\)$", out, flags=re.M)
    assert seeds and 0 <= int(seeds[1]) <= int(seeds[2]) > 0
    assert "components" not in out
    refused = re.findall(r"^  refused (\d+) chunk: (.+)$", out, flags=re.M)
    assert refused and int(refused[0][0]) == len(refused[0][1].split(", ")) > 0


def test_explain_with_questions_explains_each_one_and_json_stays_one_line_each(wiki: Path, tmp_path: Path, capsys):
    questions = few_questions(tmp_path, 3)
    ids = [json.loads(line)["id"] for line in questions.read_text(encoding="utf-8").splitlines()]
    assert main(["query", "--questions", str(questions), "--db", str(wiki), "--budget", "300", "--explain"]) == 0
    out = capsys.readouterr().out
    parts = out.split("\n\n")
    assert len(parts) == 3
    for qid, part in zip(ids, parts, strict=True):
        assert part.startswith(f"== {qid}: ") and "\nroute " in part and "\nbudget " in part
    assert main(["query", "--questions", str(questions), "--db", str(wiki), "--explain", "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["id"] for line in lines] == ids


NO_MATPLOTLIB = ("import sys\n"
                 "sys.modules['matplotlib'] = None\n"
                 "from acervo.flows.cli import main\n"
                 "sys.exit(main(sys.argv[1:]))\n")


def test_eval_plot_without_matplotlib_fails_before_evaluating(wiki: Path, tmp_path: Path):
    png = tmp_path / "recall.png"
    done = subprocess.run([sys.executable, "-c", NO_MATPLOTLIB, "eval", str(QUESTIONS), "--db", str(wiki),
                           "--plot", str(png)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "pip install 'acervo[plot]'" in done.stderr
    assert "questions" not in done.stdout + done.stderr.replace("--plot", "")  # nothing was evaluated
    assert not png.exists()


def test_eval_shows_progress_and_says_why_a_figure_is_missing(wiki: Path, tmp_path: Path, capsys):
    questions = few_questions(tmp_path, 4)
    assert main(["eval", str(questions), "--db", str(wiki)]) == 0
    out, err = capsys.readouterr()
    assert [line for line in err.splitlines() if line.startswith("acervo eval:")][-1] == "acervo eval: 4/4 questions"
    route = next(line for line in out.splitlines() if line.startswith("route_accuracy"))
    negative = next(line for line in out.splitlines() if line.startswith("negative_empty_rate"))
    assert "no question gives a gold route" in route and "the baseline does not route" in route
    assert "no negative question" in negative
    assert main(["eval", str(questions), "--db", str(wiki), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["acervo"]["questions"] == 4 and err == ""


def test_eval_prints_its_figures_before_plotting(wiki: Path, tmp_path: Path, capsys):
    plot = tmp_path / "a-folder"
    plot.mkdir()  # the PNG cannot be written there: the figures must be out already
    assert main(["eval", str(few_questions(tmp_path, 2)), "--db", str(wiki), "--plot", str(plot)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("2 questions") and "recall@5" in out


def on_a_terminal(*args: str) -> tuple[int, str, str]:
    """Run `acervo ARGS` with stderr on a pseudo-terminal: its exit code, stdout, and what the terminal got."""
    primary, secondary = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    run = subprocess.Popen([sys.executable, "-m", "acervo.flows", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                           stderr=secondary, text=True)
    os.close(secondary)
    seen, deadline = b"", time.monotonic() + 120
    while time.monotonic() < deadline:
        if not select.select([primary], [], [], 1)[0]:
            continue
        try:
            chunk = os.read(primary, 4096)
        except OSError:  # the terminal's other end closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(primary)
    out, _ = run.communicate(timeout=120)
    return run.returncode, out, seen.decode("utf-8", "replace")


def test_eval_draws_a_progress_bar_on_a_terminal(wiki: Path, tmp_path: Path):
    code, out, terminal = on_a_terminal("eval", str(few_questions(tmp_path, 2)), "--db", str(wiki))
    assert code == 0
    assert out.startswith("2 questions")
    assert "━" in terminal and "/2" in terminal
    assert "acervo eval:" not in terminal


@pytest.mark.slow  # seconds of indexing
def test_index_shows_each_stage_on_a_terminal_and_nothing_with_json(tmp_path: Path, capsys):
    code, out, terminal = on_a_terminal("index", str(SEED), "--db", str(tmp_path / "i.duckdb"), "--no-prefect")
    assert code == 0 and out.startswith("indexed into ")
    assert re.search(r"  documents +read +\d+ +reused +0 +recomputed +\d+ ", terminal)
    assert "indexing: chunk_vectors done" in terminal
    assert main(["index", str(SEED), "--db", str(tmp_path / "i.duckdb"), "--no-prefect", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["stages"][0]["stage"] == "documents" and err == ""


def test_a_first_build_says_the_written_stages_are_off_for_want_of_a_model_not_that_nothing_changed(
        tmp_path: Path, capsys):
    assert main(["index", str(SEED), "--db", str(tmp_path / "i.duckdb"), "--no-prefect"]) == 0
    lines = capsys.readouterr().err.splitlines()
    written = [line for line in lines if line.lstrip().startswith(("written_reports", "written_answers"))]
    assert len(written) == 2 and all(line.endswith("off: no language model (--llm-url)") for line in written)
    assert not [line for line in lines if "skipped: nothing it reads changed" in line]  # a first build skips nothing


def test_watch_says_first_run_and_what_changed_not_every_file(tmp_path: Path, capsys):
    docs, db = tmp_path / "docs", tmp_path / "docs.duckdb"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nAlpha works with Beta.", encoding="utf-8")
    (docs / "b.md").write_text("# Beta\n\nBeta is a group.", encoding="utf-8")
    assert main(["index", str(docs), "--db", str(db), "--no-prefect", "--json"]) == 0
    capsys.readouterr()
    assert main(["watch", "--source", str(docs), "--db", str(db), "--max-runs", "1", "--no-prefect"]) == 0
    err = capsys.readouterr().err
    assert f"first run over 2 file(s) under {docs}" in err
    assert "changed under" not in err
    assert "0 document(s) new or changed, 0 removed, 2 unchanged" in err


@pytest.mark.slow  # seconds of indexing
def test_index_json_and_runs_json_name_stage_fields_alike(tmp_path: Path, capsys):
    db = tmp_path / "i.duckdb"
    assert main(["index", str(SAMPLE), "--db", str(db), "--mentions", "titles", "--no-prefect", "--json"]) == 0
    indexed = json.loads(capsys.readouterr().out)["stages"]
    assert main(["runs", "--db", str(db), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)[0]["stages"]
    assert [set(s) for s in listed] == [set(s) for s in indexed]
    assert {"rows_read", "rows_reused", "rows_recomputed", "rows_removed", "detail"} <= set(indexed[0])
    assert [{k: v for k, v in s.items() if k != "seconds"} for s in listed] == \
           [{k: v for k, v in s.items() if k != "seconds"} for s in indexed]
    assert main(["runs", "--db", str(db)]) == 0
    assert re.search(r"^    documents +read +300 +reused +0 +recomputed +300 +removed +0 ", capsys.readouterr().out,
                     flags=re.M)


def test_stats_counts_every_table_of_the_schema(wiki: Path, capsys):
    schema = (ROOT / "sql" / "schema.sql").read_text(encoding="utf-8")
    tables = set(re.findall(r"create table if not exists (\w+)", schema))
    assert main(["stats", "--db", str(wiki), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert set(summary["tables"]) | set(summary["bookkeeping"]) == tables
    assert {"entity_aliases", "report_lines", "entity_vectors"} <= set(summary["tables"])
    assert summary["tables"]["report_lines"] > 0 and summary["tables"]["entity_aliases"] >= 300
    assert main(["stats", "--db", str(wiki)]) == 0
    out = capsys.readouterr().out
    assert all(re.search(rf"^ *{t} +\d+$", out, flags=re.M) for t in tables)


def test_a_deployment_stores_absolute_paths(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    stored = parameters(Path("docs"), Path("out/docs.duckdb"),
                        Requested(given={"mentions": "gazetteer", "gazetteer": "names.jsonl"}))
    assert stored["source"] == str(tmp_path.resolve() / "docs")
    assert stored["db"] == str(tmp_path.resolve() / "out" / "docs.duckdb")
    gazetteer = str(tmp_path.resolve() / "names.jsonl")
    assert stored["settings"]["given"] == {"mentions": "gazetteer", "gazetteer": gazetteer}


@pytest.mark.parametrize("args", [["query", ASKED], ["query", ASKED, "--explain"], ["stats"], ["runs"],
                                  ["entities", "--why", f"Evil{HOSTILE}"]],
                         ids=["query", "explain", "stats", "runs", "entities"])
def test_text_from_the_index_is_printed_with_its_control_characters_escaped(hostile: Path, args: list[str], capsys):
    assert main([*args, "--db", str(hostile)]) == 0
    out, err = capsys.readouterr()
    assert not [c for c in RAW if c in out + err], out
    assert "\\x1b" in out  # shown, escaped, not left out


def test_a_context_keeps_its_lines_and_json_escapes_control_characters(hostile: Path, capsys):
    assert main(["query", ASKED, "--db", str(hostile)]) == 0
    out = capsys.readouterr().out
    assert "Alpha Station is run by Beta Corp.\\x1b]0;PWNED\\x07\\x1b[2J\n\nIt hums." in out
    assert main(["query", ASKED, "--db", str(hostile), "--json"]) == 0
    out = capsys.readouterr().out
    assert not [c for c in RAW if c in out]
    assert any(HOSTILE in block["text"] for block in json.loads(out)["blocks"])


def test_a_rejected_file_s_name_is_printed_escaped_on_one_line(tmp_path: Path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nFine.", encoding="utf-8")
    (docs / "bad\nname\x1b.md").write_bytes(bytes(range(256)) * 3)  # no encoding reads it
    assert main(["index", str(docs), "--db", str(tmp_path / "d.duckdb"), "--no-prefect"]) == 2
    err = capsys.readouterr().err
    assert "\nrejected bad\\nname\\x1b.md:2: invalid_utf8: invalid UTF-8 at byte 128 of the file, and no other " \
           "encoding fits it\n" in err
    assert "\x1b" not in err


def test_an_error_naming_a_path_is_printed_escaped_on_one_line(tmp_path: Path, capsys):
    missing = tmp_path / "no\nsuch\x1b]0;PWNED\x07.duckdb"
    assert main(["stats", "--db", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err and "\x07" not in err and "\\x1b]0;PWNED\\x07" in err
