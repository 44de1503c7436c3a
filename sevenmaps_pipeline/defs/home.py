"""One Dagster home per lake (docs/operations.md, "Dagster homes").

A lake's runs, materialisations and schedules live in the Dagster home `<lake>/.dagster/`, unless the
operator sets $DAGSTER_HOME. Either way the home records the one lake it belongs to (`sevenmaps-lake`),
and every run's lake resource refuses a lake that is not the home's (see resources.LakeResource), so no
lake's runs ever paint another lake's assets.
"""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
from dagster._core.instance.ref import InstanceRef

from ..lake.paths import LakePaths
from .lanes import LANDS, LANES, lands_tag

LAKE_BINDING = "sevenmaps-lake"
# What sevenmaps wrote before the lanes (one run at a time): a home that still holds it exactly is brought up
# to date; an operator's own dagster.yaml is never touched.
EARLIER_DAGSTER_YAML = """\
# Dagster instance of one sevenmaps lake (created by sevenmaps; see docs/operations.md).
telemetry:
  enabled: false
concurrency:
  runs:
    # One run at a time: runs write the same lake (and signing must keep chain order).
    max_concurrent_runs: 1
run_retries:
  # A run whose process died or could not start is retried (by the daemon: `make ui`, `dagster-daemon`);
  # a step that failed on its own data is not, it fails naming the day (docs/operations.md).
  enabled: true
  max_retries: 2
  retry_on_asset_or_op_failure: false
"""
_LANDS_LIMITS = "".join(f"""\
      - key: {lands_tag(lane)}
        value: {{applyLimitPerUniqueValue: true}}
        limit: 1
""" for lane in LANDS)
_LANES_DAGSTER_YAML = f"""\
# Dagster instance of one sevenmaps lake (created by sevenmaps; see docs/operations.md).
telemetry:
  enabled: false
concurrency:
  # Each cadence runs in its own lane, side by side (defs/lanes.py; docs/operations.md, "Schedules").
  pools:
    # A lane is a pool of one place, counted per run: a run waits in the queue while one of its lane runs.
    granularity: run
    default_limit: 1
  runs:
    # One run per lane at once.
    max_concurrent_runs: {len(LANES)}
    # A day's map and signing wait for the runs landing that day's files (its slices, readiness, lookups).
    tag_concurrency_limits:
{_LANDS_LIMITS.rstrip()}
run_retries:
  # A run whose process died or could not start is retried (by the daemon: `make ui`, `dagster-daemon`);
  # a step that failed on its own data is not, it fails naming the day (docs/operations.md).
  enabled: true
  max_retries: 2
  retry_on_asset_or_op_failure: false
"""
DAGSTER_YAML = _LANES_DAGSTER_YAML + """\
# A run whose whole process died (a reboot) is failed, so retried, instead of holding its lane for good
# (defs/run_launcher.py; docs/operations.md, "A run whose process died").
run_launcher:
  module: sevenmaps_pipeline.defs.run_launcher
  class: LocalRunLauncher
run_monitoring:
  enabled: true
  poll_interval_seconds: 30
  start_timeout_seconds: 300
  max_resume_run_attempts: 0
"""
# What earlier sevenmaps wrote: brought up to date when the lake is next used (a file edited by hand is not).
EARLIER_DAGSTER_YAMLS = (EARLIER_DAGSTER_YAML, _LANES_DAGSTER_YAML)


class HomeOfAnotherLake(ValueError):
    """A Dagster home already bound to a different lake."""


def dagster_home_for(lake: LakePaths, respect_env: bool = True) -> Path:
    """$DAGSTER_HOME when set (and respected), else the lake's own `<lake>/.dagster`."""
    if respect_env and os.environ.get("DAGSTER_HOME"):
        return Path(os.environ["DAGSTER_HOME"]).resolve()
    return lake.root / ".dagster"


def bound_lake(home: Path) -> Path | None:
    """The lake a Dagster home belongs to, or None for a home sevenmaps has not bound."""
    binding = home / LAKE_BINDING
    if not binding.is_file():
        return None
    text = binding.read_text().strip()
    return Path(text) if text else None


def ensure_dagster_home(lake: LakePaths, respect_env: bool = True) -> Path:
    """Create (or reuse) the lake's Dagster home, bind it to the lake, and select it for this process
    and the code servers and runs it starts ($DAGSTER_HOME, $SEVENMAPS_LAKE)."""
    home = dagster_home_for(lake, respect_env)
    owner = bound_lake(home)
    if owner is not None and owner != lake.root:
        if home == lake.root / ".dagster":  # the lake's own home, copied or moved with it (docs/operations.md)
            raise HomeOfAnotherLake(
                f"the Dagster home {home} belongs to the lake {owner}, not {lake.root}: this lake was copied or "
                f"moved from there with its run history. To give this lake its own history, move that folder "
                f"aside (mv {home} {home}.from-copy); to keep the copied history for this lake, write its path into "
                f"{home / LAKE_BINDING}")
        raise HomeOfAnotherLake(
            f"the Dagster home {home} belongs to the lake {owner}, not {lake.root}: its runs would paint the "
            f"other lake's assets. Unset DAGSTER_HOME (each lake then uses <lake>/.dagster) or point it at "
            "another folder")
    home.mkdir(parents=True, exist_ok=True)
    yaml = home / "dagster.yaml"
    if not yaml.exists() or yaml.read_text() in EARLIER_DAGSTER_YAMLS:
        yaml.write_text(DAGSTER_YAML)
    if owner is None:
        (home / LAKE_BINDING).write_text(f"{lake.root}\n")
    create_instance_storage(home)
    os.environ["DAGSTER_HOME"] = str(home)
    os.environ["SEVENMAPS_LAKE"] = str(lake.root)
    return home


def create_instance_storage(home: Path) -> None:
    """The home's storage created, and its schema version stamped, by this one process (a few hundredths of a
    second once it exists). `dagster dev` opens a new home from its webserver, daemon and code server at once,
    and SQLite storage made by several processes at the same moment can be left stamped twice, after which
    no process can open the home again (docs/operations.md, "One Dagster home per lake")."""
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))):
        pass
