"""The fleet's agent reports: what the timeline's reporters say each day, as the reporting service lands it.

Scenarios (assets/fleet_timeline.json, `agent_reports`): `honest` reporters (the first two paying) report
what the server really did that day; a `flood` is one anonymous reporter sending many failures; `anonymous`
complainers report failures nobody else sees; `paying` reporters report failures our checks do not see;
`invalid` reports put free text where a tool name belongs (the pipeline must refuse them, with a reason).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac

import pyarrow as pa

from ...lake.keys import server_key
from ...lake.schemas import RAW_AGENT_REPORTS, conform
from .run import Fleet, parse_days

REPORTING_KEY = b"fleet reporting-service key"
# What an honest agent's call meets on a day in each fleet state: (ok, fail reason).
TRUTH = {"up": (True, None), "pay": (True, None), "down": (False, "unreachable"), "moved": (False, "unreachable"),
         "timeout": (False, "timeout"), "http_500": (False, "server_error"), "html": (False, "server_error"),
         "auth": (False, "auth")}


def reporter(name: str) -> str:
    return hmac.new(REPORTING_KEY, name.encode(), hashlib.sha256).hexdigest()


def fleet_reports(fleet: Fleet, day_index: int, day: dt.date) -> pa.Table:
    """The reports that arrive on `day` (timeline day `day_index`; the fleet must be set to that day)."""
    rows: list[dict] = []
    hosts = {h.name: h for h in fleet.hosts}
    for scenario in fleet.timeline.get("agent_reports", {}).get("scenarios", []):
        if day_index not in parse_days(str(scenario.get("days", "all")), fleet.days):
            continue
        host = hosts[scenario["server"]]
        today = fleet.state.by_server[host.name]
        tools = [t["name"] for t in today.tools] or ["unknown_tool"]
        who, count = scenario["who"], int(scenario["reports"])
        for j in range(count):
            if who == "honest":
                ok, fail = TRUTH.get(today.state, (True, None))
                name, paid = (f"paying-{j}", True) if j < 2 else (f"anonymous-{j}", False)
            elif who == "flood":
                ok, fail, name, paid = False, scenario.get("fail", "server_error"), "flooder", False
            elif who == "anonymous":
                ok, fail, name, paid = False, scenario.get("fail", "unreachable"), f"complainer-{j}", False
            elif who == "paying":  # paying reporters reporting what our checks do not see
                ok, fail, name, paid = False, scenario.get("fail", "timeout"), f"paying-{j}", True
            else:  # "invalid": an agent writing in its own words where a tool name belongs (refused)
                ok, fail, name, paid = True, None, f"chatty-{j}", False
                tools = ["the search tool was slow today and returned the wrong city"]
            rows.append({"day": day, "about_day": day, "server": server_key(host.url),
                         "tool": tools[j % len(tools)], "ok": ok, "fail": fail, "ms": 150 + 40 * j if ok else 8000,
                         "matched_description": True if ok else None,
                         "charged_usd": 0.01 if ok and today.state == "pay" else None,
                         "reporter_id": reporter(name), "paid": paid})
    return conform(pa.Table.from_pylist(rows, RAW_AGENT_REPORTS.schema), RAW_AGENT_REPORTS)
