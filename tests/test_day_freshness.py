"""A signed day is what its closed inputs say, built and checked by the map job: signing refuses a day whose
tables were built before the day ended (or before an input changed), were built outside the map job, or fail
a blocking check, and names it; the map job rebuilds it with its checks, so an agent-report batch landing at
23:59:59 is counted; an unsigned day built out of order is stale; the open day is never built by accident
without a scan; a voided run never brings a skipped listing back onto the map. Through a real Dagster
instance where Dagster decides."""

from __future__ import annotations

import datetime as dt
import os

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import DAY, land_probes, land_registry, land_reports, probe, report

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.curated.day import DAY_TABLES, stale_days, stale_reason
from sevenmaps_pipeline.defs.integrity_assets import days_to_rebuild
from sevenmaps_pipeline.defs.runner import run_days
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.schemas import INCIDENTS, conform

URL = "https://mcp.weather.example.com/mcp"
KEY = "mcp.weather.example.com/mcp"


def _land_day(lake, day: dt.date) -> None:
    land_registry(lake, [URL], day=day)
    land_probes(lake, [probe(URL, "ok", day=day)], day=day, run_id=f"run-{day}")


def _age(lake, day: dt.date, when: dt.datetime) -> None:
    """Make the day's tables look built at `when` (as the 23:30 map run of that day builds them)."""
    stamp = when.timestamp()
    for table in DAY_TABLES:
        os.utime(lake.curated_file(table, day), (stamp, stamp))


def _reports(lake, day: dt.date) -> int:
    return pq.read_table(lake.curated_file("agent_reports", day)).num_rows


def _refusal(run) -> str:
    assert not run.success
    (message,) = [e.event_specific_data.error.message for e in run.all_events if e.is_step_failure]
    return message


def test_a_batch_landing_at_23_59_59_is_refused_until_the_map_job_counts_it(lake, signing_key):
    _land_day(lake, DAY)
    land_reports(lake, [report(KEY, who="early")], day=DAY, batch="early")
    with dg.DagsterInstance.ephemeral() as instance:
        assert run_days("daily_map_job", DAY, DAY, instance, lake.root, signing_key).success
        assert _reports(lake, DAY) == 1
        # The map run was the day's 23:30 build; a batch lands at 23:59:59 (after it).
        _age(lake, DAY, dt.datetime.combine(DAY, dt.time(23, 30), dt.UTC))
        land_reports(lake, [report(KEY, who=f"late{i}") for i in range(3)], day=DAY, batch="late")
        assert "before the day ended" in stale_reason(lake, DAY)
        refused = run_days("sign_day_job", DAY, DAY, instance, lake.root, signing_key, raise_on_error=False)
        message = _refusal(refused)
        assert f"{DAY}: " in message and "before the day ended" in message
        assert f"daily_map_job from {DAY}" in message and f"sevenmaps backfill --from {DAY}" in message
        assert not lake.root_file(DAY).exists() and _reports(lake, DAY) == 1  # signing rebuilt nothing
        assert days_to_rebuild(lake, DAY, instance) == (DAY, DAY)
        rebuild = run_days("daily_map_job", DAY, DAY, instance, lake.root, signing_key)
        checks = {c.check_name: c.passed for c in rebuild.get_asset_check_evaluations()}
        assert checks and all(checks.values())
        assert {e.asset_key.to_user_string() for e in rebuild.get_asset_materialization_events()} >= {
            "agent_reports", "daily_status", "server_history"}
        sign = run_days("sign_day_job", DAY, DAY, instance, lake.root, signing_key)
    assert sign.success and lake.root_file(DAY).exists()
    assert _reports(lake, DAY) == 4  # validated and counted by the map job, then signed
    assert stale_reason(lake, DAY) is None


