"""From what the readiness probe landed (a raw/readiness row and its documents) to the rubric's facts:
the one path the day's tables and `sevenmaps readiness URL` share (docs/methodology.md, "Readiness")."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from .discovery import answered, names_resource, resource_metadata_of
from .namespace import namespace_proof
from .readiness import McpFacts, injection_hits
from .tokens import definition_tokens


def _json(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        return None


def mcp_facts(row: Mapping[str, Any], documents: Mapping[str, Mapping[str, Any]], p50_ms: float | None,
              today: dt.date, from_registry: bool = True, owner_claim: tuple[str, dt.date] | None = None) -> McpFacts:
    """The facts of one readiness check. `documents`: its surfaces rows by surface (`resource_metadata`
    of the endpoint, `registry_auth` of its publisher domain); `p50_ms`: the window's median round trip
    (None: no timed answer in it). `from_registry`: the listing came from the registry snapshot.
    `owner_claim`: (host, day verified) of a verified owner claim covering the endpoint's host."""
    via = row.get("answered_via")
    url = str(row.get("url") or "")
    tools = _json(row.get("tools_json"))
    tools = tools if isinstance(tools, list) else None
    second = _json(row.get("second_tool_names_json"))
    orders = None
    if tools is not None and isinstance(second, list):
        orders = [[str(t.get("name")) if isinstance(t, dict) else "" for t in tools], [str(n) for n in second]]
    # A 401 asks for a token, whether to the handshake or to tools/list after a handshake that answered.
    asks_token = via == "401" or (row.get("outcome") == "needs_auth" and row.get("http_status") == 401)
    metadata_ok = None
    if asks_token and row.get("resource_metadata_url"):
        doc = documents.get("resource_metadata")
        if doc is not None and doc.get("status") is not None:
            ok, _ = answered("resource_metadata", doc.get("status"), doc.get("content_type"), doc.get("body"))
            metadata_ok = ok and names_resource(doc.get("body"), url)
    proof, proof_evidence = _namespace(row.get("server_name"), documents, from_registry, owner_claim)
    repository = None
    if isinstance(row.get("repo_private"), bool):
        repository = {"private": row["repo_private"], "archived": row.get("repo_archived"),
                      "pushed_at": row.get("repo_pushed_at")}
    return McpFacts(
        answered_via=via, outcome=row.get("outcome"), outcome_detail=row.get("outcome_detail"),
        http_status=row.get("http_status"), url_scheme=urlsplit(url).scheme or None,
        redirects_followed=row.get("redirects_followed"), later_redirect=row.get("later_redirect"), p50_ms=p50_ms,
        revision=row.get("protocol_version"), tool_orders=orders,
        # Counted here by the map's rule (rules/tokens.py), never taken from what a probe stored under an
        # earlier one: the same list is the same figure as token_cost's.
        definition_tokens=definition_tokens(tools) if tools is not None else None,
        ttl_ms=row.get("ttl_ms"), cache_scope=row.get("cache_scope"), tools_result_seen=tools is not None,
        tools=tools, tool_list_whole=row.get("tool_list_complete") is not False,
        needs_auth=True if asks_token else (False if via in ("discover", "initialize") else None),
        resource_metadata_url=row.get("resource_metadata_url"), resource_metadata_ok=metadata_ok,
        resource_metadata_refused=resource_metadata_of(row.get("www_authenticate"))[1] if asks_token else None,
        namespace_proof=proof, namespace_evidence=proof_evidence, repository=repository,
        injection_hits=injection_hits(t.get("description") for t in tools if isinstance(t, dict))
        if tools is not None else None,
        today=today)


def _namespace(name: Any, documents: Mapping[str, Mapping[str, Any]], from_registry: bool,
               owner_claim: tuple[str, dt.date] | None) -> tuple[str | None, str | None]:
    """The namespace line's proof: the registry's (an import proves it), else a verified owner claim of the
    host, which [R] counts too ("a verified claim, or an import from the registry"); None: not known."""
    found = None
    if from_registry and isinstance(name, str):
        auth = documents.get("registry_auth")
        http_file = None
        if auth is not None and auth.get("status") is not None:  # asked and answered (else: not seen)
            http_file, _ = answered("registry_auth", auth.get("status"), auth.get("content_type"), auth.get("body"))
        found = namespace_proof(name, from_registry=True, http_file_answers=http_file)
    if owner_claim is not None and (found is None or found.method == "none"):
        host, verified = owner_claim
        return (namespace_proof(name, from_registry, verified_claim=True).method,
                f"a verified owner claim: the owner of {host} proved control of it with 7Maps on "
                f"{verified.isoformat()}; shows who controls the host, not that the product named endorses it")
    return (found.method, found.evidence) if found is not None else (None, None)
