"""One Dagster home per lake, partitions from the lake's first day, and freshness checks that make a
missed scan or an unsigned finished day a visible failure (docs/operations.md). Real Dagster instances."""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import signal
import time

import dagster as dg
import pyarrow.parquet as pq
import pytest
from conftest import DAY, land_probes, land_registry, probe
from dagster._core.instance.ref import InstanceRef
from dagster._core.test_utils import freeze_time

from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.defs.freshness import FRESHNESS_CHECKS
from sevenmaps_pipeline.defs.home import HomeOfAnotherLake, bound_lake, dagster_home_for, ensure_dagster_home
from sevenmaps_pipeline.defs.jobs import MAP_ASSETS, SIGN_ASSETS, sign_schedule
from sevenmaps_pipeline.defs.launcher import code_location, root_cause, run_config
from sevenmaps_pipeline.defs.map_assets import probe_slice
from sevenmaps_pipeline.defs.partitions import FIRST_DAY, first_day
from sevenmaps_pipeline.defs.resources import LakeResource, ProberResource
from sevenmaps_pipeline.defs.runner import run_days
from sevenmaps_pipeline.integrity.verify import verify_lake
from sevenmaps_pipeline.lake.paths import LakePaths

URL = "https://mcp.weather.example.com/mcp"


@pytest.fixture
def clean_env(monkeypatch):
    """ensure_dagster_home selects the home for the process: put the environment back afterwards."""
    for name in ("DAGSTER_HOME", "SEVENMAPS_LAKE"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    return monkeypatch


def _land(lake: LakePaths, day: dt.date) -> None:
    land_registry(lake, [URL], day=day)
    land_probes(lake, [probe(URL, "ok", day=day)], day=day, run_id=f"run-{day}")


def test_each_lake_gets_its_own_home_and_a_home_refuses_another_lake(tmp_path, clean_env, signing_key):
    a, b = LakePaths.at(tmp_path / "a"), LakePaths.at(tmp_path / "b")
    home_a = ensure_dagster_home(a)
    assert home_a == a.root / ".dagster" and bound_lake(home_a) == a.root
    # Transient run failures (a process that died, a run that could not start) are retried by the daemon;
    # a step failing on its own data is not.
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home_a))) as instance:
        assert (instance.run_retries_enabled, instance.run_retries_max_retries,
                instance.run_retries_retry_on_asset_or_op_failure) == (True, 2, False)
    assert os.environ["DAGSTER_HOME"] == str(home_a) and os.environ["SEVENMAPS_LAKE"] == str(a.root)
    os.environ.pop("DAGSTER_HOME")
    assert ensure_dagster_home(b) == b.root / ".dagster" != home_a
    # An operator's $DAGSTER_HOME is honoured, and bound to the first lake that uses it.
    os.environ["DAGSTER_HOME"] = str(home_a)
    assert dagster_home_for(b) == home_a
    with pytest.raises(HomeOfAnotherLake, match=f"belongs to the lake {a.root}"):
        ensure_dagster_home(b)
    # From the CLI: one line, exit 2, nothing run.
    assert main(["--lake", str(b.root), "run", "--day", DAY.isoformat(), "--registry", "http://127.0.0.1:9"]) == 2
    # A lake copied with its own home: the home names the lake it came from, and the refusal says what to do
    # (a newcomer found "Unset DAGSTER_HOME" where none was set).
    os.environ.pop("DAGSTER_HOME")
    copy = LakePaths.at(tmp_path / "copy")
    shutil.copytree(a.root, copy.root)
    with pytest.raises(HomeOfAnotherLake, match="copied or moved") as refused:
        ensure_dagster_home(copy)
    assert "DAGSTER_HOME" not in str(refused.value)
    (copy.root / ".dagster" / "sevenmaps-lake").write_text(f"{copy.root}\n")  # keep the copied history
    assert ensure_dagster_home(copy) == copy.root / ".dagster"
    os.environ["DAGSTER_HOME"] = str(home_a)

    # A run given another lake than its home's is refused before it builds anything, naming both lakes,
    # and paints nothing: lake A's assets get no materialisation from it.
    _land(b, DAY)
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home_a))) as instance:
        run = run_days("daily_map_job", DAY, DAY, instance, b.root, signing_key, raise_on_error=False)
        assert not run.success
        message = " ".join(root_cause(e.event_specific_data.error) for e in run.all_events
                           if getattr(e.event_specific_data, "error", None) is not None)
        assert f"belongs to the lake {a.root}" in message and str(b.root) in message
        assert not instance.get_materialized_partitions(dg.AssetKey("daily_status"))
        assert not b.curated_file("daily_status", DAY).exists()
        _land(a, DAY)
        ok = run_days("daily_map_job", DAY, DAY, instance, a.root, signing_key)
        assert ok.success
        # The lake is recorded on the run, however it was launched.
        assert instance.get_run_by_id(ok.run_id).tags["sevenmaps/lake"] == str(a.root)


