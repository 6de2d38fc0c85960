"""acervo's Prefect flows and CLI. Importing this sets offline defaults before Prefect loads."""

import os
from contextlib import suppress
from pathlib import Path

# Without a configured server Prefect starts a temporary local one: keep its files in the user's state folder
# (XDG), apart from the code and from the user's own Prefect profiles, send no telemetry, and give it time to
# start on a slow, busy machine.
if "PREFECT_HOME" not in os.environ:
    state = os.environ.get("XDG_STATE_HOME", "")
    home = (Path(state) if os.path.isabs(state) else Path.home() / ".local" / "state") / "acervo" / "prefect"
    with suppress(OSError):  # Prefect makes only the last folder of its home; where it can't, it says so itself
        home.mkdir(parents=True, exist_ok=True)
    os.environ["PREFECT_HOME"] = str(home)
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
