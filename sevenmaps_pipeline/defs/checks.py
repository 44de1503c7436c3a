"""The map's blocking checks: the invariants every published day must hold, run on each day right after
its table is built (defs/day_map.py) and again before the day is signed (defs/integrity_assets.py, which
also holds the checks of the root and the snapshot)."""


import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

import dagster as dg

from ..lake import duck
from ..lake.paths import LakePaths
from ..rules.methods import INCIDENTS_PARAMS, RANKINGS_PARAMS


@dataclass(frozen=True)
class DayCheck:
    """A blocking check of a map asset, run on each day right after the day's table is built (defs/day_map.py):
    a day that fails it keeps whatever reads that table from being built."""
    name: str
    asset: str
    description: str
    violations: Callable[[LakePaths, dt.date], dict[str, int]]

    @property
    def spec(self) -> dg.AssetCheckSpec:
        return dg.AssetCheckSpec(self.name, asset=self.asset, blocking=True, description=self.description)

    def result(self, found: dict[dt.date, dict[str, int]]) -> dg.AssetCheckResult:
        """The run's result: the violations found on every day it checked."""
        bad = {f"{day} {name}": n for day, violations in found.items() for name, n in violations.items()}
        return dg.AssetCheckResult(asset_key=self.asset, check_name=self.name, passed=not bad, metadata={
            "violations": dg.MetadataValue.int(sum(bad.values())), "days_checked": dg.MetadataValue.int(len(found)),
            "detail": dg.MetadataValue.json(bad) if bad else "none"})


def _query(sql: str, path) -> list[tuple]:
    with duck.session() as con:
        return con.execute(sql.replace("$file", "'" + str(path).replace("'", "''") + "'")).fetchall()


def status_violations(paths: LakePaths, day: dt.date) -> dict[str, int]:
    """Codes outside o/a/p/d/n, an endpoint twice, n rows with an outcome, coded rows without one."""
    (bad_codes, dup_keys, n_with_outcome, coded_without) = _query(
        "SELECT count(*) FILTER (WHERE code NOT IN ('o','a','p','d','n')), "
        "count(*) - count(DISTINCT server_key), "
        "count(*) FILTER (WHERE code = 'n' AND outcome IS NOT NULL), "
        "count(*) FILTER (WHERE code <> 'n' AND outcome IS NULL) FROM read_parquet($file)",
        paths.curated_file("daily_status", day))[0]
    found = {"bad_codes": bad_codes, "duplicate_endpoints": dup_keys, "n_with_outcome": n_with_outcome,
             "coded_without_outcome": coded_without}
    return {name: n for name, n in found.items() if n}


def history_violations(paths: LakePaths, day: dt.date) -> dict[str, int]:
    """Histories that are not 30 codes of o/a/p/d/n, counts that disagree with the codes, a last code
    that is not the day's code, and 100% shown while a checked day did not answer."""
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
    found = {"wrong_length": length, "bad_chars": chars, "counts_disagree": counts, "last_code_disagrees": last,
             "false_100": hundred}
    return {name: n for name, n in found.items() if n}


def incident_violations(paths: LakePaths, day: dt.date) -> dict[str, int]:
    """Shown incidents that are not live, live ones without a confirmation, and any confirmed that day by
    anonymous reports alone (neither our own d check, nor enough paying reporters, nor a person's review on a
    check of ours that did not answer, recorded with that check)."""
    file = paths.curated_file("incidents", day)
    (shown_not_live, unconfirmed, anonymous_only) = _query(
        "SELECT count(*) FILTER (WHERE shown <> (status = 'live')), "
        "count(*) FILTER (WHERE status = 'live' AND (confirmed_by IS NULL OR opened_day IS NULL)), "
        "count(*) FILTER (WHERE status = 'live' AND last_confirmed_day = day AND coalesce(our_code, 'n') <> 'd' "
        f"AND trusted_failure_reporters < {int(INCIDENTS_PARAMS['trusted_min_reporters'])} "
        "AND NOT (confirmed_by = 'our_fresh_check' AND confirmed_check_at IS NOT NULL "
        "AND confirmed_reviewer IS NOT NULL)) "
        "FROM read_parquet($file)", file)[0]
    found = {"shown_but_not_live": shown_not_live, "live_without_confirmation": unconfirmed,
             "confirmed_by_anonymous_reports_alone": anonymous_only}
    return {name: n for name, n in found.items() if n}


