"""Once a day per origin: robots.txt (RFC 9309) and the three well-known documents
(docs/methodology.md, "The prober")."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
from protego import Protego

from ..registry.listing import SKIP_NON_PUBLIC
from .config import ROBOTS_TOKEN, ProbeConfig
from .netguard import refused_address
from .redirects import invalid_location, redirect_target
from .wire import read_body

WELL_KNOWN = {
    "oauth_protected_resource": "/.well-known/oauth-protected-resource",
    "agent_card": "/.well-known/agent-card.json",
    "agent_json": "/.well-known/agent.json",
}


@dataclass
class OriginResult:
    origin: str
    fetched_at: dt.datetime
    robots_status: int | None = None
    robots_policy: str = "disallow_all"
    robots_txt: str | None = None
    robots_detail: str = ""
    documents: dict[str, tuple[int | None, str | None]] = field(default_factory=dict)
    # When robots.txt got no HTTP answer at all, the origin itself is unreachable (or timing out): its
    # endpoints get that outcome without being contacted, rather than being called "skipped".
    network_outcome: str | None = None
    # When its name resolves to a non-public address: its endpoints are skipped (off the map, never d).
    skip_reason: str | None = None
    _rules: Protego | None = None

    def allows(self, url: str) -> bool:
        if self.robots_policy == "allow_all":
            return True
        if self.robots_policy == "disallow_all" or self._rules is None:
            return False
        return self._rules.can_fetch(url, ROBOTS_TOKEN)

    def row(self) -> dict[str, Any]:
        row = {"origin": self.origin, "fetched_at": self.fetched_at, "robots_status": self.robots_status,
               "robots_policy": self.robots_policy, "robots_txt": self.robots_txt, "robots_detail": self.robots_detail}
        for name, (status, body) in self.documents.items():
            row[f"{name}_status"], row[f"{name}_json"] = status, body
        return row


async def _get(client: httpx.AsyncClient, url: str, timeout: float, cap: int,
               follow: bool) -> tuple[int | None, bytes, str, str | None]:
    """(status, body, detail, network outcome): the last is 'timeout', 'unreachable' or 'skipped' (the
    name resolves to a non-public address) without an answer. With `follow`, one redirect within the
    same registrable domain over https is followed (the methodology's redirect rule); any other redirect comes
    back as its 3xx status, with the reason in `detail`."""
    try:
        async with asyncio.timeout(timeout):
            for hop in range(2):
                async with client.stream("GET", url) as response:
                    location = response.headers.get("location")
                    if follow and response.is_redirect and location:
                        target, why = redirect_target(url, location)
                        if target is not None and why is None and hop == 0:
                            url = target
                            continue
                        why = why or "a second redirect"
                        return response.status_code, b"", f"redirects to {why}; not followed", None
                    body, problem = await read_body(response, cap)
                    return response.status_code, body, problem or "", None
            raise AssertionError("unreachable: the loop returns or continues once")
    except TimeoutError:
        return None, b"", f"no answer within {timeout:g} s", "timeout"
    except httpx.TimeoutException as exc:
        return None, b"", f"{type(exc).__name__}", "timeout"
    except httpx.HTTPError as exc:
        if invalid_location(exc):
            return 302, b"", "redirects to an invalid Location; not followed", None
        if refused_address(exc):
            return None, b"", f"{SKIP_NON_PUBLIC}: {exc}"[:300], "skipped"
        return None, b"", f"{type(exc).__name__}: {exc}"[:300], "unreachable"


async def check_origin(client: httpx.AsyncClient, config: ProbeConfig, origin: str,
                       fetched_at: dt.datetime, documents: bool = True) -> OriginResult:
    """robots.txt, then (with `documents`) the three well-known documents; the readiness probe asks for
    robots.txt only and for its own documents (probe/surfaces.py)."""
    result = OriginResult(origin=origin, fetched_at=fetched_at)
    # RFC 9309 §2.3.1: follow redirects (rules stay those of this authority) — here only as the methodology's
    # redirect rule allows, once, to the same registrable domain over https; a redirect that may not be
    # followed leaves robots.txt unavailable (§2.3.1.2: like a 4xx, no rules). 4xx: no rules; 5xx or no
    # answer: assume complete disallow. No answer at all also means the origin cannot be reached: its
    # endpoints are recorded with that outcome (d), never contacted, never called skipped. A name that
    # resolves to a non-public address is a skip for all its endpoints.
    status, body, detail, network = await _get(client, origin + "/robots.txt", config.timeouts.robots_txt,
                                               config.robots_max_bytes, follow=True)
    result.robots_status = status
    if status is None:
        result.robots_policy, result.robots_detail = "disallow_all", f"robots.txt unreachable: {detail}"
        if network == "skipped":
            result.skip_reason = SKIP_NON_PUBLIC
        else:
            result.network_outcome = network
        return result
    elif 300 <= status < 400:
        result.robots_policy, result.robots_detail = "allow_all", f"HTTP {status}: {detail}; robots.txt unavailable"
    elif 200 <= status < 300:
        robots = body.decode("utf-8", "replace")
        result.robots_txt = robots
        try:
            result._rules = Protego.parse(robots)
            result.robots_policy, result.robots_detail = "rules", detail or "parsed"
        except Exception as exc:  # noqa: BLE001 - an unparseable file is treated as no rules
            result.robots_policy, result.robots_detail = "allow_all", f"unparseable robots.txt: {exc}"[:300]
    elif 400 <= status < 500:
        result.robots_policy, result.robots_detail = "allow_all", f"HTTP {status}: no robots.txt"
    else:
        result.robots_policy, result.robots_detail = "disallow_all", f"HTTP {status}: assumed complete disallow"
    if not documents:
        return result
    # The methodology: 4 s per origin for the well-known documents, all three together.
    deadline = time.monotonic() + config.timeouts.well_known_per_origin
    for name, path in WELL_KNOWN.items():
        url = origin + path
        left = deadline - time.monotonic()
        if not result.allows(url) or left <= 0:
            result.documents[name] = (None, None)
            continue
        status, body, _, _ = await _get(client, url, left, config.max_small_body_bytes, follow=False)
        text = body.decode("utf-8", "replace") if status == 200 and body else None
        result.documents[name] = (status, text)
    return result

