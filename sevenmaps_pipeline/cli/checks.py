"""The commands that check one thing on the spot, outside the daily run: an endpoint (probe, readiness), a
skill's folder (readiness-skill), a list of tools (classify-tools)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from urllib.parse import urlsplit

from ..lookups.codehost import CodeHostClient, RepoStatus, parse_repository_url
from ..probe.config import BAD_CALL_USER_AGENT
from ..probe.loop import run_prober
from ..probe.readiness import readiness_one
from ..probe.report import run_probe
from ..registry.listing import carries_credentials
from ..registry.owners import bad_call_asked, read_claims, verified_owner_of
from ..rules.hosts import host_of
from ..rules.readiness import score_mcp, score_skill
from ..rules.risk import classify
from ..rules.skill_md import skill_facts_from_folder
from .common import _lake, _probe_config


def _endpoint_url(url: str) -> str:
    """The URL as given, or ValueError (exit 2) when it names no endpoint at all: a check of `not-a-url` would
    say "skipped: non-https URL" and offer --allow-private, which cannot help."""
    try:  # .port reads the port: one out of range is a ValueError too (helper-98)
        parts = urlsplit(url)
        whole = (parts.scheme.lower() in ("http", "https") and bool(parts.hostname) and parts.port != 0
                 and not any(c.isspace() for c in parts.netloc))
    except ValueError:  # an unclosed "[" in the host
        whole = False
    if not whole:
        raise ValueError(f"{url!r} is not an endpoint's URL: give it whole, with https:// and the host "
                         "(for example https://mcp.example.com/mcp)")
    return url


def cmd_probe(args: argparse.Namespace) -> int:
    _endpoint_url(args.url)
    if carries_credentials(args.url):  # the secret is not echoed back either
        print("error: the URL carries credentials (user:password@host, or a credential in its query such as "
              "?api_key=); 7Maps-bot never sends credentials, so it never checks such a URL. Remove them and try "
              "again.", file=sys.stderr)
        return 2
    config = _probe_config(args)
    def progress(line: str) -> None:  # on stderr, so stdout (and --json) stays the answer alone
        if not args.quiet:
            print(f"  ... {line}", file=sys.stderr, flush=True)

    text, code = run_probe(args.url, config, args.remote_type, args.json, progress)
    print(text)
    return code


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
    _endpoint_url(args.url)
    if carries_credentials(args.url):
        raise ValueError("the URL carries credentials (user:password@host, or a credential in its query such as "
                         "?api_key=); 7Maps-bot never sends credentials")
    config = _probe_config(args)
    owner = bad_call_asked(_lake(args), host_of(args.url)) if args.bad_call else None
    if args.bad_call and owner is None:  # refused before anything is contacted
        raise ValueError(f"--bad-call makes a real tool call, so it runs only where the host's verified owner asked "
                         f"for it in this lake (`sevenmaps owner bad-call HOST`); {host_of(args.url)} has none")

    def progress(line: str) -> None:
        if not args.quiet:
            print(f"  ... {line}", file=sys.stderr, flush=True)

    if args.repository and parse_repository_url(args.repository) is None:
        raise ValueError(f"--repository {args.repository!r} is not a GitHub repository URL "
                         "(https://github.com/OWNER/REPO)")
    today = dt.datetime.now(dt.UTC).date()
    claim = verified_owner_of(read_claims(_lake(args)), host_of(args.url), today)
    with CodeHostClient() as codehost:
        row, _, facts = run_prober(readiness_one(
            args.url, config, today, progress, server_name=args.name, repository_url=args.repository,
            codehost=codehost, bad_call=args.bad_call, remote_type=args.remote_type,
            owner_claim=(claim.host, claim.verified_at.date()) if claim and claim.verified_at else None))
    if row.get("repo_detail"):
        print(f"note: {args.repository}: {row['repo_detail']}; the repository line is unseen", file=sys.stderr)
    score = score_mcp(facts)
    if args.bad_call:
        step5 = {"seen": row.get("bad_call_legible") is not None, "legible": row.get("bad_call_legible"),
                 "tool": row.get("bad_call_tool"), "evidence": row.get("bad_call_evidence") or "no answer was read",
                 "asked_by_owner_of": owner.host if owner else None, "user_agent": BAD_CALL_USER_AGENT}
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
    folder = Path(args.folder)
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder (give the skill's folder, the one holding SKILL.md)")
    facts = skill_facts_from_folder(folder, dt.datetime.now(dt.UTC).date())
    facts.repository = _repository_facts(args.repository)
    score = score_skill(facts)
    print(json.dumps(_score_json(score), indent=2) if args.json else _score_text(score))
    return 0


def cmd_classify_tools(args: argparse.Namespace) -> int:
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
