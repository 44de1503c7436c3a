"""The Dagster home that `sevenmaps run`, `ui` and the demo use: one run at a time, telemetry off."""

from __future__ import annotations

import os
from pathlib import Path

from ..packaged import workplace

DAGSTER_HOME = workplace() / ".dagster_home"
DAGSTER_YAML = """\
# Dagster instance of `make demo` and `make ui` (created by sevenmaps).
telemetry:
  enabled: false
concurrency:
  runs:
    # One run at a time: runs write the same lake (and signing must keep chain order).
    max_concurrent_runs: 1
"""


def ensure_dagster_home(home: Path = DAGSTER_HOME, respect_env: bool = False) -> Path:
    """Create (and select) a Dagster home. The demo always uses the project's own; `run` and `ui` use
    $DAGSTER_HOME when the operator set one."""
    if respect_env and os.environ.get("DAGSTER_HOME"):
        home = Path(os.environ["DAGSTER_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    yaml = home / "dagster.yaml"
    if not yaml.exists():
        yaml.write_text(DAGSTER_YAML)
    os.environ["DAGSTER_HOME"] = str(home)
    return home


