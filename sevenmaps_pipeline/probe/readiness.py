"""The readiness probe of one MCP endpoint (docs/methodology.md, "Readiness"): the rubric's steps in its
order, as far as one live check can see them. server/discover first, then initialize when discovery
answers nothing; stop at a 401 and read its RFC 9728 resource metadata; read tools/list twice; count the
definition tokens; scan the descriptions. Never a tool call (step 5 of the rubric stays off, so its line
does not exist here). Lines that need history (p50 over a window), the registry's namespace proof or the
code host are left to the callers that have them, and stay unseen otherwise.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from urllib.parse import urlsplit

from ..rules.fingerprints import summarize_tools
from ..rules.namespace import namespace_domain, namespace_proof
from ..rules.readiness import McpFacts, injection_hits
from ..rules.tokens import count_tokens
from .checker import CheckResult, EndpointCheck
from .config import ProbeConfig
from .http import build_client
from .origins import _get
from .report import listing_refusal, robots_refusal


def _names_resource(document: bytes, url: str) -> bool:
    """The RFC 9728 document is a JSON object whose `resource` is this endpoint (or its origin)."""
    try:
        data = json.loads(document)
    except ValueError:
        return False
    resource = data.get("resource") if isinstance(data, dict) else None
    if not isinstance(resource, str):
        return False
    split = urlsplit(url)
    return resource.rstrip("/") in (url.rstrip("/"), f"{split.scheme}://{split.netloc}")


async def readiness_one(url: str, config: ProbeConfig, today: dt.date,
                        progress: Callable[[str], None] | None = None,
                        server_name: str | None = None) -> tuple[CheckResult, McpFacts]:
    """One endpoint's readiness check; with `server_name` (its registry name) the namespace line is seen
    too, its method told by the name and, for a reverse-domain name, by the registry's HTTP file."""
    now = dt.datetime.now(dt.UTC)
    refused = listing_refusal(url, config, "streamable-http", now)
    if refused is not None:  # never contacted: nothing seen
        return refused, facts_from_check(refused, url, 0, None, today)
    async with build_client(config) as client:
        refused, _ = await robots_refusal(client, config, url, now, progress or (lambda _line: None))
        if refused is not None:
            return refused, facts_from_check(refused, url, 0, None, today)
        check = EndpointCheck(client, config, url, now, progress=progress, readiness=True)
        result = await check.run()
        metadata_ok = None
        if result.outcome == "needs_auth" and result.resource_metadata_url:
            if progress:
                progress(f"resource metadata: reading {result.resource_metadata_url} ...")
            status, body, _, _ = await _get(client, result.resource_metadata_url, config.timeouts.well_known_per_origin,
                                            config.max_small_body_bytes, follow=False)
            metadata_ok = status == 200 and _names_resource(body, url)
        proof = None
        if server_name is not None:
            domain = namespace_domain(server_name.split("/", 1)[0])
            http_file = None
            if domain is not None:
                status, body, _, _ = await _get(client, f"https://{domain}/.well-known/mcp-registry-auth",
                                                config.timeouts.well_known_per_origin, 4096, follow=False)
                http_file = status == 200 and body.lstrip().startswith(b"v=MCPv1")
            proof = namespace_proof(server_name, from_registry=True, http_file_answers=http_file)
    facts = facts_from_check(result, url, check.redirects_followed, metadata_ok, today)
    facts.namespace_proof = proof.method if proof is not None else None
    return result, facts


def facts_from_check(result: CheckResult, url: str, redirects: int, metadata_ok: bool | None,
                     today: dt.date) -> McpFacts:
    """What one readiness check shows, as the rubric's facts."""
    if result.outcome == "ok":
        via = "discover" if result.discover_supported else "initialize"
    elif result.outcome == "needs_auth" and result.http_status == 401:
        via = "401"
    elif result.outcome in ("skipped", "prober_error"):
        via = None  # not probed, or our own fault: nothing was seen
    else:
        via = "none"
    tools = result.tools if result.outcome == "ok" else None
    names = [str(t.get("name")) if isinstance(t, dict) else "" for t in tools] if tools is not None else None
    orders = [names, result.second_tool_names] if names is not None and result.second_tool_names is not None \
        else None
    return McpFacts(
        answered_via=via, url_scheme=urlsplit(url).scheme, redirects_followed=redirects,
        # One check's round trip stands in for p50 here; the daily assets take the window's median.
        p50_ms=float(result.handshake_ms) if via in ("discover", "initialize", "401") and result.handshake_ms
        is not None else None,
        revision=result.protocol_version if result.outcome == "ok" else None,
        tool_orders=orders,
        definition_tokens=count_tokens(summarize_tools(tools).tools_json) if tools is not None else None,
        ttl_ms=result.ttl_ms, cache_scope=result.cache_scope, tools_result_seen=tools is not None, tools=tools,
        needs_auth=True if via == "401" else (False if via in ("discover", "initialize") else None),
        resource_metadata_ok=metadata_ok,
        injection_hits=injection_hits(t.get("description") for t in tools if isinstance(t, dict))
        if tools is not None else None,
        today=today)
