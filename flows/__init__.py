"""acervo's Prefect flows and CLI. Importing this sets offline defaults before Prefect loads."""

import os
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent

# Without a configured server Prefect starts a temporary local one: keep its files in the project,
# send no telemetry, and give it time to start on a slow, busy machine.
os.environ.setdefault("PREFECT_HOME", str(PROJECT / ".prefect"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
