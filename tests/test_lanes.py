"""Schedules never starve each other (docs/operations.md, "Schedules"): each cadence runs in its own lane, so
a long readiness run never holds up a slice or a five-minute run, while the day's map still waits for it,
and a second run of its own lane waits in the queue.

Through a real Dagster instance: the lake's own home and dagster.yaml (defs/home.py), the real queued run
coordinator and a `dagster-daemon` process starting the runs, each run in its own process. The readiness run
is made slow by a loopback code host whose first answer trickles (a byte at a time, so no read timeout ends
it) until the test lets it finish: the run is in flight for exactly as long as the test needs, and every
assertion is about order, never about how long anything took."""

from __future__ import annotations

import datetime as dt
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq

from sevenmaps_pipeline.defs import lanes
from sevenmaps_pipeline.defs.home import ensure_dagster_home
from sevenmaps_pipeline.defs.launcher import code_location, run_config
from sevenmaps_pipeline.devtools.fleet.run import Fleet
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.packaged import workplace
from sevenmaps_pipeline.probe.config import ProbeConfig
from sevenmaps_pipeline.probe.run import ReplayClock, take_snapshot

DAY = dt.date(2026, 11, 20)
BUDGET = 240.0  # seconds any one wait may take on a loaded machine: a bound against hanging, not a timing
# The queue's daemon looks for runs to start every second, not Dagster's default five: the test waits on the
# queue three times (the readiness run, the runs beside it, the map after it). The lanes are the home's own.
DEQUEUE_EVERY_SECOND = """
run_coordinator:
  module: dagster.core.run_coordinator
  class: QueuedRunCoordinator
  config:
    dequeue_interval_seconds: 1
"""


