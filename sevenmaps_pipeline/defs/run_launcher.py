"""The lake's run launcher: Dagster's default one, which also tells the daemon whether a run's process is alive
(docs/operations.md, "A run whose process died").

Dagster's `DefaultRunLauncher` cannot say whether a run's worker still runs, so a run whose whole process tree
died (a reboot, the daemon's session killed) stayed STARTED for good: never failed, never retried, and its lane's
place held, so every later run of the lane (the day's map, signing, retention) waited in the queue behind it.
With this launcher the daemon's run monitoring (`run_monitoring` in the home's dagster.yaml) asks; a run whose
process has exited without ending it is reported failed, and `run_retries` runs it again.
"""

from __future__ import annotations

import os

import dagster as dg
from dagster._core.launcher.base import CheckRunHealthResult, WorkerStatus
from dagster._core.launcher.default_run_launcher import DefaultRunLauncher


def worker_pid(instance: dg.DagsterInstance, run_id: str) -> int | None:
    """The run worker's pid, as its first engine event records it."""
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        if entry.dagster_event is None:
            continue
        metadata = getattr(entry.dagster_event.event_specific_data, "metadata", None) or {}
        pid = metadata.get("pid")
        if pid is not None and str(getattr(pid, "value", pid)).isdigit():
            return int(getattr(pid, "value", pid))
    return None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class LocalRunLauncher(DefaultRunLauncher):
    """`DefaultRunLauncher`, whose runs' workers are processes on this machine: alive or not."""

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: dg.DagsterRun) -> CheckRunHealthResult:
        pid = worker_pid(self._instance, run.run_id)
        if pid is None or alive(pid):  # no pid recorded yet: a run just started (a start that never comes is
            return CheckRunHealthResult(WorkerStatus.RUNNING)  # run monitoring's start timeout)
        return CheckRunHealthResult(WorkerStatus.FAILED, f"the run's process (pid {pid}) exited without finishing "
                                                         "the run; run_retries runs it again")
