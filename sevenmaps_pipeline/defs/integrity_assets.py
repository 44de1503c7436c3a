"""The final asset: a signed, hash-chained root over each finished UTC day's files."""

import datetime as dt
from collections.abc import Callable, Iterator

import dagster as dg

from ..curated.day import MAP_ASSET_NAMES, StaleDaysError, stale_days
from ..integrity.export_check import verify_export
from ..integrity.keys import SigningKeyError
from ..integrity.log import LogError
from ..integrity.report import Trust
from ..integrity.roots import (
    LogSync,
    SignedDay,
    SigningError,
    complete_signing,
    days_to_sign,
    read_root,
    sign_through,
    signed_days,
)
from ..integrity.verify import verify_days
from ..lake.paths import LakePaths
from ..lake.warehouse import publish_warehouse
from ..publishing.export import ExportError, default_folder, export_snapshot
from . import lanes
from .checks import DAY_CHECKS
from .map_assets import SINGLE_RUN
from .partitions import FIRST_DAY, finished_days
from .per_day import results_per_day
from .resources import LakeResource, partition_days


@dg.asset(
    partitions_def=finished_days,
    backfill_policy=SINGLE_RUN,
    pool=lanes.DAY,
    group_name="integrity",
    kinds={"json"},
    deps=list(MAP_ASSET_NAMES),
    description="roots/day=D.json: one line '<sha256>  <path>' per covered file of the day, root = "
    "sha256(previous_root + '\\n' + lines), Ed25519 signature. Signed only after the day ended; earlier "
    "unsigned days are signed first, in chain order; each signed day's lines are appended to the RFC 6962 log "
    "under log/ (C2SP tiles) and a new checkpoint is published, cosigned by the configured witnesses; a "
    "signed day is never signed again (asked again, it is verified instead, and the log is completed if a "
    "signer died between that root and its checkpoint) and its files are frozen. "
    "Signs only days the map job has checked: a day whose tables were built before the day ended or "
    "before an input changed (a missed day backfilled late, a report batch at 23:59), was built outside "
    "the map job, or fails a blocking check of the map now is refused, with every such day named and the "
    "daily_map_job range that rebuilds them with their checks; nothing is signed then. A signed day is what "
    "its closed inputs say, so a backfill over it is a no-op. Partitions are finished days only.",
)
def daily_root(context: dg.AssetExecutionContext, lake: LakeResource) -> Iterator[dg.MaterializeResult]:
    paths = lake.paths
    requested = partition_days(context)
    signed: list[SignedDay] = []
    already: list[str] = []
    completed: LogSync | None = None
    unsigned = [d for d in requested if not paths.root_file(d).exists()]
    try:
        # Every day this run would sign, before signing any (a day that has not ended is refused by
        # sign_through, in those words).
        ended = [d for d in (days_to_sign(paths, max(unsigned)) if unsigned else [])
                 if d < dt.datetime.now(dt.UTC).date()]
        unchecked = unchecked_days(paths, ended, context.instance)
        if unchecked:
            raise StaleDaysError(unchecked)
    except (SigningError, ValueError) as exc:
        raise dg.Failure(description=str(exc)) from exc
    for day in requested:
        if paths.root_file(day).exists():
            if any(s.day == day for s in signed):
                continue  # signed a moment ago, as the catch-up of an earlier requested day
            problems = verify_days(paths, [day], lake.public_key())
            if problems:
                raise dg.Failure(description=f"day {day} is signed but does not verify ({problems[0]}); "
                                 "run `sevenmaps verify`")
            already.append(day.isoformat())  # never signed twice: checked, left as it is
            if completed is None:  # a signer that died after this root left the log behind: finish it
                try:
                    completed = complete_signing(paths, lake.key_path, lake.witness_configs())
                except (SigningKeyError, LogError, OSError) as exc:
                    raise dg.Failure(description=str(exc)) from exc
                for d in completed.days:
                    context.log.info(f"{d}: signed earlier, its lines appended to the log now (it was behind)")
            continue
        try:
            signed += sign_through(paths, day, lake.key_path, witnesses=lake.witness_configs())
        except (SigningError, SigningKeyError, LogError, ValueError) as exc:
            raise dg.Failure(description=str(exc)) from exc
    for s in signed:
        context.log.info(f"signed {s.day}: {s.files} files, root {s.root}; log size {s.tree_size}, "
                         f"{s.cosignatures} witness cosignature(s)")
        for problem in s.problems:
            context.log.warning(f"{s.day}: {problem}")
        if s.day not in requested:  # caught up: record it under its own partition too
            context.log_event(dg.AssetMaterialization(
                asset_key=context.asset_key, partition=s.day.isoformat(),
                description="signed as the catch-up of a later day",
                metadata={"root": s.root, "files": s.files}))
    publish_warehouse(paths)
    run: dict = {"signed": len(signed), "already_signed": len(already),
                 "signed_days": [s.day.isoformat() for s in signed], "already_signed_days": already,
                 "log_completed_days": [d.isoformat() for d in completed.days] if completed else [],
                 "witness_problems": "\n".join(p for s in signed for p in s.problems) or "none"}
    days = {s.day: {"root": s.root, "previous_root": s.previous_root, "files": s.files, "log_size": s.tree_size,
                    "cosignatures": s.cosignatures} for s in signed}
    for name in already:
        days[dt.date.fromisoformat(name)] = _signed_earlier(paths, dt.date.fromisoformat(name))
    yield from results_per_day(context, run, days)


