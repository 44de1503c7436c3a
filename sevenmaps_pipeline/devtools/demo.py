"""`sevenmaps demo`: 30 days of the loopback fleet through the real prober and the real Dagster assets,
then sign, verify and summarise. `--synthetic` uses the synthetic generator instead of the fleet.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import dagster as dg

from ..defs.home import ensure_dagster_home
from ..defs.integrity_assets import days_to_rebuild, unchecked_days
from ..defs.launcher import CodeLocation, code_location, run_config
from ..defs.map_assets import scan_config
from ..defs.partitions import FIRST_DAY_ENV
from ..defs.resources import ProberResource
from ..integrity.export_check import verify_export
from ..integrity.keys import default_key_path, generate_key, generate_witness_key, load_private_key, load_witness_key
from ..integrity.log import configured_origin, log_verifier
from ..integrity.report import Trust
from ..integrity.roots import days_to_sign
from ..integrity.status import lake_status, status_text
from ..integrity.verify import verify_lake
from ..integrity.witness import Witness, serve
from ..lake import duck
from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths, registry_in_force
from ..lake.warehouse import open_warehouse
from ..probe.run import take_snapshot, utc_now
from ..publishing.export import export_snapshot
from . import demo_operations as ops
from .demo_operations import cadence_summary
from .demo_surfaces import surfaces_summary
from .fleet.reports import fleet_reports
from .fleet.run import Fleet
from .synth import synthesize

DEMO_MARKER = ".sevenmaps-demo-lake"
def reset_demo_lake(lake: LakePaths) -> None:
    """Empty a lake for the demo, refusing any lake the demo did not make itself."""
    lake.root.mkdir(parents=True, exist_ok=True)
    contents = [p for p in lake.root.iterdir() if p.name not in ("README.md", DEMO_MARKER)]
    # A lake's data, as opposed to a Dagster home alone (what `make ui` before `make demo` leaves).
    holds_data = any((lake.root / name).exists() for name in ("raw", "curated", "roots", "log", "exports"))
    if holds_data and not (lake.root / DEMO_MARKER).exists():
        raise SystemExit(f"{lake.root} holds a lake the demo did not create; refusing to replace it. "
                         "Pass --lake PATH for the demo, or move that lake away.")
    for p in contents:
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    if holds_data:  # said, since what a user kept of it (exports, a --state file of its roots) no longer applies
        say(f"replaced the earlier demo's lake in {lake.root}: its exports are gone, and a verify --state file that "
            "remembers its roots will report a fork (the new demo signs the same days anew)")
    (lake.root / DEMO_MARKER).write_text("This lake was made by `sevenmaps demo`; the next demo replaces it.\n")


def say(msg: str) -> None:
    print(f"[demo] {msg}", flush=True)


def _prepare(lake: LakePaths, key_path: Path | None, first_day: dt.date) -> Path:
    """A fresh demo lake with its own fresh Dagster home (<lake>/.dagster, never $DAGSTER_HOME: the demo
    starts its runs anew), its partitions starting on the demo's first day."""
    reset_demo_lake(lake)
    home = ensure_dagster_home(lake, respect_env=False)
    os.environ[FIRST_DAY_ENV] = first_day.isoformat()
    say(f"Dagster home {os.path.relpath(home)} (this lake's own); partitions from {first_day}")
    key_path = key_path or default_key_path()
    if not key_path.exists():
        generate_key(key_path, lake)
        say(f"created signing key {key_path} (mode 0600, outside the lake)")
    return key_path


