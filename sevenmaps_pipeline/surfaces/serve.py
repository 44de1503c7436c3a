"""`sevenmaps serve`: one process for agents and people (docs/agents.md "Serving"): the map's MCP server
at /mcp (streamable HTTP, stateless, JSON answers), the latest static site at / (site/current, which
each day's site asset points at its newest day), badges and feeds included, and the live badges, lists and
pages at /live/ (surfaces/live_pages.py: the status shown now, with caching headers). Every connection, request and
tool call is bounded (surfaces/http_bounds.py, surfaces/call_gate.py; docs/agents.md "Limits of the server").
"""

from __future__ import annotations

import datetime as dt
import mimetypes
import os
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from ..lake.paths import LakePaths
from .call_gate import CallGate, MapBusy
from .http_bounds import DEFAULT_LIMITS, BoundedRequests, ServeLimits, bounded_protocol
from .live_pages import CACHE_CONTROL, FRESH_SECONDS, LivePages, NoMapError, matches
from .mcp_server import REPORTS_PER_HOUR, MapService, build_server
from .oplog import OpLog, oplog_folder

SITE_TYPES = {".svg": "image/svg+xml", ".xml": "application/atom+xml", ".json": "application/json",
              ".html": "text/html; charset=utf-8", ".css": "text/css", ".txt": "text/plain; charset=utf-8",
              ".tlog-proof": "text/plain; charset=utf-8"}


# A site file at most this big is read on the event loop itself (a server's page is a few kB, the largest
# feed and JSON files a few hundred): a page then needs no worker thread, and a flood of tool calls, whose
# work holds the interpreter's lock, delays it least (`sevenmaps bench --only serve`).
SMALL_FILE_BYTES = 1024 * 1024
# The site's own paths are short (a server's page: servers/<12 hex>.html); anything longer is not one of them.
MAX_SITE_PATH = 512


def site_file(site_root: Path, path: str) -> Path | None:
    """The file `path` names under the current site, never outside it (no traversal, no symlink out); None
    for any path the site cannot serve: absent, outside, too long, or one the filesystem cannot even name
    (a NUL byte, a name over its limit), so that it is a 404, never an error of ours."""
    if len(path) > MAX_SITE_PATH or "\x00" in path:
        return None
    try:
        current = (site_root / "current").resolve()
        if not current.is_dir():
            return None
        wanted = (current / path.lstrip("/")).resolve()
        if wanted.is_dir():
            wanted = wanted / "index.html"
        if not wanted.is_relative_to(current) or not wanted.is_file():
            return None
    except (OSError, ValueError):  # ENAMETOOLONG, ELOOP, an embedded NUL: not a file of the site
        return None
    return wanted


def make_app(lake: LakePaths, host: str = "127.0.0.1", allowed_hosts: list[str] | None = None,
             clock: Callable[[], dt.datetime] | None = None, reports_per_hour: int = REPORTS_PER_HOUR,
             limits: ServeLimits = DEFAULT_LIMITS, live_fresh_seconds: float = FRESH_SECONDS) -> Starlette:
    gate, service = CallGate(limits.queue_limit, limits.wait_seconds), MapService(lake)
    server = build_server(lake, OpLog.at(oplog_folder(lake)), clock=clock, reports_per_hour=reports_per_hour,
                          gate=gate, service=service)
    live_pages = LivePages(service, gate, live_fresh_seconds)
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
        suffix = {"vkey": ".txt"}.get(found.name, ".tlog-proof" if found.name.endswith(".tlog-proof") else found.suffix)
        kind = SITE_TYPES.get(suffix) or mimetypes.guess_type(found.name)[0] or "application/octet-stream"
        headers = {"Cache-Control": "public, max-age=300", "X-Content-Type-Options": "nosniff",
                   "Content-Security-Policy": SITE_POLICY}
        try:
            size = found.stat().st_size
            if size <= SMALL_FILE_BYTES:  # read here: no thread to wait for while tool calls hold the GIL
                return Response(found.read_bytes(), media_type=kind, headers=headers)
        except OSError:  # gone since it was found (the site moved on to a newer day)
            return PlainTextResponse("not found", status_code=404)
        return FileResponse(found, media_type=kind, headers=headers)

    async def live(request: Request) -> Response:
        path = request.path_params.get("path", "")
        if path in ("", "index.html") or path.startswith(("integrity/", ".well-known/")):  # the site's own
            return RedirectResponse("/" + ("" if path == "index.html" else path), status_code=307)
        try:
            found = await live_pages.get(path[:MAX_SITE_PATH])
        except MapBusy:
            return PlainTextResponse("busy: the map is answering as many calls as it can; try again shortly",
                                     status_code=503, headers={"Retry-After": "5"})
        except NoMapError:  # its words name the lake's folder: not for anonymous callers
            return PlainTextResponse("no map built yet", status_code=404)
        if found is None:
            return PlainTextResponse("not found", status_code=404)
        headers = {"Cache-Control": CACHE_CONTROL, "ETag": found.etag, "X-Content-Type-Options": "nosniff",
                   "Content-Security-Policy": SITE_POLICY, "Age": str(int(time.monotonic() - found.rendered_at))}
        if matches(request.headers.get("if-none-match"), found.etag):
            return Response(status_code=304, headers=headers)
        return Response(found.body, media_type=found.media_type, headers=headers)

    app.router.routes.append(Route("/live/{path:path}", live, methods=["GET", "HEAD"]))
    app.router.routes.append(Route("/", page, methods=["GET", "HEAD"]))
    app.router.routes.append(Route("/{path:path}", page, methods=["GET", "HEAD"]))
    app.user_middleware.insert(0, Middleware(BoundedRequests, in_flight=limits.mcp_in_flight,
                                             max_body=limits.max_body_bytes, max_header=limits.max_header_bytes))
    return app


