"""What one check of one endpoint found (probe/checker.py fills it; probe/report.py and the scans land it)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from .values import json_int


@dataclass
class CheckResult:
    url: str
    started_at: dt.datetime
    outcome: str = "unreachable"
    outcome_detail: str = ""
    http_status: int | None = None
    handshake_ms: int | None = None
    protocol_version: str | None = None
    server_info_name: str | None = None
    server_info_version: str | None = None
    tools: list[Any] | None = None
    pages_read: int = 0
    tool_list_complete: bool | None = None
    redirect_location: str | None = None
    www_authenticate: str | None = None
    resource_metadata_url: str | None = None  # as stored: a secret parameter's value REDACTED
    # The URL the readiness probe asks for the metadata: the server's own, never stored.
    resource_metadata_target: str | None = None
    # Why the resource_metadata a 401 named is not asked for (not an https URL with a host), when it is not.
    resource_metadata_refused: str | None = None
    payment_json: str | None = None
    skip_reason: str | None = None
    discover_supported: bool | None = None
    ttl_ms: int | None = None
    cache_scope: str | None = None
    session_id: str | None = None
    # The handshake whose result was accepted ("discover" or "initialize"), whatever came after it: a
    # tools/list that then failed leaves it an answer (docs/methodology.md, "Readiness").
    handshake_via: str | None = None
    # A redirect not followed on a later request (the second tools/list, the bad call), which changes no
    # outcome and fails "https, with no redirect chain".
    later_redirect: str | None = None
    # The readiness probe lists the tools a second time: the names in order, or None if not read twice.
    second_tool_names: list[str] | None = None
    # The revisions the server says it supports in the answers this check received, whatever was served
    # (docs/methodology.md, "Readiness": claimed and served revisions): server/discover's supportedVersions,
    # an UnsupportedProtocolVersion error's data.supported. None: it claimed none.
    claimed_versions: list[str] | None = None
    # Whether the answer of the handshake that worked declares the skills extension (None: no capabilities
    # object seen), and how many skills that declaration itself lists (None: it lists none).
    skills_extension: bool | None = None
    skills_count: int | None = None
    # The readiness probe's round trip: ms from sending to the end of the answer that decided how the endpoint
    # answered (discover, initialize or a 401), that request's own (a refused discover before it does not count).
    round_trip_ms: int | None = None
    # Step 5 of the readiness rubric, only when an operator asks (`sevenmaps readiness --bad-call`): the
    # tool called with deliberately bad arguments, whether its error was legible, and what it said.
    bad_call_tool: str | None = None
    bad_call_legible: bool | None = None
    bad_call_evidence: str | None = None
    list_cut: str | None = None  # why the tool list was not read to its end (the page limit, a page, a cursor)
    transcript: list[str] = field(default_factory=list)

    def note(self, line: str) -> None:
        self.transcript.append(line)

    def cut(self, why: str, line: str) -> None:
        """The tool list ends here, not at its end: why (for the detail), and the transcript's line."""
        self.list_cut = why[:200]
        self.note(line)

    def unfinished(self) -> str:
        """What an ok detail adds when the tool list was not read to its end, and why."""
        return "" if self.tool_list_complete else f"; the list was not read to its end: {self.list_cut or 'unknown'}"

    def read_cache_hints(self, result: dict, page: int) -> None:
        """ttlMs and cacheScope of a tools/list result; absent or malformed: null, never a made-up 0. The
        readiness probe reads them on every page in either era (a handshake-era result may carry them too),
        and a list whose later page lacks them does not carry them (docs/methodology.md, "Readiness": the
        cache line); the daily check keeps the 2026-07-28 first page its schema documents."""
        ttl = json_int(result.get("ttlMs"))
        ttl = ttl if ttl is not None and 0 <= ttl < 2**63 else None
        scope = result.get("cacheScope")
        scope = scope[:40] if isinstance(scope, str) and scope else None
        if page == 0:
            self.ttl_ms, self.cache_scope = ttl, scope
        elif (ttl is None or scope is None) and self.ttl_ms is not None:
            self.note(f"tools/list page {page + 1} carries no ttlMs/cacheScope: the list does not")
            self.ttl_ms = self.cache_scope = None
