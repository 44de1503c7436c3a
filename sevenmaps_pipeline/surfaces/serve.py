"""`sevenmaps serve`: one process for agents and people (docs/agents.md "Serving"): the map's MCP server
at /mcp (streamable HTTP, stateless, JSON answers) and the latest static site at / (site/current, which
each day's site asset points at its newest day), badges and feeds included.
"""

from __future__ import annotations

import datetime as dt
import mimetypes
from collections.abc import Callable
from pathlib import Path

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route

from ..lake.paths import LakePaths
from .mcp_server import REPORTS_PER_HOUR, build_server
from .oplog import OpLog, oplog_folder

SITE_TYPES = {".svg": "image/svg+xml", ".xml": "application/atom+xml", ".json": "application/json",
              ".html": "text/html; charset=utf-8", ".css": "text/css", ".txt": "text/plain; charset=utf-8",
              ".tlog-proof": "text/plain; charset=utf-8"}


def site_file(site_root: Path, path: str) -> Path | None:
    """The file `path` names under the current site, never outside it (no traversal, no symlink out)."""
    current = (site_root / "current").resolve()
    if not current.is_dir():
        return None
    wanted = (current / path.lstrip("/")).resolve()
    if wanted.is_dir():
        wanted = wanted / "index.html"
    if not wanted.is_relative_to(current) or not wanted.is_file():
        return None
    return wanted


def make_app(lake: LakePaths, host: str = "127.0.0.1", allowed_hosts: list[str] | None = None,
             clock: Callable[[], dt.datetime] | None = None, reports_per_hour: int = REPORTS_PER_HOUR) -> Starlette:
    server = build_server(lake, OpLog.at(oplog_folder(lake)), clock=clock, reports_per_hour=reports_per_hour)
    hosts = allowed_hosts or [host, f"{host}:*", "localhost", "localhost:*", "127.0.0.1", "127.0.0.1:*"]
    app = server.streamable_http_app(
        streamable_http_path="/mcp", json_response=True, stateless_http=True, host=host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                                     allowed_origins=[]))
    site_root = lake.root / "site"

    async def page(request: Request) -> Response:
        found = site_file(site_root, request.path_params.get("path", ""))
        if found is None:
            if not (site_root / "current").exists():
                return PlainTextResponse("no site built yet: the site asset runs after each day is signed "
                                         "(sevenmaps demo builds one)", status_code=404)
            return PlainTextResponse("not found", status_code=404)
        suffix = ".tlog-proof" if found.name.endswith(".tlog-proof") else found.suffix
        kind = SITE_TYPES.get(suffix) or mimetypes.guess_type(found.name)[0] or "application/octet-stream"
        return FileResponse(found, media_type=kind, headers={"Cache-Control": "public, max-age=300",
                                                             "X-Content-Type-Options": "nosniff"})

    app.router.routes.append(Route("/", page, methods=["GET", "HEAD"]))
    app.router.routes.append(Route("/{path:path}", page, methods=["GET", "HEAD"]))
    return app


def serve(lake: LakePaths, host: str, port: int, allowed_hosts: list[str] | None = None) -> None:
    uvicorn.run(make_app(lake, host, allowed_hosts), host=host, port=port, log_level="warning")
