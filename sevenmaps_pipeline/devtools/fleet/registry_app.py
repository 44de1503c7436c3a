"""A registry on loopback serving the official list API envelope (`/v0.1/servers`, cursor pagination)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

if TYPE_CHECKING:
    from .run import Fleet

PUBLISHED = "2026-09-01T00:00:00Z"


def _official(status: str = "active", latest: bool = True) -> dict:
    return {"io.modelcontextprotocol.registry/official": {
        "status": status, "publishedAt": PUBLISHED, "updatedAt": PUBLISHED, "isLatest": latest}}


def registry_entries(fleet: Fleet) -> list[dict[str, Any]]:
    entries = []
    for h in fleet.hosts:
        if not h.listed:
            continue
        server: dict[str, Any] = {
            "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
            "name": h.registry_name, "description": f"Fleet server {h.name}", "version": "1.0.0",
            "remotes": [{"type": h.remote_type, "url": h.url}]}
        if h.packages:  # as the registry lists them (the fixture's advisories are OSV's, not the registry's)
            server["packages"] = [{k: v for k, v in pkg.items() if k not in ("advisories", "latest")}
                                  | {"transport": {"type": "stdio"}} for pkg in h.packages]
        if h.repository:
            server["repository"] = {"url": f"https://github.com/{h.repository['full_name']}", "source": "github"}
        entries.append({"server": server, "_meta": _official()})
    entries += fleet.timeline.get("extra_listings", [])
    return entries


def registry_app(fleet: Fleet) -> Starlette:
    # A listing pass reads one snapshot: the first page takes it, later pages page through it (as a real
    # registry's cursor does), so 25,000 listings are not rebuilt for each of 250 pages.
    snapshot: list[list[dict[str, Any]]] = []

    async def servers(request: Request) -> JSONResponse:
        if not request.query_params.get("cursor") or not snapshot:
            snapshot[:] = [registry_entries(fleet)]
        entries = snapshot[0]
        if fleet.registry_mode == "legacy_only" and request.url.path.startswith("/v0.1/"):
            return JSONResponse({"title": "Not Found", "status": 404}, status_code=404)
        try:
            limit = min(int(request.query_params.get("limit", "30")), 100, fleet.registry_page_size)
            start = int(request.query_params.get("cursor") or 0)
        except ValueError:
            return JSONResponse({"title": "Bad Request", "status": 400, "detail": "invalid cursor"}, status_code=400)
        page = entries[start:start + limit]
        metadata: dict[str, Any] = {"count": len(page)}
        if fleet.registry_mode == "cursor_loop":
            metadata["nextCursor"] = "0"
        elif start + limit < len(entries):
            # older registries spelled it next_cursor; a fleet day with an odd number answers that way
            metadata["nextCursor" if (start // limit) % 2 == 0 else "next_cursor"] = str(start + limit)
        return JSONResponse({"servers": page, "metadata": metadata})

    return Starlette(routes=[Route("/v0.1/servers", servers), Route("/v0/servers", servers)])
