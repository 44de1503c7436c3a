"""Run a day's scan and land it: registry snapshot, probe checks and origin documents, as Parquet."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa

from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths
from ..lake.schemas import RAW_ORIGINS, RAW_PROBES, RAW_REGISTRY, conform
from ..registry.client import fetch_snapshot
from .config import ProbeConfig
from .http import build_client
from .scan import Clock, scan


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class ReplayClock:
    """Demo only: 'now' is `day` at noon plus the real time elapsed, so a replayed scan is of that day."""

    def __init__(self, day: dt.date) -> None:
        self._start = dt.datetime.combine(day, dt.time(12, 0), dt.UTC)
        self._t0 = time.monotonic()

    def __call__(self) -> dt.datetime:
        return self._start + dt.timedelta(seconds=time.monotonic() - self._t0)


class PastDayError(RuntimeError):
    """The past cannot be checked: a day that has passed is never probed."""


@dataclass
class DayScan:
    day: dt.date
    run_id: str
    registry_rows: int = 0
    probe_rows: int = 0
    origin_rows: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def scan_day(lake: LakePaths, day: dt.date, registry_url: str, config: ProbeConfig, clock: Clock = utc_now,
             control_url: str | None = None,
             progress: Callable[[int, int], None] | None = None) -> DayScan:
    today = clock().date()
    if day != today:
        raise PastDayError(f"{day} is not today ({today} UTC): a day that has passed is never probed, "
                           "and a future one cannot be")
    started = time.perf_counter()
    run_id = f"scan-{clock().strftime('%H%M%S')}-{uuid.uuid4().hex[:8]}"
    report = DayScan(day, run_id)

    async def go() -> None:
        async with build_client(config) as client:
            snapshot = await fetch_snapshot(client, registry_url, day, clock(), opted_out=config.opted_out_hosts,
                                            host_map=config.host_map or None)
            registry = conform(pa.Table.from_pylist(snapshot.rows, RAW_REGISTRY.schema), RAW_REGISTRY)
            write_parquet(lake, lake.registry_file(day), registry)
            report.registry_rows = registry.num_rows
        result = await scan(snapshot.rows, day, run_id, config, clock, control_url, progress)
        probes = conform(pa.Table.from_pylist(result.probe_rows, RAW_PROBES.schema), RAW_PROBES)
        write_parquet(lake, lake.raw_dir("probes", day) / f"{run_id}.parquet", probes)
        origins = conform(pa.Table.from_pylist(result.origin_rows, RAW_ORIGINS.schema), RAW_ORIGINS)
        write_parquet(lake, lake.raw_dir("origins", day) / f"{run_id}.parquet", origins)
        report.probe_rows, report.origin_rows = probes.num_rows, origins.num_rows
        for row in result.probe_rows:
            report.outcomes[row["outcome"]] = report.outcomes.get(row["outcome"], 0) + 1

    asyncio.run(go())
    report.seconds = time.perf_counter() - started
    return report
