"""The lake's run launcher: Dagster's default one, which also tells the daemon whether a run's process is alive
(docs/operations.md, "A run whose process died").

Dagster's `DefaultRunLauncher` cannot say whether a run's worker still runs, so a run whose whole process tree
died (a reboot, the daemon's session killed) stayed STARTED for good: never failed, never retried, and its lane's
place held, so every later run of the lane (the day's map, signing, retention) waited in the queue behind it.
With this launcher the daemon's run monitoring (`run_monitoring` in the home's dagster.yaml) asks; a run whose
process has exited without ending it is reported failed, and `run_retries` runs it again. It judges processes
of this machine: the daemon and the runs' workers share one process namespace (one machine, one container).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

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


def started_at(pid: int) -> float | None:
    """When the process `pid` started (epoch seconds), from /proc; None where that cannot be read.

    /proc gives the start in clock ticks since boot (field 22 of stat). The boot's own epoch time is taken from the
    boot clock now, to the tick, not from /proc/stat's `btime`, which is cut to the whole second: up to a second
    early, which a check with a second of slack read as a process begun before the run (docs/operations.md)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        since_boot = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        return time.time() - time.clock_gettime(time.CLOCK_BOOTTIME) + since_boot
    except (OSError, ValueError, IndexError):
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
        if pid is None:  # no pid recorded yet: a run just started (a start that never comes: the start timeout)
            return CheckRunHealthResult(WorkerStatus.RUNNING)
        if alive(pid):
            # A process that began after the run did is another one under a reused pid (after a reboot the
            # same start-up order gives the same pids): the run's own worker is gone.
            record = self._instance.get_run_record_by_id(run.run_id)
            began = started_at(pid)
            if record is None or record.start_time is None or began is None or began <= record.start_time + 1:
                return CheckRunHealthResult(WorkerStatus.RUNNING)
        return CheckRunHealthResult(WorkerStatus.FAILED, f"the run's process (pid {pid}) exited without finishing "
                                                         "the run; run_retries runs it again")
