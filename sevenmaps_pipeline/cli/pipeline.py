"""The commands over the Dagster code location: run a day, backfill a range, the data dictionary of its
assets and tables, the Dagster UI. They alone load Dagster."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import signal
import socket
import sys
import time
from pathlib import Path

import dagster as dg

from ..defs.catalog import assets_markdown
from ..defs.home import ensure_dagster_home
from ..defs.integrity_assets import days_to_rebuild
from ..defs.launcher import code_location, run_config
from ..defs.partitions import first_day
from ..integrity.roots import signed_days
from ..integrity.status import SIGN_SCHEDULE
from ..lake import duck
from ..lake.parquet_io import last_signed_day
from ..lake.paths import PROJECT_ROOT, LakePaths, days_text, parse_day
from ..lake.schemas import data_dictionary_markdown
from ..lake.warehouse import open_warehouse
from .common import _existing_lake, _lake


def cmd_run(args: argparse.Namespace) -> int:
    day = parse_day(args.day)
    lake = _lake(args)
    today = dt.datetime.now(dt.UTC).date()
    if day > today:  # it would land an all-n day and make it the lake's first (helper-85)
        raise ValueError(f"--day {day} is after today ({today} UTC): a day that has not begun is never scanned")
    start = first_day(lake)
    if day < start:  # Dagster's own words for it are an invariant's
        raise ValueError(f"--day {day} is before the lake's first day {start} (set SEVENMAPS_FIRST_DAY to start the "
                         "partitions earlier; docs/operations.md)")
    home = ensure_dagster_home(lake)
    # A past day is never probed (probe/run.py PastDayError): its map is built from what landed (helper-89)
    doing = f"scanning {args.registry} for {day}" if day == today else f"building {day} (a past day: not probed)"
    print(f"{doing} into {lake.root} (Dagster home {home})", flush=True)
    with dg.DagsterInstance.get() as instance, code_location(instance) as location:
        # Dagster's own log stays in the run (the UI shows it); the terminal gets what went wrong, once.
        run = location.run("daily_map_job", day, day,
                           run_config(lake.root, prober={"registry_url": args.registry, "whole_day_scan": True},
                                      log_level="CRITICAL"))
    if not run.success:
        _say_run_failed(run, f"run {run.run_id} FAILED for {day}:")
        return 1
    print(f"run {run.run_id} succeeded: {_day_summary(lake, day)}")
    return 0


def _say_run_failed(run, headline: str) -> None:
    """A failed run in a few lines: the headline, each failed step's root cause, where the whole log is."""
    print(headline, file=sys.stderr)
    for step, cause in run.failures():
        print(f"  {step}: {cause}", file=sys.stderr)
    print(f"  the whole log: `sevenmaps ui`, Runs, {run.run_id[:8]}", file=sys.stderr)


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def cmd_backfill(args: argparse.Namespace) -> int:
    first, last = parse_day(args.first), parse_day(args.last)
    if last < first:
        raise ValueError(f"--to {last} is before --from {first}")
    lake = _existing_lake(args)
    closed = _closed_days(lake, first, last)
    if closed:
        raise ValueError(f"{closed[0]} .. {closed[-1]} precede the last signed day {last_signed_day(lake)} and are "
                         "not signed: signed history is closed and cannot gain days (backfill days after it; signed "
                         "days in a range are checked, never rewritten: docs/operations.md)")
    home = ensure_dagster_home(lake)
    start = first_day(lake)
    if first < start:
        raise ValueError(f"--from {first} is before the lake's first day {start} (set SEVENMAPS_FIRST_DAY to "
                         "start the partitions earlier; docs/operations.md)")
    today = dt.datetime.now(dt.UTC).date()
    if first > today:
        raise ValueError(f"--from {first} is after today ({today} UTC): a day that has not begun has no map")
    key = Path(args.signing_key).resolve() if args.signing_key else None
    config = run_config(lake.root, key, log_level="CRITICAL")
    jobs = backfill_runs(first, last, today, sign=not args.no_sign)
    print(f"backfilling {first} .. {last} in {lake.root} (Dagster home {home}, partitions from {start})", flush=True)
    with dg.DagsterInstance.get() as instance, code_location(instance) as location:
        for job, a, b in jobs:
            if job == "sign_day_job":
                # Signing signs only days the map job built and checked: an unsigned day it would refuse
                # (stale, or built outside the map job) is rebuilt by the map job first (docs/operations.md,
                # "When a day is stale").
                rebuild = days_to_rebuild(lake, b, instance)
                if rebuild is not None:
                    run = location.run("daily_map_job", *rebuild, config)
                    if not run.success:
                        _say_run_failed(run, f"daily_map_job run {run.run_id} FAILED for {rebuild[0]} .. "
                                        f"{rebuild[1]} (rebuilding before signing):")
                        return 1
                    print(f"daily_map_job run {run.run_id[:8]} rebuilt {rebuild[0]} .. {rebuild[1]} before signing",
                          flush=True)
            t = time.perf_counter()
            signed_before = set(signed_days(lake))
            print(f"{job} for {a} .. {b} ...", file=sys.stderr, flush=True)  # its progress on stderr
            run = location.run(job, a, b, config, progress=_to_stderr)
            if not run.success:
                _say_run_failed(run, f"{job} run {run.run_id} FAILED for {a} .. {b}:")
                return 1
            print(f"{job} run {run.run_id[:8]} succeeded for {a} .. {b} in {time.perf_counter() - t:.1f}s",
                  flush=True)
            earlier = [d for d in signed_days(lake) if d < a and d not in signed_before]
            if earlier:  # signing takes the chain in order: the unsigned days before the range went first
                print(f"  signed first, as the chain's earlier unsigned days: {days_text(earlier)}", flush=True)
    print(_range_summary(lake, first, last))
    yesterday = today - dt.timedelta(days=1)
    if args.no_sign and first <= yesterday:
        print(f"not signed (--no-sign): the sign job signs them (its schedule at {SIGN_SCHEDULE:%H:%M} UTC), or now: "
              f"`sevenmaps backfill --from {first} --to {min(last, yesterday)}`")
    return 0


