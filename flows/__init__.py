"""acervo's Prefect flows and CLI, and how acervo meets its libraries: the process-wide defaults it sets before
importing them, and when a run is a Prefect flow run."""

import os
from contextlib import suppress
from pathlib import Path


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


def flow_run_wanted(asked: bool | None) -> bool:
    """Whether a run goes through Prefect as a flow run: as `asked` says (--prefect, --no-prefect), and otherwise
    only when Prefect's settings name an API server.

    Without one, Prefect would start a temporary server for the run, which costs many times what indexing a small
    corpus does; so a one-shot run then calls the same stages directly, recording its ledger but no flow run.
    Reading the settings imports Prefect's settings module, not its engine.
    """
    if asked is not None:
        return asked
    from prefect.settings import get_current_settings

    return bool(get_current_settings().api.url)  # an empty PREFECT_API_URL names no server either
