"""The simulated registry at truth (docs/scaling.md, "The registry at truth"): what each endpoint was set up
to do, what the day must record for it, and every endpoint the scan got wrong.

An endpoint's intended record follows from what the simulation injected (devtools/bench_registry.py) and
the prober's timeouts: an answer with its tool count (o), a refused connection (d unreachable), a timeout
(d timeout) or a robots.txt slower than its timeout (n robots_unavailable: we may not check). The overload
rule (docs/methodology.md, "When the prober is overloaded") adds one more right record: an endpoint whose
outcome rests on timing may be n `prober_overloaded` (our fault, never counted against the server); a
refused connection never rests on timing, so it must be d.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow.parquet as pq

from ..lake.paths import LakePaths
from ..rules.outcomes import PROBER_OVERLOADED

ANSWERS, REFUSES, TIMES_OUT, ROBOTS_SLOW = "o", "d:unreachable", "d:timeout", "n:robots_unavailable"
OUR_OVERLOAD = f"n:{PROBER_OVERLOADED}"
LABELS = {ANSWERS: "answers (o)", REFUSES: "refuses (d)", TIMES_OUT: "times out (d)",
          ROBOTS_SLOW: "robots.txt too slow (n)"}
MISSING = "missing"  # no daily check of the day at all
WRONG_EXAMPLES = 5  # the endpoints recorded wrong whose rows the report shows


@dataclass(frozen=True)
class Intent:
    code: str  # ANSWERS | REFUSES | TIMES_OUT | ROBOTS_SLOW
    tools: int | None = None  # the tools an answer must list

    @property
    def label(self) -> str:
        return LABELS[self.code] + (f" {self.tools} tools" if self.tools is not None else "")


def recorded(lake: LakePaths, day: dt.date) -> dict[str, tuple[str, int | None]]:
    """server_key -> (code, tool_count) of its last daily check of the day: o/a/p, d:<outcome>, n:<reason>,
    skipped."""
    last: dict[str, tuple[dt.datetime, str, str | None, int | None]] = {}
    columns = ["server_key", "check_kind", "started_at", "outcome", "skip_reason", "tool_count"]
    for path in lake.raw_files("probes", day):
        for row in pq.read_table(path, columns=columns).to_pylist():
            key = row["server_key"]
            if row["check_kind"] == "daily" and (key not in last or row["started_at"] >= last[key][0]):
                last[key] = (row["started_at"], row["outcome"], row["skip_reason"], row["tool_count"])
    return {key: (code_of(outcome, reason), tools) for key, (_, outcome, reason, tools) in last.items()}


def code_of(outcome: str, reason: str | None) -> str:
    answers = {"ok": "o", "needs_auth": "a", "http_402": "p", "skipped": "skipped"}
    if outcome in answers:
        return answers[outcome]
    return f"n:{reason or outcome}" if outcome in ("not_checked", "prober_error") else f"d:{outcome}"


def got_label(got: tuple[str, int | None] | None, intent: Intent) -> str:
    if got is None:
        return MISSING
    code, tools = got
    return f"{code} {tools} tools" if code == ANSWERS and intent.tools is not None else code


def right(intent: Intent, got: tuple[str, int | None] | None) -> bool:
    """Whether the day recorded what the endpoint was set up to do, the overload rule allowed for."""
    if got is None:
        return False
    code, tools = got
    if code == OUR_OVERLOAD:
        return intent.code != REFUSES
    return code == intent.code and (intent.tools is None or tools == intent.tools)


def truth(intents: Mapping[str, Intent], got: Mapping[str, tuple[str, int | None]],
          keys: Iterable[str] | None = None) -> dict[str, Any]:
    """The check of every endpoint in `keys` (all of `intents` by default): how many, how many misclassified,
    how many were n under the overload rule, and intended -> recorded -> endpoints."""
    confusion: dict[str, dict[str, int]] = {}
    wrong: dict[str, int] = {}
    wrong_keys: list[str] = []
    endpoints = misclassified = overload = 0
    for key in intents if keys is None else keys:
        intent, seen = intents[key], got.get(key)
        label = got_label(seen, intent)
        row = confusion.setdefault(intent.label, {})
        row[label] = row.get(label, 0) + 1
        endpoints += 1
        if not right(intent, seen):
            misclassified += 1
            wrong[f"{intent.label} -> {label}"] = wrong.get(f"{intent.label} -> {label}", 0) + 1
            wrong_keys.append(key)
        elif seen is not None and seen[0] == OUR_OVERLOAD:
            overload += 1
    return {"endpoints": endpoints, "misclassified": misclassified, "overload_rule_n": overload,
            "wrong": dict(sorted(wrong.items())), "wrong_keys": sorted(wrong_keys)[:WRONG_EXAMPLES],
            "confusion": {k: dict(sorted(v.items())) for k, v in sorted(confusion.items())}}


def wrong_examples(lake: LakePaths, day: dt.date, keys: Iterable[str]) -> list[str]:
    """What the lake holds of the endpoints recorded wrong: each daily check of the day (when, outcome, detail,
    run) and its origin's robots.txt rows, one line each, so that a rare miss can be read after the run."""
    wanted = set(keys)
    origins = {"https://" + key.split("/", 1)[0] for key in wanted}
    lines: list[str] = []
    for path in lake.raw_files("probes", day):
        table = pq.read_table(path, columns=["server_key", "check_kind", "started_at", "outcome", "outcome_detail",
                                             "run_id"])
        lines += [f"{r['server_key']} check {r['check_kind']} at {r['started_at']:%H:%M:%S.%f}: {r['outcome']} "
                  f"({(r['outcome_detail'] or '')[:160]}) run {r['run_id']}"
                  for r in table.to_pylist() if r["server_key"] in wanted]
    for path in lake.raw_files("origins", day):
        table = pq.read_table(path, columns=["origin", "fetched_at", "robots_status", "robots_detail", "run_id"])
        lines += [f"{r['origin']} robots.txt at {r['fetched_at']:%H:%M:%S.%f}: {r['robots_status']} "
                  f"({(r['robots_detail'] or '')[:160]}) run {r['run_id']}"
                  for r in table.to_pylist() if r["origin"] in origins and r["fetched_at"] is not None]
    return sorted(lines)


def truth_lines(t: dict[str, Any], what: str) -> list[str]:
    """The report's lines: misclassified N of M, the breakdown of the wrong ones, the whole confusion."""
    lines = [f"  {what}: misclassified {t['misclassified']:,} of {t['endpoints']:,} "
             f"(n prober_overloaded under the overload rule: {t['overload_rule_n']:,})"]
    lines += [f"    WRONG {pair}: {n:,}" for pair, n in t["wrong"].items()]
    lines += [f"      {line}" for line in t.get("wrong_examples", [])]
    for intended, seen in t["confusion"].items():
        lines.append(f"    {intended:<28}" + ", ".join(f"{code} {n:,}" for code, n in seen.items()))
    return lines
