"""Start the fleet: every app behind one HTTPS uvicorn server on a loopback port, routed by Host.

The prober reaches fleet names only through the host map the fleet hands out (demo and test
configuration); a host that is down today maps to port 0, so its connection is refused.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount

from ...packaged import shipped
from ...rules.namespace import namespace_domain
from . import apps
from .lookups_app import LookupsApp
from .middleware import compressing, recording
from .publisher import codehost_for
from .routing import CONTROL_HOST, REGISTRY_HOST, HostRouter, host_apps, request_host
from .tls import FleetTLS, make_tls

TIMELINE = shipped("assets", "fleet_timeline.json")


def parse_days(spec: str, total: int) -> set[int]:
    if spec == "all":
        return set(range(total))
    days: set[int] = set()
    for part in spec.split(","):
        if "-" in part:
            a, b = part.split("-")
            days |= set(range(int(a), int(b) + 1))
        else:
            days.add(int(part))
    return days


def _loopback_socket() -> socket.socket:
    """A TCP socket bound to a free loopback port, for uvicorn to listen on."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@dataclass
class FleetHost:
    name: str
    host: str
    kind: str
    registry_name: str
    remote_type: str = "streamable-http"
    path: str = "/mcp"
    listed: bool = True
    robots: str | None = None
    well_known: dict[str, Any] = field(default_factory=dict)
    redirect_to: str | None = None
    compress: str | None = None  # a mode of fleet.middleware.COMPRESSION_MODES: a compressing proxy in front
    timeline: list[dict] = field(default_factory=list)
    # The readiness probe's other doors: the card at <path>/server-card, the publisher's own domain (the
    # registry name's namespace domain: fleet.publisher.publisher_app) and the repository on the code host.
    server_card: dict[str, Any] | None = None
    # The card's ETag: sent with it, and a request carrying it as If-None-Match gets a 304 (no body).
    card_etag: str | None = None
    # SEP-2133 extensions the SDK server declares in its capabilities (e.g. the skills extension).
    extensions: dict[str, dict[str, Any]] | None = None
    publisher: dict[str, Any] | None = None
    repository: dict[str, Any] | None = None
    about: str = ""  # what the server is in the fleet for
    # The daily lookups' fixtures (fleet.lookups_app): the packages the registry entry ships (each with the
    # advisories OSV holds for it) and how many days ago its domain was registered (None: years ago).
    packages: list[dict[str, Any]] = field(default_factory=list)
    registered_days_ago: int | None = None

    @property
    def publisher_domain(self) -> str | None:
        return namespace_domain(self.registry_name.split("/", 1)[0]) if "/" in self.registry_name else None

    @property
    def url(self) -> str:
        return f"https://{self.host}{'/sse' if self.kind == 'legacy_sse' else self.path}"


_WORDS = ("time", "data", "value", "item", "list", "user", "field", "index", "record", "table")


def generated_tools(spec: dict[str, Any]) -> list[dict]:
    """A toolset written as {"generate": {...}}: `tools` tools, each described in `words` words (about a
    token each), the first `annotated` of them annotated read-only, the first `with_output` with an
    outputSchema, and `description_suffix` appended to the last one's description."""
    g = spec["generate"]
    tools = []
    for i in range(int(g["tools"])):
        words = " ".join(_WORDS[(i + k) % len(_WORDS)] for k in range(int(g["words"])))
        tool: dict[str, Any] = {"name": f"{g.get('prefix', 'tool')}_{i:02d}", "description": f"Read {words}.",
                                "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}},
                                                "required": ["id"]}}
        if i < int(g.get("annotated", 0)):
            tool["annotations"] = {"readOnlyHint": True, "destructiveHint": False}
        if i < int(g.get("with_output", 0)):
            tool["outputSchema"] = {"type": "object", "properties": {"value": {"type": "string"}}}
        tools.append(tool)
    if g.get("description_suffix") and tools:
        tools[-1]["description"] += " " + g["description_suffix"]
    return tools


def load_timeline(path: Path = TIMELINE) -> dict:
    return json.loads(path.read_text())


