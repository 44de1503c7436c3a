"""The site of each signed day: pages, badges, lists and feeds (surfaces/site.py), after the day's
snapshot so every page can link the proofs of the files it was built from."""

import base64

import dagster as dg

from ..surfaces.site import build_site
from .integrity_assets import caught_up_days, day_snapshot
from .map_assets import SINGLE_RUN
from .partitions import finished_days
from .resources import LakeResource, partition_days


@dg.asset(
    partitions_def=finished_days,
    backfill_policy=SINGLE_RUN,
    group_name="surfaces",
    kinds={"html", "svg"},
    deps=[day_snapshot],
    description="site/days/D/: the static site of the signed day (surfaces/site.py, Jinja2 templates, inline "
    "SVG, no JavaScript): an index with the map's numbers, a chart of shown statuses over the last 30 days and "
    "why checks failed; a page per endpoint (30 daily codes as coloured bars, uptime and success chance with "
    "its interval, tools with risk colours and evidence, token cost against the day's distribution, "
    "readiness, changes, incidents, the namespace proof, the owner's note); the reliable list per category; "
    "the public down list (down now and confirmed incidents only); SVG badges per endpoint; an Atom watch "
    "feed. Each page links the day's signed root and the inclusion proof of every file it was built from. "
    "site/current points at the newest day; `sevenmaps serve` serves it beside the map's MCP server.",
)
def day_site(context: dg.AssetExecutionContext, lake: LakeResource) -> dg.MaterializeResult:
    requested = partition_days(context)
    # Days the sign run caught up get their sites too (recorded under their own partitions), as their
    # snapshots do: no signed day is left without one.
    catch_up = caught_up_days(lake, requested, lambda d: (lake.paths.root / "site" / "days" / d.isoformat()).is_dir())
    built = []
    for day in catch_up + requested:
        result = build_site(lake.paths, day)
        context.log.info(f"{day}: {result.pages} pages, {result.badges} badges, {result.proofs} proofs in "
                         f"{result.folder} ({result.seconds:.1f}s)")
        if day not in requested:
            context.log_event(dg.AssetMaterialization(
                asset_key=context.asset_key, partition=day.isoformat(), description="built as the catch-up of "
                "a later day", metadata={"pages": result.pages, "badges": result.badges}))
        built.append(result)
    last = built[-1]
    chart = base64.b64encode(last.index_chart.encode()).decode()
    return dg.MaterializeResult(metadata={
        "days": len(built), "caught_up": len(catch_up), "pages": sum(r.pages for r in built),
        "badges": sum(r.badges for r in built),
        "proofs_linked": last.proofs, "folder": dg.MetadataValue.path(str(last.folder)),
        "current": last.current,
        "index_chart": dg.MetadataValue.md(f"Shown statuses over the 30 days ending {last.day}:\n\n"
                                           f"![shown statuses](data:image/svg+xml;base64,{chart})"),
    })
