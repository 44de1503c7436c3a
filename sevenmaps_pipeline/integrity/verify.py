"""`sevenmaps verify`: recompute every signed day from the files and the published public key."""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field

from ..lake.paths import LakePaths
from .keys import SigningKeyError, read_published_key, signature_valid
from .manifest import compute_root, day_lines

_ROOT_NAME = re.compile(r"^day=(\d{4}-\d{2}-\d{2})\.json$")


@dataclass
class VerifyReport:
    ok: bool
    days_verified: list[dt.date] = field(default_factory=list)
    bad_day: dt.date | None = None
    problem: str | None = None
    latest_root: str | None = None

    def summary(self) -> str:
        if self.ok:
            if not self.days_verified:
                return "no signed days to verify"
            return (f"OK: {len(self.days_verified)} signed days verified "
                    f"({self.days_verified[0]} .. {self.days_verified[-1]}); latest root {self.latest_root}")
        return f"FAILED at {self.bad_day}: {self.problem}"


def _diff(recorded: list[str], actual: list[str]) -> str | None:
    rec = {line.split("  ", 1)[1]: line.split("  ", 1)[0] for line in recorded}
    act = {line.split("  ", 1)[1]: line.split("  ", 1)[0] for line in actual}
    for path in sorted(set(rec) | set(act)):
        if path not in act:
            return f"file missing: {path}"
        if path not in rec:
            return f"file added after signing: {path}"
        if rec[path] != act[path]:
            return f"file changed: {path} (signed sha256 {rec[path]}, now {act[path]})"
    return None


def verify_lake(lake: LakePaths) -> VerifyReport:
    report = VerifyReport(ok=True)
    days = sorted(m.group(1) for p in lake.roots_dir.glob("day=*.json") if (m := _ROOT_NAME.match(p.name))) \
        if lake.roots_dir.is_dir() else []
    if not days:
        return report
    try:
        public = read_published_key(lake)
    except (SigningKeyError, KeyError, ValueError, json.JSONDecodeError) as exc:
        return VerifyReport(False, bad_day=dt.date.fromisoformat(days[0]), problem=f"public key: {exc}")

    def fail(day: dt.date, problem: str) -> VerifyReport:
        report.ok, report.bad_day, report.problem = False, day, problem
        return report

    previous_day: dt.date | None = None
    previous_root = ""
    for name in days:
        day = dt.date.fromisoformat(name)
        path = lake.root_file(day)
        try:
            doc = json.loads(path.read_text())
            recorded_lines = list(doc["lines"])
            root, signature = doc["root"], doc["signature"]
            doc_previous_root, doc_previous_day = doc["previous_root"], doc["previous_day"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            return fail(day, f"root file unreadable: {path.relative_to(lake.root)} ({exc})")
        if doc.get("day") != name:
            return fail(day, f"root file {path.relative_to(lake.root)} names day {doc.get('day')}")
        try:
            signed_at = dt.datetime.fromisoformat(doc["signed_at"])
        except (KeyError, TypeError, ValueError):
            return fail(day, f"root file {path.relative_to(lake.root)} has no valid signed_at")
        if signed_at < dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), dt.UTC):
            return fail(day, f"signed at {doc['signed_at']}, before the day ended")
        if previous_day is not None and day != previous_day + dt.timedelta(days=1):
            gap = previous_day + dt.timedelta(days=1)
            return fail(day, f"broken chain: no root for {gap} (roots/day={gap}.json missing)")
        expected_previous_day = previous_day.isoformat() if previous_day else None
        if doc_previous_day != expected_previous_day or doc_previous_root != previous_root:
            return fail(day, f"broken chain: previous_root does not match the root of {expected_previous_day}")
        problem = _diff(recorded_lines, day_lines(lake, day))
        if problem:
            return fail(day, problem)
        if compute_root(previous_root, recorded_lines) != root:
            return fail(day, f"root does not match its lines in {path.relative_to(lake.root)}")
        if not signature_valid(public, root, signature):
            return fail(day, f"bad signature in {path.relative_to(lake.root)}")
        report.days_verified.append(day)
        previous_day, previous_root = day, root
    report.latest_root = previous_root
    return report
