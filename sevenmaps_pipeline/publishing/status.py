"""server_status: one endpoint as the map shows it on the served day (the MCP tool, the server page and
its badge read this one function; docs/agents.md "server_status").

Everything an agent or a person needs before using a server: the status shown now (current_status: a newer
hourly check replaces the daily one), the last 30 codes, uptime with its label, success chance with its
interval, stability, tools with risk levels and evidence, findings, category, token cost against the day's
distribution, readiness score, recent changes, live incidents, how the namespace was proven, and the
owner's note in their own words (beside the figures, never mixed into them).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ..registry.owners import OwnerClaim, read_claims
from ..rules.hosts import host_of
from ..rules.methods import HISTORY_PARAMS
from ..rules.namespace import namespace_proof
from ..rules.tool_facts import facts_method
from .charts import observed_days
from .mapday import MapDay

# DuckDB's types whose Python values are dates or datetimes (DATE, TIMESTAMP, TIMESTAMP WITH TIME ZONE,
# TIMESTAMP_NS, ...), alone or in a list.
_DATED = re.compile(r"DATE|TIMESTAMP")


def _iso(value: Any) -> Any:
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return [_iso(v) for v in value]
    return value


# A part of the day's endpoints: those whose server_key is at least the first and below the second (None: no
# bound). The tables are written in server_key order (tools in row groups of consecutive keys), so a part
# reads only the row groups its keys fall in.
KeyRange = tuple[str | None, str | None]


def key_ranges(mapday: MapDay, parts: int) -> list[KeyRange]:
    """`parts` consecutive ranges of server_key with about as many of the day's endpoints each, together
    holding every endpoint once."""
    keys = [r["server_key"] for r in mapday.rows("SELECT server_key FROM daily_status ORDER BY server_key")]
    bounds: list[str | None] = [None, *(keys[len(keys) * i // parts] for i in range(1, parts)), None]
    return [(bounds[i], bounds[i + 1]) for i in range(parts)]


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _grouped(mapday: MapDay, sql: str, keys: list[str] | None, key_column: str = "server_key",
             part: KeyRange | None = None, params: dict[str, Any] | None = None) -> dict[str, list]:
    """Rows of `sql` (a SELECT with `{where}` where its filter goes) per endpoint: one query for every
    endpoint asked (or all of them, or one part of them), never one per endpoint."""
    where = f"{key_column} = ANY($keys)" if keys is not None else "true"
    if part is not None:
        # As literals, not parameters: DuckDB then compares them with each Parquet row group's key range
        # and skips the groups outside the part (docs/scaling.md, "The day's peak memory").
        low, high = part
        where += (f" AND {key_column} >= {_literal(low)}" if low is not None else "") + (
            f" AND {key_column} < {_literal(high)}" if high is not None else "")
    cursor = mapday.con.execute(sql.format(where=where),
                                {**({"keys": keys} if keys is not None else {}), **(params or {})})
    names = [d[0] for d in cursor.description or []]
    at = names.index("_key")
    # Only a date or time column (or a list of them) holds what _iso changes: the other values are kept as
    # fetched, each row's dict built once (the day's site builds over a million of them: docs/scaling.md).
    dated = {i for i, d in enumerate(cursor.description or []) if _DATED.search(str(d[1]))}
    kept = [(i, name) for i, name in enumerate(names) if i != at]
    out: dict[str, list] = {}
    for fetched in cursor.fetchall():
        values: list[Any] | tuple[Any, ...] = fetched
        if dated:
            values = [_iso(v) if i in dated else v for i, v in enumerate(fetched)]
        out.setdefault(values[at], []).append({name: values[i] for i, name in kept})
    return out


def owner_note(claims: list[OwnerClaim], url: str | None) -> dict[str, Any] | None:
    """The verified owner's note for the endpoint's host (control/owners.parquet), if any."""
    host = host_of(url or "")
    if not host:
        return None
    for claim in claims:
        if host == claim.host or host.endswith("." + claim.host):
            return {"host": claim.host, "note": claim.note,
                    "updated_at": _iso(claim.note_updated_at), "verified_at": _iso(claim.verified_at),
                    "what_it_is": "the owner's own words, shown beside the figures, never counted in them"}
    return None


def labelled_five_minute_uptime(row: dict[str, Any] | None) -> dict[str, Any] | None:
    """An owner-verified endpoint's five-minute uptime (only such endpoints have five-minute checks), labelled
    as seed 000 labels uptime: a 30-day figure only from 14 days observed, else 'over N days observed' (one day
    in the singular: site-1.5, live-pages-1.5); the 90-day figure only once checks older than 30 days exist. None
    for an endpoint without them."""
    if row is None:
        return None
    first, last = (dt.datetime.fromisoformat(str(row[c])).date() if row[c] else None
                   for c in ("first_check_at", "last_check_at"))
    observed = min((last - first).days + 1, 30) if first and last else 0
    label = ("30-day five-minute uptime" if observed >= HISTORY_PARAMS["label_min_checked_days"]
             else f"five-minute uptime over {observed_days(observed)}")
    return {**row, "days_observed_30d": observed, "label_30d": label,
            "label_90d": "90-day five-minute uptime" if row["uptime_90d_pct"] is not None else None,
            "not_covered_by_roots": True}


# Since when an endpoint shown down now has been failing (the one place every surface reads it from): the first
# daily check of its run of days shown down (a d shown as "answers, but not as a standard MCP endpoint" ends a run,
# as it was never on the down list; missed days, n, never do), or, when the run began after the latest daily check,
# the first check of the run shown down now (sql/current_status.sql failing_since: a slice's, an hourly or a
# five-minute check), whichever is earlier. A run that fills the 30 days read began no later than their first: it is
# dated from the latest change of answering recorded up to that day, when it is a stop (stopped_answering, within
# the 60 days of changes: helper-94, a run longer than the window said "since" its first day beside the record of
# the day it stopped answering); the records do not say how it failed (docs/methodology.md, "Route, locks and feeds").
DOWN_SINCE = (
    # The window is cut to the endpoints asked before its runs are found (a part of the day's site reads
    # its own endpoints' 30 days, not every endpoint's: docs/scaling.md).
    "WITH w AS (SELECT server_key, day, checked_at, code = 'd' AND shown_status = 'down' AS down "
    "FROM status_window WHERE code <> 'n' AND {where}), "
    "up AS (SELECT server_key, max(day) AS up_day FROM w WHERE NOT down GROUP BY server_key), "
    "days AS (SELECT w.server_key, min(w.day) AS run_day, any_value(up.up_day IS NULL) AS whole "
    "FROM w LEFT JOIN up USING (server_key) WHERE w.down AND (up.up_day IS NULL OR w.day > up.up_day) "
    "GROUP BY w.server_key), "
    # the latest change of answering up to the run's first day read (on it too: helper-98), when it is a stop
    "turns AS (SELECT c.server_key, arg_max(c.kind, c.day) AS kind, max(c.day) AS day FROM change_window c "
    "JOIN days d USING (server_key) WHERE d.whole AND c.kind IN ('stopped_answering', 'started_answering') "
    "AND c.day <= d.run_day GROUP BY c.server_key), "
    "began AS (SELECT server_key, day AS began_day FROM turns WHERE kind = 'stopped_answering'), "
    "run AS (SELECT d.server_key, coalesce(b.began_day, d.run_day) AS run_day, "
    "CASE WHEN coalesce(b.began_day, d.run_day) = d.run_day THEN w.checked_at END AS run_at FROM days d "
    "JOIN w ON w.server_key = d.server_key AND w.day = d.run_day LEFT JOIN began b ON b.server_key = d.server_key) "
    # A time in UTC where the check's time is known, else the day it was on.
    "SELECT c.server_key AS _key, CASE "
    "WHEN c.failing_since IS NOT NULL AND (r.run_day IS NULL OR c.failing_since < coalesce(r.run_at, "
    "r.run_day::TIMESTAMPTZ)) THEN strftime(c.failing_since AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') "
    "WHEN r.run_at IS NOT NULL THEN strftime(r.run_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') "
    "ELSE r.run_day::VARCHAR END AS since FROM current_status c "
    "LEFT JOIN run r USING (server_key) WHERE c.current_shown_status = 'down' AND {where}")


# The token cost of the tool list each endpoint shows (`tools_from`: the one place every surface reads it from).
# Its check since the served day, when that check listed tools: that list's definition tokens as the map
# counts a list (tool_lists, the open day's provisional builds included), placed among the served day's
# endpoints as token_cost places one (the share whose list costs less), marked provisional. Otherwise the
# served day's token_cost row. The median and p90 are the served day's.
TOKEN_COST = (
    "WITH dist AS (SELECT median(definition_tokens) AS median, quantile_cont(definition_tokens, 0.9) AS p90, "
    "count(*) AS n FROM token_cost), "
    "lists AS (SELECT tools_hash, arg_min(definition_tokens, day) AS definition_tokens FROM tool_lists "
    "WHERE method_version = $facts_method GROUP BY tools_hash), "
    "shown AS (SELECT o.server_key, o.day, o.tools_hash, o.tool_count, o.tokens_estimate, l.definition_tokens "
    "FROM open_status o JOIN lists l USING (tools_hash)) "
    "SELECT server_key AS _key, s.day, s.tools_hash, true AS provisional, s.tool_count, s.tokens_estimate, "
    "s.definition_tokens, (SELECT count(*) FROM token_cost t WHERE t.definition_tokens < s.definition_tokens)::DOUBLE "
    "/ greatest(d.n, 1) AS definition_tokens_percentile, d.median AS day_median_definition_tokens, "
    "d.p90 AS day_p90_definition_tokens FROM shown s, dist d WHERE {where} "
    "UNION ALL BY NAME "
    "SELECT server_key AS _key, t.day, t.tools_hash, false AS provisional, t.tool_count, t.tokens_estimate, "
    "t.definition_tokens, t.definition_tokens_percentile, d.median AS day_median_definition_tokens, "
    "d.p90 AS day_p90_definition_tokens FROM token_cost t, dist d "
    "WHERE server_key NOT IN (SELECT server_key FROM shown) AND {where}")


# What statuses() shows of current_status.
_CURRENT = ("SELECT server_key AS _key, current_code, current_shown_status, decided_by, decided_at, current_reason, "
            "hourly_checks_since_daily, unconfirmed_failure FROM current_status WHERE {where}")

# The day-wide answers a part of the day would otherwise compute whole again for each part: current_status
# is a view over every endpoint's checks, and both queries below rank or date an endpoint against the whole
# day, so a part's query cost about what the whole day's did (docs/scaling.md, "The site in a fifth less CPU").
_HELD = {"held_current_status": _CURRENT, "held_down_since": DOWN_SINCE, "held_token_cost": TOKEN_COST}


def _params(sql: str) -> dict[str, Any] | None:
    """The parameters one of the day-wide queries names."""
    return {"facts_method": facts_method()} if "$facts_method" in sql else None


def hold_day(mapday: MapDay) -> None:
    """Computes what statuses() reads of current_status, DOWN_SINCE and TOKEN_COST for every endpoint of the day
    once and keeps them as tables (about 23 MB at 90,000 endpoints; the view itself is left as it is for other
    readers), which statuses() then reads a part at a time. For a reader of a day that does not change while
    it reads (the site: a record of the day, never live)."""
    if mapday.live:
        raise ValueError("a live map changes while it is read: nothing of it is held")
    for name, sql in _HELD.items():
        mapday.con.execute(f"CREATE TEMP TABLE {name} AS {sql.format(where='true')}", _params(sql))
    mapday.held = True


def uptime_counts(history: dict[str, Any] | None) -> str | None:
    """What an endpoint's uptime and success chance count, said beside them wherever they are shown (site,
    live pages, server_status, route): answering counts a sign-in or payment answer and an empty tool list,
    so a server that answered on some days without listing a tool says so (seed 000: uptime is the share of
    checked days answering; 'answering with tools' is what the reliable lists and route need). None when
    every answered day listed tools."""
    if not history or not history.get("answered_days"):
        return None
    answered, ok = history["answered_days"], history.get("ok_days") or 0
    # Rows of history-1.1 and before did not count the days of an empty list apart (docs/changelog.md).
    tools = ok if history.get("tools_days") is None else history["tools_days"]
    if tools == answered:
        return None
    empty, asking = ok - tools, answered - ok
    codes = history.get("history") or ""
    asked = " or ".join([what for what, code in (("sign-in", "a"), ("payment", "p")) if code in codes]
                        or ["sign-in or payment"])
    if tools == 0:
        how = (f" only by asking for {asked}" if not empty else " only with an empty tool list" if not asking
               else f": {empty} with an empty tool list and {asking} by asking for {asked}")
        days, those = ("day", "that answer") if answered == 1 else ("days", "those answers")
        return (f"never listed a tool in the window: it answered on {answered} {days}{how}; uptime and success "
                f"chance count {those}")
    how = (f"it asked for {asked}" if not empty else "its tool list was empty" if not asking
           else f"its tool list was empty on {empty} and it asked for {asked} on {asking}")
    others, answers = ("other", "an answer") if answered - tools == 1 else ("others", "answers")
    return (f"listed tools on {tools} of its {answered} answered days; on the {others} {how}, which uptime and "
            f"success chance count as {answers}")


def _namespace(server_name: str | None, proof_line: dict[str, Any] | None) -> dict[str, Any]:
    """How the endpoint's namespace was proven: as the readiness probe saw it, else from the registry name."""
    if proof_line:
        return {"method": "seen by the readiness probe", "evidence": proof_line["evidence"],
                "proven": proof_line["passed"]}
    proof = namespace_proof(server_name, from_registry=True)
    return {"method": proof.method, "evidence": proof.evidence, "proven": proof.method != "none"}