class HeldCodeHost:
    """A code host on loopback whose first answer (a 404) trickles one byte every 0.2 s until `release` is set;
    every later request is answered at once."""

    def __init__(self) -> None:
        self.asked, self.release, self.answered = threading.Event(), threading.Event(), threading.Event()
        held = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                first = not held.asked.is_set()
                held.asked.set()
                self.send_response(404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                while first and not held.release.wait(0.2):
                    self.wfile.write(b"1\r\n \r\n")
                    self.wfile.flush()
                body = b'{"message": "Not Found"}'
                self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
                self.wfile.flush()
                if first:
                    held.answered.set()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> HeldCodeHost:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()


def _until(done, what: str) -> None:
    deadline = time.monotonic() + BUDGET
    while not done():
        assert time.monotonic() < deadline, f"{what}: not within {BUDGET:.0f} s"
        time.sleep(0.2)


def test_a_slow_readiness_run_never_holds_up_a_slice_or_a_five_minute_run_and_the_days_map_waits_for_it(
        tmp_path, monkeypatch):
    for name in ("DAGSTER_HOME", "SEVENMAPS_LAKE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SEVENMAPS_FIRST_DAY", DAY.isoformat())
    lake = LakePaths.at(tmp_path / "lake")
    home = ensure_dagster_home(lake)  # the project's dagster.yaml: the lanes
    with open(home / "dagster.yaml", "a") as yaml:
        yaml.write(DEQUEUE_EVERY_SECOND)
    with Fleet(slow_seconds=2) as fleet, HeldCodeHost() as codehost:
        config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file)
        take_snapshot(lake, DAY, fleet.registry_url, config, ReplayClock(DAY, 0))  # the day's first slice's
        fleet_prober = {"registry_url": fleet.registry_url, "host_map_json": json.dumps(fleet.host_map),
                        "ca_file": str(fleet.ca_file), "replay_day": f"{DAY}T23",
                        "opted_out_hosts": fleet.timeline["opted_out_hosts"]}
        # The held answer outlasts the other runs however slow the machine (an answer's own 10 s would not).
        readiness = run_config(lake.root, prober={**fleet_prober, "codehost_url": codehost.url,
                                                  "codehost_timeout_seconds": 600,
                                                  "skills_list": str(fleet.skills_list(tmp_path))})
        readiness["ops"] = {"slice_readiness": {"config": {"day": DAY.isoformat(), "through_hour": 23}}}
        # The instance's storage is made before the daemon opens it (two processes creating its tables race).
        with dg.DagsterInstance.get() as instance, code_location(instance) as location:
            with open(tmp_path / "daemon.log", "w") as log:
                daemon = subprocess.Popen([str(Path(sys.executable).parent / "dagster-daemon"), "run", "-m",
                                           "sevenmaps_pipeline.definitions"], cwd=workplace(), env=dict(os.environ),
                                          stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                def status(run_id: str) -> dg.DagsterRunStatus:
                    return instance.get_run_by_id(run_id).status

                slow = location.submit("readiness_job", None, None, readiness,
                                       lanes.lands_day(lanes.READINESS, DAY.isoformat()))
                _until(codehost.asked.is_set, "the readiness run reached the code host")
                assert status(slow) == dg.DagsterRunStatus.STARTED
                # While it is held: the day's map (queued first), the 23:00 slice and a five-minute run.
                day_map = location.submit("daily_map_job", DAY, DAY, run_config(
                    lake.root, prober={"no_scan": True, "replay_day": f"{DAY}T23"}), lanes.reads_day(DAY.isoformat()))
                slice_run = location.submit("scan_slice_job", None, None, run_config(lake.root, prober=fleet_prober),
                                            {"dagster/partition": f"{DAY}-23:00",
                                             **lanes.lands_day(lanes.SLICE, DAY.isoformat())})
                five = location.submit("five_minute_job", None, None, run_config(lake.root, prober=fleet_prober))
                # A second run of the readiness lane, without the day's tag (as the UI would launch it): only the
                # lane's pool holds it.
                again = location.submit("readiness_job", None, None, readiness)
                _until(lambda: status(slice_run) in TERMINAL and status(five) in TERMINAL,
                       "the slice and the five-minute run ended")
                # They ran and ended while the readiness run was still in flight; the map is still waiting.
                held = (status(slow), codehost.answered.is_set(), status(day_map), status(again))
                instance.run_coordinator.cancel_run(again)
                codehost.release.set()
                assert (status(slice_run), status(five)) == (dg.DagsterRunStatus.SUCCESS,) * 2, \
                    location.wait(slice_run).failures() + location.wait(five).failures()
                assert held == (dg.DagsterRunStatus.STARTED, False, dg.DagsterRunStatus.QUEUED,
                                dg.DagsterRunStatus.QUEUED)
                assert location.wait(slow).success, location.wait(slow).failures()
                outcome = location.wait(day_map)
                assert outcome.success, outcome.failures()
                record = {name: instance.get_run_record_by_id(run_id) for name, run_id in
                          (("readiness", slow), ("slice", slice_run), ("five", five), ("map", day_map))}
            finally:
                os.killpg(daemon.pid, signal.SIGTERM)
                try:
                    daemon.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(daemon.pid, signal.SIGKILL)
    for name in ("slice", "five"):
        assert record["readiness"].start_time < record[name].start_time < record[name].end_time \
            < record["readiness"].end_time, name
    assert record["map"].start_time >= record["readiness"].end_time
    # Each landed its own: the slice's checks, the readiness rows, the map of the day.
    assert lake.raw_files("probes", DAY) and lake.raw_files("readiness", DAY)
    assert pq.read_table(lake.curated_file("daily_status", DAY)).num_rows > 0
    assert home == lake.root / ".dagster"


TERMINAL = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}


