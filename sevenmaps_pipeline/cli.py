"""The `sevenmaps` command line."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .lake.paths import PROJECT_ROOT, LakePaths, parse_day

EPILOG = """\
examples:
  sevenmaps demo                              30 days of the loopback fleet through Dagster, signed, verified
  sevenmaps probe https://mcp.example.com/mcp  check one endpoint and show what it answered
  sevenmaps synth --servers 100000 --days 30 --seed 1 --lake /tmp/lake
  sevenmaps verify                            check every signed day of ./data_lake
  sevenmaps sql "SELECT code, count(*) FROM daily_status GROUP BY code"
  sevenmaps ui                                the Dagster UI (backfills: Assets > select > Materialize)
"""


# Packages that only the devtools (fleet, demo, benches) need: the `devtools` extra.


def _lake(args: argparse.Namespace) -> LakePaths:
    return LakePaths.at(args.lake)


def _existing_lake(args: argparse.Namespace) -> LakePaths:
    """The lake a reading command reads: a lake that is not there is an input error, never an empty answer."""
    lake = _lake(args)
    if not lake.root.is_dir():
        raise ValueError(f"no lake at {lake.root} (pass --lake PATH or set SEVENMAPS_LAKE; `make demo` makes one)")
    return lake


def cmd_demo(args: argparse.Namespace) -> int:
    from .devtools.demo import run_demo, run_fleet_demo

    key = Path(args.signing_key).resolve() if args.signing_key else None
    if args.synthetic:
        return run_demo(_lake(args), args.servers, args.days, args.seed, key)
    return run_fleet_demo(_lake(args), args.days, key)


def cmd_synth(args: argparse.Namespace) -> int:
    from .devtools.synth import synthesize

    lake = _lake(args)
    end = parse_day(args.end_day) if args.end_day else dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    started = time.perf_counter()
    print(f"synthesising {args.servers:,} endpoints x {args.days} days ending {end} into {lake.root}", flush=True)
    result = synthesize(lake, args.servers, args.days, args.seed, end, args.missing_days,
                        progress=lambda msg: print(f"  {msg}", flush=True))
    print(f"done in {time.perf_counter() - started:.1f}s: {result.probe_rows:,} probe rows, "
          f"{result.registry_rows:,} registry rows, {result.distinct_tool_lists:,} distinct tool lists")
    return 0


def _probe_config(args: argparse.Namespace):
    """The prober's configuration for a one-endpoint command: --allow-private, --resolve HOST:PORT, --ca-file."""
    from .probe.config import ProbeConfig

    host_map = {}
    for item in args.resolve or []:
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"--resolve takes HOST:PORT, got {item!r}")
        host_map[host.lower()] = int(port)
    return ProbeConfig(allow_private=args.allow_private, host_map=host_map,
                       ca_file=Path(args.ca_file) if args.ca_file else None)


def cmd_probe(args: argparse.Namespace) -> int:
    from .probe.report import run_probe
    from .registry.listing import has_userinfo

    if has_userinfo(args.url):  # the secret is not echoed back either
        print("error: the URL carries credentials (user:password@host); 7Maps-bot never sends credentials, "
              "so it never checks such a URL. Remove the userinfo and try again.", file=sys.stderr)
        return 2
    config = _probe_config(args)
    def progress(line: str) -> None:  # on stderr, so stdout (and --json) stays the answer alone
        if not args.quiet:
            print(f"  ... {line}", file=sys.stderr, flush=True)

    text, code = run_probe(args.url, config, args.remote_type, args.json, progress)
    print(text)
    return code


def cmd_run(args: argparse.Namespace) -> int:
    import dagster as dg

    from .defs.home import ensure_dagster_home
    from .defs.launcher import code_location, run_config

    day = parse_day(args.day)
    lake = _lake(args)
    home = ensure_dagster_home(lake)
    print(f"scanning {args.registry} for {day} into {lake.root} (Dagster home {home})", flush=True)
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


def cmd_backfill(args: argparse.Namespace) -> int:
    import dagster as dg

    from .defs.home import ensure_dagster_home
    from .defs.launcher import code_location, run_config
    from .defs.partitions import first_day

    first, last = parse_day(args.first), parse_day(args.last)
    if last < first:
        raise ValueError(f"--to {last} is before --from {first}")
    lake = _existing_lake(args)
    home = ensure_dagster_home(lake)
    start = first_day(lake)
    if first < start:
        raise ValueError(f"--from {first} is before the lake's first day {start} (set SEVENMAPS_FIRST_DAY to "
                         "start the partitions earlier; docs/operations.md)")
    today = dt.datetime.now(dt.UTC).date()
    key = Path(args.signing_key).resolve() if args.signing_key else None
    config = run_config(lake.root, key, log_level="CRITICAL")
    jobs = [("daily_map_job", first, min(last, today))]
    if not args.no_sign and min(last, today - dt.timedelta(days=1)) >= first:
        jobs.append(("sign_day_job", first, min(last, today - dt.timedelta(days=1))))
    print(f"backfilling {first} .. {last} in {lake.root} (Dagster home {home}, partitions from {start})", flush=True)
    with dg.DagsterInstance.get() as instance, code_location(instance) as location:
        for job, a, b in jobs:
            if job == "sign_day_job":
                # Signing signs only days the map job built and checked: an unsigned day it would refuse
                # (stale, or built outside the map job) is rebuilt by the map job first (docs/operations.md,
                # "When a day is stale").
                from .defs.integrity_assets import days_to_rebuild

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
            run = location.run(job, a, b, config)
            if not run.success:
                _say_run_failed(run, f"{job} run {run.run_id} FAILED for {a} .. {b}:")
                return 1
            print(f"{job} run {run.run_id[:8]} succeeded for {a} .. {b} in {time.perf_counter() - t:.1f}s",
                  flush=True)
    print(_range_summary(lake, first, last))
    return 0


def _range_summary(lake: LakePaths, first: dt.date, last: dt.date) -> str:
    from .lake.warehouse import open_warehouse

    with open_warehouse(lake) as con:
        rows = con.execute("SELECT day, endpoints, o, a, p, d, n, signed FROM map_days WHERE day BETWEEN $a AND $b "
                           "ORDER BY day", {"a": first, "b": last}).fetchall()
    lines = [f"  {d}: {e:,} endpoints (o={o:,} a={a:,} p={p:,} d={dd:,} n={n:,}){', signed' if s else ''}"
             for d, e, o, a, p, dd, n, s in rows]
    return "\n".join(lines) if lines else "  (no day of the range has a map: an open day waits for its scan)"


