"""A run whose whole process died is failed by the daemon's run monitoring, not left STARTED holding its lane
(defs/run_launcher.py; docs/operations.md, "A run whose process died"). Dagster's own monitoring code, over a
home made by sevenmaps, with runs whose recorded worker is dead or alive."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time

import dagster as dg
from dagster._core.events import DagsterEvent, DagsterEventType, EngineEventData
from dagster._core.utils import make_new_run_id
from dagster._daemon.monitoring.run_monitoring import monitor_started_run

from sevenmaps_pipeline.defs.home import ensure_dagster_home
from sevenmaps_pipeline.defs.run_launcher import LocalRunLauncher, started_at
from sevenmaps_pipeline.lake.paths import LakePaths


def _started_run(instance: dg.DagsterInstance, pid: int) -> dg.DagsterRun:
    """A daily_map_job run in STARTED whose worker recorded `pid`, as a run worker records its own."""
    run = instance.add_run(dg.DagsterRun(job_name="daily_map_job", run_id=make_new_run_id(),
                                         status=dg.DagsterRunStatus.STARTED))
    instance.report_engine_event(f"Started process for run (pid: {pid}).", run,
                                 EngineEventData(metadata={"pid": dg.MetadataValue.text(str(pid))}))
    return run


def test_the_daemon_fails_a_run_whose_process_died_and_leaves_a_live_one(tmp_path, monkeypatch):
    for name in ("DAGSTER_HOME", "SEVENMAPS_LAKE"):
        monkeypatch.delenv(name, raising=False)
    ensure_dagster_home(LakePaths.at(tmp_path / "lake"), respect_env=False)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a worker that exited without ending its run (the whole tree killed: a reboot)
    with dg.DagsterInstance.get() as instance:
        assert isinstance(instance.run_launcher, LocalRunLauncher) and instance.run_monitoring_enabled
        dead, live = _started_run(instance, gone.pid), _started_run(instance, os.getpid())
        for run in (dead, live):
            monitor_started_run(instance, None, instance.get_run_record_by_id(run.run_id),
                                logging.getLogger("test"))
        failed = instance.get_run_by_id(dead.run_id)
        assert failed is not None and failed.status == dg.DagsterRunStatus.FAILURE
        assert instance.get_run_by_id(live.run_id).status == dg.DagsterRunStatus.STARTED
        why = [e.message for e in instance.all_logs(dead.run_id) if e.dagster_event is not None
               and e.dagster_event.event_type == dg.DagsterEventType.RUN_FAILURE]
        assert why and f"pid {gone.pid}" in why[0] and "exited without finishing" in why[0]


def test_a_pid_taken_by_a_process_begun_after_the_run_is_no_worker_of_it(tmp_path, monkeypatch):
    """helper-91: after a reboot the same start-up order gives the same pids: a dead run whose pid a later
    process took stayed STARTED for good."""
    for name in ("DAGSTER_HOME", "SEVENMAPS_LAKE"):
        monkeypatch.delenv(name, raising=False)
    ensure_dagster_home(LakePaths.at(tmp_path / "lake"), respect_env=False)
    with dg.DagsterInstance.get() as instance:
        run = instance.add_run(dg.DagsterRun(job_name="daily_map_job", run_id=make_new_run_id(),
                                             status=dg.DagsterRunStatus.NOT_STARTED))
        instance.report_dagster_event(DagsterEvent(DagsterEventType.RUN_START.value, job_name="daily_map_job"),
                                      run.run_id)
        time.sleep(1.5)  # past the second of slack the check allows
        later = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            instance.report_engine_event(f"Started process for run (pid: {later.pid}).", run,
                                         EngineEventData(metadata={"pid": dg.MetadataValue.text(str(later.pid))}))
            monitor_started_run(instance, None, instance.get_run_record_by_id(run.run_id), logging.getLogger("test"))
        finally:
            later.kill()
            later.wait()
        assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE


def test_a_process_start_is_read_to_the_tick_not_to_the_boot_seconds_whole_second():
    """/proc/stat's `btime` is the boot time cut to the second, which put every process's start up to a second
    early: on a machine booted at .85 of a second, a pid reused 1.5 s after the run's start read as begun within
    the second of slack, and the dead run stayed STARTED (the test above failed on that boot)."""
    before = time.time()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    after = time.time()
    try:
        began = started_at(child.pid)
    finally:
        child.kill()
        child.wait()
    assert began is not None
    tick = 1 / os.sysconf("SC_CLK_TCK")
    assert before - 2 * tick <= began <= after + 2 * tick, (before - began, began - after)
    assert started_at(2**22 + 7) is None  # above any pid Linux hands out: no /proc entry


def test_a_live_worker_stays_running_after_the_wall_clock_is_stepped_forward(tmp_path, monkeypatch):
    """A process's start is read from /proc against the wall clock of now; the run's start was the wall clock of
    then. A forward step between the two (NTP after a VM paused, an operator's `date -s`) put the live worker's
    start after the run's, and the daemon failed a run whose worker still ran (run_retries then ran it twice)."""
    for name in ("DAGSTER_HOME", "SEVENMAPS_LAKE"):
        monkeypatch.delenv(name, raising=False)
    ensure_dagster_home(LakePaths.at(tmp_path / "lake"), respect_env=False)
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with dg.DagsterInstance.get() as instance:
            run = instance.add_run(dg.DagsterRun(job_name="daily_map_job", run_id=make_new_run_id(),
                                                 status=dg.DagsterRunStatus.NOT_STARTED))
            instance.report_dagster_event(DagsterEvent(DagsterEventType.RUN_START.value, job_name="daily_map_job"),
                                          run.run_id)
            instance.report_engine_event(f"Started process for run (pid: {worker.pid}).", run,
                                         EngineEventData(metadata={"pid": dg.MetadataValue.text(str(worker.pid))}))
            monitor_started_run(instance, None, instance.get_run_record_by_id(run.run_id), logging.getLogger("test"))
            assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.STARTED
            wall = time.time
            monkeypatch.setattr(time, "time", lambda: wall() + 30)  # the clock stepped 30 s forward
            monitor_started_run(instance, None, instance.get_run_record_by_id(run.run_id), logging.getLogger("test"))
            assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.STARTED
    finally:
        worker.kill()
        worker.wait()
