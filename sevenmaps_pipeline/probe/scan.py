"""A day's scan: every listed endpoint once, one request at a time per host, bounded concurrency.

Per host, in order: robots.txt and the well-known documents of its origin, then its endpoints; a
robots.txt that disallows 7Maps-bot (or `*`) turns the endpoint into a skip with that reason.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..lake.keys import origin as origin_of
from ..lake.keys import server_id, server_key
from ..registry.listing import SKIP_ROBOTS, SKIP_SSE_ONLY
from ..rules.fingerprints import summarize_tools
from .checker import CheckResult, EndpointCheck
from .config import PROBER_VERSION, ProbeConfig
from .http import build_client, ssl_context
from .origins import OriginResult, check_origin

Clock = Callable[[], dt.datetime]


@dataclass
class ScanResult:
    probe_rows: list[dict[str, Any]] = field(default_factory=list)
    origin_rows: list[dict[str, Any]] = field(default_factory=list)


def probe_row(check: CheckResult, listing: dict[str, Any], day: dt.date, run_id: str,
              check_kind: str = "daily") -> dict[str, Any]:
    key = listing.get("server_key") or server_key(check.url)
    row: dict[str, Any] = {
        "day": day, "check_kind": check_kind, "run_id": run_id, "server_key": key, "server_id": server_id(key),
        "server_name": listing.get("server_name"), "server_version": listing.get("server_version"),
        "remote_type": listing.get("remote_type"), "url": listing.get("url") or check.url,
        "origin": origin_of(listing.get("url") or check.url), "started_at": check.started_at,
        "handshake_ms": check.handshake_ms, "outcome": check.outcome, "outcome_detail": check.outcome_detail[:2000],
        "http_status": check.http_status, "protocol_version": check.protocol_version,
        "server_info_name": check.server_info_name, "server_info_version": check.server_info_version,
        "pages_read": check.pages_read, "tool_list_complete": check.tool_list_complete,
        "redirect_location": check.redirect_location, "www_authenticate": check.www_authenticate,
        "resource_metadata_url": check.resource_metadata_url, "payment_json": check.payment_json,
        "skip_reason": check.skip_reason, "discover_supported": check.discover_supported, "ttl_ms": check.ttl_ms,
        "cache_scope": check.cache_scope, "prober_version": PROBER_VERSION,
    }
    if check.tools is not None:
        summary = summarize_tools(check.tools)
        row.update(tools_json=summary.tools_json, tool_count=summary.tool_count,
                   tool_list_size=summary.tool_list_size, tools_hash=summary.tools_hash)
    return row


def _skip_row(listing: dict[str, Any], day: dt.date, run_id: str, now: dt.datetime, reason: str) -> dict:
    check = CheckResult(url=listing["url"], started_at=now, outcome="skipped", outcome_detail=reason,
                        skip_reason=reason, handshake_ms=0)
    return probe_row(check, listing, day, run_id)


async def scan(listings: Iterable[dict[str, Any]], day: dt.date, run_id: str, config: ProbeConfig, clock: Clock,
               control_url: str | None = None, progress: Callable[[int, int], None] | None = None) -> ScanResult:
    """Check every endpoint of the snapshot once. Listings that are not to be contacted are recorded as
    skips; sse-only remotes are only opened (seed 004) and recorded as skips too."""
    out = ScanResult()
    to_check: dict[str, dict[str, Any]] = {}
    for listing in listings:
        key = listing.get("server_key")
        if listing.get("listing") == "probe" or (listing.get("listing") == "skip"
                                                  and listing.get("skip_reason") == SKIP_SSE_ONLY):
            if key and key not in to_check:
                to_check[key] = listing
        elif listing.get("listing") == "skip" and key and key not in to_check:
            out.probe_rows.append(_skip_row(listing, day, run_id, clock(), listing["skip_reason"]))
    by_host: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for listing in to_check.values():
        by_host[(urlsplit(listing["url"]).hostname or "").lower()].append(listing)
    context = ssl_context(config)
    semaphore = asyncio.Semaphore(config.concurrency)
    done = 0
    total = len(to_check)

    async def host_worker(listings_of_host: list[dict[str, Any]]) -> None:
        nonlocal done
        async with semaphore, build_client(config, context, max_connections=2) as client:
            origins: dict[str, OriginResult] = {}
            for listing in listings_of_host:
                origin = origin_of(listing["url"])
                if origin not in origins:
                    origins[origin] = await check_origin(client, config, origin, clock())
                    out.origin_rows.append({"day": day, "run_id": run_id, "prober_version": PROBER_VERSION,
                                            **origins[origin].row()})
                seen = origins[origin]
                if seen.network_outcome is not None:
                    check = CheckResult(url=listing["url"], started_at=clock(), outcome=seen.network_outcome,
                                        outcome_detail=f"origin not reachable: {seen.robots_detail}; "
                                                       "the endpoint was not contacted")
                    out.probe_rows.append(probe_row(check, listing, day, run_id))
                elif not seen.allows(listing["url"]):
                    reason = SKIP_ROBOTS
                    if origins[origin].robots_policy == "disallow_all":
                        reason += f" ({origins[origin].robots_detail})"
                    out.probe_rows.append(_skip_row(listing, day, run_id, clock(), reason))
                else:  # robots.txt answered and allows it
                    check = await EndpointCheck(client, config, listing["url"], clock(),
                                                listing.get("remote_type") or "streamable-http").run()
                    out.probe_rows.append(probe_row(check, listing, day, run_id))
                done += 1
                if progress:
                    progress(done, total)

    if control_url:
        async with build_client(config, context, max_connections=2) as client:
            check = await EndpointCheck(client, config, control_url, clock()).run()
        out.probe_rows.append(probe_row(check, {"url": control_url, "server_name": "control"}, day, run_id,
                                        check_kind="control"))
    await asyncio.gather(*(host_worker(group) for group in by_host.values()))
    return out