def test_the_first_day_is_configured_else_the_lakes_first_landed_day_else_today(tmp_path, monkeypatch):
    lake = LakePaths.at(tmp_path / "lake")
    monkeypatch.delenv("SEVENMAPS_FIRST_DAY")
    assert first_day(lake) == dt.datetime.now(dt.UTC).date()  # a lake with nothing yet starts today
    _land(lake, DAY)
    _land(lake, DAY - dt.timedelta(days=3))
    assert first_day(lake) == DAY - dt.timedelta(days=3)
    monkeypatch.setenv("SEVENMAPS_FIRST_DAY", "2026-11-01")
    assert first_day(lake) == dt.date(2026, 11, 1)
    monkeypatch.setenv("SEVENMAPS_FIRST_DAY", "1 Nov")
    with pytest.raises(ValueError, match=r"\$SEVENMAPS_FIRST_DAY: not a UTC day"):
        first_day(lake)


def test_the_sign_schedule_skips_a_day_before_the_first_day():
    at = dt.datetime.combine(FIRST_DAY, dt.time(0, 30), dt.UTC)
    assert isinstance(sign_schedule(dg.build_schedule_context(scheduled_execution_time=at)), dg.SkipReason)
    later = sign_schedule(dg.build_schedule_context(scheduled_execution_time=at + dt.timedelta(days=1)))
    assert later.partition_key == FIRST_DAY.isoformat()


def _freshness(instance, at: dt.datetime) -> dict[str, tuple[bool, str]]:
    defs = dg.Definitions(
        assets=[probe_slice, *MAP_ASSETS, *SIGN_ASSETS], asset_checks=FRESHNESS_CHECKS,
        jobs=[dg.define_asset_job("freshness", selection=dg.AssetSelection.checks(*FRESHNESS_CHECKS))],
        resources={"lake": LakeResource(), "prober": ProberResource()})
    with freeze_time(at):
        result = defs.resolve_job_def("freshness").execute_in_process(instance=instance)
    return {e.asset_key.to_user_string(): (e.passed, e.description or "")
            for e in result.get_asset_check_evaluations()}


def test_a_missed_scan_and_an_unsigned_day_fail_their_freshness_checks(lake, signing_key):
    _land(lake, DAY)
    next_day = DAY + dt.timedelta(days=1)
    with dg.DagsterInstance.ephemeral() as instance:
        assert run_days("daily_map_job", DAY, DAY, instance, lake.root, signing_key).success
        # Each hour's slice of the scan must land by 55 minutes past the hour: the 05:00 slice is recorded
        # (as its run records it), the 06:00 one is not, and its check fails naming it.
        instance.report_runless_asset_event(dg.AssetMaterialization("probe_slice", partition=f"{DAY}-05:00"))
        checks = _freshness(instance, dt.datetime.combine(DAY, dt.time(5, 55, 30), dt.UTC))
        assert checks["probe_slice"][0] is True
        checks = _freshness(instance, dt.datetime.combine(DAY, dt.time(6, 55, 30), dt.UTC))
        assert checks["probe_slice"] == (False, f"Asset is overdue. We expected partition {DAY}-06:00 to have "
                                                "arrived, and it has not.")
        # At 02:00 the day that ended must be signed.
        at = dt.datetime.combine(next_day, dt.time(2, 0, 30), dt.UTC)
        assert _freshness(instance, at)["daily_root"][0] is False
        assert str(DAY) in _freshness(instance, at)["daily_root"][1]
        assert run_days("sign_day_job", DAY, DAY, instance, lake.root, signing_key).success
        assert _freshness(instance, at)["daily_root"][0] is True