def _day_summary(lake: LakePaths, day: dt.date) -> str:
    """One line: the day's endpoints by code and the checks that landed."""
    from .lake import duck

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


def _score_text(score) -> str:
    lines = [f"{score.version}: {score.label()} over the lines seen"]
    for section, (earned, possible) in score.sections().items():
        lines.append(f"  {section:<20} {earned:g}/{possible:g}")
        for line, result in score.lines:
            if line.section == section:
                mark = "unseen" if not result.seen else ("pass" if result.passed else "fail")
                lines.append(f"    {mark:<6} {result.points:>5g}/{line.points:<3g} {line.label}: {result.evidence}")
    return "\n".join(lines)


def _score_json(score) -> dict:
    return {"version": score.version, "earned": score.earned, "possible": score.possible,
            "sections": {k: {"earned": e, "possible": p} for k, (e, p) in score.sections().items()},
            "lines": [{"section": line.section, "line": line.key, "label": line.label, "max_points": line.points,
                       "seen": r.seen, "passed": r.passed, "points": r.points, "evidence": r.evidence}
                      for line, r in score.lines]}


def _repository_facts(url: str | None) -> dict | None:
    """The code host's answer for --repository (base URL $SEVENMAPS_CODEHOST_URL), or None (unseen) with a note."""
    if not url:
        return None
    from .lookups.codehost import CodeHostClient, RepoStatus, parse_repository_url

    parsed = parse_repository_url(url)
    if parsed is None:
        raise ValueError(f"--repository {url!r} is not a GitHub repository URL (https://github.com/OWNER/REPO)")
    with CodeHostClient() as client:
        status = client.repository(*parsed)
    if isinstance(status, RepoStatus):
        return status.as_facts()
    print(f"note: {url}: {status}; the repository lines are unseen", file=sys.stderr)
    return None


def cmd_readiness(args: argparse.Namespace) -> int:
    import asyncio
    import json

    from .probe.readiness import readiness_one
    from .registry.listing import has_userinfo
    from .rules.readiness import score_mcp

    if has_userinfo(args.url):
        raise ValueError("the URL carries credentials (user:password@host); 7Maps-bot never sends credentials")
    config = _probe_config(args)

    def progress(line: str) -> None:
        if not args.quiet:
            print(f"  ... {line}", file=sys.stderr, flush=True)

    from .lookups.codehost import CodeHostClient, parse_repository_url

    if args.repository and parse_repository_url(args.repository) is None:
        raise ValueError(f"--repository {args.repository!r} is not a GitHub repository URL "
                         "(https://github.com/OWNER/REPO)")
    with CodeHostClient() as codehost:
        row, _, facts = asyncio.run(readiness_one(args.url, config, dt.datetime.now(dt.UTC).date(), progress,
                                                  server_name=args.name, repository_url=args.repository,
                                                  codehost=codehost, bad_call=args.bad_call))
    if row.get("repo_detail"):
        print(f"note: {args.repository}: {row['repo_detail']}; the repository line is unseen", file=sys.stderr)
    score = score_mcp(facts)
    if args.bad_call:
        step5 = {"seen": row.get("bad_call_legible") is not None, "legible": row.get("bad_call_legible"),
                 "tool": row.get("bad_call_tool"), "evidence": row.get("bad_call_evidence") or "no answer was read"}
    else:
        step5 = {"seen": False, "legible": None, "tool": None, "evidence": "off (--bad-call makes the call)"}
    if args.json:
        print(json.dumps({**_score_json(score), "bad_call": step5}, indent=2))
    else:
        mark = "unseen" if not step5["seen"] else ("legible" if step5["legible"] else "not legible")
        tool = f" ({step5['tool']})" if step5["tool"] else ""
        print(_score_text(score) + f"\n  not scored (the rubric has no line for it): step 5, a bad call to a "
              f"read-only tool{tool}: {mark}: {step5['evidence']}")
    return 0


