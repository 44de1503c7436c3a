"""Submitted servers (docs/operations.md, "Submitted servers"): a server not (yet) in the official
registry, queued by `sevenmaps submit URL` or the operator's submissions file. It is checked every 6 hours
for 7 days (`raw/submitted`, not covered by roots: it is not on the map yet), then decided by the same
thresholds for everyone (`rules/methods.py` SUBMISSION_PARAMS): it joins the map when it answered
reliably, kept one tool list and described every tool; otherwise it is refused with the reasons. Both
outcomes are recorded in `control/submissions.parquet`. The decision reads the checks alone: nothing a
submitter sends, pays or claims can change it.

An admitted server is added to each later day's registry snapshot as a listing of status `submitted`, so
it is checked daily and on the map like any listed endpoint.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from ..lake.control import ControlError, Refused, changes_control_file, read_control_rows
from ..lake.keys import server_id, server_key
from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths
from ..rules.methods import SUBMISSION_METHOD, SUBMISSION_PARAMS
from ..rules.outcomes import NOT_A_RESULT
from .list_file import list_lines
from .listing import Malformed, carries_credentials, listing_decision, redact_text, redacted_url
from .opt_outs import opted_out_hosts

SUBMISSIONS_ENV = "SEVENMAPS_SUBMISSIONS"
SCHEMA = pa.schema([
    pa.field("server_key", pa.string(), nullable=False),
    pa.field("url", pa.string(), nullable=False),
    pa.field("status", pa.string(), nullable=False),  # queued | admitted | refused
    pa.field("via", pa.string(), nullable=False),  # cli | file
    pa.field("submitted_at", pa.timestamp("us", tz="UTC"), nullable=False),
    pa.field("decided_at", pa.timestamp("us", tz="UTC")),
    pa.field("reason", pa.string()),  # why refused; for admitted, what it showed
    pa.field("checks", pa.int32()),
    pa.field("answered", pa.int32()),
    pa.field("tool_lists", pa.int32()),
    pa.field("server_name", pa.string()),  # serverInfo.name of its last answer (its name on the map)
    pa.field("method_version", pa.string()),
])


class SubmissionError(ControlError):
    """The submission cannot be taken or the file read."""


@dataclass(frozen=True)
class Submission:
    server_key: str
    url: str
    status: str
    via: str
    submitted_at: dt.datetime
    decided_at: dt.datetime | None = None
    reason: str | None = None
    checks: int | None = None
    answered: int | None = None
    tool_lists: int | None = None
    server_name: str | None = None
    method_version: str | None = None

    def window_ends(self) -> dt.datetime:
        return self.submitted_at + dt.timedelta(days=SUBMISSION_PARAMS["days"])


def submissions_file(lake: LakePaths):
    return lake.root / "control" / "submissions.parquet"


def read_submissions(lake: LakePaths) -> list[Submission]:
    rows = read_control_rows(submissions_file(lake), "the submissions", SubmissionError,
                             required=("server_key", "url", "status"))
    return [Submission(**{k: r.get(k) for k in SCHEMA.names}) for r in rows]


def _write(lake: LakePaths, entries: list[Submission]) -> None:
    rows = [dataclasses.asdict(e) for e in sorted(entries, key=lambda e: (e.submitted_at, e.server_key))]
    write_parquet(lake, submissions_file(lake), pa.Table.from_pylist(rows, SCHEMA))


@changes_control_file(submissions_file)
def submit(lake: LakePaths, url: str, now: dt.datetime, via: str = "cli",
           host_map: dict[str, int] | None = None) -> Submission:
    """Queue a URL (the same endpoint once: a second submission returns the first). The listing rules of
    the registry apply (https, a public name, no credentials, not opted out); `host_map` is the demo's and
    the tests' loopback names."""
    url = url.strip()
    if carries_credentials(url):
        raise SubmissionError(Refused.CREDENTIALS_IN_URL,
                              "the URL carries credentials (user:password@host, or a credential in its query such as "
                              "?api_key=); 7Maps-bot never sends them, so it never checks such a URL")

    decision = listing_decision(url, "streamable-http", opted_out=opted_out_hosts(lake), host_map=host_map)
    if decision.verdict != "probe":
        raise SubmissionError(Refused.NOT_LISTABLE, f"{url}: not checked ({decision.text})", decision.kind)
    key = server_key(url)
    entries = read_submissions(lake)
    for entry in entries:
        if entry.server_key == key:
            return entry
    entry = Submission(key, url, "queued", via, now)
    _write(lake, entries + [entry])
    return entry