async def _wait_unless_abandoned(seconds: float, receive: Callable) -> Callable | None:
    """Delay an answer by `seconds` (a benchmark's injected latency), unless the client closes the
    connection first: then None, and the request is no longer in flight. Otherwise a `receive` that hands
    the app the request body already read, then whatever comes after it."""
    messages: list[dict] = []
    while not messages or (messages[-1]["type"] == "http.request" and messages[-1].get("more_body")):
        messages.append(await receive())
    if messages[-1]["type"] == "http.disconnect":
        return None
    later = asyncio.ensure_future(receive())
    done, _ = await asyncio.wait({later}, timeout=seconds)
    if later in done and later.result()["type"] == "http.disconnect":
        return None
    handed = False

    async def replay() -> dict:
        nonlocal handed
        if messages:
            return messages.pop(0)
        if not handed:
            handed = True
            return await later
        return await receive()

    return replay


# How many turns of the event loop a request that finds another of its host's requests open waits before
# it counts an overlap. A client that hangs up on one request (its timeout) and sends the next one at
# once closed the first connection before it opened the second, but this loop may read the new request a
# turn or two before it notices the hang-up; waiting a few turns (measured: the first one suffices) keeps
# that ordering out of the count. Turns, not seconds: nothing here depends on the machine's speed.
SETTLE_TURNS = 50


@dataclass
class OpenRequest:
    """One request a host is answering, as the fleet sees it; `ended` says how it stopped being in flight:
    answered (its last byte sent), abandoned (the client hung up while its answer was delayed) or
    returned (the app finished without a complete answer)."""

    method: str
    path: str
    arrived: float
    ended: str | None = None