# What a page of the site or /live/ may load: its own inline style and the site's own images, nothing else (no
# script, frame, form or other origin). The pages need no more, and a server's words that got past the escaping
# could run nothing (helper-84).
SITE_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; form-action 'none'; "
               "frame-ancestors 'none'")


# The proxies whose X-Forwarded-For names the caller (comma-separated addresses): none unless the operator
# names them, so that a caller's address, and so its report limit, is its connection's (docs/agents.md).
TRUSTED_PROXIES_ENV = "SEVENMAPS_TRUSTED_PROXIES"


def server_config(app: Any, host: str, port: int, log_level: str = "warning",
                  limits: ServeLimits = DEFAULT_LIMITS) -> uvicorn.Config:
    """uvicorn's settings for the map's server: forwarded headers only from the proxies the operator names
    ($SEVENMAPS_TRUSTED_PROXIES; uvicorn trusts 127.0.0.1's by default); the bounded h11 protocol (open
    connections, a deadline for each request, headers' size), a short keep-alive and no WebSockets."""
    proxies = [p.strip() for p in os.environ.get(TRUSTED_PROXIES_ENV, "").split(",") if p.strip()]
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, proxy_headers=bool(proxies),
                          forwarded_allow_ips=proxies or None, http=bounded_protocol(limits), ws="none",
                          h11_max_incomplete_event_size=limits.max_header_bytes,
                          timeout_keep_alive=int(limits.keep_alive_seconds), backlog=2048)


# How often the interpreter offers its lock to another thread (Python's default is 5 ms). A tool call's work
# holds it on the map's worker thread; handed over every millisecond, the event loop serving pages waits
# less for it (`sevenmaps bench --only serve`: a page's p95 under a flood 0.28 s at 5 ms, 0.22 s at 1 ms).
SWITCH_INTERVAL_SECONDS = 0.001


class PortTaken(ValueError):
    """The address `sevenmaps serve` was asked to listen on cannot be had (in use, or not this machine's)."""


def listening_socket(host: str, port: int) -> socket.socket:
    """The server's socket, bound before anything says it serves: a port in use is one line and exit 2
    (docs/operations.md "The command line"), never uvicorn's own exit after the banner. SO_REUSEADDR as
    uvicorn sets it, so a port a stopped server left in TIME_WAIT is free."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except (OSError, OverflowError) as exc:
        sock.close()
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise PortTaken(f"cannot serve on {host}:{port} ({why}): another server may be running there; stop it, or "
                        "pick another port with --port N") from None
    sock.set_inheritable(True)
    return sock


def serve(lake: LakePaths, host: str, port: int, allowed_hosts: list[str] | None = None,
          limits: ServeLimits = DEFAULT_LIMITS, sock: socket.socket | None = None) -> None:
    """Serve until interrupted (the whole process is the server's: it sets the interpreter's switch interval),
    on `sock` when the caller bound it already (listening_socket)."""
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
    uvicorn.Server(server_config(make_app(lake, host, allowed_hosts, limits=limits), host, port,
                                 limits=limits)).run(sockets=[sock or listening_socket(host, port)])