def queue_file(lake: LakePaths, path: str, now: dt.datetime,
               host_map: dict[str, int] | None = None) -> tuple[list[Submission], list[str]]:
    """Queue every URL of the operator's submissions file (one per line, `#` comments): (queued, problems)."""
    known = {e.server_key for e in read_submissions(lake)}
    queued, problems = [], []
    for number, line in list_lines(path, "submissions file", SubmissionError):
        try:
            entry = submit(lake, line, now, via="file", host_map=host_map)
        except SubmissionError as exc:
            problems.append(f"line {number}: {exc}")
            continue
        if entry.server_key not in known:
            queued.append(entry)
            known.add(entry.server_key)
    return queued, problems


def due(lake: LakePaths, now: dt.datetime) -> list[Submission]:
    """The queued submissions still inside their 7 days: checked this run."""
    return [e for e in read_submissions(lake) if e.status == "queued" and now < e.window_ends()]


def listing_of(entry: Submission) -> dict[str, Any]:
    return {"server_key": entry.server_key, "url": entry.url, "server_name": entry.server_name,
            "remote_type": "streamable-http", "listing": "probe"}


class Shortfall(enum.Enum):
    """Why a submission is refused: each a named kind, with its line in the decision's reason."""

    TOO_FEW_CHECKS = "too_few_checks"
    TOO_FEW_ANSWERS = "too_few_answers"
    TOO_MANY_TOOL_LISTS = "too_many_tool_lists"
    NO_TOOLS = "no_tools"
    UNDESCRIBED_TOOLS = "undescribed_tools"


@dataclass(frozen=True)
class Judgement:
    """A submission's decision from its checks alone: admitted when nothing fell short; `reason` is the line
    recorded with it (each shortfall's, or what it did)."""

    figures: dict[str, Any]
    shortfalls: list[tuple[Shortfall, str]] = field(default_factory=list)
    met: str = ""

    @property
    def admitted(self) -> bool:
        return not self.shortfalls

    @property
    def kinds(self) -> list[Shortfall]:
        return [kind for kind, _ in self.shortfalls]

    @property
    def reason(self) -> str:
        return "; ".join(line for _, line in self.shortfalls) if self.shortfalls else self.met


