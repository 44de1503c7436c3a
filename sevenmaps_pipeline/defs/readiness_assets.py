"""Readiness (docs/methodology.md, "Readiness"): the discovery surfaces each endpoint answered, every rubric
line of every MCP endpoint and Agent Skill the day's readiness runs read, and the scores summed from them;
and the readiness run that follows each slice, a job in its own lane (defs/lanes.py)."""

import datetime as dt

import dagster as dg
from pydantic import Field

from . import lanes
from .map_assets import day_spec, run_readiness
from .resources import LakeResource, ProberResource

readiness_discovery = day_spec(
    "readiness_discovery", "readiness",
    description="Per endpoint with a readiness check that day, each discovery surface asked for it: its server "
    "card (<mcp-url>/server-card, Accept application/mcp-server-card+json) and RFC 9728 metadata, its origin's "
    "card paths (/.well-known/mcp/server-card.json, /.well-known/mcp.json), its publisher domain's catalog, "
    "/llms.txt, markdown door and registry proof file: whether it answered, and where a card disagrees with "
    "the server (a card_disagrees finding). sql/readiness_discovery.sql, rules/discovery.py",
)


readiness_lines = day_spec(
    "readiness_lines", "readiness",
    description="Every line of the readiness rubric (mcp-2026-09-11.5 for MCP endpoints, skill-2026-09-11.2 "
    "for Agent Skills) for each endpoint checked and skill read that day: seen, passed, points and "
    "evidence, with the rubric version. A line the probe could not see is unseen and counts on neither side. "
    "p50 is the median round trip of the last 7 days' readiness checks. sql/readiness_lines.sql, "
    "rules/readiness.py",
)


readiness_scores = day_spec(
    "readiness_scores", "readiness",
    description="Each listing's readiness score that day: every section's and the total's earned/possible over "
    "the lines seen (e.g. 61/85), lines seen and unseen, and the rubric version. sql/readiness_scores.sql",
)


class ReadinessDayConfig(dg.Config):
    day: str = Field(description="The UTC day (YYYY-MM-DD) whose slice has run: probed only while it is the open "
                     "day, never after")
    through_hour: int | None = Field(default=None, ge=0, le=23, description="The slice (UTC hour) just run: the "
                                     "endpoints of the day's slices up to it without a readiness check yet are "
                                     "checked (a check of our own fault only in its own slice's hour). Unset: every "
                                     "endpoint of the day without a completed check, our own faults redone")


@dg.op(pool=lanes.READINESS,
       description="The readiness probe of a slice's endpoints (and of any endpoint of the day's earlier slices "
       "without a readiness check yet) and, once a day, of the skills list (probe/readiness_scan.py; "
       "docs/methodology.md, \"Readiness\"), into raw/readiness, raw/readiness_surfaces and raw/skills: its own "
       "check kind, never a day code. What the day's earlier runs read (origins' and domains' documents, "
       "repositories, skills) is not asked again. Only on the open day.")
def slice_readiness(context: dg.OpExecutionContext, config: ReadinessDayConfig, lake: LakeResource,
                    prober: ProberResource) -> dict:
    day = dt.date.fromisoformat(config.day)
    if not prober.readiness:
        context.log.info(f"{day}: the readiness probe is turned off (SEVENMAPS_READINESS=0)")
        return {"checks": 0}
    report = run_readiness(context, lake.paths, day, prober, prober.clock(), fail=True,
                           through_hour=config.through_hour)
    assert report is not None  # fail=True: a failure raised
    context.add_output_metadata({"day": config.day, "through_hour": "the whole day" if config.through_hour is None
                                 else config.through_hour, "checks": report.checks,
                                 "dagster/row_count": report.checks,
                                 "outcomes": dg.MetadataValue.json(dict(sorted(report.outcomes.items()))),
                                 "documents": report.surfaces, "skills": report.skills,
                                 "seconds": round(report.seconds, 2), "run_id": report.run_id})
    return {"checks": report.checks}


@dg.job(description="The readiness probe of a slice's endpoints and, once a day, of the skills, in its own lane "
        "(started by readiness_sensor once the slice has succeeded): a slice, an hourly or five-minute check "
        "never waits for it, and the day's map and signing wait for it.")
def readiness_job() -> None:
    slice_readiness()
