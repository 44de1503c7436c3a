"""Synthetic agent reports, as the reporting service lands them: a day's batch under raw/agent_reports.

Who reports (deterministic per seed and day):
- honest reporters (a quarter of them paying): many reports on popular endpoints, a few elsewhere; what they
  report follows what the endpoint really did that day (calls work on endpoints that answered, fail as
  unreachable or timeout on endpoints that were down, fail with auth behind sign-in), with the occasional
  args / wrong_result failure our checks cannot see, and a few late reports about the day before;
- one flooder: every seventh day, thousands of failure reports about one popular endpoint that works;
- anonymous complainers: every day, a handful of anonymous reporters say one working endpoint is unreachable;
- paying reporters that disagree with our checks: every fifth day, three of them say one working endpoint
  times out (enough paying reporters confirm an incident even against our own check);
- a few invalid rows a day (an unknown fail reason, a negative ms, free text in `tool`, an unknown server,
  an IP address as the reporter): they must end in the quarantine, never in a figure.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac

import numpy as np
import pyarrow as pa

from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths
from ..lake.schemas import RAW_AGENT_REPORTS, conform

REPORTING_KEY = b"synthetic reporting-service key"
TOOLS = ("get_issue", "list_files", "search_records", "create_ticket", "fetch_page")


def reporter_ids(count: int) -> list[str]:
    return [hmac.new(REPORTING_KEY, f"reporter-{j}".encode(), hashlib.sha256).hexdigest() for j in range(count)]


def day_reports(day: dt.date, day_idx: int, seed: int, keys: list[str], outcomes: list[str],
                reporters: list[str]) -> pa.Table:
    """The day's batch for the endpoints checked that day (`keys`, with what our check saw: `outcomes`)."""
    rng = np.random.default_rng([seed, day_idx, 7])
    n_rep = len(reporters)
    paying = np.arange(n_rep) < max(1, n_rep // 4)
    keys_arr = np.array(keys, dtype=object)
    outcome = np.array(outcomes, dtype=object)
    answering = outcome == "ok"
    popular = np.array([hash_index(k) % 50 == 0 for k in keys])

    # Honest reports: 10 a day on each popular endpoint, a 2% chance of one on any other endpoint.
    per_endpoint = np.where(popular, 10, (rng.random(len(keys)) < 0.02).astype(int))
    idx = np.repeat(np.arange(len(keys)), per_endpoint)
    who = rng.integers(0, n_rep, len(idx))
    truth = outcome[idx]
    ok = truth == "ok"
    fail = np.where(truth == "needs_auth", "auth", np.where(rng.random(len(idx)) < 0.5, "unreachable", "timeout"))
    cannot_see = ok & (rng.random(len(idx)) < 0.04)  # the call failed in a way our checks cannot see
    fail = np.where(cannot_see, np.where(rng.random(len(idx)) < 0.5, "args", "wrong_result"), fail)
    ok = ok & ~cannot_see
    late = rng.random(len(idx)) < 0.05
    rows = {
        "server": keys_arr[idx], "reporter": np.array(reporters, dtype=object)[who], "paid": paying[who], "ok": ok,
        "fail": np.where(ok, np.array(None, dtype=object), fail), "about": np.where(late, 1, 0),
        "ms": np.where(ok, rng.lognormal(np.log(400), 0.5, len(idx)), rng.integers(50, 30_000, len(idx))),
        "tool": np.array(TOOLS, dtype=object)[rng.integers(0, len(TOOLS), len(idx))],
    }
    batches = [rows]

    working = np.flatnonzero(answering & popular)
    if len(working):
        target = keys_arr[working[0]]
        if day_idx % 7 == 3:  # the flooder
            batches.append(_same(target, [reporters[-1]] * 2000, paid=False, ok=False, fail="server_error"))
        complaint = keys_arr[working[min(1, len(working) - 1)]]  # anonymous complainers
        batches.append(_same(complaint, reporters[-9:-1], paid=False, ok=False, fail="unreachable"))
        if day_idx % 5 == 0:  # paying reporters who disagree with our check
            disputed = keys_arr[working[min(2, len(working) - 1)]]
            batches.append(_same(disputed, reporters[:3], paid=True, ok=False, fail="timeout"))

    table = pa.concat_tables([_table(day, b) for b in batches])
    any_key = keys[0] if keys else "unknown.example.com/mcp"
    base = {"day": day, "about_day": day, "server": any_key, "ok": True, "paid": False}
    invalid = pa.Table.from_pylist([
        {**base, "ok": False, "fail": "exploded", "reporter_id": reporters[0]},
        {**base, "ms": -40, "reporter_id": reporters[1]},
        {**base, "tool": "it kept asking me for my password, weird", "reporter_id": reporters[2], "paid": True},
        {**base, "server": "never-listed.example.org/mcp", "reporter_id": reporters[3]},
        {**base, "reporter_id": "198.51.100.23"},
    ], RAW_AGENT_REPORTS.schema)
    return pa.concat_tables([conform(table, RAW_AGENT_REPORTS), conform(invalid, RAW_AGENT_REPORTS)])


def hash_index(key: str) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)


def _same(server: str, who: list[str], *, paid: bool, ok: bool, fail: str) -> dict:
    n = len(who)
    return {"server": np.array([server] * n, dtype=object), "reporter": np.array(who, dtype=object),
            "paid": np.full(n, paid), "ok": np.full(n, ok), "fail": np.array([None if ok else fail] * n, dtype=object),
            "about": np.zeros(n, dtype=int), "ms": np.full(n, 30_000.0 if fail == "timeout" else 900.0),
            "tool": np.array([TOOLS[0]] * n, dtype=object)}


def _table(day: dt.date, rows: dict) -> pa.Table:
    n = len(rows["server"])
    about = [day - dt.timedelta(days=int(a)) for a in rows["about"]]
    return pa.table({
        "day": pa.array([day] * n, pa.date32()),
        "about_day": pa.array(about, pa.date32()),
        "server": pa.array(rows["server"].tolist(), pa.string()),
        "tool": pa.array(rows["tool"].tolist(), pa.string()),
        "ok": pa.array(rows["ok"].tolist(), pa.bool_()),
        "fail": pa.array(rows["fail"].tolist(), pa.string()),
        "ms": pa.array(np.asarray(rows["ms"], dtype=np.int64)),
        "reporter_id": pa.array(rows["reporter"].tolist(), pa.string()),
        "paid": pa.array(rows["paid"].tolist(), pa.bool_()),
    })


def land_day_reports(lake: LakePaths, day: dt.date, table: pa.Table, batch: str) -> int:
    write_parquet(lake, lake.raw_dir("agent_reports", day) / f"{batch}.parquet", table)
    return table.num_rows