def judge(checks: list[dict[str, Any]]) -> Judgement:
    """The decision from a submission's checks alone (the same thresholds for everyone)."""
    p = SUBMISSION_PARAMS
    counted = [c for c in checks if c.get("outcome") not in NOT_A_RESULT]
    answered = [c for c in counted if c.get("outcome") == "ok"]
    hashes = {c.get("tools_hash") for c in answered if c.get("tools_hash")}
    figures: dict[str, Any] = {"checks": len(counted), "answered": len(answered), "tool_lists": len(hashes)}
    reasons: list[tuple[Shortfall, str]] = []
    if len(counted) < p["min_checks"]:
        reasons.append((Shortfall.TOO_FEW_CHECKS,
                        f"only {len(counted)} checks with a result (at least {p['min_checks']} are needed)"))
    share = len(answered) / len(counted) if counted else 0.0
    if counted and share < p["min_answered_share"]:
        reasons.append((Shortfall.TOO_FEW_ANSWERS, f"answered {len(answered)} of {len(counted)} checks with tools "
                        f"({share:.0%}; at least {p['min_answered_share']:.0%} are needed)"))
    if len(hashes) > p["max_tool_lists"]:
        reasons.append((Shortfall.TOO_MANY_TOOL_LISTS, f"served {len(hashes)} different tool lists in its 7 days "
                        f"(at most {p['max_tool_lists']})"))
    last = max(answered, key=lambda c: c["started_at"]) if answered else None
    if last is not None:
        tools = json.loads(last.get("tools_json") or "[]")
        undescribed = [t.get("name") if isinstance(t, dict) else None for t in tools
                       if not (isinstance(t, dict) and isinstance(t.get("description"), str)
                               and t["description"].strip())]
        if not tools:
            reasons.append((Shortfall.NO_TOOLS, "lists no tools"))
        elif undescribed:
            names = ", ".join(str(n) for n in undescribed[:5])
            reasons.append((Shortfall.UNDESCRIBED_TOOLS,
                            f"{len(undescribed)} of {len(tools)} tools have no description ({names})"))
        figures["server_name"] = last.get("server_info_name")
    return Judgement(figures, reasons,
                     f"answered {len(answered)} of {len(counted)} checks with one tool list, every tool described")


@changes_control_file(submissions_file)
def decide(lake: LakePaths, now: dt.datetime, checks_of: dict[str, list[dict[str, Any]]]) -> list[Submission]:
    """Decide every queued submission whose 7 days have ended; record and return the decisions."""
    entries = read_submissions(lake)
    decided: list[Submission] = []
    out: list[Submission] = []
    for entry in entries:
        if entry.status != "queued" or now < entry.window_ends():
            out.append(entry)
            continue
        judged = judge(checks_of.get(entry.server_key, []))
        figures = judged.figures
        name = figures.get("server_name") or entry.server_key.split("/", 1)[0]
        entry = dataclasses.replace(entry, status="admitted" if judged.admitted else "refused", decided_at=now,
                                    reason=judged.reason, checks=figures["checks"], answered=figures["answered"],
                                    tool_lists=figures["tool_lists"], server_name=f"submitted/{name}"[:200],
                                    method_version=SUBMISSION_METHOD)
        decided.append(entry)
        out.append(entry)
    if decided:
        _write(lake, out)
    return decided


def admitted_registry_rows(lake: LakePaths, day: dt.date, fetched_at: dt.datetime, listed_keys: set[str], *,
                           opted_out: Collection[str] = (), host_map: Mapping[str, int] | None = None,
                           ) -> list[dict[str, Any]]:
    """Registry snapshot rows for admitted submissions the registry does not list itself, each under the listing
    rules as a registry entry is, on the day: the file may have been edited or restored by hand, and a host may
    have opted out since its admission (a URL with credentials is skipped and stored redacted, never probed)."""
    rows = []
    for entry in read_submissions(lake):
        if entry.status != "admitted" or entry.decided_at is None or entry.decided_at.date() > day:
            continue
        decision = listing_decision(entry.url, "streamable-http", opted_out=opted_out, host_map=host_map)
        url = redacted_url(entry.url)
        row = {"day": day, "fetched_at": fetched_at, "server_version": None, "status": "submitted",
               "server_name": redact_text(entry.server_name) if entry.server_name else None,
               "remote_type": "streamable-http", "url": url, "listing": decision.verdict,
               "skip_reason": decision.text, "entry_json": json.dumps({"submitted": {
                   "url": url, "admitted_at": entry.decided_at.isoformat(),
                   "reason": redact_text(entry.reason) if entry.reason else entry.reason}})}
        try:
            key = server_key(url)
        except ValueError:  # never admitted so (`add` keys each URL): a file edited by hand; kept, as the registry's
            rows.append({**row, "listing": "malformed", "skip_reason": str(Malformed.NOT_KEYABLE)})
            continue
        if key not in listed_keys:
            rows.append({**row, "server_key": key, "server_id": server_id(key)})
    return rows
