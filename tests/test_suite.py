"""The suite itself: hypothesis tries a few examples by default and many under HYPOTHESIS_PROFILE=thorough,
which CI runs."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PROBE = "tests/test_budget.py::test_slices_cede_leftovers_forward_only"  # cheap, and takes the profile's count


def generated(profile: str | None) -> int:
    """How many examples the probe's generate phase passed, under `profile` (None: HYPOTHESIS_PROFILE unset)."""
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_PROFILE"}
    if profile:
        env["HYPOTHESIS_PROFILE"] = profile
    done = subprocess.run([sys.executable, "-m", "pytest", PROBE, "-q", "-p", "no:cacheprovider",
                           "--hypothesis-show-statistics"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return int(re.search(r"during generate phase.*?(\d+) passing", done.stdout, re.DOTALL)[1])


@pytest.mark.slow  # two pytest runs in subprocesses
def test_property_tests_are_quick_by_default_and_thorough_on_request():
    assert generated(None) == 10
    assert generated("thorough") == 100


def test_ci_runs_the_thorough_profile():
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"HYPOTHESIS_PROFILE=thorough \S+ -m pytest", run), run


def test_ci_runs_the_slow_tests_the_default_run_leaves_out():
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"-m pytest -m .slow or not slow.$", run, re.MULTILINE), run
