"""`sevenmaps probe URL`: one endpoint, checked and shown as a person (or a program) wants to read it."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from ..lake.keys import origin as origin_of
from ..registry.listing import PROBE, ListingDecision, Malformed, SkipReason, listing_decision
from .checker import CheckResult, EndpointCheck
from .config import ProbeConfig
from .http import build_client
from .origins import OriginResult, check_origin


def listing_refusal(url: str, config: ProbeConfig, remote_type: str, now: dt.datetime) -> CheckResult | None:
    """The listing rules, as the map applies them (with --allow-private an owner asks for a check of their
    own server: private names and plain http are allowed); a refused URL is never contacted."""
    if config.allow_private:
        decision = PROBE
        if urlsplit(url).scheme not in ("http", "https"):
            decision = ListingDecision("malformed", Malformed.NOT_HTTP)
    else:
        decision = listing_decision(url, remote_type, opted_out=config.opted_out_hosts,
                                    host_map=config.host_map or None)
    if decision.verdict != "probe" and not (remote_type == "sse" and decision.kind is SkipReason.SSE_ONLY):
        return CheckResult(url=url, started_at=now, outcome="skipped", outcome_detail=decision.text or "",
                           skip_reason=decision.text, handshake_ms=0)
    return None


async def robots_refusal(client, config: ProbeConfig, url: str, now: dt.datetime,
                         say: Callable[[str], None]) -> tuple[CheckResult | None, OriginResult | None]:
    """robots.txt, read as the daily scan reads it (not for an owner's --allow-private check, as for the
    owner-asked five-minute checks)."""
    if config.allow_private:
        return None, None
    say(f"robots.txt: reading {origin_of(url)}/robots.txt ...")
    origin = await check_origin(client, config, origin_of(url), now)
    say(f"robots.txt: {origin.robots_policy}")
    # No answer at all: the check itself shows what is wrong with the host (as before robots_unavailable).
    if not (origin.unavailable is not None and origin.robots_status is None) and not origin.allows(url):
        reason = f"{SkipReason.ROBOTS} ({origin.robots_detail})"
        return CheckResult(url=url, started_at=now, outcome="skipped", outcome_detail=reason, skip_reason=reason,
                           handshake_ms=0), origin
    return None, origin


async def probe_one(url: str, config: ProbeConfig, remote_type: str = "streamable-http",
                    progress: Callable[[str], None] | None = None,
                    ) -> tuple[CheckResult, OriginResult | None, str | None]:
    """Apply the listing rules and robots.txt, then check the endpoint."""
    now = dt.datetime.now(dt.UTC)
    refused = listing_refusal(url, config, remote_type, now)
    if refused is not None:
        return refused, None, refused.skip_reason
    say = progress or (lambda _line: None)
    async with build_client(config) as client:
        refused, origin = await robots_refusal(client, config, url, now, say)
        if refused is not None:
            return refused, origin, refused.skip_reason
        check = await EndpointCheck(client, config, url, now, remote_type, progress=progress).run()
    return check, origin, None


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
    said = f"{check.skip_reason or ''} {check.outcome_detail or ''}"
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
    check, origin, _ = asyncio.run(probe_one(url, config, remote_type, progress))
    text = json.dumps(as_json(check, origin), indent=2, default=str) if want_json else as_text(check, origin)
    return text, 0 if check.outcome == "ok" else 3

