"""Blocking asset checks for the invariants every published day must hold."""


import datetime as dt

import dagster as dg
import duckdb

from ..integrity.keys import read_published_key, signature_valid
from ..integrity.manifest import compute_root, day_lines
from ..integrity.roots import read_root
from ..lake.paths import LakePaths
from .integrity_assets import daily_root
from .map_assets import daily_status, server_history
from .resources import LakeResource, partition_days


def _query(sql: str, path) -> list[tuple]:
    with duckdb.connect() as con:
        return con.execute(sql.replace("$file", "'" + str(path).replace("'", "''") + "'")).fetchall()


@dg.asset_check(asset=daily_status, blocking=True,
                description="Codes are o/a/p/d/n, one row per endpoint, n rows carry no outcome, d/o/a/p rows do.")
def daily_status_codes_valid(context: dg.AssetCheckExecutionContext, lake: LakeResource) -> dg.AssetCheckResult:
    bad: dict[str, int] = {}
    for day in partition_days(context):
        (rows, bad_codes, dup_keys, n_with_outcome, coded_without) = _query(
            "SELECT count(*), count(*) FILTER (WHERE code NOT IN ('o','a','p','d','n')), "
            "count(*) - count(DISTINCT server_key), "
            "count(*) FILTER (WHERE code = 'n' AND outcome IS NOT NULL), "
            "count(*) FILTER (WHERE code <> 'n' AND outcome IS NULL) FROM read_parquet($file)",
            lake.paths.curated_file("daily_status", day))[0]
        for name, value in (("bad_codes", bad_codes), ("duplicate_endpoints", dup_keys),
                            ("n_with_outcome", n_with_outcome), ("coded_without_outcome", coded_without)):
            if value:
                bad[f"{day} {name}"] = value
    return dg.AssetCheckResult(passed=not bad, metadata={"violations": bad or "none"})


@dg.asset_check(asset=server_history, blocking=True,
                description="Histories are 30 codes of o/a/p/d/n; day counts match the codes; the last code is "
                "the day's daily_status code; uptime is 100 only when every checked day answered.")
def server_history_windows_valid(context: dg.AssetCheckExecutionContext,
                                 lake: LakeResource) -> dg.AssetCheckResult:
    paths: LakePaths = lake.paths
    bad: dict[str, int] = {}
    for day in partition_days(context):
        hist = "'" + str(paths.curated_file("server_history", day)) + "'"
        status = "'" + str(paths.curated_file("daily_status", day)) + "'"
        (length, chars, counts, last, hundred) = _query(
            f"SELECT count(*) FILTER (WHERE length(history) <> 30), "
            f"count(*) FILTER (WHERE NOT regexp_full_match(history, '[oapdn]{{30}}')), "
            f"count(*) FILTER (WHERE checked_days <> length(replace(history, 'n', '')) "
            f"  OR answered_days <> length(regexp_replace(history, '[dn]', '', 'g'))), "
            f"count(*) FILTER (WHERE right(h.history, 1) <> s.code), "
            f"count(*) FILTER (WHERE uptime_pct = 100 AND answered_days <> checked_days) "
            f"FROM read_parquet({hist}) h JOIN read_parquet({status}) s USING (server_key)", None)[0]
        for name, value in (("wrong_length", length), ("bad_chars", chars), ("counts_disagree", counts),
                            ("last_code_disagrees", last), ("false_100", hundred)):
            if value:
                bad[f"{day} {name}"] = value
    return dg.AssetCheckResult(passed=not bad, metadata={"violations": bad or "none"})


@dg.asset_check(asset=daily_root, blocking=True,
                description="The root chains to the previous day's root, matches the day's files now, and its "
                "signature verifies against the published public key.")
def daily_root_chain_intact(context: dg.AssetCheckExecutionContext, lake: LakeResource) -> dg.AssetCheckResult:
    paths = lake.paths
    public = read_published_key(paths)
    problems = []
    for day in partition_days(context):
        doc = read_root(paths, day)
        if doc["previous_day"] is not None:
            previous_day = dt.date.fromisoformat(doc["previous_day"])
            if previous_day != day - dt.timedelta(days=1):
                problems.append(f"{day}: chains to {previous_day}, not to the day before")
            elif read_root(paths, previous_day)["root"] != doc["previous_root"]:
                problems.append(f"{day}: previous_root does not match the root of {previous_day}")
        if doc["lines"] != day_lines(paths, day):
            problems.append(f"{day}: files changed since signing")
        if compute_root(doc["previous_root"], doc["lines"]) != doc["root"]:
            problems.append(f"{day}: root does not match its lines")
        if not signature_valid(public, doc["root"], doc["signature"]):
            problems.append(f"{day}: bad signature")
    return dg.AssetCheckResult(passed=not problems, metadata={"problems": "\n".join(problems) or "none"})