def _finish(lake: LakePaths, t0: float, key_path: Path, witness=None, cadences: bool = False) -> int:
    """Verify against the key the demo signs with (pinned, never the lake's copy) and the demo's witness,
    then export the last week and verify the snapshot in a folder with no lake beside it."""
    trust = Trust(load_private_key(key_path, lake).public_key(), f"the demo's signing key {key_path}", pinned=True)
    if witness is not None:
        trust.witnesses, trust.quorum = [witness.verifier], 1
    report = verify_lake(lake, trust)
    say(f"verify (key pinned{', witness quorum 1' if witness else ''}): {report.summary()}")
    signed = report.days_verified
    if report.ok and len(signed) >= 7:
        first, last = signed[-7], signed[-1]
        result = export_snapshot(lake, first, last)
        scratch = Path(tempfile.mkdtemp(prefix="sevenmaps-snapshot-"))
        try:
            elsewhere = scratch / result.folder.name
            shutil.copytree(result.folder, elsewhere)
            checked = verify_export(elsewhere, trust)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)  # the copy only shows a snapshot verifies alone
        say(f"exported {first} .. {last} to {os.path.relpath(result.folder)} ({result.files} files, "
            f"{result.withheld} withheld); a copy in a folder with no lake verified: "
            f"{checked.summary().splitlines()[0]} [{checked.files_checked} files, {checked.proofs_checked} proofs]")
        if not checked.ok:
            report.ok = False
    print()
    print(summary(lake))
    if cadences:

        print("\n".join(cadence_summary(lake, report.days_verified[-1] if report.days_verified else dt.date.today())))
        print("\n".join(surfaces_summary(lake)))
        print("\n`sevenmaps status` on this lake:")
        status = lake_status(lake)
        print(status_text(lake, status))
        if any("did not land by" in item for item in status.late):
            print("(the demo lands no slice of today's scan: `sevenmaps status` names them late and exits 1, as it "
                  "would for a real lake whose scan had stopped)")
    say(f"done in {time.perf_counter() - t0:.1f}s. `make ui` shows the runs.")
    return 0 if report.ok else 1


@contextlib.contextmanager
def demo_witness(lake: LakePaths, key_path: Path):
    """A C2SP witness on loopback for the demo's log, with a fresh state (the demo's log starts anew)."""
    folder = key_path.parent
    witness_key = folder / "demo-witness-mldsa44.pem"
    if not witness_key.exists():
        generate_witness_key(witness_key)
    state = folder / "demo-witness-state.json"
    state.unlink(missing_ok=True)

    log = log_verifier(load_private_key(key_path, lake), configured_origin())
    witness = Witness("witness.demo.test/w1", load_witness_key(witness_key), [log], state)
    server = serve(witness)
    previous = os.environ.get("SEVENMAPS_WITNESSES")
    os.environ["SEVENMAPS_WITNESSES"] = f"{witness.verifier.vkey} http://127.0.0.1:{server.server_address[1]}"
    vkey = folder / "demo-witness.vkey"  # for `verify --witness "$(cat ...)"` (docs/verifying.md)
    vkey.write_text(witness.verifier.vkey + "\n")
    say(f"witness {witness.name} (ML-DSA-44 cosignatures) on http://127.0.0.1:{server.server_address[1]}; its "
        f"verifier key in {vkey}")
    try:
        yield witness
    finally:
        server.shutdown()
        if previous is None:
            os.environ.pop("SEVENMAPS_WITNESSES", None)
        else:
            os.environ["SEVENMAPS_WITNESSES"] = previous


def _failures(run) -> str:
    return "\n".join(f"  {step}: {cause}" for step, cause in run.failures())


def run_fleet_demo(lake: LakePaths, days: int, key_path: Path | None = None) -> int:
    """Replay the fleet's timeline through the production prober, one Dagster run per day."""
    t0 = time.perf_counter()
    end = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    day_list = [end - dt.timedelta(days=days - 1 - i) for i in range(days)]
    say(f"lake {lake.root}; {days} UTC days {day_list[0]} .. {end}, replayed from the loopback fleet")
    key_path = _prepare(lake, key_path, day_list[0])
    with Fleet() as fleet, dg.DagsterInstance.get() as instance, code_location(instance) as location:
        missed = {day_list[i] for i in fleet.timeline.get("missed_days", []) if i < days}
        say(f"fleet: {len(fleet.hosts)} servers over HTTPS on 127.0.0.1:{fleet.port} (CA made at start), "
            f"registry {fleet.registry_url}; no scan on {', '.join(map(str, sorted(missed))) or 'no day'}")
        witness = _FleetDemo(lake, key_path, fleet, instance, location, day_list, missed).run()
        if witness is None:
            return 1
    return _finish(lake, t0, key_path, witness, cadences=True)