def _signed_earlier(paths: LakePaths, day: dt.date) -> dict:
    """A day signed before this run, as its root document says (its figures stay on the plot)."""
    doc = read_root(paths, day)
    return {"root": doc["root"], "previous_root": doc.get("previous_root") or "", "files": len(doc["lines"]),
            "log_size": (doc.get("log") or {}).get("tree_size", 0), "already signed": True}


def unchecked_days(paths: LakePaths, days: list[dt.date],
                   instance: dg.DagsterInstance) -> list[tuple[dt.date, str]]:
    """The days that signing refuses, with why, in chain order: stale (curated/day.py stale_reason), without
    a materialisation of every map asset in this instance (built outside the map job), or failing one of the
    map's blocking checks now (defs/checks.py DAY_CHECKS: the same functions the map job runs). Only the map
    job rebuilds a day, with its checks and materialisations (docs/operations.md, "When a day is stale")."""
    stale = dict(stale_days(paths, days))
    built = {name: instance.get_materialized_partitions(dg.AssetKey(name)) for name in MAP_ASSET_NAMES}
    out = []
    for day in days:
        why = stale.get(day)
        if why is None:
            missing = [name for name in MAP_ASSET_NAMES if day.isoformat() not in built[name]]
            if missing:
                why = f"{', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''} not materialised by the map job"
        if why is None:
            failed = [f"{check.name} {found}" for check in DAY_CHECKS if (found := check.violations(paths, day))]
            if failed:
                why = f"its blocking check fails: {'; '.join(failed)}"
        if why is not None:
            out.append((day, why))
    return out


def days_to_rebuild(paths: LakePaths, through: dt.date,
                    instance: dg.DagsterInstance) -> tuple[dt.date, dt.date] | None:
    """The days the map job must build before `through` can be signed: from the first unsigned day signing
    would refuse through `through` (every later day's windows may read it), or None when there is none."""
    try:
        pending = days_to_sign(paths, through)
    except SigningError:
        return None  # already signed, or before the signed history: the sign run says so itself
    unchecked = unchecked_days(paths, pending, instance)
    return (unchecked[0][0], through) if unchecked else None


def caught_up_days(lake: LakeResource, requested: list, done: Callable[[dt.date], bool]) -> list[dt.date]:
    """The signed days before the requested ones that a sign run caught up and that lack what `done` checks
    (their snapshot, their site): written in the same run, so no signed day is left without them."""
    return [d for d in signed_days(lake.paths) if FIRST_DAY <= d < min(requested) and not done(d)]


