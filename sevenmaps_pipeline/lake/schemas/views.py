"""The warehouse's derived views, column by column: what `COMMENT ON COLUMN` says in warehouse.duckdb and what
docs/data-dictionary.md lists beside the tables (lake/warehouse.py builds them; tests/test_warehouse_views.py holds
that every column of every view has its comment here or in its table's schema)."""

from __future__ import annotations

from .day_map import DAILY_STATUS

_CODE_COUNT = "endpoints with day code {code} ({meaning}) on the day"

DERIVED_VIEWS: dict[str, tuple[str, dict[str, str]]] = {
    "map_days": ("one row per UTC day the map was built (daily_status's days)", {
        "day": "the UTC day",
        "endpoints": "endpoints on the map that day (rows of daily_status)",
        "o": _CODE_COUNT.format(code="o", meaning="answered, its tool list possibly empty"),
        "a": _CODE_COUNT.format(code="a", meaning="asks for sign-in"),
        "p": _CODE_COUNT.format(code="p", meaning="asks for payment"),
        "d": _CODE_COUNT.format(code="d", meaning="down"),
        "n": _CODE_COUNT.format(code="n", meaning="not checked: no data, or our own trouble"),
        "share_d_pct": "d over all endpoints of the day, in percent, two decimals",
        "signed": "whether the day was signed: its root document (roots/day=D.json) exists. Not whether the day's "
                  "files are still those it signed, which no view hashes: a surface that serves the day checks that "
                  "and shows it unsigned when they are not; `sevenmaps status` checks the newest signed day, "
                  "`sevenmaps verify` every day",
        "root": "the root its root document gives (hex), null until the day is signed",
    }),
    "servers": ("one row per endpoint ever on the map", {
        "server_key": DAILY_STATUS.doc("server_key"),
        "server_id": DAILY_STATUS.doc("server_id"),
        "server_name": "the registry name it was listed under on its last day on the map",
        "url": "the URL it was listed with on its last day on the map",
        "first_day": "the first UTC day it was on the map",
        "last_day": "the last UTC day it was on the map",
        "days_on_map": "UTC days it was on the map (rows of daily_status)",
        "latest_code": "its day code on its last day on the map",
        "latest_shown_status": "its shown status on its last day on the map",
    }),
    "current_status": ("one row per endpoint on the map's latest built day: the status shown now "
                       "(sql/current_status.sql)", {
        "day": "the map's latest built day",
        "server_key": DAILY_STATUS.doc("server_key"),
        "server_id": DAILY_STATUS.doc("server_id"),
        "server_name": DAILY_STATUS.doc("server_name"),
        "url": DAILY_STATUS.doc("url"),
        "current_code": "the code of the check that decides what is shown now (the day's, the open day's, or a "
                        "newer hourly or five-minute check's); never a day code of its own",
        "current_shown_status": "the status shown now, in the shown status's words",
        "current_tool_count": "the tools the deciding check listed (null unless it answered with a list)",
        "decided_by": "which check decides it: daily (the latest built day's), slice (the open day's so far), "
                      "hourly or five_minute",
        "decided_at": "when that check was made (UTC)",
        "current_reason": "that check's outcome detail",
        "daily_code": "the day code of the latest built day",
        "daily_shown_status": "the shown status of the latest built day",
        "open_day": "the day after the built day whose check of the endpoint was read (provisional), if any",
        "open_day_code": "that check's code (provisional: never signed)",
        "open_day_checked_at": "when that check was made (UTC)",
        "failing_since": "the first check of the run shown down now, among the deciding daily check and the checks "
                         "after it (null unless shown down); the down list's 'down since' reaches back over earlier "
                         "days (publishing/status.py DOWN_SINCE)",
        "hourly_checks_since_daily": "hourly checks of the endpoint with a result since the deciding daily check",
        "five_minute_checks_since_daily": "five-minute checks with a result since the deciding daily check",
        "last_hourly_at": "when the newest hourly or five-minute check was made (UTC)",
        "last_hourly_outcome": "that check's outcome",
        "unconfirmed_failure": "the newest hourly or five-minute check failed and is not shown yet (one failure; "
                               "two in a row are shown)",
        "method_version": "the method of the status shown now (current-1.3)",
    }),
    "open_status": ("one row per endpoint and day after the latest built day so far: its daily check, as "
                    "daily_status (provisional, rebuilt after each slice, never signed)",
                    {field.name: DAILY_STATUS.doc(field.name) for field in DAILY_STATUS.schema}),
    "five_minute_uptime": ("one row per endpoint with five-minute checks (owner-verified; not covered by roots: "
                           "sql/five_minute_uptime.sql)", {
        "server_key": DAILY_STATUS.doc("server_key"),
        "checks_30d": "five-minute checks with a result in the 30 days ending at the newest one of any endpoint",
        "answered_30d": "of those, answered (ok, needs_auth, http_402)",
        "not_counted_30d": "checks without a result in those 30 days (skipped, our own faults): never down",
        "uptime_30d_pct": "answered over checks, floored to one decimal; 100.0 only when every one answered",
        "checks_90d": "checks with a result over 90 days, once the endpoint has one older than 30 days",
        "answered_90d": "of those, answered",
        "uptime_90d_pct": "the 90-day uptime, as the 30-day one; null until older checks exist",
        "first_check_at": "its first five-minute check (UTC)",
        "last_check_at": "its newest five-minute check (UTC)",
        "last_outcome": "that check's outcome",
        "method_version": "five-minute-uptime-1.0",
    }),
    "owner_notes": ("one row per endpoint and verified owner with a note (control/owners.parquet; shown beside the "
                    "figures, never counted in them; not covered by roots)", {
        "server_key": DAILY_STATUS.doc("server_key"),
        "server_name": "the registry name it was last listed under",
        "url": "the URL it was last listed with",
        "owner_host": "the host the owner proved control of (the endpoint's host or a name it is under)",
        "note": "the owner's note, in their words",
        "note_updated_at": "when the note was last set (UTC)",
        "verified_at": "when the owner's control was verified (UTC)",
    }),
}


def derived_views_markdown() -> str:
    out = ["## Derived views (warehouse.duckdb)\n",
           "Views over the tables above, for analysts: each column as `COMMENT ON COLUMN` gives it.\n"]
    for name, (grain, columns) in DERIVED_VIEWS.items():
        out.append(f"### `{name}`\n")
        out.append(f"Grain: {grain}.\n")
        out.append("| column | meaning |\n|---|---|")
        out += [f"| `{column}` | {doc.replace('|', chr(92) + '|')} |" for column, doc in columns.items()]
        out.append("")
    return "\n".join(out) + "\n"