class _FleetDemo:
    """The fleet demo's runs, day by day, with the fleet, the Dagster instance and the code location open."""

    def __init__(self, lake: LakePaths, key_path: Path, fleet: Fleet, instance: dg.DagsterInstance,
                 location: CodeLocation, day_list: list[dt.date], missed: set[dt.date]):
        self.lake = lake
        self.key_path = key_path
        self.fleet = fleet
        self.instance = instance
        self.location = location
        self.day_list = day_list
        self.end = day_list[-1]
        self.missed = missed
        self.skills_list = str(fleet.skills_list(fleet.workdir))

    def run(self) -> Witness | None:
        """Every day of the timeline, the missed days backfilled, the day after, the last day signed; the
        demo's witness, or None once a run failed (said why)."""
        if not (self.replay_timeline() and self.backfill_missed() and self.the_day_after()
                and self.rebuild_before_signing()):
            return None
        return self.sign()

    def prober(self, today: dt.date | str) -> dict:
        fleet = self.fleet
        return {"registry_url": fleet.registry_url, "control_url": fleet.control_url,
                "host_map_json": json.dumps(fleet.host_map), "ca_file": str(fleet.ca_file),
                "replay_day": str(today), "opted_out_hosts": fleet.timeline.get("opted_out_hosts", []),
                "codehost_url": fleet.codehost_url, "skills_list": self.skills_list, **fleet.lookup_urls()}

    def config_for(self, at: str) -> dict:
        return run_config(self.lake.root, self.key_path, self.prober(at), log_level="WARNING")

    def map_day(self, day: dt.date, today: dt.date, label: str) -> bool:
        t = time.perf_counter()
        run = self.location.run("daily_map_job", day, day,
                                run_config(self.lake.root, self.key_path, self.prober(today), log_level="WARNING"))
        if not run.success:
            say(f"{day}: the run FAILED:\n{_failures(run)}")
            return False
        say(f"{day} ({label}): {_codes(self.lake, day)}  [{time.perf_counter() - t:.1f}s]")
        return True

    def replay_timeline(self) -> bool:
        lake, fleet, days = self.lake, self.fleet, len(self.day_list)
        for i, day in enumerate(self.day_list):
            fleet.set_day(i % fleet.days)
            # The reporting service lands agents' reports every day, whether or not our scan ran.
            reports = fleet_reports(fleet, i % fleet.days, day)
            write_parquet(lake, lake.raw_dir("agent_reports", day) / "fleet-reports.parquet", reports)
            if i == max(0, days - ops.SUBMISSION_DAYS):
                ops.submit_servers(lake, fleet, day)
                say(f"{day}: submitted {', '.join(ops.SUBMITTED)} (checked every 6 hours for 7 days)")
            if i >= max(0, days - ops.SUBMISSION_DAYS):
                ops.submission_checks_of_day(lake, fleet, day)
            if day in self.missed:
                continue
            if i == days - 1:  # at 01:00, before the lookups' noon
                say(f"{day}: {ops.form_opt_out(lake, fleet, dt.datetime.combine(day, dt.time(1), dt.UTC))}")
            # The daily outside lookups (OSV, npm, PyPI, RDAP) on the last days, before the day's map.
            if i >= days - 3 and not self.lookups(day):
                return False
            if not self.map_day(day, day, f"timeline day {i:>2}"):
                return False
        return True

    def lookups(self, day: dt.date) -> bool:
        """The day's lookups at noon. They read the registry snapshot the day's first slice takes at 00:00;
        the demo replays a day's slices in its map run, after the lookups, so on the lake's first day
        (no snapshot of that day or the 29 before) the snapshot is taken first, as that slice would have."""
        if registry_in_force(self.lake, day) is None:
            prober = ProberResource(**self.prober(f"{day}T00"))
            listings = take_snapshot(self.lake, day, prober.registry_url, scan_config(self.lake, prober),
                                     prober.clock())
            say(f"{day}: the registry snapshot the day's first slice takes at 00:00 ({listings} listings), taken "
                "ahead: the lookups at 12:00 read it")
        if not self.location.run("lookups_job", None, None, self.config_for(f"{day}T12")).success:
            say(f"{day}: the lookups run FAILED")
            return False
        return True

    def backfill_missed(self) -> bool:
        # The operator backfills the missed day later: the past is never probed.
        return all(self.map_day(day, self.end, "backfilled later, not probed") for day in sorted(self.missed))

    def the_day_after(self) -> bool:
        """The day after the last one, the open day: an owner's claim, the submissions decided, the frequent
        checks, each at a moment the clock has reached (demo_operations.open_day)."""
        location, config_for = self.location, self.config_for
        plan = ops.open_day(self.end + dt.timedelta(days=1), utc_now())
        today = plan.day
        say(f"{today}: {ops.claim_owner(self.lake, self.fleet, plan.claim_at)}")
        if not location.run("submission_job", None, None, config_for(ops.replayed_at(plan.submissions_at))).success:
            say("the submission run FAILED")
            return False
        days = len(self.day_list)
        say(f"{today}: the submissions' 7 days ended: decided (admitted joins the next registry snapshot)"
            if days >= ops.SUBMISSION_DAYS else f"{today}: the submissions are {days} of their "
            f"{ops.SUBMISSION_DAYS} days old: still queued (a demo of {ops.SUBMISSION_DAYS} days or more decides them)")
        ran = ops.five_minute_today(location, config_for, plan)
        say(f"{today}: five-minute checks of the owner's endpoint at "
            f"{', '.join(f'{at:%H:%M}' for at in plan.five_minute)} UTC: {'ran' if ran else 'FAILED'}")
        hours = [hour for hour, _ in plan.hourly]
        say(f"{today}: hourly checks of the most used endpoints at {hours[0]:02d}:00"
            + (f" .. {hours[-1]:02d}:00" if len(hours) > 1 else "") + f" UTC, the hours begun by {plan.now:%H:%M}; "
            f"mcp.{ops.FLAPPING}.test flaps once, then fails twice" + (
                "" if len(hours) == len(ops.HOURLY_PLAN) else
                f" (the day is too young for all {len(ops.HOURLY_PLAN)} runs: the last {len(hours)} of them)")
            + ":")
        for line in ops.hourly_today(location, self.lake, self.fleet, config_for, plan):
            print(line, flush=True)
        return True

    def rebuild_before_signing(self) -> bool:
        # Signing signs only days the map job built and checked: the days whose windows include the late
        # day are rebuilt by the map job first (docs/operations.md, "When a day is stale").
        lake, end = self.lake, self.end
        rebuild = days_to_rebuild(lake, end, self.instance)
        if rebuild is None:
            return True
        stale = len(unchecked_days(lake, days_to_sign(lake, end), self.instance))
        t = time.perf_counter()
        run = self.location.run("daily_map_job", *rebuild, self.config_for(str(end + dt.timedelta(days=1))))
        if not run.success:
            say(f"the map run before signing FAILED:\n{_failures(run)}")
            return False
        say(f"{rebuild[0]} .. {rebuild[1]}: rebuilt by the map job with their checks before signing ({stale} "
            f"day(s) read the late day or were built before an input changed) [{time.perf_counter() - t:.1f}s]")
        return True

    def sign(self) -> Witness | None:
        end = self.end
        with demo_witness(self.lake, self.key_path) as witness:
            run = self.location.run("sign_day_job", end, end, run_config(
                self.lake.root, self.key_path, witnesses=os.environ["SEVENMAPS_WITNESSES"].splitlines(),
                log_level="WARNING"))
        if not run.success:
            say(f"signing FAILED:\n{_failures(run)}")
            return None
        say(f"signed {len(self.day_list)} days in chain order (one run); each day's lines logged, each checkpoint "
            "cosigned")
        return witness