def backfill_runs(first: dt.date, last: dt.date, today: dt.date, sign: bool) -> list[tuple[str, dt.date, dt.date]]:
    """The runs of `sevenmaps backfill`, in order: the map of the finished days, their signing, then the open
    day's map in a run of its own (days after today are left out). A run reaching the open day records its
    finished days without their data versions (defs/day_map.py), so the UI would call them Unsynced; and a
    failure of the open day's scan leaves the finished days mapped and signed."""
    yesterday = today - dt.timedelta(days=1)
    runs = []
    if first <= yesterday:
        runs.append(("daily_map_job", first, min(last, yesterday)))
        if sign:
            runs.append(("sign_day_job", first, min(last, yesterday)))
    if first <= today <= last:
        runs.append(("daily_map_job", today, today))
    return runs


def _closed_days(lake: LakePaths, first: dt.date, last: dt.date) -> list[dt.date]:
    """The days of the range that no run can build: unsigned, before the last signed day."""
    signed_up_to = last_signed_day(lake)
    if signed_up_to is None:
        return []
    days = [first + dt.timedelta(days=i) for i in range((min(last, signed_up_to) - first).days + 1)]
    return [day for day in days if not lake.root_file(day).exists()]


def _range_summary(lake: LakePaths, first: dt.date, last: dt.date) -> str:
    with open_warehouse(lake) as con:
        rows = con.execute("SELECT day, endpoints, o, a, p, d, n, signed FROM map_days WHERE day BETWEEN $a AND $b "
                           "ORDER BY day", {"a": first, "b": last}).fetchall()
    lines = [f"  {d}: {e:,} endpoints (o={o:,} a={a:,} p={p:,} d={dd:,} n={n:,}){', signed' if s else ''}"
             for d, e, o, a, p, dd, n, s in rows]
    return "\n".join(lines) if lines else "  (no day of the range has a map: an open day waits for its scan)"