def test_a_readiness_run_follows_each_slice_and_carries_its_day_and_hour():
    from sevenmaps_pipeline.defs.jobs import readiness_sensor

    def evaluate(key: str):
        with dg.instance_for_test() as instance:
            run = instance.create_run_for_job(job_def=dg.GraphDefinition("noop").to_job(), run_id=None,
                                              tags={"dagster/partition": key} if key else {})
            event = dg.DagsterEvent(event_type_value=dg.DagsterEventType.RUN_SUCCESS.value, job_name="scan_slice_job")
            return readiness_sensor(dg.build_run_status_sensor_context(
                sensor_name="readiness_sensor", dagster_instance=instance, dagster_run=run, dagster_event=event))

    for hour in (0, 7, 23):
        request = evaluate(f"{DAY}-{hour:02d}:00")
        assert isinstance(request, dg.RunRequest) and request.run_key == f"readiness-{DAY}-{hour:02d}:00"
        assert request.run_config["ops"]["slice_readiness"]["config"] == {"day": DAY.isoformat(), "through_hour": hour}
        assert request.tags == {"sevenmaps/lands-readiness": DAY.isoformat()}
    assert isinstance(evaluate(""), dg.SkipReason)  # not one slice: a run without its partition


def test_a_home_from_before_the_lanes_gets_them_and_an_operators_own_file_is_left_alone(tmp_path, monkeypatch):
    from sevenmaps_pipeline.defs.home import DAGSTER_YAML, EARLIER_DAGSTER_YAML

    for name in ("DAGSTER_HOME", "SEVENMAPS_LAKE"):
        monkeypatch.delenv(name, raising=False)
    earlier, own = LakePaths.at(tmp_path / "earlier"), LakePaths.at(tmp_path / "own")
    for lake, text in ((earlier, EARLIER_DAGSTER_YAML), (own, EARLIER_DAGSTER_YAML + "# mine\n")):
        (lake.root / ".dagster").mkdir(parents=True)
        (lake.root / ".dagster" / "dagster.yaml").write_text(text)
    assert (ensure_dagster_home(earlier, respect_env=False) / "dagster.yaml").read_text() == DAGSTER_YAML
    assert (ensure_dagster_home(own, respect_env=False) / "dagster.yaml").read_text().endswith("# mine\n")
    from dagster._core.instance.ref import InstanceRef

    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(earlier.root / ".dagster"))) as instance:
        queue = instance.get_concurrency_config()
        assert queue.run_queue_config.max_concurrent_runs == len(lanes.LANES)
        assert queue.pool_config.default_pool_limit == 1 and queue.pool_config.pool_granularity.value == "run"


def _open_home(home: str) -> str:
    """One process's opening of a Dagster home: 'ok' or the error it raised."""
    from dagster._core.instance.ref import InstanceRef

    try:
        with dg.DagsterInstance.from_ref(InstanceRef.from_dir(home)):
            return "ok"
    except Exception as exc:  # the test reports what broke, whatever it was
        return f"{type(exc).__name__}: {exc}"


def test_a_new_home_is_stamped_once_before_dagster_devs_processes_open_it(tmp_path, monkeypatch):
    """`dagster dev` opens a new home from three processes at once; SQLite storage that several processes
    make together can be stamped with two schema heads and never open again (docs/operations.md)."""
    import multiprocessing
    import sqlite3
    from concurrent.futures import ProcessPoolExecutor

    for name in ("DAGSTER_HOME", "SEVENMAPS_LAKE"):
        monkeypatch.delenv(name, raising=False)
    home = ensure_dagster_home(LakePaths.at(tmp_path / "lake"), respect_env=False)
    stamps = {}
    for db in sorted(home.rglob("*.db")):
        with sqlite3.connect(db) as con:
            stamps[db.relative_to(home).as_posix()] = con.execute("SELECT count(*) FROM alembic_version").fetchone()[0]
    assert {"history/runs.db", "schedules/schedules.db"} <= set(stamps) and set(stamps.values()) == {1}, stamps
    # An executor that lets its workers end on their own: a Pool's exit terminates them, and under load a
    # spawned worker left waiting on the pool's queue lock once kept the test from ending.
    with ProcessPoolExecutor(4, mp_context=multiprocessing.get_context("spawn")) as pool:
        assert list(pool.map(_open_home, [str(home)] * 4)) == ["ok"] * 4
