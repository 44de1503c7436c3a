"""What an operator reads on an asset (docs/operations.md, "Reading a run"): each day's counts per code and
shown status as numbers (a day that went 80% d is seen at a glance and charted by the Plots view), the
table's column schema from the schema module, a Markdown preview, and checks that emit numbers. Through a
real Dagster instance."""

from __future__ import annotations

import datetime as dt

import dagster as dg
from conftest import DAY, land_probes, land_registry, probe

from sevenmaps_pipeline.curated.profile import profile_day
from sevenmaps_pipeline.definitions import defs
from sevenmaps_pipeline.defs.runner import run_days
from sevenmaps_pipeline.lake.schemas import DAILY_STATUS

URLS = [f"https://mcp{i}.example.com/mcp" for i in range(10)]


def _land(lake, day: dt.date, down: int) -> None:
    land_registry(lake, URLS, day=day)
    land_probes(lake, [probe(u, "timeout" if i < down else "ok", day=day) for i, u in enumerate(URLS)], day=day,
                run_id=f"run-{day}")


def _latest(instance, asset: str, day: dt.date) -> dict:
    result = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[day.isoformat()]), limit=10)
    return dict(result.records[0].asset_materialization.metadata)


def test_a_day_that_went_80_percent_d_shows_in_its_numbers(lake, signing_key):
    with dg.DagsterInstance.ephemeral() as instance:
        _land(lake, DAY, down=1)
        assert run_days("daily_map_job", DAY, DAY, instance, lake.root, signing_key).success
        bad = DAY + dt.timedelta(days=1)
        _land(lake, bad, down=8)
        run = run_days("daily_map_job", bad, bad, instance, lake.root, signing_key)
        assert run.success
        good, worse = _latest(instance, "daily_status", DAY), _latest(instance, "daily_status", bad)
        assert (good["code o"].value, good["code d"].value, good["share d %"].value) == (9, 1, 10.0)
        assert (worse["code o"].value, worse["code d"].value, worse["share d %"].value) == (2, 8, 80.0)
        assert worse["dagster/row_count"].value == 10 and worse["code n"].value == 0
        assert worse["build seconds"].value >= 0  # each table's build time, charted per day
        assert worse["shown_status down"].value == 8
        assert "| server_name | url | code |" in worse["preview"].value
        probes = _latest(instance, "raw_probes", bad)
        assert probes["outcome timeout"].value == 8 and probes["outcome ok"].value == 2
        assert _latest(instance, "tools", bad)["risk green"].value == 2  # one tool per answering endpoint
        # The checks emit numbers.
        (status_check,) = [c for c in run.get_asset_check_evaluations() if c.check_name == "daily_status_codes_valid"]
        assert status_check.metadata["violations"].value == 0 and status_check.metadata["days_checked"].value == 1

        # A range run (a single-run backfill) records each day with its own numbers, not the range's sum.
        range_run = run_days("daily_map_job", DAY, bad, instance, lake.root, signing_key)
        assert range_run.success
        per_day = {e.partition: e.materialization.metadata for e in range_run.get_asset_materialization_events()
                   if e.asset_key == dg.AssetKey("daily_status") and "code d" in e.materialization.metadata}
        assert per_day[DAY.isoformat()]["code d"].value == 1 and per_day[bad.isoformat()]["code d"].value == 8
        # What Dagster plots per partition is each one's latest materialisation: the day's own figures, never
        # the range's totals (which it records under every day of the range, as text only).
        for day, down in ((DAY, 1), (bad, 8)):
            latest = _latest(instance, "daily_status", day)
            assert (latest["dagster/row_count"].value, latest["code d"].value) == (10, down)
            assert _latest(instance, "raw_probes", day)["outcome timeout"].value == down
        ranges = [e.materialization.metadata for e in range_run.get_asset_materialization_events()
                  if "range totals" in e.materialization.metadata]
        assert ranges and all(not isinstance(v, (dg.IntMetadataValue, dg.FloatMetadataValue))
                              for metadata in ranges for v in metadata.values())
        assert {m["range totals"].data["rows"] for m in ranges if "dagster/row_count" not in m} >= {20}

        # So does the sign job's range run: each day its own root, files and log size; only the newest day's
        # site is built, the earlier one's is superseded, and no number of the run sits under every day.
        sign = run_days("sign_day_job", DAY, bad, instance, lake.root, signing_key)
        assert sign.success
        first, second = _latest(instance, "daily_root", DAY), _latest(instance, "daily_root", bad)
        assert first["root"].value != second["root"].value and second["previous_root"].value == first["root"].value
        assert (first["log_size"].value, second["log_size"].value) == (
            first["files"].value, first["files"].value + second["files"].value)
        snapshots = [_latest(instance, "day_snapshot", d) for d in (DAY, bad)]
        assert all(m["exported now"].value is True for m in snapshots)
        older, newest = _latest(instance, "day_site", DAY), _latest(instance, "day_site", bad)
        assert older["built"].value is False and "pages" not in older and newest["pages"].value > 0
        sign_events = [e for e in sign.get_asset_materialization_events()
                       if "range totals" in e.materialization.metadata]
        assert {e.asset_key.path[-1] for e in sign_events} == {"daily_root", "day_snapshot", "day_site"}
        sign_ranges = [e.materialization.metadata for e in sign_events]
        assert all(not isinstance(v, (dg.IntMetadataValue, dg.FloatMetadataValue))
                                             for metadata in sign_ranges for v in metadata.values())
        totals = {tuple(sorted(m["range totals"].data)): m["range totals"].data for m in sign_ranges}
        assert {t.get("signed") for t in totals.values()} >= {2}
        assert {t.get("files") for t in totals.values()} >= {sum(m["files"].value for m in snapshots)}

        # A day signed again is verified and left alone; its figures stay the day's own.
        again = run_days("sign_day_job", DAY, bad, instance, lake.root, signing_key)
        assert again.success
        assert _latest(instance, "daily_root", bad)["log_size"].value == second["log_size"].value
        assert _latest(instance, "daily_root", bad)["already signed"].value is True


def test_every_table_asset_carries_its_column_schema():
    graph = defs.resolve_asset_graph()
    schema = graph.get(dg.AssetKey("daily_status")).metadata["dagster/column_schema"]
    assert [c.name for c in schema.columns] == [f.name for f in DAILY_STATUS.schema]
    code = next(c for c in schema.columns if c.name == "code")
    assert code.type == "VARCHAR" and code.description == DAILY_STATUS.doc("code")
    for key in graph.get_all_asset_keys():
        if key.to_user_string() not in ("daily_root", "day_snapshot", "day_site"):
            assert "dagster/column_schema" in graph.get(key).metadata, key


def test_a_profile_counts_and_previews_safely(lake):
    _land(lake, DAY, down=3)
    assert profile_day(lake, "daily_status", DAY).rows == 0  # not built yet: nothing, no error
    profile = profile_day(lake, "probes", DAY)
    assert profile.counts["outcome"] == {"ok": 7, "timeout": 3} and profile.share("outcome", "timeout") == 30.0
    assert profile.preview.count("\n") == 6  # header, rule and five rows