class Fleet:
    """`with Fleet() as fleet:` — the servers run in a background thread until the block ends."""

    def __init__(self, timeline: dict | None = None, slow_seconds: float = 12.0, workdir: Path | None = None,
                 registry_page_size: int = 100, registry_mode: str = "normal",
                 extra_apps: dict[str, Any] | None = None, record: bool = True, today: dt.date | None = None):
        """`registry_mode`: normal | legacy_only (no /v0.1, answers /v0) | cursor_loop (never ends).
        `extra_apps`: more hosts (name -> ASGI app) served as they are, e.g. a test's scripted server; a Starlette
        app (an SDK server's) has its lifespan run with the fleet's.
        `record`: keep every request in `recorded` (off for the benchmarks' hundreds of thousands).
        `today`: the day the lookups' domain ages count back from (a test that runs across midnight fixes it)."""
        self.extra_apps = dict(extra_apps or {})
        self.record = record
        # Every request every host received, in arrival order (fleet.middleware.recording).
        self.recorded: list[dict[str, Any]] = []
        self.registry_page_size = registry_page_size
        self.registry_mode = registry_mode
        # The most requests each host had in flight at once: the prober promises one at a time per host.
        self.max_in_flight: dict[str, int] = {}
        # Every time a host had more than one (at most 100 kept): what was open when the next one came.
        self.overlaps: list[dict[str, Any]] = []
        self._open: dict[str, list[OpenRequest]] = {}
        self.requests: dict[str, int] = {}
        # The servers' requests by method and path ("GET /robots.txt", "POST /mcp"), summed over the timeline's
        # hosts: what a client asks of each endpoint (the prober benchmark compares clients by it).
        self.request_kinds: dict[str, int] = {}
        # Injected per-host latency (seconds) before every answer: the benchmark's servers.
        self.latency: dict[str, float] = {}
        self.timeline = timeline or load_timeline()
        self.days = int(self.timeline["days"])
        self.toolsets: dict[str, list[dict]] = {name: generated_tools(spec) if isinstance(spec, dict) else spec
                                                for name, spec in self.timeline["toolsets"].items()}
        self.hosts = [FleetHost(**h) for h in self.timeline["servers"]]
        self.skills: list[dict[str, Any]] = list(self.timeline.get("skills", []))
        # Every publisher domain is served (404 for those with nothing), so no fleet name is ever resolved.
        self.publishers: dict[str, dict[str, Any]] = {}
        for h in self.hosts:
            domain = h.publisher_domain
            if domain and domain not in {x.host for x in self.hosts}:
                self.publishers[domain] = {**self.publishers.get(domain, {}), **(h.publisher or {})}
        self.codehost = codehost_for(self.hosts, self.skills)
        self.lookups = LookupsApp(self.hosts, today)
        self._codehost_server: uvicorn.Server | None = None
        self._codehost_thread: threading.Thread | None = None
        self.codehost_port = 0
        self.state = apps.FleetState(slow_seconds=slow_seconds)
        self._workdir = workdir
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0
        self.tls: FleetTLS | None = None
        self._down: set[str] = set()
        self.set_day(0)

    # ---------------------------------------------------------------- timeline
    def set_day(self, day: int) -> None:
        """Put every server into its state for timeline day `day` (0-based)."""
        self.state.day = day
        self._down = set()
        for h in self.hosts:
            today = apps.ServerDay()
            for entry in h.timeline:
                if day not in parse_days(str(entry.get("days", "all")), self.days):
                    continue
                if "state" in entry:
                    today.state = entry["state"]
                if "tools" in entry:
                    today.tools = self.toolsets[entry["tools"]]
                if "version" in entry:
                    today.version = entry["version"]
            self.state.by_server[h.name] = today
            if today.state == "down":
                self._down.add(h.host)

    @property
    def host_names(self) -> list[str]:
        return [h.host for h in self.hosts] + [REGISTRY_HOST, CONTROL_HOST, *self.extra_apps, *self.publishers]

    @property
    def tls_names(self) -> list[str]:
        """The names the fleet's certificates carry: each host's own, except under the timeline's
        `wildcard_domains` (a gateway's per-server subdomains), which share one `*.domain` certificate."""
        wild = set(self.timeline.get("wildcard_domains", []))
        return [n for n in self.host_names if n.split(".", 1)[-1] not in wild] + [f"*.{d}" for d in sorted(wild)]

    @property
    def host_map(self) -> dict[str, int]:
        return {n: (0 if n in self._down else self.port) for n in self.host_names}

    def requests_to(self, host: str) -> list[dict[str, Any]]:
        return [r for r in self.recorded if r["host"] == host]

    @property
    def ca_file(self) -> Path:
        assert self.tls is not None
        return self.tls.ca_file

    @property
    def registry_url(self) -> str:
        return f"https://{REGISTRY_HOST}"

    @property
    def workdir(self) -> Path:
        """The fleet's own folder while it runs (its TLS files, the skills list)."""
        assert self._workdir is not None, "the fleet is not running"
        return self._workdir

    @property
    def codehost_url(self) -> str:
        """The fleet's code host (GitHub's REST shapes), plain HTTP on loopback."""
        return f"http://127.0.0.1:{self.codehost_port}"

    def skills_list(self, folder: Path) -> Path:
        """Write the fleet's skills list (one GitHub folder URL per line) into `folder`; its path."""
        path = folder / "fleet-skills.txt"
        lines = [f"https://github.com/{repo['full_name']}/tree/main/{skill}" for repo in self.skills
                 for skill in repo.get("skills", [])]
        header = "# The fleet's Agent Skills (devtools/fleet/publisher.py serves them)\n"
        path.write_text(header + "\n".join(lines) + "\n")
        return path

    def lookup_urls(self) -> dict[str, str]:
        """The prober resource's settings for the daily lookups' loopback fixtures (fleet.lookups_app)."""
        return {"osv_url": f"{self.codehost_url}/osv", "npm_url": f"{self.codehost_url}/npm",
                "pypi_url": f"{self.codehost_url}/pypi", "rdap_bootstrap_url": f"{self.codehost_url}/rdap/dns.json"}

    @property
    def control_url(self) -> str:
        return f"https://{CONTROL_HOST}/mcp"

    def host(self, name: str) -> FleetHost:
        return next(h for h in self.hosts if h.name == name)

    # ---------------------------------------------------------------- serving
    def _build(self) -> Callable:
        """The one ASGI app uvicorn serves: every request counted in flight for its host, then routed."""
        router = HostRouter(*host_apps(self), self.hosts, self.state)
        by_host = {h.host: h for h in self.hosts}

        # What stands in front of each host: a compressing proxy where the timeline says so; and a recorder
        # of every request for all of them.
        fronts: dict[str, Callable] = {}
        for name in self.host_names:
            fleet_host = by_host.get(name)
            front = compressing(router, fleet_host.compress) if fleet_host and fleet_host.compress else router
            fronts[name] = recording(front, self.recorded, name) if self.record else front

        async def counting_router(scope: dict, receive: Callable, send: Callable) -> None:
            if scope["type"] != "http":
                await router(scope, receive, send)
                return
            host, _ = request_host(scope)
            self.requests[host] = self.requests.get(host, 0) + 1
            if host in by_host:
                kind = f"{scope['method']} {scope['path']}"
                self.request_kinds[kind] = self.request_kinds.get(kind, 0) + 1
            request = OpenRequest(scope["method"], scope["path"], time.monotonic())
            open_here = self._open.setdefault(host, [])
            earlier = list(open_here)
            open_here.append(request)

            async def counted_send(message: dict) -> None:
                # A request is in flight until its last byte is sent, which is when the client may ask the
                # next question; what a server does after that (an SDK closing its stream) is its own time.
                await send(message)
                if message["type"] == "http.response.body" and not message.get("more_body") and request.ended is None:
                    self._close(host, request, "answered")

            raw_receive = receive

            async def watched_receive() -> dict:
                # A hang-up the app sees (a delayed or hanging answer watching its connection) ends the
                # request as abandoned, so a next request that arrives while its end is being noticed is not
                # counted as a second one in flight (SETTLE_TURNS).
                message = await raw_receive()
                if message["type"] == "http.disconnect" and request.ended is None:
                    self._close(host, request, "abandoned")
                return message

            receive = watched_receive
            try:
                await self._count_in_flight(host, request, earlier)
                if host in self.latency:
                    waited = await _wait_unless_abandoned(self.latency[host], receive)
                    if waited is None:  # the client gave up (its timeout) while the answer was delayed
                        return
                    receive = waited
                await fronts.get(host, router)(scope, receive, counted_send)
            finally:
                if request.ended is None:
                    self._close(host, request, "returned")

        return counting_router

    def _close(self, host: str, request: OpenRequest, how: str) -> None:
        request.ended = how
        self._open[host].remove(request)

    async def _count_in_flight(self, host: str, request: OpenRequest, earlier: list[OpenRequest]) -> None:
        """Record how many of the host's requests were in flight when `request` arrived. One the client had
        already hung up on is not counted: see SETTLE_TURNS. One answered after this arrival is."""
        for _ in range(SETTLE_TURNS if earlier else 0):
            if all(e.ended for e in earlier):
                break
            await asyncio.sleep(0)
        overlapping = [e for e in earlier if e.ended != "abandoned"]
        self.max_in_flight[host] = max(self.max_in_flight.get(host, 0), 1 + len(overlapping))
        if overlapping and len(self.overlaps) < 100:
            self.overlaps.append({
                "host": host, "request": f"{request.method} {request.path}",
                "open": [{"request": f"{e.method} {e.path}", "open_seconds": round(request.arrived - e.arrived, 3),
                          "ended": e.ended or "still open"} for e in overlapping]})

    def __enter__(self) -> Fleet:
        # The SDK logs every session at INFO and every server-side error with a traceback; the fleet's
        # failures are on purpose.
        for noisy in ("mcp", "uvicorn", "uvicorn.error", "httpx"):
            logging.getLogger(noisy).setLevel(logging.CRITICAL)
        if self._workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="sevenmaps-fleet-")
            self._workdir = Path(self._tmp.name)
        self.tls = make_tls(self._workdir / "tls", self.tls_names)
        # Each server is handed the socket its port was taken with: a port let go and bound again later could
        # meanwhile be the local port of another process's outgoing loopback connection.
        fleet_socket = _loopback_socket()
        self.port = fleet_socket.getsockname()[1]
        config = uvicorn.Config(self._build(), host="127.0.0.1", port=self.port, log_level="critical",
                                ssl_certfile=str(self.tls.cert_file), ssl_keyfile=str(self.tls.key_file),
                                lifespan="on", timeout_graceful_shutdown=1)
        config.load()  # uvicorn keeps a loaded config's SSL context; certificates are then chosen by SNI
        assert config.ssl is not None
        self.tls.install(config.ssl)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [fleet_socket]},
                                        name="sevenmaps-fleet", daemon=True)
        self._thread.start()
        codehost_socket = _loopback_socket()
        self.codehost_port = codehost_socket.getsockname()[1]
        self.lookups.base = self.codehost_url
        outside = Starlette(routes=[*self.lookups.routes, Mount("/", self.codehost.app)])
        self._codehost_server = uvicorn.Server(uvicorn.Config(outside, host="127.0.0.1",
                                                              port=self.codehost_port, log_level="critical"))
        self._codehost_thread = threading.Thread(target=self._codehost_server.run,
                                                 kwargs={"sockets": [codehost_socket]},
                                                 name="sevenmaps-fleet-codehost", daemon=True)
        self._codehost_thread.start()
        deadline = time.monotonic() + 20
        while not (self._server.started and self._codehost_server.started):
            if not self._thread.is_alive() or not self._codehost_thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the fleet did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        for server in (self._server, self._codehost_server):
            if server is not None:
                server.should_exit = True
        for thread in (self._thread, self._codehost_thread):
            if thread is not None:
                thread.join(timeout=10)
        if self._tmp is not None:
            self._tmp.cleanup()