def test_a_new_lake_builds_its_open_day_before_the_map_has_a_partition(tmp_path, clean_env):
    """A lake whose first day is today has no finished day, so the map has no partition yet. A run of the open
    day (as `sevenmaps run` makes one; here from what landed) still builds it, through the code location, and
    records no materialisation of a day Dagster does not have (defs/partitions.py)."""
    today = dt.datetime.now(dt.UTC).date()
    lake = LakePaths.at(tmp_path / "lake")
    _land(lake, today)
    clean_env.delenv("SEVENMAPS_FIRST_DAY")  # the partitions begin at the first day that landed: today
    home = ensure_dagster_home(lake)
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance, \
            code_location(instance) as location:
        run = location.run("daily_map_job", today, today, run_config(lake.root, prober={"no_scan": True}))
        assert run.success, run.failures()
        assert not [e for e in run.events if e.event_type_value == "ASSET_MATERIALIZATION"]
        assert not instance.get_materialized_partitions(dg.AssetKey("daily_status"))
    assert pq.read_table(lake.curated_file("daily_status", today)).column("code").to_pylist() == ["o"]


def test_a_shell_backfill_builds_and_signs_the_missed_days_as_runs_of_the_code_location(tmp_path, clean_env,
                                                                                        signing_key, capsys):
    from dagster._core.storage.tags import REPOSITORY_LABEL_TAG

    from sevenmaps_pipeline.devtools.synth import synthesize

    lake = LakePaths.at(tmp_path / "lake")
    end = dt.date(2026, 11, 20)
    synth = synthesize(lake, 20, 3, seed=3, end_day=end, missing_days=1)
    first = synth.days[0]
    # The first day mapped alone, left unsigned: said, with how it gets signed (helper-85).
    assert main(["--lake", str(lake.root), "backfill", "--from", first.isoformat(), "--to", first.isoformat(),
                 "--no-sign"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == (f"not signed (--no-sign): the sign job signs them (its schedule at 00:30 UTC), or now: "
                       f"`sevenmaps backfill --from {first} --to {first}`")
    assert not lake.root_file(first).exists()
    # The rest signed: the chain's earlier unsigned day first, and said so.
    assert main(["--lake", str(lake.root), "backfill", "--from", synth.days[1].isoformat(), "--to", end.isoformat(),
                 "--signing-key", str(signing_key)]) == 0
    said = capsys.readouterr()
    out = said.out.splitlines()
    # What each run does while it runs, on stderr (helper-100: minutes of silence at the registry's size).
    assert f"daily_map_job for {synth.days[1]} .. {end} ..." in said.err.splitlines()
    assert re.search(r"^  step \S+ started \(\d+s\)$", said.err, re.M), said.err
    assert re.search(r"^  step \S+ finished \(\d+s; [1-9]\d* assets built in the run so far\)$", said.err,
                     re.M), said.err
    assert out[1].startswith("daily_map_job run ") and out[2].startswith("sign_day_job run ")
    assert out[3] == f"  signed first, as the chain's earlier unsigned days: {first}"
    assert not [line for line in out if line.startswith("not signed")]
    (missed,) = synth.missing_days
    # The missed day is built all n, never d, and signed with the others.
    assert re.fullmatch(rf"  {missed}: (\d+) endpoints \(o=0 a=0 p=0 d=0 n=\1\), signed",
                        next(line for line in out if line.startswith(f"  {missed}:")))
    assert sum(", signed" in line for line in out) == 2 and lake.root_file(first).exists()
    report = verify_lake(lake)
    assert report.ok and report.days_verified == synth.days
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(lake.root / ".dagster"))) as instance:
        runs = instance.get_runs()
        assert {r.job_name for r in runs} == {"daily_map_job", "sign_day_job"}
        assert all(r.tags.get(REPOSITORY_LABEL_TAG) or r.remote_job_origin for r in runs)
    # Ordinary mistakes: one line, exit 2.
    assert main(["--lake", str(lake.root), "backfill", "--from", end.isoformat(), "--to", first.isoformat()]) == 2
    assert "is before --from" in capsys.readouterr().err
    assert main(["--lake", str(tmp_path / "nowhere"), "backfill", "--from", "2026-11-01", "--to", "2026-11-02"]) == 2
    assert "no lake at" in capsys.readouterr().err
    # Days before signed history can never be built: said at once, not after a run (nor sent to SEVENMAPS_FIRST_DAY
    # first, which only led to that run failing: a newcomer's review).
    before = first - dt.timedelta(days=3)
    assert main(["--lake", str(lake.root), "backfill", "--from", before.isoformat(), "--to", first.isoformat()]) == 2
    err = capsys.readouterr().err
    assert f"{before} .. {first - dt.timedelta(days=1)} precede the last signed day {end}" in err
    assert "SEVENMAPS_FIRST_DAY" not in err


