"""The commands that decide what the map checks: opt-outs, owner claims, and submitted servers."""

from __future__ import annotations

import argparse
import datetime as dt
import sys

from ..probe.loop import run_prober
from ..probe.opt_out_check import form_proof, token_proof
from ..registry import opt_outs, owners, submissions
from .common import _existing_lake, _lake, _probe_config, terminal_safe


def cmd_opt_out(args: argparse.Namespace) -> int:
    """The opt-out registry: list, add (operator), issue a form token, verify the form's proof."""
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
        print(f"token for {entry.host}: {entry.token}\nthe host publishes it alone, as text/plain (valid 7 days), at "
              f"https://{entry.host}{opt_outs.OPT_OUT_PATH}; then run `sevenmaps opt-out verify {entry.host}`")
        return 0
    host = opt_outs.normal_host(args.host)
    token = opt_outs.pending_token(lake, host, now)
    ok, detail = run_prober(form_proof(host, token, _probe_config(args)))
    if not ok:
        print(f"not opted out: {detail}", file=sys.stderr)
        return 1
    entry = opt_outs.record_opt_out(lake, host, "form", now, note=detail, token=token)
    print(f"{entry.host} opted out by the form ({detail}): never contacted again")
    return 0


def cmd_owner(args: argparse.Namespace) -> int:
    """Owner claims: list, issue a token, verify it, the owner's note, the five-minute endpoints."""
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
        print(f"token for {claim.host}: {claim.token}\nthe owner publishes it alone, as text/plain (valid 7 days), at "
              f"https://{claim.host}{owners.OWNER_PATH}; then run `sevenmaps owner verify {claim.host}`")
        return 0
    if args.action == "verify":
        found = owners.pending_claim(lake, args.host, now)
        ok, detail = run_prober(token_proof(found.host, owners.OWNER_PATH, found.token, _probe_config(args)))
        if not ok:
            print(f"not verified: {detail}", file=sys.stderr)
            return 1
        claim = owners.mark_verified(lake, found.host, now)
        print(f"{claim.host}: owner verified ({detail}); they may add a note and choose up to "
              f"{owners.five_minute_cap()} endpoints for five-minute checks")
        return 0
    if args.action == "bad-call":
        claim = owners.ask_bad_call(lake, args.host, not args.off)
        print(f"{claim.host}: the bad-call step (one tools/call with bad arguments, under its own user agent) is "
              + ("asked for by its owner" if claim.bad_call else "not asked for: it is never made"))
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
    lake = _lake(args)
    config = _probe_config(args)
    entry = submissions.submit(lake, args.url, dt.datetime.now(dt.UTC), host_map=config.host_map or None)
    if entry.status == "queued":
        print(f"{entry.server_key}: queued {entry.submitted_at:%Y-%m-%d %H:%M}Z; checked every 6 hours until "
              f"{entry.window_ends():%Y-%m-%d %H:%M}Z, then admitted or refused with the reason")
    else:
        print(terminal_safe(f"{entry.server_key}: already {entry.status} ({entry.reason})"))
    return 0


def cmd_submissions(args: argparse.Namespace) -> int:
    entries = submissions.read_submissions(_existing_lake(args))
    for e in entries:
        # a refusal's reason may quote a server's tool names (helper-86): shown without its escapes
        print(terminal_safe(f"{e.server_key:<40} {e.status:<9} {e.submitted_at:%Y-%m-%d} {e.reason or ''}".rstrip()))
    if not entries:
        print("no server has been submitted")
    return 0