def _codes(lake: LakePaths, day: dt.date) -> str:
    with duck.connect() as con:
        rows = dict(con.execute(f"SELECT code, count(*) FROM read_parquet('{lake.curated_file('daily_status', day)}')"
                                " GROUP BY code").fetchall())
    return " ".join(f"{c}={rows.get(c, 0):<3}" for c in "oapdn")


def run_demo(lake: LakePaths, servers: int, days: int, seed: int, key_path: Path | None = None) -> int:
    """The synthetic demo: the generator lands raw probes, then one Dagster backfill over every day."""


    t0 = time.perf_counter()
    end = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    say(f"lake {lake.root}; {days} UTC days ending {end}; {servers} endpoints (synthetic, seed {seed})")
    key_path = _prepare(lake, key_path, end - dt.timedelta(days=days - 1))
    result = synthesize(lake, servers, days, seed, end, progress=None)
    say(f"landed {result.probe_rows:,} probe rows and {result.registry_rows:,} registry rows; "
        f"no run on {', '.join(map(str, result.missing_days)) or 'no day'} (those days stay n)")
    say(f"materialising {result.days[0]} .. {result.days[-1]} through the code location (one map run, one "
        "sign run: what a UI backfill of every asset does) ...")
    t = time.perf_counter()
    runs = []
    with dg.DagsterInstance.get() as instance, code_location(instance) as location:
        config = run_config(lake.root, key_path, log_level="WARNING")
        for job in ("daily_map_job", "sign_day_job"):
            runs.append(location.run(job, result.days[0], result.days[-1], config))
            if not runs[-1].success:
                say(f"the {job} run FAILED:\n" + _failures(runs[-1]))
                return 1
    for run in runs:
        for step, seconds in run.step_seconds():
            say(f"  {step:<40} {seconds:6.2f}s")
    checks = [passed for run in runs for passed in run.checks()]
    say(f"runs {', '.join(r.run_id[:8] for r in runs)} succeeded in {time.perf_counter() - t:.1f}s; "
        f"{sum(checks)}/{len(checks)} blocking checks passed")
    return _finish(lake, t0, key_path)