def test_a_day_built_outside_the_map_job_is_refused(lake, signing_key):
    _land_day(lake, DAY)
    curated.day.rebuild_day(lake, DAY)  # the library's build: no checks, no materialisations
    assert stale_reason(lake, DAY) is None
    with dg.DagsterInstance.ephemeral() as instance:
        message = _refusal(run_days("sign_day_job", DAY, DAY, instance, lake.root, signing_key,
                                    raise_on_error=False))
        assert f"{DAY}: " in message and "not materialised by the map job" in message
        assert not lake.root_file(DAY).exists()
        assert run_days("daily_map_job", DAY, DAY, instance, lake.root, signing_key).success
        assert run_days("sign_day_job", DAY, DAY, instance, lake.root, signing_key).success


def test_a_day_failing_a_blocking_check_is_not_signed_nor_any_day_after_it(lake, signing_key):
    d1, d2 = DAY, DAY + dt.timedelta(days=1)
    for day in (d1, d2):
        _land_day(lake, day)
    with dg.DagsterInstance.ephemeral() as instance:
        assert run_days("daily_map_job", d1, d2, instance, lake.root, signing_key).success
        # d1's incidents as a faulty build would write them: an unconfirmed incident shown. Nothing reads the
        # table, so the day is not stale; its blocking check fails.
        shown = {"day": d1, "server_key": KEY, "server_id": "x", "status": "unconfirmed", "shown": True,
                 "failure_reporters": 1, "trusted_failure_reporters": 0, "method_version": "forged"}
        write_parquet(lake, lake.curated_file("incidents", d1), conform(pa.Table.from_pylist([shown]), INCIDENTS))
        assert stale_days(lake, [d1, d2]) == []
        message = _refusal(run_days("sign_day_job", d2, d2, instance, lake.root, signing_key,
                                    raise_on_error=False))
        assert f"{d1}: its blocking check fails: incidents_only_confirmed_are_shown" in message
        assert f"{d2}: " not in message  # d2 itself passes, and is not signed either (chain order)
        assert not lake.root_file(d1).exists() and not lake.root_file(d2).exists()
        ranged = run_days("sign_day_job", d1, d2, instance, lake.root, signing_key, raise_on_error=False)
        assert f"{d1}: its blocking check fails" in _refusal(ranged)  # a range run, too, signs none of them
        assert not lake.root_file(d1).exists() and not lake.root_file(d2).exists()
        # The map job rebuilds d1 with its checks (and d2, whose windows read it); then both are signed.
        assert days_to_rebuild(lake, d2, instance) == (d1, d2)
        assert run_days("daily_map_job", d1, d2, instance, lake.root, signing_key).success
        assert run_days("sign_day_job", d2, d2, instance, lake.root, signing_key).success
    assert lake.root_file(d1).exists() and lake.root_file(d2).exists()


def test_an_unsigned_day_built_out_of_order_is_stale_until_rebuilt(lake):
    d1, d2 = DAY, DAY + dt.timedelta(days=1)
    _land_day(lake, d2)
    curated.day.rebuild_day(lake, d2)  # the later day first: its history has no d1 yet
    _land_day(lake, d1)
    curated.day.rebuild_day(lake, d1)  # the earlier day built late
    history = pq.read_table(lake.curated_file("server_history", d2)).to_pylist()[0]
    assert history["checked_days"] == 1
    ((day, reason),) = stale_days(lake, [d1, d2])  # d1 read everything it reads after it changed
    assert day == d2 and f"day={d1}" in reason
    curated.day.rebuild_day(lake, d2)
    assert pq.read_table(lake.curated_file("server_history", d2)).to_pylist()[0]["checked_days"] == 2
    assert stale_reason(lake, d2) is None


