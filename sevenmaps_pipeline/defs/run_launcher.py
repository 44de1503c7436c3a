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
from typing import Any

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


def start_ticks(pid: int) -> int | None:
    """The process `pid`'s start in clock ticks since boot (field 22 of /proc/<pid>/stat): with the pid, which
    process it is, whatever the wall clock does; None where that cannot be read."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def started_at(pid: int, ticks: int | None = None) -> float | None:
    """When the process `pid` started (epoch seconds), from /proc; None where that cannot be read.

    /proc gives the start in clock ticks since boot (field 22 of stat). The boot's own epoch time is taken from the
    boot clock now, to the tick, not from /proc/stat's `btime`, which is cut to the whole second: up to a second
    early, which a check with a second of slack read as a process begun before the run (docs/operations.md)."""
    ticks = start_ticks(pid) if ticks is None else ticks
    if ticks is None:
        return None
    return time.time() - time.clock_gettime(time.CLOCK_BOOTTIME) + ticks / os.sysconf("SC_CLK_TCK")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# Workers remembered (the oldest forgotten first): far more than the runs in flight at once.
KEPT_WORKERS = 1000


class LocalRunLauncher(DefaultRunLauncher):
    """`DefaultRunLauncher`, whose runs' workers are processes on this machine: alive or not."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # run id -> (pid, start ticks) of the process judged its worker: judged again by that identity, never by
        # the wall clock, which may have been stepped forward since (docs/operations.md, "A run whose process died").
        self._workers: dict[str, tuple[int, int]] = {}

    def _remember(self, run_id: str, pid: int, ticks: int | None) -> None:
        if ticks is None:
            return
        if run_id not in self._workers and len(self._workers) >= KEPT_WORKERS:
            del self._workers[next(iter(self._workers))]
        self._workers[run_id] = (pid, ticks)

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: dg.DagsterRun) -> CheckRunHealthResult:
        pid = worker_pid(self._instance, run.run_id)
        if pid is None:  # no pid recorded yet: a run just started (a start that never comes: the start timeout)
            return CheckRunHealthResult(WorkerStatus.RUNNING)
        ticks = start_ticks(pid)
        if alive(pid) and ticks is not None and self._workers.get(run.run_id) == (pid, ticks):
            return CheckRunHealthResult(WorkerStatus.RUNNING)  # the very process judged its worker before
        if alive(pid):
            # A process that began after the run did is another one under a reused pid (after a reboot the
            # same start-up order gives the same pids): the run's own worker is gone.
            record = self._instance.get_run_record_by_id(run.run_id)
            began = started_at(pid, ticks)
            if record is None or record.start_time is None or began is None or began <= record.start_time + 1:
                self._remember(run.run_id, pid, ticks)
                return CheckRunHealthResult(WorkerStatus.RUNNING)
        self._workers.pop(run.run_id, None)
        return CheckRunHealthResult(WorkerStatus.FAILED, f"the run's process (pid {pid}) exited without finishing "
                                                         "the run; run_retries runs it again")