def _readiness_summary(con, last: dt.date) -> list[str]:
    """A few readiness scores of the day, each section earned/possible, and the lines behind two of them."""
    scores = con.execute(
        "SELECT subject_kind, CASE subject_kind WHEN 'skill' THEN replace(subject_key, 'github.com/', '') "
        "ELSE coalesce(server_name, subject_key) END, rubric_version, score, reachable_earned, "
        "reachable_possible, speaks_earned, speaks_possible, cheap_earned, cheap_possible, honest_earned, "
        "honest_possible, trustworthy_earned, trustworthy_possible, subject_key, lines_seen FROM readiness_scores "
        "WHERE day = $d ORDER BY subject_kind, earned DESC, possible DESC, subject_key",
        {"d": last}).fetchall()
    if not scores:
        return ["\nReadiness: no readiness check that day"]
    out = [f"\nReadiness on {last}: earned/possible over the lines seen (a line not seen counts on neither "
           "side); sections Reachable, Speaks, Cheap, Honest, Trustworthy"]
    mcp = [s[:-1] for s in scores if s[0] == "mcp" and s[3] != "0/0"]
    skills = [s[:-1] for s in scores if s[0] == "skill"]
    skills_read = [s[:-1] for s in scores if s[0] == "skill" and s[-1] >= 10]  # SKILL.md fetched
    # The best three, and the two lowest of those the probe saw most of (12 lines or more).
    seen_most = [s[:-1] for s in scores if s[0] == "mcp" and s[-1] >= 12]
    shown = mcp[:3] + [s for s in seen_most[-2:] if s not in mcp[:3]]
    for kind, name, version, score, *parts, _key in shown + skills:
        sections = " ".join(f"{parts[i]:g}/{parts[i + 1]:g}" for i in range(0, 10, 2))
        out.append(f"  {kind:<5} {name[:52]:<52} {score:>10}  [{sections}]  {version}")
    out.append(f"  ({len(mcp)} MCP endpoints and {len(skills)} skills scored; all of them: "
               "sevenmaps sql \"FROM latest_readiness_scores\")")
    for _kind, name, *_rest, key in ([shown[-1]] if shown else []) + ([skills_read[-1]] if skills_read else []):
        out.append(f"  lines of {name} not passed:")
        for mark, points, max_points, label, evidence in con.execute(
                "SELECT CASE WHEN NOT seen THEN 'unseen' WHEN passed THEN 'part' ELSE 'fail' END, points, max_points, "
                "label, evidence "
                "FROM readiness_lines WHERE day = $d AND subject_key = $k AND NOT (seen AND points = max_points) "
                "ORDER BY line_order", {"d": last, "k": key}).fetchall():
            out.append(f"    {mark:<6} {points:g}/{max_points:g} {label}: {evidence[:80]}")
    return out