def cmd_readiness_skill(args: argparse.Namespace) -> int:
    import json

    from .rules.readiness import score_skill
    from .rules.skill_md import skill_facts_from_folder

    folder = Path(args.folder)
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder (give the skill's folder, the one holding SKILL.md)")
    facts = skill_facts_from_folder(folder, dt.datetime.now(dt.UTC).date())
    facts.repository = _repository_facts(args.repository)
    score = score_skill(facts)
    print(json.dumps(_score_json(score), indent=2) if args.json else _score_text(score))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from .integrity.status import lake_status, status_text

    lake = _existing_lake(args)
    status = lake_status(lake)
    print(status_text(lake, status))
    return 0 if status.ok else 1


def cmd_serve(args: argparse.Namespace) -> int:
    from .publishing.mapday import latest_built_day
    from .surfaces.serve import serve

    lake = _existing_lake(args)
    day = latest_built_day(lake)
    hosts = [h.strip() for h in (args.allowed_host or []) if h.strip()] or None
    print(f"the map's MCP server on http://{args.host}:{args.port}/mcp (streamable HTTP, stateless, JSON) and "
          f"the site on http://{args.host}:{args.port}/, over {lake.root} "
          f"({'map of ' + day.isoformat() if day else 'no built day yet'}); Ctrl-C stops it", flush=True)
    serve(lake, args.host, args.port, hosts)
    return 0


def cmd_site(args: argparse.Namespace) -> int:
    from .publishing.mapday import latest_built_day
    from .publishing.site import build_site

    lake = _existing_lake(args)
    day = parse_day(args.day) if args.day else latest_built_day(lake)
    if day is None:
        print(f"error: no built day in {lake.root}: build the map first (sevenmaps demo, or the daily job)",
              file=sys.stderr)
        return 2
    result = build_site(lake, day)
    print(f"{day}: {result.pages} pages, {result.badges} badges, {result.proofs} proofs linked, in {result.folder}"
          f"{' (site/current)' if result.current else ''}; {result.seconds:.1f}s"
          f"{f', {result.writers} processes writing server pages' if result.writers > 1 else ''}")
    if result.writers_note:
        print(f"note: {result.writers_note}", file=sys.stderr)
    return 0


def cmd_route(args: argparse.Namespace) -> int:
    from .publishing.mapday import MapDay
    from .surfaces.route import route

    lake = _existing_lake(args)
    with MapDay.open(lake, parse_day(args.day) if args.day else None) as mapday:
        answer = route(mapday, args.task, args.risk, args.limit)
    print(json.dumps(answer, indent=1, default=str))
    return 0


def cmd_opt_out(args: argparse.Namespace) -> int:
    """The opt-out registry: list, add (operator), issue a form token, verify the form's proof."""
    import asyncio

    from .registry import opt_outs

    now = dt.datetime.now(dt.UTC)
    if args.action == "list":
        lake = _existing_lake(args)
        entries = opt_outs.read_opt_outs(lake)
        for e in entries:
            when = e.opted_out_at.isoformat(timespec="seconds") if e.opted_out_at else "-"
            print(f"{e.host:<40} {e.status:<10} {e.how:<9} {when}  {e.note or ''}".rstrip())
        if not entries:
            print(f"no host has opted out ({lake.opt_outs_file} is empty or absent)")
        return 0
    if not args.host:
        raise ValueError(f"opt-out {args.action} needs a HOST")
    lake = _lake(args)
    if args.action == "add":
        entry = opt_outs.record_opt_out(lake, args.host, "operator", now, note=args.note)
        print(f"{entry.host} opted out ({entry.how}, {entry.opted_out_at:%Y-%m-%d %H:%M}Z): never contacted again; "
              "it drops off the map at its next daily check")
        return 0
    if args.action == "issue":
        entry = opt_outs.issue_token(lake, args.host, now)
        print(f"token for {entry.host}: {entry.token}\nthe host publishes it, on a line of its own, at "
              f"https://{entry.host}{opt_outs.OPT_OUT_PATH}; then run `sevenmaps opt-out verify {entry.host}`")
        return 0
    from .probe.opt_out_check import form_proof

    host = opt_outs.normal_host(args.host)
    token = opt_outs.pending_token(lake, host)
    ok, detail = asyncio.run(form_proof(host, token, _probe_config(args)))
    if not ok:
        print(f"not opted out: {detail}", file=sys.stderr)
        return 1
    entry = opt_outs.record_opt_out(lake, host, "form", now, note=detail, token=token)
    print(f"{entry.host} opted out by the form ({detail}): never contacted again")
    return 0


def cmd_owner(args: argparse.Namespace) -> int:
    """Owner claims: list, issue a token, verify it, the owner's note, the five-minute endpoints."""
    import asyncio

    from .registry import owners

    now = dt.datetime.now(dt.UTC)
    if args.action == "list":
        claims = owners.read_claims(_existing_lake(args))
        for c in claims:
            when = c.verified_at.isoformat(timespec="seconds") if c.verified_at else "-"
            print(f"{c.host:<36} {c.status:<9} {when:<26} five-minute: {', '.join(c.five_minute) or 'none'}"
                  + (f"\n  note: {c.note}" if c.note else ""))
        if not claims:
            print("no owner has claimed a host")
        return 0
    if not args.host:
        raise ValueError(f"owner {args.action} needs a HOST")
    lake = _lake(args)
    if args.action == "issue":
        claim = owners.issue_owner_token(lake, args.host, now)
        if claim.status == "verified":
            print(f"{claim.host} is already verified (since {claim.verified_at:%Y-%m-%d %H:%M}Z)")
            return 0
        print(f"token for {claim.host}: {claim.token}\nthe owner publishes it, on a line of its own, at "
              f"https://{claim.host}{owners.OWNER_PATH}; then run `sevenmaps owner verify {claim.host}`")
        return 0
    if args.action == "verify":
        from .probe.opt_out_check import token_proof

        found = owners.claim_of(lake, args.host)
        if found is None:
            raise owners.OwnerClaimError(f"no owner token was issued for {args.host}: `sevenmaps owner issue` first")
        ok, detail = asyncio.run(token_proof(found.host, owners.OWNER_PATH, found.token, _probe_config(args)))
        if not ok:
            print(f"not verified: {detail}", file=sys.stderr)
            return 1
        claim = owners.mark_verified(lake, found.host, now)
        print(f"{claim.host}: owner verified ({detail}); they may add a note and choose up to "
              f"{owners.five_minute_cap()} endpoints for five-minute checks")
        return 0
    if args.action == "note":
        claim = owners.set_note(lake, args.host, args.text or "", now)
        print(f"{claim.host}: note {'set' if claim.note else 'removed'}; shown beside its endpoints' figures")
        return 0
    claim = owners.choose_five_minute(lake, args.host, args.url or [])
    print(f"{claim.host}: five-minute checks for {', '.join(claim.five_minute) or 'no endpoint'}")
    return 0


def cmd_submit(args: argparse.Namespace) -> int:
    """Queue a server for the map (checked every 6 hours for 7 days, then admitted or refused)."""
    from .registry import submissions

    lake = _lake(args)
    config = _probe_config(args)
    entry = submissions.submit(lake, args.url, dt.datetime.now(dt.UTC), host_map=config.host_map or None)
    if entry.status == "queued":
        print(f"{entry.server_key}: queued {entry.submitted_at:%Y-%m-%d %H:%M}Z; checked every 6 hours until "
              f"{entry.window_ends():%Y-%m-%d %H:%M}Z, then admitted or refused with the reason")
    else:
        print(f"{entry.server_key}: already {entry.status} ({entry.reason})")
    return 0


def cmd_submissions(args: argparse.Namespace) -> int:
    from .registry import submissions

    entries = submissions.read_submissions(_existing_lake(args))
    for e in entries:
        print(f"{e.server_key:<40} {e.status:<9} {e.submitted_at:%Y-%m-%d} {e.reason or ''}".rstrip())
    if not entries:
        print("no server has been submitted")
    return 0


def cmd_classify_tools(args: argparse.Namespace) -> int:
    import json

    from .rules.risk import classify

    try:
        tools = json.loads(Path(args.file).read_text() if args.file != "-" else sys.stdin.read())
    except (OSError, ValueError) as exc:
        print(f"error: cannot read a JSON array of tools from {args.file}: {exc}", file=sys.stderr)
        return 2
    if isinstance(tools, dict) and isinstance(tools.get("tools"), list):
        tools = tools["tools"]  # a whole tools/list result
    if not isinstance(tools, list):
        print("error: expected a JSON array of MCP tool objects", file=sys.stderr)
        return 2
    for tool in tools:
        if not isinstance(tool, dict):
            print(json.dumps({"name": None, "risk": None, "rule": "not a tool object", "evidence": []}))
            continue
        result = classify(tool, ignore_annotations=args.ignore_annotations).as_dict()
        print(json.dumps({k: result[k] for k in ("name", "risk", "rule", "evidence", "contradiction", "method")},
                         ensure_ascii=False))
    return 0


def _trust(args: argparse.Namespace):
    """The key the user trusts (--public-key or --vkey; else remembered in --state; else the lake's own,
    which the report then says) and the witnesses with their quorum."""
    from .integrity.note import COSIGNATURE_TYPES, parse_vkey
    from .integrity.verify import Trust

    trust = None
    if getattr(args, "public_key", None) and getattr(args, "vkey", None):
        raise ValueError("give --public-key or --vkey, not both")
    if getattr(args, "public_key", None):
        trust = Trust.from_public_key_file(Path(args.public_key))
    elif getattr(args, "vkey", None):
        trust = Trust.from_vkey(_read_maybe_file(args.vkey))
    witnesses = []
    for text in getattr(args, "witness", None) or []:
        verifier, problem = parse_vkey(_read_maybe_file(text))
        if verifier is None or verifier.sig_type not in COSIGNATURE_TYPES:
            raise ValueError(f"--witness {text[:80]!r}: {problem or 'not a cosignature/v1 (0x04 or 0x06) vkey'}")
        witnesses.append(verifier)
    quorum = getattr(args, "quorum", None)
    if quorum is not None and quorum > len(witnesses):
        raise ValueError(f"--quorum {quorum} needs at least {quorum} --witness keys")
    if witnesses:
        if trust is None:
            from .integrity.verify import trust_from_state

            trust = trust_from_state(Path(args.state)) if getattr(args, "state", None) else None
        if trust is None:
            raise ValueError("--witness needs the log's key too: --public-key FILE or --vkey KEY")
        trust.witnesses, trust.quorum = witnesses, quorum if quorum is not None else len(witnesses)
    return trust


def _read_maybe_file(text: str) -> str:
    """A vkey given as the string itself or as a file holding it."""
    path = Path(text)
    if "+" not in text and path.is_file():
        return path.read_text().strip()
    return text.strip()


def cmd_verify(args: argparse.Namespace) -> int:
    from .integrity.export_check import verify_export
    from .integrity.verify import verify_lake

    trust = _trust(args)
    state = Path(args.state) if args.state else None
    started = time.perf_counter()
    if args.export:
        report = verify_export(Path(args.export), trust, state)
        what = f"snapshot {args.export}"
    else:
        lake = _existing_lake(args)
        report = verify_lake(lake, trust, state)
        what = f"lake {lake.root}"
    print(report.summary())
    print(f"({what}: {report.files_checked:,} files"
          + (f", {report.proofs_checked:,} proofs" if report.proofs_checked else "")
          + f" checked in {time.perf_counter() - started:.1f}s"
          + (f"; trusted key: {report.trusted}" if report.trusted else "") + ")", file=sys.stderr)
    return report.exit_code


def cmd_prove(args: argparse.Namespace) -> int:
    from .integrity.log import read_state
    from .integrity.proof import TlogProof
    from .integrity.roots import read_root, signed_days

    lake = _existing_lake(args)
    wanted = args.path.removeprefix("./")
    at = 0
    for day in signed_days(lake):
        lines = read_root(lake, day)["lines"]
        for i, line in enumerate(lines):
            if line[66:] == wanted:
                state = read_state(lake)
                if at + i >= state.size or state.checkpoint_bytes is None:
                    print(f"error: {wanted} is signed ({day}) but not yet in the log (size {state.size})",
                          file=sys.stderr)
                    return 1
                proof = TlogProof(at + i, state.tree.inclusion_proof(at + i, state.size), state.checkpoint_bytes,
                                  line.encode()).render()
                if args.out:
                    Path(args.out).write_text(proof)
                    print(f"wrote {args.out}: entry {at + i} of {state.origin}, tree size {state.size}")
                else:
                    sys.stdout.write(proof)
                return 0
        at += len(lines)
    print(f"error: {wanted} is in no signed day's lines (give the path as the roots write it, relative to the "
          "lake root, e.g. curated/daily_status/day=2026-11-30/part-0.parquet)", file=sys.stderr)
    return 1


def cmd_verify_proof(args: argparse.Namespace) -> int:
    from .integrity.manifest import sha256_file
    from .integrity.proof import verify_proof

    trust = _trust(args)
    if trust is None or trust.public is None:
        print("error: verify-proof needs the log's key: --vkey KEY (or --public-key FILE)", file=sys.stderr)
        return 2
    from .integrity.note import verifier_for

    try:
        data = Path(args.file).read_bytes()
    except OSError as exc:
        print(f"error: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    name = trust.log_name
    if name is None:  # a PEM key: the log's name is the checkpoint's origin
        from .integrity.proof import parse_proof

        proof, _ = parse_proof(data)
        name = proof.checkpoint.split(b"\n", 1)[0].decode(errors="replace") if proof else "?"
    result, problem = verify_proof(data, verifier_for(name, trust.public), name, trust.witnesses, trust.quorum)
    if result is None:
        print(f"FAILED: {args.file}: {problem}")
        return 1
    digest, path = result.line[:64], result.line[66:]
    print(f"OK: {path} (sha256 {digest}) is entry {result.index} of {result.checkpoint.describe()}"
          + (f", cosigned by {', '.join(result.witnesses)}" if result.witnesses else ""))
    if args.data:
        actual = sha256_file(Path(args.data))
        if actual != digest:
            print(f"FAILED: {args.data} has sha256 {actual}, the logged line says {digest}")
            return 1
        print(f"OK: {args.data} matches the logged line")
    return 0


def cmd_log_check(args: argparse.Namespace) -> int:
    from .integrity.verify import check_log_only

    if args.action == "sync":
        return _log_sync(args)

    started = time.perf_counter()
    lake = _existing_lake(args)
    trust = _trust(args)
    report, compared = check_log_only(lake, trust)
    if report.ok and report.checkpoint:
        print(f"OK: log {report.checkpoint.describe()}: the checkpoint's signature, {compared} tile and entry files "
              f"re-derived from {report.checkpoint.size} entries, every entry a signed line "
              f"({time.perf_counter() - started:.1f}s)")
        for note in report.notes:
            print(f"note: {note}")
        return 0
    print(report.summary())
    return report.exit_code


def _log_sync(args: argparse.Namespace) -> int:
    from .integrity.keys import default_key_path
    from .integrity.roots import complete_signing

    lake = _existing_lake(args)
    before = (lake.log_dir / "checkpoint").is_file()
    synced = complete_signing(lake, Path(args.signing_key) if args.signing_key else default_key_path())
    for problem in synced.problems:
        print(f"warning: {problem}", file=sys.stderr)
    span = "" if not synced.days else str(synced.days[0]) if len(synced.days) == 1 else (
        f"{synced.days[0]} .. {synced.days[-1]}")
    added = f"; appended {len(synced.days)} signed day(s) it lacked ({span})" if synced.days else "; nothing to append"
    print(f"log {synced.state.origin} at size {synced.state.size}: every signed day's lines are in it"
          + added + ("" if before else " (created)"))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from .publishing.export import export_snapshot

    first = parse_day(args.day)
    last = parse_day(args.to) if args.to else first
    result = export_snapshot(_existing_lake(args), first, last, Path(args.out) if args.out else None,
                             progress=lambda msg: print(f"  {msg}", flush=True))
    if not result.created:
        print(f"{result.folder} already exists (snapshots are immutable); left as it is")
        return 0
    print(f"wrote {result.folder}: {result.files} files ({result.bytes / 1e6:.1f} MB) of {len(result.days)} days, "
          f"{result.withheld} withheld (WITHHELD.txt). Check it with:\n"
          f"  sevenmaps verify --export {result.folder} --public-key <the 7maps.json you trust>\n"
          f"  (cd {result.folder} && sha256sum -c --quiet SHA256SUMS)")
    return 0


def cmd_witness(args: argparse.Namespace) -> int:
    import signal

    from .integrity.keys import generate_witness_key, load_witness_key
    from .integrity.note import parse_vkey
    from .integrity.witness import Witness, serve

    logs = []
    for text in args.log:
        verifier, problem = parse_vkey(_read_maybe_file(text))
        if verifier is None:
            print(f"error: --log {text[:80]!r}: {problem}", file=sys.stderr)
            return 2
        logs.append(verifier)
    key_path = Path(args.key)
    if not key_path.exists():
        generate_witness_key(key_path, ed25519=args.ed25519)
        print(f"created {'Ed25519' if args.ed25519 else 'ML-DSA-44'} witness key {key_path} (mode 0600)")
    witness = Witness(args.name, load_witness_key(key_path), logs, Path(args.state))
    server = serve(witness, args.host, args.port)
    host, port = server.server_address[:2]
    host = host.decode() if isinstance(host, bytes) else host
    print(f"witness {args.name} on http://{host}:{port} (POST /add-checkpoint)", flush=True)
    print(f"its cosignature vkey: {witness.verifier.vkey}", flush=True)
    print(f"logs it witnesses: {', '.join(v.name for v in logs)}; state {args.state}", flush=True)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    try:
        while not stop["now"]:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    server.shutdown()
    return 0


def cmd_keygen(args: argparse.Namespace) -> int:
    from .integrity.keys import SigningKeyError, generate_key

    try:
        path = generate_key(Path(args.out), _lake(args))
    except SigningKeyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote Ed25519 signing key {path} (mode 0600). Keep it out of the lake and out of git.")
    return 0


def cmd_sql(args: argparse.Namespace) -> int:
    import contextlib
    import csv
    import json

    from .lake.warehouse import open_warehouse

    lake = _existing_lake(args)
    if not lake.warehouse.exists():
        print(f"error: no warehouse at {lake.warehouse}; run `sevenmaps warehouse` or a pipeline run first",
              file=sys.stderr)
        return 2
    if not args.query.strip():
        print("error: the query is empty; e.g. sevenmaps sql \"SELECT code, count(*) FROM daily_status GROUP BY code\"",
              file=sys.stderr)
        return 2
    if args.format == "parquet" and not args.out:
        print("error: --format parquet writes a file: add --out FILE.parquet", file=sys.stderr)
        return 2
    with open_warehouse(lake) as con:
        relation = con.sql(args.query)
        if relation is None:  # a statement that returns nothing
            return 0
        if args.format == "table" and not args.out:
            relation.show(max_rows=args.max_rows, max_width=200)
            return 0
        if args.format == "parquet":
            relation.write_parquet(args.out)
            print(f"wrote {args.out}", file=sys.stderr)
            return 0
        columns, rows = relation.columns, relation.fetchall()
        target = open(args.out, "w", newline="") if args.out else contextlib.nullcontext(sys.stdout)  # noqa: SIM115
        with target as out:
            if args.format == "json":  # one JSON object per line
                for row in rows:
                    out.write(json.dumps(dict(zip(columns, row, strict=True)), default=str, ensure_ascii=False) + "\n")
            else:
                writer = csv.writer(out)
                writer.writerow(columns)
                writer.writerows(rows)
    return 0


def cmd_warehouse(args: argparse.Namespace) -> int:
    from .lake.warehouse import publish_warehouse

    print(f"published {publish_warehouse(_existing_lake(args), force=True)}")
    return 0


DATA_DICTIONARY_MARKERS = ("<!-- data-dictionary:start -->\n", "<!-- data-dictionary:end -->")


def data_dictionary_text() -> str:
    """The generated part of docs/data-dictionary.md: the assets, then the tables."""
    from .defs.catalog import assets_markdown
    from .lake.schemas import data_dictionary_markdown

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
    import socket

    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OverflowError:
            return "not a port number"
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def cmd_ui(args: argparse.Namespace) -> int:
    from .defs.home import ensure_dagster_home
    from .defs.partitions import first_day

    lake = _lake(args)
    taken = _port_taken(args.port)
    if taken:
        # `dagster dev` would keep running without its webserver, the bind error one line in its log.
        print(f"error: 127.0.0.1:{args.port} is not free for the UI ({taken}); another UI may be running there: "
              "stop it, or pick another port with `sevenmaps ui --port N` (`make ui PORT=N`)", file=sys.stderr)
        return 2
    home = ensure_dagster_home(lake)
    print(f"Dagster UI on http://127.0.0.1:{args.port} (Dagster home {home}, lake {lake.root}, "
          f"partitions from {first_day(lake)})", flush=True)
    os.chdir(PROJECT_ROOT)
    # A command started in the background (`make ui &`) inherits SIGINT ignored, and `dagster dev` then
    # ignores SIGTERM too (it maps SIGTERM to its SIGINT handler): restore both, so Ctrl-C, `kill` and
    # make's forwarding of SIGTERM stop the UI and its processes cleanly.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    dagster = Path(sys.executable).with_name("dagster")
    os.execv(str(dagster), [str(dagster), "dev", "-m", "sevenmaps_pipeline.definitions",
                            "-h", "127.0.0.1", "-p", str(args.port)])
    return 0  # not reached


BENCH_PARTS = ("risk", "lake", "export", "tools", "probe", "registry")


def _bench_each_part_apart(args: argparse.Namespace, parts: tuple[str, ...] = BENCH_PARTS) -> int:
    """`sevenmaps bench` with no --only: each part in a fresh process of its own, one after another, as
    each would run alone (the prober as the scan's own step does): no part's figures carry the heap an
    earlier part left behind. Each starts after the files the one before wrote are on disk."""
    code = 0
    options = ["--servers", str(args.servers), "--days", str(args.days), "--seed", str(args.seed),
               "--endpoints", str(args.endpoints), "--registry-endpoints", str(args.registry_endpoints),
               "--registry-concurrency", str(args.registry_concurrency), "--cpu-hog", str(args.cpu_hog)]
    for part in parts:
        os.sync()
        done = subprocess.run([sys.executable, "-m", "sevenmaps_pipeline.cli", "bench", "--only", part, *options],
                              check=False)
        if done.returncode != 0:
            print(f"[bench] the {part} benchmark ended with exit code {done.returncode}", flush=True)
            code = code or done.returncode
        print(flush=True)
    return code


def cmd_bench(args: argparse.Namespace) -> int:
    """One part with --only; without it, every part, each in a process of its own."""
    if args.only is None:
        return _bench_each_part_apart(args)
    if args.only == "risk":
        from .devtools.risk_corpus import measure, report

        print(report(measure()))
    elif args.only == "lake":
        from .devtools.bench import run_bench

        return run_bench(args.servers, args.days, args.seed)
    elif args.only == "export":
        from .devtools.bench_export import print_export_bench, run_export_bench

        print_export_bench(run_export_bench(args.servers, args.days, args.seed))
    elif args.only == "tools":
        from .devtools.bench_tools import print_tools_bench, run_tools_bench

        print_tools_bench(run_tools_bench(args.servers, args.seed))
    elif args.only == "probe":
        from .devtools.bench_probe import print_probe_bench, run_probe_bench

        print(f"[bench] prober: {args.endpoints:,} fleet endpoints with injected latency, and the naive SDK "
              "baseline ...", flush=True)
        print_probe_bench(run_probe_bench(endpoints=args.endpoints))
    elif args.only == "registry":
        from .devtools.bench_registry import print_registry_bench, run_registry_bench

        print(f"[bench] the whole registry, simulated: {args.registry_endpoints:,} endpoints on loopback virtual "
              "hosts (a few minutes) ...", flush=True)
        print_registry_bench(run_registry_bench(args.registry_endpoints, args.registry_concurrency, args.seed,
                                                cpu_hog=args.cpu_hog))
    return 0


VERIFY_EPILOG = """\
trust:
  Without --public-key or --vkey, the key comes from --state (remembered by an earlier run), and only
  then from the lake's own .well-known/7maps.json, which whoever can write the lake can replace; the
  report says so. Pin the key you got from a source you trust.
examples:
  sevenmaps verify --public-key 7maps.json --state ~/.7maps-state.json
  sevenmaps verify --vkey "$(cat trusted.vkey)" --witness "$(cat w1.vkey)" --quorum 1
  sevenmaps verify --export data_lake/exports/2026-11-24_2026-11-30 --public-key 7maps.json
exit codes: 0 verified, 1 a problem (named with its day and file), 2 no such lake or a bad option, 3 a fork,
  4 the log only behind its roots (a signer stopped between a root and its checkpoint: `sevenmaps log sync`)
"""


def _endpoint_options(p: argparse.ArgumentParser) -> None:
    """The options of a one-endpoint command (probe, readiness), read by _probe_config."""
    p.add_argument("--allow-private", action="store_true",
                   help="an owner checking their own server: allow localhost, private addresses and plain http")
    p.add_argument("--resolve", action="append", metavar="HOST:PORT",
                   help="connect HOST to 127.0.0.1:PORT (like curl --resolve); TLS still checks HOST")
    p.add_argument("--ca-file", help="trust this CA bundle (e.g. a test server's)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr (each step as it goes)")


def _trust_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--public-key", metavar="FILE", help="the key you trust: a PEM file or a 7maps.json")
    p.add_argument("--vkey", help="the log's verifier key '<name>+<id>+<key>' (or a file holding it)")
    p.add_argument("--witness", action="append", metavar="VKEY",
                   help="a witness's cosignature vkey (or a file holding it); repeatable")
    p.add_argument("--quorum", type=int, help="witness cosignatures required (default: every --witness)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sevenmaps", description="A daily, signed map of every remote MCP server in the official registry.",
        epilog=EPILOG + "\n" + EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lake", help="lake root (default: $SEVENMAPS_LAKE, else ./data_lake)")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    # The same options after the subcommand (`sevenmaps verify --lake L`): SUPPRESS keeps the value given
    # before it when they are not repeated.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--lake", default=argparse.SUPPRESS, help="lake root (default: $SEVENMAPS_LAKE, else "
                        "./data_lake)")
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_parser = sub.add_parser

    def command(name: str, **kwargs) -> argparse.ArgumentParser:
        return add_parser(name, parents=[common], **kwargs)

    sub.add_parser = command  # type: ignore[method-assign]

    p = sub.add_parser("demo", help="replay 30 days of the loopback fleet through the prober and Dagster, "
                       "sign, verify, summarise")
    p.add_argument("--synthetic", action="store_true",
                   help="use the synthetic generator instead of the fleet (with --servers and --seed)")
    p.add_argument("--servers", type=int, default=400)
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--signing-key", help="private key path (created if missing; never inside the lake)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("synth", help="land deterministic synthetic raw probes and registry snapshots")
    p.add_argument("--servers", type=int, required=True, help="number of endpoints")
    p.add_argument("--days", type=int, required=True, help="number of UTC days")
    p.add_argument("--seed", type=int, required=True, help="same seed, same lake")
    p.add_argument("--end-day", help="last day, YYYY-MM-DD (default: yesterday, UTC)")
    p.add_argument("--missing-days", type=int, help="days with no run at all (default: days // 15)")
    p.set_defaults(func=cmd_synth)

    p = sub.add_parser("run", help="scan the registry for the open UTC day and build its map (the daily job, "
                       "outside the UI); a day that has passed is never probed")
    p.add_argument("--day", required=True, help="the UTC day, YYYY-MM-DD (must be today to scan)")
    p.add_argument("--registry", default="https://registry.modelcontextprotocol.io", help="registry base URL")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("readiness", help="score one MCP endpoint live on the readiness rubric (mcp-2026-09-11.1), "
                       "with the nightly run's code: p50 is this check's round trip; the namespace line needs "
                       "--name and the repository line --repository, else they are unseen")
    p.add_argument("url")
    p.add_argument("--json", action="store_true", help="one JSON object with every line")
    _endpoint_options(p)
    p.add_argument("--name", help="the server's registry name (io.github.ACCOUNT/... or com.example/...): its "
                   "namespace proof is then seen, as for a registry listing")
    p.add_argument("--repository", help="the server's repository URL (as its registry entry gives it), looked "
                   "up on the code host ($SEVENMAPS_CODEHOST_URL, token from $SEVENMAPS_GITHUB_TOKEN)")
    p.add_argument("--bad-call", action="store_true", help="step 5 of the rubric, off by default and never made "
                   "by the map: call one tool that declares readOnlyHint with deliberately bad arguments and "
                   "judge how legible its error is (a real tool call: only on a server you may call; not scored)")
    p.set_defaults(func=cmd_readiness)

    p = sub.add_parser("readiness-skill", help="score a local Agent Skill folder on the readiness rubric "
                       "(skill-2026-09-11.1; the code-host lines are unseen without a repository)")
    p.add_argument("folder", help="the skill's folder (holding SKILL.md)")
    p.add_argument("--json", action="store_true", help="one JSON object with every line")
    p.add_argument("--repository", help="the skill's repository URL, looked up on the code host "
                   "($SEVENMAPS_CODEHOST_URL, token from $SEVENMAPS_GITHUB_TOKEN)")
    p.set_defaults(func=cmd_readiness_skill)

    p = sub.add_parser("status", help="what ran (days scanned, built, signed), what is late and what waits to be "
                       "signed, and why; exit 1 when something is late")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("serve", help="the map's MCP server for agents (/mcp: route, server_status, verify_lock, "
                       "changes_since, watch, report_road) and the static site for people (/), over the latest "
                       "built day; Ctrl-C stops it")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--allowed-host", action="append", help="a Host header to accept besides the address served "
                   "(behind a proxy: its public name; repeatable). Others are refused (DNS-rebinding guard)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("site", help="build the static site of a built day into site/days/D (the sign job does "
                       "this after each day's snapshot); site/current points at the newest")
    p.add_argument("--day", help="YYYY-MM-DD (default: the latest built day)")
    p.set_defaults(func=cmd_site)

    p = sub.add_parser("route", help="which tools to use for a task, as the MCP server's route answers it (JSON)")
    p.add_argument("task", help="the task, in plain words")
    p.add_argument("--risk", choices=["green", "yellow", "red"], help="the risk the task needs (default: read from "
                   "the task's verbs)")
    p.add_argument("--limit", type=int, default=5)
    p.add_argument("--day", help="YYYY-MM-DD (default: the latest built day)")
    p.set_defaults(func=cmd_route)

    p = sub.add_parser("opt-out", help="the opt-out registry every check reads: `list`; `add HOST` (the operator "
                       "records one); `issue HOST` (a form token the host publishes at /.well-known/7maps-optout.txt); "
                       "`verify HOST` (fetch it: once it holds the token, the host is never contacted again)")
    p.add_argument("action", choices=["list", "add", "issue", "verify"])
    p.add_argument("host", nargs="?", help="the host (it covers every name under it)")
    p.add_argument("--note", help="for add: how the host asked (kept with the entry)")
    _endpoint_options(p)
    p.set_defaults(func=cmd_opt_out)

    p = sub.add_parser("submit", help="queue a server that is not in the registry for the map: checked every 6 "
                       "hours for 7 days, then admitted (it answered reliably, kept one tool list, described every "
                       "tool) or refused with the reason")
    p.add_argument("url", help="the endpoint's https URL")
    _endpoint_options(p)
    p.set_defaults(func=cmd_submit)

    p = sub.add_parser("submissions", help="the submitted servers: queued, admitted or refused, with the reason")
    p.set_defaults(func=cmd_submissions)

    p = sub.add_parser("owner", help="owner claims: `list`; `issue HOST` (a token the owner publishes at "
                       "/.well-known/7maps-owner.txt); `verify HOST`; `note HOST --text ...` (shown beside the "
                       "figures, never in them); `five-minute HOST --url URL ...` (at most 3 endpoints of the host)")
    p.add_argument("action", choices=["list", "issue", "verify", "note", "five-minute"])
    p.add_argument("host", nargs="?", help="the host the owner controls (it covers every name under it)")
    p.add_argument("--text", help="for note: the owner's words (empty removes the note)")
    p.add_argument("--url", action="append",
                   help="for five-minute: an endpoint URL on the host (repeat; none stops them)")
    _endpoint_options(p)
    p.set_defaults(func=cmd_owner)

    p = sub.add_parser("backfill", help="build the map for a range of days, then sign the finished ones, as runs "
                       "of the code location (the UI shows them); a day that has passed is never probed (n)")
    p.add_argument("--from", dest="first", required=True, help="first UTC day, YYYY-MM-DD")
    p.add_argument("--to", dest="last", required=True, help="last UTC day, YYYY-MM-DD")
    p.add_argument("--no-sign", action="store_true", help="build the map only; leave signing to the schedule")
    p.add_argument("--signing-key", help="private key path (default: $SEVENMAPS_SIGNING_KEY, else "
                   "./.secrets/7maps-signing-key.pem)")
    p.set_defaults(func=cmd_backfill)

    p = sub.add_parser("probe", help="check one endpoint the 7Maps way and print everything seen "
                       "(exit 0 when it answers with tools, 3 otherwise)")
    p.add_argument("url")
    p.add_argument("--json", action="store_true", help="one JSON object instead of text")
    p.add_argument("--remote-type", default="streamable-http", choices=["streamable-http", "sse"])
    _endpoint_options(p)
    p.set_defaults(func=cmd_probe)

    p = sub.add_parser("classify-tools", help="risk level of each tool in a JSON array of MCP tools "
                       "(one JSON line per tool: name, risk, rule, evidence)")
    p.add_argument("file", help="a JSON array of tool objects (or a tools/list result); - for stdin")
    p.add_argument("--ignore-annotations", action="store_true", help="decide from names and descriptions only")
    p.set_defaults(func=cmd_classify_tools)

    p = sub.add_parser("verify", help="recompute every signed day from its files and check roots, chain, "
                       "signatures and the log against a key you trust; exit 1 naming the first bad day and file, "
                       "3 on a fork, 4 when the log is only behind its roots",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=VERIFY_EPILOG)
    _trust_options(p)
    p.add_argument("--state", help="remember the checkpoint and key verified here, and next time require the "
                   "log to be consistent with them (a fork otherwise)")
    p.add_argument("--export", metavar="DIR", help="check a snapshot folder offline instead of the lake")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("prove", help="print the C2SP tlog-proof that a signed file's line is in the log")
    p.add_argument("path", help="the file as the roots' lines write it, relative to the lake root")
    p.add_argument("--out", help="write the proof to this file (name it .tlog-proof)")
    p.set_defaults(func=cmd_prove)

    p = sub.add_parser("verify-proof", help="check a .tlog-proof with only the log's key (and witnesses)")
    p.add_argument("file")
    _trust_options(p)
    p.add_argument("--data", help="also check that this file's bytes are the ones the logged line names")
    p.set_defaults(func=cmd_verify_proof)

    p = sub.add_parser("log", help="the transparency log: `log check` re-derives every tile and the checkpoint; "
                       "`log sync` appends signed days the log lacks (a lake signed before the log existed, or a "
                       "signer stopped between a root and its checkpoint: verify's BEHIND)")
    p.add_argument("action", choices=["check", "sync"])
    _trust_options(p)
    p.add_argument("--signing-key", help="for sync: the private key (default: $SEVENMAPS_SIGNING_KEY, else "
                   ".secrets/7maps-signing-key.pem)")
    p.set_defaults(func=cmd_log_check)

    p = sub.add_parser("export", help="write a researcher's snapshot of signed days (Parquet, roots, proofs, "
                       "SHA256SUMS, datapackage.json, README, WITHHELD.txt)")
    p.add_argument("--day", required=True, help="first UTC day, YYYY-MM-DD")
    p.add_argument("--to", help="last UTC day (default: --day)")
    p.add_argument("--out", help="the folder to create (default: <lake>/exports/<day>[_<to>])")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("witness", help="run a C2SP tlog-witness that cosigns only consistent checkpoints")
    p.add_argument("--name", required=True, help="the witness's key name, e.g. witness.example.org/w1")
    p.add_argument("--key", required=True, help="its private key, ML-DSA-44 or Ed25519 (created if missing, "
                   "mode 0600: ML-DSA-44, as C2SP tlog-cosignature recommends, unless --ed25519)")
    p.add_argument("--ed25519", action="store_true", help="create an Ed25519 key (cosignature type 0x04) instead")
    p.add_argument("--log", action="append", required=True, metavar="VKEY",
                   help="a log to witness: its vkey (log/vkey), or a file holding it; repeatable")
    p.add_argument("--state", required=True, help="where it keeps the last checkpoint cosigned per log")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=7380)
    p.set_defaults(func=cmd_witness)

    p = sub.add_parser("keygen", help="create an Ed25519 signing key (mode 0600)")
    p.add_argument("--out", required=True, help="where to write the private key (outside the lake)")
    p.set_defaults(func=cmd_keygen)

    p = sub.add_parser("sql", help="run a query on warehouse.duckdb, read-only")
    p.add_argument("query")
    p.add_argument("--max-rows", type=int, default=40, help="rows shown as a table (default 40)")
    p.add_argument("--format", choices=["table", "csv", "json", "parquet"], default="table",
                   help="table (default), csv, json (one object per line) or parquet (needs --out)")
    p.add_argument("--out", help="write the result to this file instead of the terminal")
    p.set_defaults(func=cmd_sql)

    p = sub.add_parser("warehouse", help="rebuild warehouse.duckdb (views only) and swap it in atomically")
    p.set_defaults(func=cmd_warehouse)

    p = sub.add_parser("data-dictionary", help="print the data dictionary (Markdown) from the schemas")
    p.add_argument("--write", action="store_true", help="replace the generated part of docs/data-dictionary.md")
    p.set_defaults(func=cmd_data_dictionary)

    p = sub.add_parser("ui", help="the Dagster UI over the lake's own Dagster home (<lake>/.dagster unless "
                       "$DAGSTER_HOME is set); Ctrl-C or SIGTERM stops it")
    p.add_argument("--port", type=int, default=3000)
    p.set_defaults(func=cmd_ui)

    p = sub.add_parser("bench", help="100,000 endpoints: 30 days through Dagster, the tool tables at ~20 tools "
                       "per list, and the prober against the fleet: figures and ratios")
    p.add_argument("--servers", type=int, default=100_000)
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--endpoints", type=int, default=2000, help="fleet endpoints for the prober benchmark")
    p.add_argument("--registry-endpoints", type=int, default=25_000,
                   help="endpoints of the simulated registry (the registry benchmark)")
    p.add_argument("--registry-concurrency", type=int, default=256,
                   help="the prober's concurrency for the simulated registry")
    p.add_argument("--cpu-hog", type=int, default=0, metavar="N",
                   help="the registry benchmark with N busy processes beside it for the whole scan (a machine "
                        "someone else is using: answering servers must not be recorded down)")
    p.add_argument("--only", choices=BENCH_PARTS,
                   help="run one benchmark: risk (the words-only estimate on real tools), lake, export (one "
                        "snapshot of the lake's signed day), tools, probe or registry (the whole registry, simulated)")
    p.set_defaults(func=cmd_bench)
    return parser


EXIT_CODES = """exit codes: 0 done; 1 the command found a problem (a failed check or verification, a failed run);
2 a usage or input error, such as a lake that is not there (named in one line); 3 a fork (verify) or an
endpoint not answering (probe); 4 the log behind its signed roots, not forked (verify, log check: run
`sevenmaps log sync`); 130 interrupted"""


def _error_line(exc: BaseException) -> tuple[str, int]:
    """One line saying what went wrong and what to do, and the exit code."""
    import duckdb

    from .integrity.keys import SigningKeyError
    from .integrity.log import LogError
    from .publishing.export import ExportError
    from .publishing.mapday import NoMapError, UnknownServerError

    text = " ".join(str(exc).split())
    if isinstance(exc, (NoMapError, UnknownServerError)):
        return text, 2
    if isinstance(exc, duckdb.IOException) and "lock" in text.lower():
        return (f"{text.split(' See also')[0][:300]}: another process holds this DuckDB file open read-write "
                "(DuckDB allows one writer or many readers); close it and try again"), 2
    if isinstance(exc, duckdb.Error):
        return f"SQL: {text[:500]}", 2
    if isinstance(exc, (SigningKeyError, LogError, ExportError, ValueError)):
        return text, 2
    if isinstance(exc, OSError):
        return f"{exc.strerror or text}: {exc.filename}" if exc.filename else text, 2
    return f"{type(exc).__name__}: {text[:500]} (an error in sevenmaps itself: rerun with --debug and report it)", 1


def main(argv: list[str] | None = None) -> int:
    import warnings

    warnings.filterwarnings("ignore", message=".*is currently in beta.*")
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # `sevenmaps sql ... | head`: the reader left; nothing to say
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - every error is one line unless --debug asks for the traceback
        if args.debug:
            raise
        line, code = _error_line(exc)
        print(f"error: {line}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