def _awaiting(row: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if row is None else {**row, "what_it_is": "failure reports nothing confirmed (neither our own "
                                     "check nor trusted reports): kept for a person to review, never an incident"}


def _lists_shown(daily: dict | None, today: dict | None, map_day: dt.date) -> dict[str, str]:
    """Which check the tool list shown is from, and which list the findings, category and stability describe: the
    map day's, which is the list shown unless today's check listed another (helper-94: a live answer showed today's
    tools beside the map day's findings, "2 of 2 tools have no description", as if of them)."""
    shown, of_day = (today or {}).get("tools_hash"), (daily or {}).get("tools_hash")
    tools_from = "the open day's check (provisional)" if shown else "the map day's check"
    if shown is None or shown == of_day:
        return {"tools_from": tools_from, "list_facts_from": "the list shown"}
    facts = (f"the map day's list ({map_day}), not the list shown: today's check listed another" if of_day else
             f"no list: the map day's check ({map_day}) listed none, and today's check listed this one")
    return {"tools_from": tools_from,
            "list_facts_from": f"{facts}, whose findings, category and stability come with its day's map"}

# The newest changes an endpoint's status carries; `changes_total` says how many the 60 days hold, so that each
# surface says when it shows a part (docs/agents.md, "What each tool returns").
CHANGES_KEPT = 100


def server_status(mapday: MapDay, server: str) -> dict[str, Any]:
    key = mapday.resolve(server)["server_key"]
    return statuses(mapday, [key])[key]


def statuses(mapday: MapDay, keys: list[str] | None = None,
             part: KeyRange | None = None) -> dict[str, dict[str, Any]]:
    """server_status of each endpoint in `keys` (all of the day's when None), a few set-based queries.
    `part` keeps the endpoints of one key range (key_ranges: n ranges hold every endpoint once), so a
    caller can walk the whole day a part at a time without holding it all."""
    def first(sql: str, key_column: str = "server_key") -> dict[str, dict[str, Any]]:
        return {k: rows[0] for k, rows in _grouped(mapday, sql, keys, key_column, part, _params(sql)).items()}

    def day_wide(held: str) -> dict[str, dict[str, Any]]:
        """One of the day-wide answers: from its table when the day is held (hold_day), else its query."""
        return first(f"SELECT * FROM {held} WHERE {{where}}", "_key") if mapday.held else first(_HELD[held])

    def every(sql: str, key_column: str = "server_key") -> dict[str, list]:
        return _grouped(mapday, sql, keys, key_column, part)

    endpoints = first("SELECT server_key AS _key, server_key, server_id, server_name, url FROM daily_status "
                      "WHERE {where}")
    daily = first("SELECT server_key AS _key, day, code, outcome, reason, shown_status, http_status, handshake_ms, "
                  "protocol_version, server_info_name, server_info_version, tool_count, tool_list_size, "
                  "tokens_estimate, tools_hash, checked_at FROM daily_status WHERE {where}")
    current = day_wide("held_current_status")
    since = day_wide("held_down_since")
    # The endpoint's check of the open day so far (read only by a live map: curated/open_day.py).
    today = first("SELECT server_key AS _key, day, checked_at, code, outcome, reason, shown_status, http_status, "
                  "tool_count, tokens_estimate, tools_hash FROM open_status WHERE {where}")
    history = first("SELECT server_key AS _key, history, checked_days, answered_days, ok_days, tools_days, "
                    "down_days, uptime_pct, uptime_label, success_chance, success_chance_low, success_chance_high, "
                    "stability, tool_list_comparisons, tool_list_change_days, change_days, median_handshake_ms "
                    "FROM server_history WHERE {where}")
    tools = every("SELECT server_key AS _key, position, name, description, risk, risk_rule, risk_evidence, "
                  "annotation_contradiction, read_only_hint, destructive_hint FROM tools WHERE {where} "
                  "ORDER BY server_key, position")
    findings = every("SELECT server_key AS _key, finding, tool_name, value, threshold, detail FROM findings "
                     "WHERE {where} ORDER BY server_key, finding, tool_name")
    category = first("SELECT server_key AS _key, category, placed_by, evidence, decision, registry_category, "
                     "registry_evidence, tools_category, tools_rule, tools_evidence FROM server_categories "
                     "WHERE {where}")
    tokens = day_wide("held_token_cost")
    readiness = first("SELECT subject_key AS _key, score, earned, possible, rubric_version, lines_seen, "
                      "lines_unseen FROM readiness_scores WHERE subject_kind = 'mcp' AND {where}", "subject_key")
    proofs = first("SELECT subject_key AS _key, passed, evidence FROM readiness_lines WHERE "
                   "line = 'namespace_proven' AND {where}", "subject_key")
    # Live and closed incidents, a person's reviews applied now (publishing/mapday.py); failure reports
    # nothing confirmed are never an incident: shown apart, as awaiting a person's review.
    incidents = every("SELECT server_key AS _key, status, opened_day, last_confirmed_day, confirmed_by, "
                      "confirmed_check_at, confirmed_reviewer, closed_reason, closed_by, closed_at, closed_note "
                      "FROM incidents WHERE status IN ('live', 'closed') AND {where} "
                      "ORDER BY server_key, status DESC")
    awaiting = first("SELECT server_key AS _key, day, failure_reporters, trusted_failure_reporters, our_code "
                     "FROM incidents WHERE status = 'unconfirmed' AND {where}")
    changes = every("SELECT server_key AS _key, day, kind, tool_name, previous_tool_name, risk, previous_risk, "
                    "detail FROM change_window WHERE {where} ORDER BY server_key, day DESC, kind, tool_name")
    five_minute = first("SELECT server_key AS _key, checks_30d, answered_30d, not_counted_30d, uptime_30d_pct, "
                        "checks_90d, answered_90d, uptime_90d_pct, first_check_at, last_check_at, last_outcome, "
                        "method_version FROM five_minute_uptime WHERE {where}")
    claims = [c for c in read_claims(mapday.lake) if c.status == "verified" and c.note]
    out = {}
    for key, endpoint in endpoints.items():
        listed = tools.get(key, [])
        shown = (current.get(key) or {}).get("current_shown_status") or (daily.get(key) or {}).get("shown_status")
        out[key] = {
            "server_name": endpoint["server_name"], "server_id": endpoint["server_id"], "server_key": key,
            "url": endpoint["url"], "shown_status": shown, "current": current.get(key), "daily": daily.get(key),
            "down_since": (since.get(key) or {}).get("since") if shown == "down" else None,
            "open_day_check": today.get(key), **_lists_shown(daily.get(key), today.get(key), mapday.day),
            "history": history.get(key), "uptime_counts": uptime_counts(history.get(key)), "tools": listed,
            "risk_mix": {level: sum(1 for t in listed if t["risk"] == level) for level in ("green", "yellow", "red")},
            "findings": findings.get(key, []), "category": category.get(key), "token_cost": tokens.get(key),
            "readiness": readiness.get(key), "incidents": incidents.get(key, []),
            "live_incident": any(i["status"] == "live" for i in incidents.get(key, [])),
            "failure_reports_awaiting_review": _awaiting(awaiting.get(key)),
            "changes": changes.get(key, [])[:CHANGES_KEPT], "changes_total": len(changes.get(key, [])),
            "namespace": _namespace(endpoint["server_name"], proofs.get(key)),
            "owner_note": owner_note(claims, endpoint["url"]),
            "five_minute_uptime": labelled_five_minute_uptime(five_minute.get(key)),
            **mapday.served(),
        }
    return out
