"""`sevenmaps status`: what the lake says ran, what is late and what waits to be signed (docs/operations.md,
"Status"), read from the lake alone, so it answers the same with or without the Dagster UI running.

- ran: the days whose scan landed (raw probes), whose map was built (every table of the day), signed (a root
  document for the day); and whether the newest signed day's files are still those its root signed, as the map's
  server and site check before they call it signed (integrity/served.py): `sevenmaps verify` checks every day;
- today's slices: the hours whose slice of the scan has landed, and those that have not (probe/slices.py);
- late: a finished day since the first day with no built map; an hour of the open day whose slice has
  not landed after its deadline (55 minutes past the hour); the day that just ended, unsigned, after
  the signing deadline (02:00 UTC);
- waiting: the finished, unsigned days in chain order, and why the first of them cannot be signed yet (a
  day is signed only after every earlier one, so a day that cannot be signed holds back all later ones).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import pyarrow.parquet as pq

from ..lake.paths import LakePaths
from ..probe.slices import slot_hour
from .roots import REQUIRED_TABLES, chain_start, signed_days
from .served import served_root

SLICE_DEADLINE_MINUTE = 55
SIGN_DEADLINE = dt.time(2, 0)
SIGN_SCHEDULE = dt.time(0, 30)  # the sign job's schedule (defs/jobs.py), named to whoever waits for it


@dataclass
class LakeStatus:
    now: dt.datetime
    first_day: dt.date | None
    scanned: list[dt.date] = field(default_factory=list)
    not_scanned: list[dt.date] = field(default_factory=list)  # finished days without a landed scan (n)
    built: list[dt.date] = field(default_factory=list)
    signed: list[dt.date] = field(default_factory=list)
    late: list[str] = field(default_factory=list)
    waiting: list[dt.date] = field(default_factory=list)
    waiting_reason: str | None = None
    slices_landed: list[int] = field(default_factory=list)  # today's hours with a landed daily check
    slices_missing: list[int] = field(default_factory=list)  # past hours of today with endpoints and none
    # Why the newest signed day is shown unsigned on every surface (its files, or its root, do not hold), or None.
    newest_signed_problem: str | None = None

    @property
    def ok(self) -> bool:
        return not self.late and self.newest_signed_problem is None


def _span(days: list[dt.date]) -> str:
    if not days:
        return "none"
    return f"{len(days)} day(s), {days[0]} .. {days[-1]}"


def lake_status(lake: LakePaths, now: dt.datetime | None = None) -> LakeStatus:
    now = now or dt.datetime.now(dt.UTC)
    today = now.date()
    status = LakeStatus(now, chain_start(lake))
    if status.first_day is None:
        return status
    days = [status.first_day + dt.timedelta(days=i) for i in range((today - status.first_day).days + 1)]
    status.scanned = [d for d in days if lake.raw_files("probes", d)]
    status.not_scanned = [d for d in days[:-1] if d not in set(status.scanned)]
    status.built = [d for d in days if all(lake.curated_file(t, d).is_file() for t in REQUIRED_TABLES)]
    status.signed = signed_days(lake)
    if status.signed:
        # A root document says a day was signed, not that its files still hold: the surfaces check the day they
        # serve before they say "signed" (helper-94 F8), so status checks the newest the same way. One day's files
        # are hashed, as `sevenmaps serve` does on opening it; every day's is `sevenmaps verify`'s work.
        status.newest_signed_problem = served_root(lake, status.signed[-1]).problem
    built, signed = set(status.built), set(status.signed)
    for d in days[:-1]:
        if d not in built:
            status.late.append(f"{d}: its map was never built (backfill it: sevenmaps backfill --from {d} --to {d})")
    _slices(lake, today, now, status)
    if len(status.slices_missing) == 1:
        hour = status.slices_missing[0]
        status.late.append(f"{today} {hour:02d}:00: the slice did not land by {hour:02d}:{SLICE_DEADLINE_MINUTE} UTC "
                           "(its endpoints are n today; a slice is never made up)")
    elif status.slices_missing:
        status.late.append(f"{today}: {len(status.slices_missing)} slices did not land by their deadlines (:"
                           f"{SLICE_DEADLINE_MINUTE} past each hour), at {_hours(status.slices_missing)} UTC (their "
                           "endpoints are n today; a slice is never made up)")
    last = max(signed) if signed else None
    status.waiting = [d for d in days[:-1] if d not in signed and (last is None or d > last)]
    yesterday = today - dt.timedelta(days=1)
    if yesterday in status.waiting and now.time() >= SIGN_DEADLINE:
        status.late.append(f"{yesterday}: not signed by {SIGN_DEADLINE:%H:%M} UTC")
    if status.waiting:
        first = status.waiting[0]
        missing = [t for t in REQUIRED_TABLES if not lake.curated_file(t, first).is_file()]
        if missing:
            held = len(status.waiting) - 1
            status.waiting_reason = (f"{first} cannot be signed: {', '.join(missing[:4])}"
                                     f"{' ...' if len(missing) > 4 else ''} not built"
                                     + (f"; it holds back {held} later day(s) (chain order)" if held else ""))
        else:
            through = first  # the built days from the first on, which signing takes in chain order
            while through + dt.timedelta(days=1) in status.waiting and all(
                    lake.curated_file(t, through + dt.timedelta(days=1)).is_file() for t in REQUIRED_TABLES):
                through += dt.timedelta(days=1)
            status.waiting_reason = (f"{first} is ready to sign: the sign job signs it and every later built day "
                                     f"(its schedule at {SIGN_SCHEDULE:%H:%M} UTC), or now: "
                                     f"`sevenmaps backfill --from {first} --to {through}`")
    return status


def _slices(lake: LakePaths, today: dt.date, now: dt.datetime, status: LakeStatus) -> None:
    """Today's hours with a landed daily check, and the past hours (deadline passed) whose slice has
    endpoints in the day's registry snapshot and landed none. Before the day's first slice there is no
    snapshot: every hour due so far is missing (an empty registry is not a reason to skip a scan)."""


    landed: set[int] = set()
    for path in lake.raw_files("probes", today):
        try:
            table = pq.read_table(path, columns=["check_kind", "started_at"])
        except Exception:  # noqa: BLE001 - an unreadable part is quarantined by the map run
            continue
        for kind, started in zip(table.column("check_kind").to_pylist(), table.column("started_at").to_pylist(),
                                 strict=True):
            if kind == "daily" and started is not None and started.date() == today:
                landed.add(started.hour)
    due = [h for h in range(24) if (h, SLICE_DEADLINE_MINUTE) <= (now.hour, now.minute)]
    registry = lake.registry_file(today)
    if registry.is_file():
        try:
            rows = pq.read_table(registry, columns=["server_key", "listing"]).to_pylist()
            expected = {slot_hour(r["server_key"], today) for r in rows if r["server_key"]}
        except Exception:  # noqa: BLE001 - an unreadable snapshot: every due hour is checked for
            expected = set(range(24))
    else:
        expected = set(range(24))
    status.slices_landed = sorted(landed)
    status.slices_missing = [h for h in due if h in expected and h not in landed]


def _hours(hours: list[int]) -> str:
    return ", ".join(f"{h:02d}" for h in hours) if hours else "none"


def _newest_signed(status: LakeStatus) -> str:
    """What `signed` rests on: a root document per day; and whether the newest day's files still hold to its root."""
    if not status.signed:
        return ""
    newest = status.signed[-1]
    if status.newest_signed_problem is not None:
        run = "" if "sevenmaps verify" in status.newest_signed_problem else " (run `sevenmaps verify`)"
        return f" (root documents); but {newest} is shown unsigned: {status.newest_signed_problem}{run}"
    return (f" (root documents; {newest}'s files are those its root signed; `sevenmaps verify` checks every "
            "day's)")


def status_text(lake: LakePaths, status: LakeStatus) -> str:
    lines = [f"lake {lake.root} at {status.now.isoformat(timespec='seconds')}"]
    if status.first_day is None:
        return "\n".join(lines + ["nothing has landed yet (the first scan lands the first day)"])
    lines += [f"first day   {status.first_day}",
              f"scanned     {_span(status.scanned)}" + (
                  f"; no scan on {', '.join(map(str, status.not_scanned[:5]))}"
                  f"{' ...' if len(status.not_scanned) > 5 else ''} (its endpoints are n)" if status.not_scanned
                  else ""),
              f"today       slices landed at {_hours(status.slices_landed)}"
              + (f"; missing {_hours(status.slices_missing)}" if status.slices_missing else ""),
              f"built       {_span(status.built)}",
              f"signed      {_span(status.signed)}{_newest_signed(status)}"]
    lines.append(f"waiting     {_span(status.waiting)}" + (f": {status.waiting_reason}" if status.waiting_reason
                                                           else ""))
    lines.append("late        " + ("nothing" if not status.late else f"{len(status.late)}:"))
    lines += [f"  {item}" for item in status.late]
    return "\n".join(lines)