def test_make_ui_before_make_demo_leaves_a_home_the_demo_may_replace(tmp_path, clean_env):
    from sevenmaps_pipeline.devtools.demo import DEMO_MARKER, reset_demo_lake

    lake = LakePaths.at(tmp_path / "data_lake")
    ensure_dagster_home(lake)  # what `make ui` does on a fresh clone
    reset_demo_lake(lake)
    assert (lake.root / DEMO_MARKER).exists() and not (lake.root / ".dagster").exists()
    # A lake with data the demo did not make is never replaced.
    other = LakePaths.at(tmp_path / "other")
    _land(other, DAY)
    with pytest.raises(SystemExit, match="holds a lake the demo did not create"):
        reset_demo_lake(other)
    assert other.registry_file(DAY).exists()


def test_a_run_whose_process_dies_is_reported_failed_not_waited_on_forever(tmp_path, clean_env):
    from sevenmaps_pipeline.defs.launcher import code_location, run_config
    from sevenmaps_pipeline.defs.run_launcher import worker_pid
    from sevenmaps_pipeline.devtools.synth import synthesize

    lake = LakePaths.at(tmp_path / "lake")
    end = dt.date(2026, 11, 20)
    synthesize(lake, 20, 2, seed=4, end_day=end)
    ensure_dagster_home(lake)
    with dg.DagsterInstance.get() as instance, code_location(instance) as location:
        run_id = location.launch("daily_map_job", end, end, run_config(lake.root, log_level="CRITICAL"))
        deadline = time.monotonic() + 60
        while (pid := worker_pid(instance, run_id)) is None:
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)  # killed before it could end the run (out of memory, a kill -9)
        outcome = location.wait(run_id, grace_seconds=1.0)
    # Failed, with the reason: the code server's own report, or ours after the grace period.
    assert outcome.status == dg.DagsterRunStatus.FAILURE
    ((where, why),) = outcome.failures()
    assert where == "run" and ("marked as failed" in why or f"pid {pid}" in why)


def test_progress_that_cannot_read_the_runs_event_log_says_so_once_and_stops(tmp_path):
    """helper-101 F7: an error reading the event log for progress ended the command's wait while the run went on.
    Progress is told, never waited on: one line says why it stops, and the wait goes on without it."""
    from sevenmaps_pipeline.defs.launcher import RunProgress

    home = tmp_path / "home"
    home.mkdir()
    instance = dg.DagsterInstance.local_temp(str(home))
    said: list[str] = []
    progress = RunProgress(instance, "a-run-id", said.append)
    assert progress.read(final=True) is progress and said == []  # a run with no events yet: nothing to say
    instance.dispose()
    shutil.rmtree(home)  # its storage gone from under it
    assert progress.read(final=True) is None
    assert len(said) == 1 and said[0].startswith("  (no more progress lines: the run's event log could not be read: ")
    assert "\n" not in said[0]
