"""acervo's Prefect flows and CLI, and how acervo meets its libraries: the process-wide defaults it sets before
importing them, and when a run is a Prefect flow run."""

import os
import sys
import tomllib
import warnings
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from acervo.pipelines.beside import SetAside

PREFECT_MODES = ("PREFECT_PROFILES_PATH", "PREFECT_PROFILE", "PREFECT_TEST_MODE", "PREFECT_UNIT_TEST_MODE",
                 "PREFECT_TESTING_UNIT_TEST_MODE", "PREFECT_TESTING_TEST_MODE",  # variables that choose the profile
                 "PREFECT_PLUGINS_ENABLED")  # or may set settings when Prefect is imported


def startup() -> None:
    """Set acervo's process-wide defaults, before the libraries that read them are imported; the CLI calls it
    first thing, the modules that import Prefect before they do, and a served deployment's runs inherit them.

    Prefect reads its settings once, when first imported: its files go in the user's state folder (XDG), apart from
    the code and from the user's own Prefect profiles, unless PREFECT_HOME is set; no telemetry is sent; and a
    temporary server is given time to start on a slow, busy machine. Variables already set are kept.
    """
    if "PREFECT_HOME" not in os.environ:
        state = os.environ.get("XDG_STATE_HOME", "")
        home = (Path(state) if os.path.isabs(state) else Path.home() / ".local" / "state") / "acervo" / "prefect"
        with suppress(OSError):  # Prefect makes only the last folder of its home; where it can't, it says so itself
            home.mkdir(parents=True, exist_ok=True)
        os.environ["PREFECT_HOME"] = str(home)
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    if not getattr(warnings.showwarning, "one_line", False):  # once, however often startup is called
        warnings.showwarning = _one_line(warnings.showwarning)


def _one_line(show: Callable[..., None]) -> Callable[..., None]:
    """`show` (warnings.showwarning), but a file set aside beside an index (pipelines.beside.SetAside) is told on
    one line of standard error, as acervo's other messages are."""

    def shown(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if issubclass(category, SetAside):
            print(f"acervo: warning: {message}", file=sys.stderr, flush=True)
        else:
            show(message, category, *args, **kwargs)

    shown.one_line = True
    return shown


def flow_run_wanted(asked: bool | None) -> bool:
    """Whether a run goes through Prefect as a flow run: as `asked` says (--prefect, --no-prefect), and otherwise
    only when Prefect's settings name an API server.

    Without one, Prefect would start a temporary server for the run, which costs many times what indexing a small
    corpus does; so a one-shot run then calls the same stages directly, recording its ledger but no flow run.
    """
    return asked if asked is not None else api_named()


def api_named() -> bool:
    """Whether Prefect's settings name an API server: read without Prefect where they are plain (`api_url_named`),
    else by Prefect's settings module, whose import costs seconds."""
    found = api_url_named()
    if found is not None:
        return found
    from prefect.settings import get_current_settings

    return bool(get_current_settings().api.url)  # an empty PREFECT_API_URL names no server either


def api_url_named() -> bool | None:
    """Whether Prefect's settings name an API server, read without importing Prefect (which costs seconds): from
    PREFECT_API_URL, else from the active profile of PREFECT_HOME's profiles.toml (none: Prefect's default
    profile, which names none); None where another source could decide (a settings file in the working folder,
    a variable that picks the profile, an unreadable profiles file, Prefect already imported: its settings may be
    changed in the process), for Prefect itself to read."""
    if "prefect.settings" in sys.modules:
        return None
    named = [k for k in os.environ if k.upper() in ("PREFECT_API_URL", "PREFECT_API")]
    if named:  # Prefect reads variable names in any case, and PREFECT_API as JSON: only the plain one is read here
        return bool(os.environ["PREFECT_API_URL"]) if named == ["PREFECT_API_URL"] else None
    home = os.environ.get("PREFECT_HOME")
    if not home or any(os.environ.get(k) for k in os.environ if k.upper() in PREFECT_MODES) \
            or _prefect_in_working_folder():
        return None
    try:
        profiles = tomllib.loads((Path(home) / "profiles.toml").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    active = profiles.get("profiles", {}).get(profiles.get("active"))
    if not isinstance(active, dict):
        return False
    url = active.get("PREFECT_API_URL", "")
    return bool(url) if isinstance(url, str) and "PREFECT_API" not in active else None


def _prefect_in_working_folder() -> bool:
    """Whether the working folder holds Prefect settings Prefect reads besides its profiles (or may: unreadable):
    PREFECT_ variables in .env, a prefect.toml, a [tool.prefect] table in pyproject.toml."""
    try:
        if os.path.exists("prefect.toml") or "prefect_" in _text(".env").lower():
            return True
        return "prefect" in tomllib.loads(_text("pyproject.toml")).get("tool", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True


def _text(path: str) -> str:
    """The text of the file at `path`, or "" when there is none."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
