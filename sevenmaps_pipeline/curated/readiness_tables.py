"""Readiness for one day (docs/methodology.md, "Readiness"): the discovery surfaces each endpoint answered,
every rubric line of every MCP endpoint and skill the day's readiness runs read, and the scores summed
from those lines. The inputs are gathered set-wise in DuckDB (sql/readiness_lines.sql,
sql/readiness_discovery.sql); the lines are scored by rules/readiness.py, the code `sevenmaps readiness`
runs too; the scores are summed in SQL (sql/readiness_scores.sql).
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import pyarrow as pa

from ..lake import duck
from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths
from ..lake.schemas import (
    RAW_READINESS,
    RAW_READINESS_SURFACES,
    RAW_SKILLS,
    READINESS_DISCOVERY,
    READINESS_LINES,
    READINESS_SCORES,
    conform,
)
from ..registry.owners import read_claims, verified_owner_of
from ..rules.discovery import CARD_SURFACES, answered, disagreement, read_card
from ..rules.hosts import host_of
from ..rules.methods import DISCOVERY_METHOD, READINESS_P50_DAYS
from ..rules.readiness import Score, score_mcp, score_skill
from ..rules.readiness_facts import mcp_facts
from ..rules.skill_md import skill_facts_from_text
from .common import BuildResult, days_back


def _bind_raw(con: Any, lake: LakePaths, day: dt.date, window_days: int = 1) -> None:
    days = days_back(day, window_days - 1)
    duck.bind_input(con, "readiness", [f for d in days for f in lake.raw_files("readiness", d)], RAW_READINESS.schema)
    duck.bind_input(con, "readiness_surfaces", lake.raw_files("readiness_surfaces", day), RAW_READINESS_SURFACES.schema)
    duck.bind_input(con, "skills", lake.raw_files("skills", day), RAW_SKILLS.schema)
    con.register("day_checks", duck.run_sql(con, "readiness_checks", {"day": day}))


def _documents(row: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for surface in ("resource_metadata", "registry_auth"):
        if row.get(f"{surface}_status") is not None or row.get(f"{surface}_detail") is not None:
            out[surface] = {k: row.get(f"{surface}_{k}") for k in ("status", "content_type", "body", "detail")}
    return out


def _line_rows(day: dt.date, kind: str, key: str, server_id: str | None, name: str | None,
               score: Score) -> list[dict[str, Any]]:
    return [{"day": day, "subject_kind": kind, "subject_key": key, "server_id": server_id, "server_name": name,
             "rubric_version": score.version, "section": line.section, "line": line.key, "line_order": order,
             "label": line.label, "max_points": float(line.points), "seen": result.seen, "passed": result.passed,
             "points": float(result.points), "evidence": result.evidence[:1000]}
            for order, (line, result) in enumerate(score.lines, start=1)]


def build_readiness_lines(lake: LakePaths, day: dt.date) -> BuildResult:
    """Every rubric line of every endpoint checked and skill read on `day` (sql/readiness_lines.sql)."""
    started = time.perf_counter()
    with duck.session() as con:
        _bind_raw(con, lake, day, READINESS_P50_DAYS)
        checks = duck.run_sql(con, "readiness_lines", {"day": day, "p50_days": READINESS_P50_DAYS}).to_pylist()
        skills = con.sql(
            "SELECT * EXCLUDE (pick) FROM (SELECT *, row_number() OVER (PARTITION BY skill_key ORDER BY "
            "requested_at DESC, source_file DESC, source_row DESC) AS pick FROM skills WHERE day = $day::DATE) "
            "WHERE pick = 1 ORDER BY skill_key", params={"day": day}).to_arrow_table().to_pylist()
    rows: list[dict[str, Any]] = []
    claims = read_claims(lake)  # control/owners.parquet: a verified claim counts for the namespace line
    for check in checks:
        owner = verified_owner_of(claims, host_of(check.get("url") or ""), day)
        facts = mcp_facts(check, _documents(check), check.get("p50_ms"), day,
                          owner_claim=(owner.host, owner.verified_at.date()) if owner and owner.verified_at else None)
        rows += _line_rows(day, "mcp", check["server_key"], check["server_id"], check.get("server_name"),
                           score_mcp(facts))
    for skill in skills:
        repository = None
        if isinstance(skill.get("repo_private"), bool):
            repository = {k: skill.get(f"repo_{k}") for k in ("private", "archived", "pushed_at")}
        skill_facts = skill_facts_from_text(skill.get("skill_md"), skill.get("folder_name"), day, repository)
        rows += _line_rows(day, "skill", skill["skill_key"], None, skill.get("folder_url"), score_skill(skill_facts))
    table = conform(pa.Table.from_pylist(rows, READINESS_LINES.schema), READINESS_LINES)
    path = write_parquet(lake, lake.curated_file("readiness_lines", day), table)
    return BuildResult("readiness_lines", day, path, table.num_rows, time.perf_counter() - started,
                       {"endpoints": len(checks), "skills": len(skills)})


def build_readiness_scores(lake: LakePaths, day: dt.date) -> BuildResult:
    """Each listing's score, summed from its lines (sql/readiness_scores.sql)."""
    started = time.perf_counter()
    lines = lake.curated_file("readiness_lines", day)
    if not lines.is_file():
        raise FileNotFoundError(f"readiness_lines for {day} is missing; materialise it first")
    with duck.session() as con:
        duck.bind_input(con, "readiness_lines", [lines], READINESS_LINES.schema)
        table = conform(duck.run_sql(con, "readiness_scores", {"day": day}), READINESS_SCORES)
    path = write_parquet(lake, lake.curated_file("readiness_scores", day), table)
    return BuildResult("readiness_scores", day, path, table.num_rows, time.perf_counter() - started)


