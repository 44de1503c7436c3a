"""Run the code location's jobs in-process over a day range, against a real Dagster instance.

Used by `sevenmaps demo`, the benchmark and the end-to-end tests. The range tags make one run over
several partitions, exactly what a UI backfill does for single-run assets.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import dagster as dg

from ..lake.paths import LakePaths
from .integrity_assets import days_to_rebuild
from .location import defs


def run_days(job_name: str, first: dt.date, last: dt.date, instance: dg.DagsterInstance,
             lake_root: Path, signing_key: Path | None = None,
             raise_on_error: bool = True, log_level: str = "INFO",
             prober: dict | None = None) -> dg.ExecuteInProcessResult:
    tags = ({"dagster/partition": first.isoformat()} if first == last else
            {"dagster/asset_partition_range_start": first.isoformat(),
             "dagster/asset_partition_range_end": last.isoformat()})
    return _run(job_name, tags, instance, lake_root, signing_key, raise_on_error, log_level, prober)


def run_partition(job_name: str, partition_key: str, instance: dg.DagsterInstance, lake_root: Path,
                  raise_on_error: bool = True, log_level: str = "INFO",
                  prober: dict | None = None) -> dg.ExecuteInProcessResult:
    """One partition of any job by its key (an hourly slice: `2026-11-20-05:00`)."""
    return _run(job_name, {"dagster/partition": partition_key}, instance, lake_root, None, raise_on_error,
                log_level, prober)


def _run(job_name: str, tags: dict[str, str], instance: dg.DagsterInstance, lake_root: Path,
         signing_key: Path | None, raise_on_error: bool, log_level: str,
         prober: dict | None) -> dg.ExecuteInProcessResult:
    job = defs.resolve_job_def(job_name)
    lake_config = {"root": str(lake_root)}
    if signing_key:
        lake_config["signing_key"] = str(signing_key)
    resources = {"lake": {"config": lake_config}}
    if prober:
        resources["prober"] = {"config": prober}
    return job.execute_in_process(
        instance=instance,
        tags=tags,
        run_config={"resources": resources, "loggers": {"console": {"config": {"log_level": log_level}}}},
        raise_on_error=raise_on_error,
    )


def run_map_and_sign(first: dt.date, last: dt.date, instance: dg.DagsterInstance, lake_root: Path,
                     signing_key: Path | None = None, log_level: str = "INFO",
                     raise_on_error: bool = True) -> list[dg.ExecuteInProcessResult]:
    """Build the map for the days, then sign them: what a UI backfill of all four assets does. Signing signs
    only days the map job built and checked; an unsigned earlier day it would refuse (stale, or built outside
    the map job) is rebuilt by the map job first, through `last` (docs/operations.md, "When a day is stale")."""
    runs = [run_days("daily_map_job", first, last, instance, lake_root, signing_key, log_level=log_level,
                     raise_on_error=raise_on_error)]
    rebuild = days_to_rebuild(LakePaths.at(lake_root), last, instance) if runs[-1].success else None
    if rebuild is not None:
        runs.append(run_days("daily_map_job", *rebuild, instance, lake_root, signing_key, log_level=log_level,
                             raise_on_error=raise_on_error))
    if runs[-1].success:
        runs.append(run_days("sign_day_job", first, last, instance, lake_root, signing_key, log_level=log_level,
                             raise_on_error=raise_on_error))
    return runs


def scan_slice_job_def() -> dg.JobDefinition:
    """The slice job as the code location defines it: the target `dg.reconstructable` points at, so that
    the multiprocess executor's steps load it again in their own processes."""
    return defs.resolve_job_def("scan_slice_job")


def run_slice_in_processes(partition_key: str, instance: dg.DagsterInstance, lake_root: Path,
                           prober: dict | None = None) -> dg.ExecutionResult:
    """One slice run through the job's own executor (with $SEVENMAPS_SCAN_SHARDS > 1: the multiprocess
    executor, a process per shard), as a launched run executes it. Needs a persistent instance."""
    resources: dict = {"lake": {"config": {"root": str(lake_root)}}}
    if prober:
        resources["prober"] = {"config": prober}
    return dg.execute_job(dg.reconstructable(scan_slice_job_def), instance=instance,
                          run_config={"resources": resources}, tags={"dagster/partition": partition_key})