@dg.asset(
    partitions_def=finished_days,
    backfill_policy=SINGLE_RUN,
    pool=lanes.DAY,
    group_name="integrity",
    kinds={"parquet"},
    deps=[daily_root],
    description="exports/D/: the researchers' snapshot of the signed day (publishing/export.py): every published "
    "table's files byte-identical to the signed ones, the root, the log's checkpoint and tiles, a C2SP "
    ".tlog-proof per file, the public key and vkey, SHA256SUMS, a Frictionless datapackage.json and a Croissant "
    "1.1 croissant.json (CC BY 4.0), a README and WITHHELD.txt (internal-only findings and quarantines, with "
    "why). Immutable: a day already exported is left as it is. Verify with `sevenmaps verify --export exports/D "
    "--public-key ...`.",
)
def day_snapshot(context: dg.AssetExecutionContext, lake: LakeResource) -> Iterator[dg.MaterializeResult]:
    requested = partition_days(context)
    # A sign run that caught up earlier days signed them too: their snapshots are written now as well (and
    # recorded under their own partitions), so no signed day is left without one.
    catch_up = caught_up_days(lake, requested, lambda d: default_folder(lake.paths, d, d).exists())
    written, kept, files, per_day = {}, [], 0, {}
    for day in catch_up + requested:
        try:
            result = export_snapshot(lake.paths, day, day)
        except (ExportError, LogError) as exc:
            raise dg.Failure(description=f"{day}: {exc}") from exc
        files += result.files
        if result.created:
            written[day.isoformat()] = f"{result.files} files, {result.withheld} withheld, {result.bytes:,} bytes"
        else:
            kept.append(day.isoformat())
        per_day[day] = {"files": result.files, "withheld": result.withheld, "exported now": result.created}
        if day not in requested:
            context.log_event(dg.AssetMaterialization(
                asset_key=context.asset_key, partition=day.isoformat(),
                description="exported as the catch-up of a later day",
                metadata=per_day[day]))
    yield from results_per_day(context, {
        "exported": len(written), "files": files, "caught_up": len(catch_up), "written": written or "none",
        "already_exported": kept or "none", "folder": str(lake.paths.exports_dir)}, per_day)


@dg.asset_check(asset=daily_root, blocking=True,
                description="The root chains to the previous day's root, matches the day's files now, and its "
                "signature verifies against the signing key's public half (integrity/verify.py, the one "
                "verifier `sevenmaps verify` uses).")
def daily_root_chain_intact(context: dg.AssetCheckExecutionContext, lake: LakeResource) -> dg.AssetCheckResult:
    days = partition_days(context)
    problems = verify_days(lake.paths, days, lake.public_key())
    return dg.AssetCheckResult(passed=not problems, metadata={
        "problems": dg.MetadataValue.int(len(problems)), "days_checked": dg.MetadataValue.int(len(days)),
        "detail": "\n".join(map(str, problems)) or "none"})


@dg.asset_check(asset=day_snapshot, blocking=True,
                description="The day's researchers' snapshot verifies on its own against the signing key's public "
                "half: SHA256SUMS, the root, the log, a proof per file; what it withholds is listed.")
def day_snapshot_verifies(context: dg.AssetCheckExecutionContext, lake: LakeResource) -> dg.AssetCheckResult:
    public = lake.public_key()
    problems, withheld = {}, 0
    for day in partition_days(context):
        report = verify_export(default_folder(lake.paths, day, day), Trust(public, "the signing key", pinned=True))
        withheld += len(report.withheld)
        if not report.ok:
            problems[day.isoformat()] = str(report.problems[0])
    return dg.AssetCheckResult(passed=not problems, metadata={
        "problems": dg.MetadataValue.int(len(problems)), "withheld_files": dg.MetadataValue.int(withheld),
        "detail": dg.MetadataValue.json(problems) if problems else "none"})