def test_the_open_day_without_a_registry_url_fails_naming_the_setting(lake):
    today = dt.datetime.now(dt.UTC).date()
    _land_day(lake, today)
    with dg.DagsterInstance.ephemeral() as instance:
        run = run_days("daily_map_job", today, today, instance, lake.root, raise_on_error=False)
        assert not run.success
        failures = [e for e in run.all_events if e.event_type_value == "STEP_FAILURE"]
        assert "SEVENMAPS_REGISTRY_URL" in str(failures[0].event_specific_data.error.message)
        assert not lake.curated_file("daily_status", today).exists()  # nothing was written for it
        # Said explicitly, it builds the open day from what has landed.
        run = run_days("daily_map_job", today, today, instance, lake.root, prober={"no_scan": True})
    assert run.success
    assert pq.read_table(lake.curated_file("daily_status", today)).column("code").to_pylist() == ["o"]


@pytest.mark.parametrize("void", ["control", "prober_error"])
def test_a_voided_or_failed_check_is_n_and_never_brings_a_skip_back(lake, void):
    skipped = "https://mcp.robots.example.com/mcp"
    ours = "https://mcp.ours.example.com/mcp"
    land_registry(lake, [URL, skipped, ours], skip={skipped: "robots.txt disallows 7Maps-bot"})
    rows = [probe(URL, "timeout"), probe(skipped, "skipped", skip_reason="robots.txt disallows 7Maps-bot"),
            probe(ours, "prober_error", outcome_detail="KeyError: 'x' at checker.py:1")]
    if void == "control":
        rows.append(probe("https://control.7maps.example.com/mcp", "unreachable", check_kind="control"))
    land_probes(lake, rows)
    curated.build_quarantine(lake, DAY)
    status = {r["server_key"]: r for r in
              pq.read_table(curated.build_daily_status(lake, DAY).path).to_pylist()}
    assert "mcp.robots.example.com/mcp" not in status  # a skip stays off the map, voided run or not
    assert status["mcp.ours.example.com/mcp"]["code"] == "n"
    assert status["mcp.ours.example.com/mcp"]["reason"].startswith("our prober failed: KeyError")
    assert status[KEY]["code"] == ("n" if void == "control" else "d")


@pytest.mark.parametrize("reason", ["prober_overloaded", "robots_unavailable"])
def test_a_check_not_made_fairly_is_n_and_a_fair_check_of_the_same_day_decides(lake, reason):
    """not_checked (our trouble, rules/outcomes.py) is voided like prober_error: n with its reason, never d,
    and it never hides a fair check of the same day, earlier or later."""
    later = "https://mcp.later.example.com/mcp"
    land_registry(lake, [URL, later])
    land_probes(lake, [
        probe(URL, "not_checked", outcome_detail=f"{reason}: loop lag 2.1 s", skip_reason=reason),
        probe(later, "timeout", hour=9),
        probe(later, "not_checked", outcome_detail=f"{reason}: x", skip_reason=reason, hour=10),
    ])
    curated.build_quarantine(lake, DAY)
    status = {r["server_key"]: r for r in
              pq.read_table(curated.build_daily_status(lake, DAY).path).to_pylist()}
    assert status[KEY]["code"] == "n"
    assert status[KEY]["reason"] == f"not checked fairly: {reason}: loop lag 2.1 s"
    assert status["mcp.later.example.com/mcp"]["code"] == "d"  # the fair check of 09:00 decides


def test_a_single_run_backfill_builds_days_that_need_no_rebuild(lake, signing_key):
    """Dagster's single-run backfill builds each asset for every day before the next asset: every day is
    then current, and signing signs them as they are (the freshness rule reads lineage, not build order)."""
    from sevenmaps_pipeline.devtools.synth import synthesize

    synth = synthesize(lake, 40, 4, seed=3, end_day=DAY, missing_days=0)
    with dg.DagsterInstance.ephemeral() as instance:
        assert run_days("daily_map_job", synth.days[0], synth.days[-1], instance, lake.root, signing_key).success
        assert [stale_reason(lake, d) for d in synth.days] == [None] * len(synth.days)
        sign = run_days("sign_day_job", synth.days[-1], synth.days[-1], instance, lake.root, signing_key)
    assert sign.success and all(lake.root_file(d).exists() for d in synth.days)