def ranking_violations(paths: LakePaths, day: dt.date) -> dict[str, int]:
    """Ranked endpoints that were not answering with tools, sit in 'other', have too few checked days, or
    whose rank does not follow the published order."""
    ranks = "'" + str(paths.curated_file("reliable_rankings", day)) + "'"
    status = "'" + str(paths.curated_file("daily_status", day)) + "'"
    (not_answering, other, too_few, misordered) = _query(
        f"WITH r AS (SELECT * FROM read_parquet({ranks})) SELECT "
        f"(SELECT count(*) FROM r JOIN read_parquet({status}) s USING (server_key) "
        f"WHERE s.code <> 'o' OR coalesce(s.tool_count, 0) = 0), "
        f"(SELECT count(*) FROM r WHERE category = 'other'), "
        f"(SELECT count(*) FROM r WHERE checked_days < {int(RANKINGS_PARAMS['min_checked_days'])}), "
        f"(SELECT count(*) FROM (SELECT rank, rank() OVER (PARTITION BY category ORDER BY tools_share DESC, "
        f"answered_share DESC, median_handshake_ms ASC NULLS LAST) AS expected FROM r) WHERE rank <> expected)",
        None)[0]
    found = {"not_answering_with_tools": not_answering, "category_other": other, "too_few_checked_days": too_few,
             "rank_out_of_order": misordered}
    return {name: n for name, n in found.items() if n}


def readiness_violations(paths: LakePaths, day: dt.date) -> dict[str, int]:
    """An unseen line with points, a passed line that is unseen, more points than the line is worth, a
    subject under two rubric versions, and a score whose earned/possible is not the sum of its seen lines."""
    lines = "'" + str(paths.curated_file("readiness_lines", day)) + "'"
    scores = "'" + str(paths.curated_file("readiness_scores", day)) + "'"
    (unseen_counted, over, versions, sums) = _query(
        f"WITH l AS (SELECT * FROM read_parquet({lines})), "
        f"s AS (SELECT * FROM read_parquet({scores})), "
        f"t AS (SELECT subject_kind, subject_key, round(sum(points), 2) AS earned, "
        f"  coalesce(sum(max_points) FILTER (WHERE seen), 0) AS possible, count(DISTINCT rubric_version) AS v "
        f"  FROM l GROUP BY ALL) "
        f"SELECT (SELECT count(*) FROM l WHERE NOT seen AND (points <> 0 OR passed)), "
        f"(SELECT count(*) FROM l WHERE points > max_points OR points < 0), "
        f"(SELECT count(*) FROM t WHERE v <> 1), "
        f"(SELECT count(*) FROM t FULL JOIN s USING (subject_kind, subject_key) "
        f"  WHERE s.earned IS DISTINCT FROM t.earned OR s.possible IS DISTINCT FROM t.possible)", None)[0]
    found = {"unseen_line_counted": unseen_counted, "points_over_line": over, "mixed_rubric_versions": versions,
             "score_not_its_lines": sums}
    return {name: n for name, n in found.items() if n}


# The map's checks, in graph order of the assets they check.
DAY_CHECKS = (
    DayCheck("daily_status_codes_valid", "daily_status",
             "Codes are o/a/p/d/n, one row per endpoint, n rows carry no outcome, d/o/a/p rows do.",
             status_violations),
    DayCheck("server_history_windows_valid", "server_history",
             "Histories are 30 codes of o/a/p/d/n; day counts match the codes; the last code is "
             "the day's daily_status code; uptime is 100 only when every checked day answered.",
             history_violations),
    DayCheck("incidents_only_confirmed_are_shown", "incidents",
             "Only live incidents are shown, and every one was confirmed by our own d check or by "
             "the trusted reporters the method asks for: never by anonymous reports alone.",
             incident_violations),
    DayCheck("reliable_rankings_eligible", "reliable_rankings",
             "Every ranked endpoint answered with tools that day, has a category other than "
             "'other' and enough checked days; ranks start at 1 in each category and follow the order.",
             ranking_violations),
    DayCheck("readiness_unseen_lines_not_counted", "readiness_scores",
             "No unseen line was counted on either side of the slash: unseen lines carry no points "
             "and never pass, no line earns more than it is worth, each listing is scored under one rubric "
             "version, and every score's earned/possible is exactly the sum of its seen lines.",
             readiness_violations),
)
