"""The sign job's results as Dagster plots them (docs/operations.md, "Reading a run"): Dagster records a range
run's result (a single-run backfill's) under every day of the range and plots numbers per partition from each
one's latest materialisation. So a range's result carries its run-wide numbers as JSON only, and each day's
own figures follow it as one materialisation per day; a one-day run's result carries that day's figures.

The map's days (defs/day_map.py) also carry the data version and provenance Dagster gave the range's result
(`provenance_of_result`; the same for every day of the range): without them Dagster judges a day by
timestamps and by whether every partition its windows reach was ever materialised, and marked every day of a
range backfill "Unsynced" (docs/operations.md, "Reading a run"). The sign job's days need none: their inputs
are the map's days, always materialised before them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from typing import Any

import dagster as dg

NUMBERS = (int, float, dg.IntMetadataValue, dg.FloatMetadataValue)


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, (dg.IntMetadataValue, dg.FloatMetadataValue)) else value


def provenance_of_result(context: dg.AssetExecutionContext, asset_key: dg.AssetKey) -> dict[str, str]:
    """The tags under which Dagster stored this run's result for the asset (its data version, code version and
    the versions and events of its inputs), read back once the result is yielded; none, said in a warning, if
    the latest materialisation of the range's last day is not this run's (another writer's came between)."""
    newest = dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=[context.partition_keys[-1]])
    records = context.instance.fetch_materializations(newest, limit=1).records
    if not records or records[0].run_id != context.run_id or records[0].asset_materialization is None:
        context.log.warning(f"{asset_key.to_user_string()}: the range's result was not found as the latest "
                            "materialisation of its last day, so its days are recorded without a data version: "
                            "the UI may show them Unsynced until they are built again")
        return {}
    return {k: v for k, v in (records[0].asset_materialization.tags or {}).items() if k.startswith("dagster/")}


def results_per_day(context: dg.AssetExecutionContext, run: Mapping[str, Any],
                    days: Mapping[dt.date, Mapping[str, Any]]) -> Iterator[dg.MaterializeResult]:
    """The asset's result, then (in a range run) each requested day's own figures under its partition.
    `run` is what the whole run did; `days` what each day came to (days outside the run's range are the
    caller's to record, as catch-ups are)."""
    keys = context.partition_keys
    if len(keys) == 1:
        only = dt.date.fromisoformat(keys[0])
        yield dg.MaterializeResult(metadata={**run, **days.get(only, {})})
        return
    numbers = {k: _plain(v) for k, v in run.items() if isinstance(v, NUMBERS) and not isinstance(v, bool)}
    rest = {k: v for k, v in run.items() if k not in numbers}
    yield dg.MaterializeResult(metadata={"range": f"{keys[0]} .. {keys[-1]} ({len(keys)} days)",
                                         "range totals": dg.MetadataValue.json(numbers), **rest})
    for day in sorted(d for d in days if d.isoformat() in keys):
        context.log_event(dg.AssetMaterialization(asset_key=context.asset_key, partition=day.isoformat(),
                                                  metadata=dict(days[day])))
