"""`sevenmaps probe URL`: one endpoint, checked and shown as a person (or a program) wants to read it."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from ..lake.keys import origin as origin_of
from ..registry.listing import PROBE, ListingDecision, Malformed, SkipReason, is_opted_out, listing_decision
from ..rules.hosts import host_of
from ..rules.outcomes import NOT_CHECKED, ROBOTS_UNAVAILABLE, not_checked_detail
from .checker import CheckResult, EndpointCheck
from .config import ProbeConfig
from .hosts import Admission, HostRunner, HostSession, Robots
from .loop import run_prober
from .origins import OriginResult


def listing_refusal(url: str, config: ProbeConfig, remote_type: str, now: dt.datetime) -> CheckResult | None:
    """The listing rules, as the map applies them (with --allow-private an owner asks for a check of their
    own server: private names and plain http are allowed, an opted-out host still is not); a refused URL is
    never contacted."""
    if config.allow_private:
        decision = PROBE
        if urlsplit(url).scheme not in ("http", "https"):
            decision = ListingDecision("malformed", Malformed.NOT_HTTP)
        elif is_opted_out(host_of(url), config.opted_out_hosts):
            decision = ListingDecision("skip", SkipReason.OPTED_OUT)
    else:
        decision = listing_decision(url, remote_type, opted_out=config.opted_out_hosts,
                                    host_map=config.host_map or None)
    if decision.verdict != "probe" and not (remote_type == "sse" and decision.kind is SkipReason.SSE_ONLY):
        return CheckResult(url=url, started_at=now, outcome="skipped", outcome_detail=decision.text or "",
                           skip_reason=decision.text, handshake_ms=0)
    return None


def _refused(url: str, now: dt.datetime, refused: Admission) -> CheckResult:
    """What the host runner would not let us contact, as a check that was not made."""
    seen = refused.seen
    if refused.kind is SkipReason.OPTED_OUT or seen is None:
        reason = str(refused.kind or SkipReason.OPTED_OUT)
    elif refused.kind is None:  # robots.txt could not be read: our trouble, n (docs/methodology.md)
        detail = not_checked_detail(ROBOTS_UNAVAILABLE, f"{seen.unavailable}; the endpoint was not contacted")
        return CheckResult(url=url, started_at=now, outcome=NOT_CHECKED, outcome_detail=detail, handshake_ms=0)
    elif refused.kind is SkipReason.NON_PUBLIC:
        reason = f"{seen.skip_reason} ({seen.robots_detail})"
    else:
        reason = f"{SkipReason.ROBOTS} ({seen.robots_detail})"
    return CheckResult(url=url, started_at=now, outcome="skipped", outcome_detail=reason, skip_reason=reason,
                       handshake_ms=0)


async def probe_one(url: str, config: ProbeConfig, remote_type: str = "streamable-http",
                    progress: Callable[[str], None] | None = None,
                    ) -> tuple[CheckResult, OriginResult | None, str | None]:
    """Apply the listing rules, then the lake's opt-outs and robots.txt as the scan applies them (through the
    host runner, probe/hosts.py: also with --allow-private), then check the endpoint."""
    now = dt.datetime.now(dt.UTC)
    refused = listing_refusal(url, config, remote_type, now)
    if refused is not None:
        return refused, None, refused.skip_reason
    say = progress or (lambda _line: None)

    async def fetched(origin: str, fetch: Callable[[], Awaitable[OriginResult]]) -> OriginResult:
        say(f"robots.txt: reading {origin}/robots.txt ...")
        result = await fetch()
        say(f"robots.txt: {result.robots_policy}")
        return result

    runner: HostRunner[str] = HostRunner(config, lambda: dt.datetime.now(dt.UTC),
                                         Robots(lambda _book, _origin, _now: None, fetched=fetched))
    done: list[CheckResult] = []
    errors: list[BaseException] = []

    async def work(session: HostSession, _url: str) -> None:
        admission = await session.admission(url)
        if admission is not None:
            done.append(_refused(url, now, admission))
        else:
            done.append(await EndpointCheck(session.client_for(url), config, url, now, remote_type,
                                            progress=progress).run())

    await runner.run({host_of(url): [url]}, work, lambda _item, exc, _whole: errors.append(exc))
    if errors:
        raise errors[0]
    check = done[0]
    return check, runner.origins.get(origin_of(url)), check.skip_reason if check.outcome == "skipped" else None


def as_json(check: CheckResult, origin: OriginResult | None) -> dict[str, Any]:
    return {
        "url": check.url, "outcome": check.outcome, "outcome_detail": check.outcome_detail,
        "http_status": check.http_status, "protocol_version": check.protocol_version,
        "server_info": {"name": check.server_info_name, "version": check.server_info_version}
        if check.server_info_name is not None else None,
        "tool_count": len(check.tools) if check.tools is not None else None, "tools": check.tools,
        "pages_read": check.pages_read, "tool_list_complete": check.tool_list_complete,
        "handshake_ms": check.handshake_ms, "redirect_location": check.redirect_location,
        "www_authenticate": check.www_authenticate, "resource_metadata_url": check.resource_metadata_url,
        "payment_json": check.payment_json, "skip_reason": check.skip_reason,
        "discover_supported": check.discover_supported, "ttl_ms": check.ttl_ms, "cache_scope": check.cache_scope,
        "robots_policy": origin.robots_policy if origin else None, "transcript": check.transcript,
        "hint": owner_hint(check),
    }


# What the map never checks but an owner may, with --allow-private (probe_one).
OWNER_MAY_CHECK = (SkipReason.NOT_HTTPS, SkipReason.IP, SkipReason.PRIVATE, SkipReason.NON_PUBLIC)


def owner_hint(check: CheckResult) -> str | None:
    """A line for `sevenmaps probe` when the check was refused for what only the map refuses."""
    # Only a skip of ours: an outcome's detail may quote what a server said ("not on the allow list").
    said = f"{check.skip_reason or ''} {check.outcome_detail or ''}" if check.outcome == "skipped" else ""
    if any(reason in said for reason in OWNER_MAY_CHECK):
        return ("checking your own server? `sevenmaps probe URL --allow-private` allows localhost, private "
                "addresses and plain http (the map itself never checks them)")
    return None


def as_text(check: CheckResult, origin: OriginResult | None) -> str:
    lines = [f"{check.url}", f"  outcome       {check.outcome}  {check.outcome_detail}"]
    hint = owner_hint(check)
    if hint:
        lines.append(f"  hint          {hint}")
    if origin:
        lines.append(f"  robots.txt    {origin.robots_policy} ({origin.robots_detail})")
    for step in check.transcript:
        lines.append(f"  . {step}")
    facts = [("HTTP status", check.http_status), ("protocol", check.protocol_version),
             ("server", f"{check.server_info_name} {check.server_info_version}" if check.server_info_name else None),
             ("handshake", f"{check.handshake_ms} ms" if check.handshake_ms is not None else None),
             ("redirect to", check.redirect_location), ("WWW-Authenticate", check.www_authenticate),
             ("resource metadata", check.resource_metadata_url), ("payment", check.payment_json),
             ("2026-07-28", f"discover {check.discover_supported}, ttlMs {check.ttl_ms}, cacheScope "
                            f"{check.cache_scope}" if check.discover_supported else None)]
    lines += [f"  {k:<13} {v}" for k, v in facts if v is not None]
    if check.tools is not None:
        state = "complete" if check.tool_list_complete else "INCOMPLETE"
        lines.append(f"  tools         {len(check.tools)} in {check.pages_read} page(s), {state}")
        for tool in check.tools:
            if isinstance(tool, dict):
                desc = str(tool.get("description") or "").replace("\n", " ")
                ann = tool.get("annotations")
                lines.append(f"    - {tool.get('name')}: {desc[:90]}" + (f"  {json.dumps(ann)}" if ann else ""))
    return "\n".join(lines)


def run_probe(url: str, config: ProbeConfig, remote_type: str, want_json: bool,
              progress: Callable[[str], None] | None = None) -> tuple[str, int]:
    check, origin, _ = run_prober(probe_one(url, config, remote_type, progress))
    text = json.dumps(as_json(check, origin), indent=2, default=str) if want_json else as_text(check, origin)
    return text, 0 if check.outcome == "ok" else 3

