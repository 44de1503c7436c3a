"""The readiness probe of one MCP endpoint, live (`sevenmaps readiness URL`): the daily runs' own code
(probe/readiness_scan.py) over a single listing, and its facts read the way the day's tables read them
(rules/readiness_facts.py). Lines that need history (p50 over a window) use what this one check saw; the
namespace line needs the registry name (`server_name`), the repository line the repository URL.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from ..lake.keys import server_id, server_key
from ..lookups.codehost import CodeHostClient
from ..rules.readiness import McpFacts
from ..rules.readiness_facts import mcp_facts
from .config import ProbeConfig
from .readiness_scan import ReadinessRows, check_row, readiness_scan
from .report import listing_refusal


def documents_of(row: dict[str, Any], surfaces: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The surfaces rows the rubric reads for one check: its RFC 9728 metadata and its domain's proof file."""
    out = {}
    for doc in surfaces:
        if doc["surface"] == "resource_metadata" and doc["subject"] == row["server_key"]:
            out["resource_metadata"] = doc
        elif doc["surface"] == "registry_auth" and doc["subject"] == row.get("publisher_domain"):
            out["registry_auth"] = doc
    return out


async def readiness_one(url: str, config: ProbeConfig, today: dt.date,
                        progress: Callable[[str], None] | None = None, server_name: str | None = None,
                        repository_url: str | None = None, codehost: CodeHostClient | None = None,
                        bad_call: bool = False, owner_claim: tuple[str, dt.date] | None = None,
                        remote_type: str = "streamable-http") -> tuple[dict[str, Any], ReadinessRows, McpFacts]:
    """One endpoint's readiness check: its raw row, every row it landed, and the rubric's facts. With
    `bad_call` (an operator's explicit choice; never the map's) step 5 is made: one call with bad arguments
    to a tool that declares readOnlyHint, its error judged for legibility (not scored: no rubric line).
    `owner_claim`: (host, day verified) of the host's verified owner claim in the lake, for the namespace line.
    `remote_type` "sse": a legacy HTTP+SSE endpoint, read over that transport (probe/sse_readiness.py)."""
    now = dt.datetime.now(dt.UTC)
    key = server_key(url)
    listing = {"server_key": key, "server_id": server_id(key), "server_name": server_name, "url": url,
               "remote_type": remote_type, "listing": "probe", "repository_url": repository_url}
    refused = listing_refusal(url, config, remote_type, now)
    rows = ReadinessRows()
    if refused is not None:  # never contacted: nothing seen
        row = check_row(refused, listing, today, "readiness-cli", None)
        return row, rows, mcp_facts(row, {}, None, today, from_registry=False, owner_claim=owner_claim)
    await readiness_scan([listing], today, "readiness-cli", config, lambda: dt.datetime.now(dt.UTC), rows,
                         codehost if repository_url else None, step_progress=progress, _operator_bad_call=bad_call)
    row = rows.checks[0]
    p50 = float(row["round_trip_ms"]) if row.get("round_trip_ms") is not None else None
    return row, rows, mcp_facts(row, documents_of(row, rows.surfaces), p50, today,
                                from_registry=server_name is not None, owner_claim=owner_claim)
