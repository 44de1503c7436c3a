"""The final asset: a signed, hash-chained root over each finished UTC day's files."""


import dagster as dg

from ..integrity.keys import SigningKeyError
from ..integrity.roots import SigningError, sign_through
from ..lake.warehouse import publish_warehouse
from .map_assets import SINGLE_RUN, daily_status, raw_probes, server_history
from .partitions import daily_partitions
from .resources import LakeResource, partition_days


@dg.asset(
    partitions_def=daily_partitions,
    backfill_policy=SINGLE_RUN,
    group_name="integrity",
    kinds={"json"},
    deps=[raw_probes, daily_status, server_history],
    description="roots/day=D.json: one line '<sha256>  <path>' per covered file of the day, root = "
    "sha256(previous_root + '\\n' + lines), Ed25519 signature. Signed only after the day ended; earlier "
    "unsigned days are signed first, in chain order; a signed day is never signed again and its files "
    "are frozen.",
)
def daily_root(context: dg.AssetExecutionContext, lake: LakeResource) -> dg.MaterializeResult:
    paths = lake.paths
    requested = partition_days(context)
    signed = []
    for day in requested:
        if paths.root_file(day).exists() and any(s.day == day for s in signed):
            continue  # signed earlier in this run, as the catch-up of an earlier requested day
        try:
            signed += sign_through(paths, day, lake.key_path)
        except (SigningError, SigningKeyError) as exc:
            raise dg.Failure(description=str(exc)) from exc
    for s in signed:
        context.log.info(f"signed {s.day}: {s.files} files, root {s.root}")
        if s.day not in requested:  # caught up: record it under its own partition too
            context.log_event(dg.AssetMaterialization(
                asset_key=context.asset_key, partition=s.day.isoformat(),
                description="signed as the catch-up of a later day",
                metadata={"root": s.root, "files": s.files}))
    publish_warehouse(paths)
    last = signed[-1]
    return dg.MaterializeResult(metadata={
        "signed_days": [s.day.isoformat() for s in signed], "root": last.root,
        "previous_root": last.previous_root, "files": last.files,
    })