def build_readiness_discovery(lake: LakePaths, day: dt.date) -> BuildResult:
    """Which discovery surfaces each endpoint answered, and where a card disagrees with the server
    (sql/readiness_discovery.sql, judged by rules/discovery.py)."""
    started = time.perf_counter()
    with duck.session() as con:
        _bind_raw(con, lake, day)
        joined = duck.run_sql(con, "readiness_discovery", {"day": day}).to_pylist()
    rows = []
    disagreeing = 0
    for doc in joined:
        ok, detail = answered(doc["surface"], doc["status"], doc["content_type"], doc["body"], doc["revalidation"])
        if doc["status"] is None and doc.get("detail"):
            detail = doc["detail"]
        row = {"day": day, "server_key": doc["server_key"], "server_id": doc["server_id"],
               "server_name": doc["server_name"], "surface": doc["surface"], "scope": doc["scope"], "url": doc["url"],
               "answered": ok, "status": doc["status"], "detail": detail[:500], "method_version": DISCOVERY_METHOD,
               "served_version": doc["protocol_version"], "revalidation": doc["revalidation"],
               "body_sha256": doc["body_sha256"]}
        if ok and doc["surface"] in CARD_SURFACES:
            card = read_card(doc["body"], doc["endpoint_url"] or "")
            if card is not None:
                row.update(card_name=card.name, card_version=card.version,
                           card_protocol_versions=", ".join(card.protocol_versions) or None,
                           disagreement=disagreement(card, doc["server_name"], doc["server_info_name"],
                                                     doc["server_info_version"], doc["protocol_version"]))
                disagreeing += row["disagreement"] is not None
        rows.append(row)
    table = conform(pa.Table.from_pylist(rows, READINESS_DISCOVERY.schema), READINESS_DISCOVERY)
    path = write_parquet(lake, lake.curated_file("readiness_discovery", day), table)
    return BuildResult("readiness_discovery", day, path, table.num_rows, time.perf_counter() - started,
                       {"answered": sum(r["answered"] for r in rows), "cards_disagreeing": disagreeing})
