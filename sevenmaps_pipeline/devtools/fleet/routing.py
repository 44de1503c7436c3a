"""The fleet's router: every request goes by its Host header to the app serving that host, after the doors
every fleet host shares (robots.txt, the server card, /.well-known/) and the host's state of the day."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.responses import JSONResponse, PlainTextResponse, Response

from . import apps
from .publisher import publisher_app
from .registry_app import registry_app

if TYPE_CHECKING:
    from .run import Fleet, FleetHost

REGISTRY_HOST = "registry.test"
# The benchmarks' shared servers: kind -> the SDK behaviour behind all of its names. A bench host may list
# many endpoints (`/<anything>/mcp`, as a gateway does); all reach its kind's one server.
BENCH_KINDS = {"bench": "mcp_json", "bench_paginated": "mcp_paginated"}
CONTROL_HOST = "control.sevenmaps.test"


def request_host(scope: dict) -> tuple[str, dict[str, str]]:
    """The host a request is for (its Host header without the port, lower case), and all its headers."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    return headers.get("host", "").split(":")[0].lower(), headers


def host_apps(fleet: Fleet) -> tuple[dict[str, Any], list[Any]]:
    """The app behind each host name, and the SDK apps among them (the router runs their lifespans)."""
    routes: dict[str, Any] = {}
    children: list[Any] = []
    shared: dict[str, Any] = {}
    state = fleet.state
    for h in fleet.hosts:
        if h.kind in BENCH_KINDS:  # many hosts, one SDK server per kind: the benchmarks' fleets
            if h.kind not in shared:
                state.by_server[h.kind] = state.today(h.name)
                shared[h.kind] = apps.mcp_app(h.kind, "*", BENCH_KINDS[h.kind], state, "/mcp")
                children.append(shared[h.kind])
            routes[h.host] = shared[h.kind]
        elif h.kind in apps.MCP_KINDS:
            app = apps.mcp_app(h.name, h.host, h.kind, state, h.path, h.extensions)
            children.append(app)
            routes[h.host] = apps.modern_only(app) if h.kind == "mcp_modern" else (
                apps.handshake_only(app) if h.kind == "mcp_handshake" else app)
        elif h.kind == "legacy_sse":
            app = apps.legacy_sse_app(h.name, h.host, state)
            children.append(app)
            routes[h.host] = app
        else:
            routes[h.host] = apps.static_app(h.kind, h.host, h.redirect_to, state.slow_seconds)
    control = apps.mcp_app("control", CONTROL_HOST, "mcp_json", state)
    state.by_server["control"] = apps.ServerDay(tools=[{"name": "ping", "inputSchema": {"type": "object"}}])
    children.append(control)
    routes[CONTROL_HOST] = control
    routes[REGISTRY_HOST] = registry_app(fleet)
    for domain, config in fleet.publishers.items():
        routes[domain] = publisher_app(config)
    routes.update(fleet.extra_apps)
    # An extra app that is Starlette's (an SDK server's) has a lifespan to run, as the fleet's own do.
    children += [app for app in fleet.extra_apps.values() if isinstance(app, Starlette)]
    return routes, children


class HostRouter:
    """The ASGI app behind every fleet name: a fleet host's shared doors and its state of the day first,
    then the host's own app (`routes`); 421 for a host the fleet does not serve."""

    def __init__(self, routes: dict[str, Any], children: list[Any], hosts: list[FleetHost],
                 state: apps.FleetState):
        self.routes = routes
        self.children = children
        self.by_host = {h.host: h for h in hosts}
        self.state = state
        # How many times each host's "BROKEN ONCE" robots.txt was asked for.
        self.robots_broken: dict[str, int] = {}

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        host, headers = request_host(scope)
        fleet_host = self.by_host.get(host)
        path = scope.get("path", "")
        if fleet_host is not None:
            if await self._shared_door(fleet_host, host, headers, scope, receive, send):
                return
            today = self.state.today(fleet_host.name)
            if await apps.respond_for_state(today.state, host, scope, receive, send, self.state.slow_seconds):
                return
            if fleet_host.kind in BENCH_KINDS and path.endswith("/mcp") and path != "/mcp":
                scope = {**scope, "path": "/mcp", "raw_path": b"/mcp"}
        app = self.routes.get(host)
        if app is None:
            await Response("unknown host", status_code=421)(scope, receive, send)
            return
        await app(scope, receive, send)

    async def _lifespan(self, receive: Callable, send: Callable) -> None:
        """Start every SDK app's lifespan with the server's, end them with it."""
        async with contextlib.AsyncExitStack() as stack:
            for child in self.children:
                await stack.enter_async_context(child.router.lifespan_context(child))
            message = await receive()
            assert message["type"] == "lifespan.startup"
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
        await send({"type": "lifespan.shutdown.complete"})

    async def _shared_door(self, fleet_host: FleetHost, host: str, headers: dict[str, str], scope: dict,
                           receive: Callable, send: Callable) -> bool:
        """Answer robots.txt, the server card or a /.well-known/ document, whatever the host's state; False
        for any other path."""
        path = scope.get("path", "")
        if path == "/robots.txt":
            await self._robots(fleet_host, host, scope, receive, send)
            return True
        if fleet_host.server_card is not None and path == fleet_host.path + "/server-card":
            accept, etag = headers.get("accept", ""), fleet_host.card_etag
            tag = {"ETag": etag} if etag else {}
            if etag and headers.get("if-none-match") == etag:  # unchanged since the client's copy
                response: Response = Response(status_code=304, headers=tag)
            elif "application/mcp-server-card+json" in accept:
                response = JSONResponse(fleet_host.server_card, media_type="application/mcp-server-card+json",
                                        headers=tag)
            else:
                response = Response(status_code=406)
        elif path.startswith("/.well-known/"):
            doc = fleet_host.well_known.get(path)  # a str is a text file (a token a host publishes)
            response = (PlainTextResponse(doc) if isinstance(doc, str) else JSONResponse(doc)) \
                if doc is not None else Response(status_code=404)
        else:
            return False
        await response(scope, receive, send)
        return True

    async def _robots(self, fleet_host: FleetHost, host: str, scope: dict, receive: Callable,
                      send: Callable) -> None:
        text = fleet_host.robots
        # The robots.txt troubles (docs/methodology.md, "Per origin, once a day"): "SLOW <s>\n<file>"
        # answers after <s> seconds; "BROKEN ONCE\n<file>" cuts the first request's connection
        # mid-answer and serves the file after that.
        if text is not None and text.startswith("SLOW "):
            first, _, text = text.partition("\n")
            await asyncio.sleep(float(first[5:]))
        elif text is not None and text.startswith("BROKEN ONCE"):
            text = text.partition("\n")[2]
            self.robots_broken.setdefault(host, 0)
            self.robots_broken[host] += 1
            if self.robots_broken[host] == 1:
                await send({"type": "http.response.start", "status": 200,
                            "headers": [(b"content-type", b"text/plain"), (b"content-length", b"500")]})
                await send({"type": "http.response.body", "body": b"User-agent", "more_body": False})
                return
        if text is not None and text.startswith("HTTP "):  # e.g. "HTTP 503": robots.txt errors
            response: Response = Response("unavailable", status_code=int(text[5:]))
        else:
            response = PlainTextResponse(text) if text is not None else Response(status_code=404)
        await response(scope, receive, send)