def summary(lake: LakePaths) -> str:
    con = open_warehouse(lake)
    try:
        last = duck.one(con, "SELECT max(day) FROM daily_status")[0]
        lines = [f"== The map on {last} (UTC) =="]
        for status, count in con.execute(
                "SELECT shown_status, count(*) FROM daily_status WHERE day = $d GROUP BY ALL ORDER BY 2 DESC",
                {"d": last}).fetchall():
            lines.append(f"  {count:>7,}  {status}")
        ranked = ("SELECT server_name, history, uptime_pct, uptime_label, success_chance, success_chance_low, "
                  "success_chance_high, median_handshake_ms FROM server_history WHERE day = $d "
                  "AND checked_days >= 14 ORDER BY {order} LIMIT 5")
        for title, order in (("Most reliable (>= 14 checked days)",
                              "uptime_pct DESC, success_chance DESC, median_handshake_ms NULLS LAST, server_name"),
                             ("Least reliable", "uptime_pct ASC, success_chance ASC, server_name")):
            lines.append(f"\n{title}: history oldest..newest, uptime, success chance [90% interval]")
            for name, hist, up, label, sc, lo, hi, ms in con.execute(ranked.format(order=order),
                                                                     {"d": last}).fetchall():
                speed = f", median {ms:.0f} ms" if ms is not None else ""
                lines.append(f"  {name:<34} {hist}  {up:5.1f}% {label}, "
                             f"{sc:.2f} [{lo:.2f}-{hi:.2f}]{speed}")
        changes = con.execute(
            "SELECT kind, count(*), count(DISTINCT server_key), "
            "arg_max(server_key || ' on ' || day || ': ' || detail, day) FROM tool_changes GROUP BY kind "
            "ORDER BY 2 DESC, kind").fetchall()
        if changes:
            lines.append("\nChange records over the whole lake: kind, records, endpoints, latest example")
            for kind, records, endpoints, example in changes:
                lines.append(f"  {kind:<24} {records:>6,} {endpoints:>6,}  {example[:90]}")
        top = con.execute(
            "SELECT category, list(server_name || ' (' || uptime_pct || '%, ' || "
            "coalesce(round(median_handshake_ms)::BIGINT || ' ms', 'no timing') || ')' ORDER BY rank, server_key) "
            "FILTER (WHERE rank <= 3) FROM reliable_rankings WHERE day = $d GROUP BY category ORDER BY category",
            {"d": last}).fetchall()
        lines.append("\nReliable, per category (answering with tools now, >= 14 checked days; top 3):")
        lines += [f"  {category:<14} {'; '.join(names)}" for category, names in top] or ["  (no endpoint yet)"]
        rated = con.execute(
            "SELECT server_key, rating_label, reports, reporters, paid_reporters, round(success_share, 3), "
            "count(*) OVER () FROM rating_aggregates WHERE day = $d AND scope = 'endpoint' "
            "ORDER BY stars DESC NULLS LAST, server_key LIMIT 6", {"d": last}).fetchall()
        shown = f"the {len(rated)} rated highest of {rated[0][6]}" if rated and rated[0][6] > len(rated) else "all"
        lines.append(f"\nAgent ratings over 30 days ({shown}; every one in rating_aggregates): label, reports, "
                     "reporters (paying), weighted success share")
        lines += [f"  {key:<28} {label:<20} {n:>5} {r:>3} ({p}) {share}" for key, label, n, r, p, share, _ in rated]
        live_now = duck.one(con, "SELECT string_agg(server_key, ', ' ORDER BY server_key) FROM incidents "
                            "WHERE day = $d AND status = 'live'", {"d": last})[0]
        episodes = duck.one(
            con, "SELECT count(DISTINCT (server_key, opened_day)) FILTER (WHERE status = 'live'), "
            "count(*) FILTER (WHERE status = 'live'), count(*) FILTER (WHERE status = 'unconfirmed'), "
            "string_agg(DISTINCT server_key, ', ') FILTER (WHERE status = 'live') FROM incidents")
        lines.append(f"Incidents live on {last}: {live_now or 'none'}. Over the lake: {episodes[0]} confirmed "
                     f"incident(s), shown on {episodes[1]} day(s) ({episodes[3] or 'none'}); {episodes[2]} "
                     "unconfirmed endpoint-day(s), never shown")
        lines += _readiness_summary(con, last)
        con.execute(f"ATTACH '{lake.internal_warehouse}' AS internal (READ_ONLY)")
        refused = duck.one(con, "SELECT count(*) FROM internal.agent_report_quarantine")[0]
        lines.append(f"Agent reports refused with a reason (internal.duckdb, for reviewers): {refused}")
        quarantined = duck.one(con, "SELECT count(*) FROM internal.quarantine")[0]
        lines.append(f"\nQuarantined raw rows/files (internal.duckdb): {quarantined}")
        day, root, sig = duck.one(
            con, "SELECT day, root, signature FROM daily_roots ORDER BY day DESC LIMIT 1")
        lines.append(f"Latest signed root: {day}  {root}\n  signature {sig[:44]}...")
    finally:
        con.close()
    rel = os.path.relpath(lake.warehouse)
    lines.append("\nQuery it (read-only; views over the Parquet lake):")
    lines.append("  .venv/bin/sevenmaps sql \"FROM map_days ORDER BY day DESC LIMIT 7\"")
    lines.append("  .venv/bin/sevenmaps sql \"SELECT server_name, history, uptime_pct FROM latest_server_history "
                 "ORDER BY uptime_pct LIMIT 10\"")
    lines.append(f"  .venv/bin/python -c \"import duckdb; duckdb.connect('{rel}', read_only=True)"
                 f".sql('FROM latest_tools WHERE risk = \\'red\\'').show()\"")
    lines.append("  worked analyses: docs/analyst.md")
    lines.append("Verify every signed day yourself, against the key you trust (keep a copy of it outside the lake):")
    lines.append(f"  cp {os.path.relpath(lake.well_known)} ~/7maps-trusted.json   # once, from a source you trust")
    lines.append("  .venv/bin/sevenmaps verify --public-key ~/7maps-trusted.json --state ~/.7maps-state.json")
    lines.append("  .venv/bin/sevenmaps log check            # every tile re-derived from the entries")
    return "\n".join(lines)