def _day_summary(lake: LakePaths, day: dt.date) -> str:
    """One line: the day's endpoints by code and the checks that landed."""
    status, probes = lake.curated_file("daily_status", day), lake.raw_files("probes", day)
    with duck.connect() as con:
        codes = dict(con.execute("SELECT code, count(*) FROM read_parquet($f) GROUP BY code",
                                 {"f": str(status)}).fetchall()) if status.is_file() else {}
        outcomes = dict(con.execute("SELECT outcome, count(*) FROM read_parquet($f) GROUP BY outcome",
                                    {"f": [str(p) for p in probes]}).fetchall()) if probes else {}
    checked = sum(n for o, n in outcomes.items() if o != "skipped")
    return (f"{day}: {sum(codes.values()):,} endpoints on the map ("
            + " ".join(f"{c}={codes.get(c, 0):,}" for c in "oapdn") + f"); {checked:,} checks landed, "
            f"{outcomes.get('skipped', 0):,} listings skipped with a reason; query them with "
            f"`sevenmaps sql \"FROM daily_status WHERE day = '{day}'\"`")


DATA_DICTIONARY_MARKERS = ("<!-- data-dictionary:start -->\n", "<!-- data-dictionary:end -->")


def data_dictionary_text() -> str:
    """The generated part of docs/data-dictionary.md: the assets, then the tables."""
    return assets_markdown() + "\n## Tables\n\n" + data_dictionary_markdown()


def cmd_data_dictionary(args: argparse.Namespace) -> int:
    text = data_dictionary_text()
    if not args.write:
        sys.stdout.write(text)
        return 0
    doc = PROJECT_ROOT / "docs" / "data-dictionary.md"
    start, end = DATA_DICTIONARY_MARKERS
    before, rest = doc.read_text().split(start, 1)
    doc.write_text(before + start + text + end + rest.split(end, 1)[1])
    print(f"updated {doc}")
    return 0


def _port_taken(port: int) -> str | None:
    """Why the UI's webserver could not listen on 127.0.0.1:`port`, or None when it can (the same
    SO_REUSEADDR uvicorn sets, so a port a stopped UI left in TIME_WAIT counts as free)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OverflowError:
            return "not a port number"
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def _ui_lake(args: argparse.Namespace) -> LakePaths:
    """The lake the UI opens: one that is there, unless --new asks for a new one. Dagster would otherwise make
    a home in any folder named, a mistyped --lake included (docs/operations.md "The command line")."""
    lake = _lake(args)
    if args.new:
        lake.root.mkdir(parents=True, exist_ok=True)
        return lake
    if lake.holds_lake():
        return lake
    # A fresh clone's ./data_lake holds only its README: no lake yet either.
    raise ValueError(f"no lake at {lake.root} (nothing has run there): run `make demo` first (the demo lake, at "
                     "./data_lake), or `sevenmaps ui --new` to start a new, empty lake there (--lake PATH or "
                     "$SEVENMAPS_LAKE names another)")


# `dagster dev` warns at every start that it is superseded by `dg dev`, a command of another package
# (dagster-dg-cli) this project does not install: a line of Python warning an operator can do nothing about.
# Only that message is hidden, for the UI's processes (Python's -W syntax; the message matched from its start).
DEV_SUPERSEDED = "ignore:Function `dev_command` is superseded:FutureWarning"


def cmd_ui(args: argparse.Namespace) -> int:
    taken = _port_taken(args.port)
    if taken:
        # `dagster dev` would keep running without its webserver, the bind error one line in its log.
        print(f"error: 127.0.0.1:{args.port} is not free for the UI ({taken}); another UI may be running there: "
              "stop it, or pick another port with `sevenmaps ui --port N` (`make ui PORT=N`)", file=sys.stderr)
        return 2
    lake = _ui_lake(args)
    home = ensure_dagster_home(lake)
    print(f"Dagster UI on http://127.0.0.1:{args.port} (Dagster home {home}, lake {lake.root}, "
          f"partitions from {first_day(lake)})", flush=True)
    os.chdir(PROJECT_ROOT)
    # A command started in the background (`make ui &`) inherits SIGINT ignored, and `dagster dev` then
    # ignores SIGTERM too (it maps SIGTERM to its SIGINT handler): restore both, so Ctrl-C, `kill` and
    # make's forwarding of SIGTERM stop the UI and its processes cleanly.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.environ["PYTHONWARNINGS"] = ",".join(w for w in (os.environ.get("PYTHONWARNINGS"), DEV_SUPERSEDED) if w)
    dagster = Path(sys.executable).with_name("dagster")
    os.execv(str(dagster), [str(dagster), "dev", "-m", "sevenmaps_pipeline.definitions",
                            "-h", "127.0.0.1", "-p", str(args.port)])
    return 0  # not reached
