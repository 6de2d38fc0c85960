"""acervo as a normal package: the wheel, installed in a fresh venv, indexes and answers from any directory."""

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from conftest import SAMPLE

pytestmark = pytest.mark.slow  # builds the wheel and installs it in a fresh virtual environment

ROOT = Path(__file__).parent.parent
SHIPPED = ["pyproject.toml", "README.md", "LICENSE", "flows", "pipelines", "sql"]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


class Installed:
    """A fresh venv with only the acervo wheel installed; its dependencies are those of the test run."""

    def __init__(self, base: Path):
        self.base = base
        self.venv = base / "venv"
        self.python = self.venv / "bin" / "python"
        self.acervo = self.venv / "bin" / "acervo"
        self.wheel = self._build()
        run(sys.executable, "-m", "venv", "--without-pip", self.venv)
        run(sys.executable, "-m", "pip", "--python", self.python, "install", "--no-deps", "--no-index", self.wheel)
        purelib = run(self.python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip()
        self.site = Path(purelib)
        # Lines of a .pth file go on sys.path after the venv's own site-packages, and .pth files in those folders
        # are not run: the dependencies are found, the test run's editable acervo is not.
        deps = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
        (self.site / "acervo-test-deps.pth").write_text("".join(f"{p}\n" for p in deps), encoding="utf-8")
        self.files = self.snapshot()

    def _build(self) -> Path:
        """The wheel of a copy of the repository (a build in place would leave build/ behind), offline."""
        src = self.base / "src"
        src.mkdir()
        for name in SHIPPED:
            if (ROOT / name).is_dir():
                shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(ROOT / name, src / name)
        dist = self.base / "dist"
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                               "-w", dist, src], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"the test extra's setuptools builds it (pip install -e '.[test]'):\n{done.stderr}"
        (wheel,) = dist.glob("acervo-*.whl")
        return wheel

    def snapshot(self) -> set[Path]:
        """Every file in the venv."""
        return {p for p in self.venv.rglob("*") if p.is_file()}

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a user with no Prefect settings and their own home and state folders."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "PYTHON", "XDG_"))}
        return env | {"HOME": str(self.base / "home"), "XDG_STATE_HOME": str(self.base / "state")} | extra


def run(*command: object, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """The stdout of `command`, which must succeed."""
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    return Installed(tmp_path_factory.mktemp("wheel"))


def test_the_wheel_ships_every_sql_file_the_encodings_and_the_prompts(installed: Installed):
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    assert {f"acervo/sql/{p.name}" for p in (ROOT / "sql").glob("*.sql")} <= names
    assert {f"acervo/pipelines/encodings/{p.name}" for p in (ROOT / "pipelines" / "encodings").iterdir()} <= names
    prompts = {f"acervo/pipelines/prompts/{p.name}" for p in (ROOT / "pipelines" / "prompts").glob("*.txt")}
    assert {"acervo/pipelines/prompts/written_report.txt", "acervo/pipelines/prompts/written_answer.txt",
            "acervo/pipelines/prompts/prune.txt"} <= prompts <= names
    # One import name: nothing but acervo/ and the distribution's metadata at the wheel's top level.
    assert {n.split("/")[0] for n in names} == {"acervo", f"acervo-{VERSION}.dist-info"}


def test_the_wheel_asks_for_ranges_of_its_dependencies_never_one_exact_version(installed: Installed):
    with zipfile.ZipFile(installed.wheel) as wheel:
        metadata = wheel.read(f"acervo-{VERSION}.dist-info/METADATA").decode()
    required = [line.split(":", 1)[1].split(";")[0].strip() for line in metadata.splitlines()
                if line.startswith("Requires-Dist:")]  # the requirement, without its marker (extra == "test")
    assert any(r.startswith("duckdb") for r in required)
    assert not [r for r in required if "==" in r], "exact versions belong in the lock file, not the package"


def test_the_installed_package_indexes_and_answers_from_another_directory(installed: Installed, tmp_path: Path):
    env = installed.env()
    summary = json.loads(run(installed.acervo, "index", SAMPLE, "--db", "x.duckdb", "--mentions", "titles",
                             "--no-prefect", "--json", cwd=tmp_path, env=env))
    assert summary["rejected"] == [] and summary["stats"]["tables"]["documents"] == 300
    assert summary["stats"]["tables"]["entities"] > 0 and summary["stats"]["tables"]["communities"] > 0

    answer = json.loads(run(installed.acervo, "query", "Who was Lothair II married to?", "--db", "x.duckdb", "--json",
                            cwd=tmp_path, env=env))
    assert answer["route"] == "local"
    assert any("Teutberga" in b["text"] for b in answer["blocks"] if b["kind"] != "instruction")
    probe = ("import acervo.flows as f, acervo.pipelines.db as d, acervo.pipelines.citations as c; print(f.__file__);"
             " print(d.SQL_DIR); print(c.PROMPTS); print(c.prompt('written_report').version)")
    where = run(installed.python, "-c", probe, cwd=tmp_path, env=env).split()
    acervo = installed.site / "acervo"
    assert [Path(w) for w in where[:3]] == [acervo / "flows" / "__init__.py", acervo / "sql",
                                            acervo / "pipelines" / "prompts"]
    assert len(where[3]) == 12
    for name in ("flows", "pipelines", "sql"):  # the card's folder names stay out of the user's import names
        assert not (installed.site / name).exists()
        missing = subprocess.run([installed.python, "-c", f"import {name}"], cwd=tmp_path, env=env,
                                 capture_output=True, text=True)
        assert missing.returncode == 1 and "ModuleNotFoundError" in missing.stderr
    assert installed.snapshot() == installed.files


def test_prefect_keeps_its_home_in_the_user_state_folder_never_in_the_venv(installed: Installed, tmp_path: Path):
    probe = "import acervo.flows.flow_run, prefect.settings as s; print(s.PREFECT_HOME.value())"
    home = Path(run(installed.python, "-c", probe, cwd=tmp_path, env=installed.env()).strip())
    assert home == installed.base / "state" / "acervo" / "prefect" and home.is_dir()
    chosen = installed.env(PREFECT_HOME=str(tmp_path / "chosen"))
    kept = "import acervo.flows, os; print(os.environ['PREFECT_HOME'])"
    assert run(installed.python, "-c", kept, cwd=tmp_path, env=chosen).strip() == chosen["PREFECT_HOME"]
    assert installed.snapshot() == installed.files
