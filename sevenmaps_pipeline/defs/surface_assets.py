"""The site of each signed day: pages, badges, lists and feeds (publishing/site.py), after the day's
snapshot so every page can link the proofs of the files it was built from."""

import base64
import datetime as dt
from collections.abc import Iterator

import dagster as dg

from ..publishing.site import build_site
from . import lanes
from .integrity_assets import caught_up_days, day_snapshot
from .map_assets import SINGLE_RUN
from .partitions import finished_days
from .per_day import results_per_day
from .resources import LakeResource, partition_days


@dg.asset(
    partitions_def=finished_days,
    backfill_policy=SINGLE_RUN,
    pool=lanes.DAY,
    group_name="surfaces",
    kinds={"html", "svg"},
    deps=[day_snapshot],
    description="site/days/D/: the static site of the newest signed day of the run (publishing/site.py, Jinja2 "
    "templates, inline SVG, no JavaScript): an index with the map's numbers, a chart of shown statuses "
    "over the last 30 days and why checks failed; a page per endpoint (30 daily codes as coloured bars, "
    "uptime and success chance with its interval, tools with risk colours and evidence, token cost "
    "against the day's distribution, readiness, changes, incidents, the namespace proof, the owner's "
    "note); the reliable list per category; the public down list (down now and confirmed incidents only);"
    " SVG badges per endpoint; an Atom watch feed. Each page links the day's signed root and the "
    "inclusion proof of every file it was built from. site/current points at the newest day; `sevenmaps "
    "serve` serves it beside the map's MCP server.",
)
def day_site(context: dg.AssetExecutionContext, lake: LakeResource) -> Iterator[dg.MaterializeResult]:
    requested = partition_days(context)
    # Only the newest day of the run gets its site: it is the one served (site/current), and a site is a
    # page and two badges per endpoint, so building every day of a backfill or a catch-up would cost 30
    # sites of 100,000 pages for one that is read (docs/scaling.md). A daily sign run signs one day, so
    # each day gets its site in turn; a past day's is built on request (`sevenmaps site --day D`).
    catch_up = caught_up_days(lake, requested, lambda d: (lake.paths.root / "site" / "days" / d.isoformat()).is_dir())
    newest = max(requested)  # the days a sign run catches up are all earlier
    superseded = sorted(d for d in {*catch_up, *requested} if d != newest)
    if superseded:
        context.log.info(f"sites not built for {len(superseded)} earlier day(s) of this run ({superseded[0]} .. "
                         f"{superseded[-1]}): superseded by {newest}'s; `sevenmaps site --day D` builds one")
    # A signed day caught up without its own site is still done for Dagster: its site was superseded by the
    # newest day's (the rule above), recorded under its own partition so the sign job's partitions show
    # every signed day done and none "missing" (a range run's days are recorded by its result already).
    recorded = context.instance.get_materialized_partitions(context.asset_key)
    for day in catch_up:
        if day.isoformat() not in recorded:
            context.log_event(dg.AssetMaterialization(
                asset_key=context.asset_key, partition=day.isoformat(),
                description=f"superseded by {newest}'s site (only the newest signed day's site is built: "
                "docs/scaling.md); `sevenmaps site --day D` builds this day's",
                metadata={"superseded_by": newest.isoformat(), "built": False}))
    last = build_site(lake.paths, newest)
    context.log.info(f"{newest}: {last.pages} pages, {last.badges} badges, {last.proofs} proofs in "
                     f"{last.folder} ({last.seconds:.1f}s, {last.writers} process(es) writing server pages)")
    if last.writers_note:
        context.log.warning(f"{newest}: {last.writers_note}")
    chart = base64.b64encode(last.index_chart.encode()).decode()
    # The built day's numbers are its own; a superseded day of a range run gets no pages on the plot.
    days: dict[dt.date, dict] = {d: {"superseded_by": newest.isoformat(), "built": False} for d in superseded}
    days[newest] = {"built": True, "pages": last.pages, "badges": last.badges, "seconds": round(last.seconds, 2),
                    "writers": last.writers, "proofs_linked": last.proofs}
    yield from results_per_day(context, {
        "day": newest.isoformat(), "superseded_days": dg.MetadataValue.json([d.isoformat() for d in superseded]),
        "folder": dg.MetadataValue.path(str(last.folder)), "current": last.current,
        "index_chart": dg.MetadataValue.md(f"Shown statuses over the 30 days ending {last.day}:\n\n"
                                           f"![shown statuses](data:image/svg+xml;base64,{chart})"),
    }, days)
