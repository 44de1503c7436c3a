"""No command contacts an opted-out host, and `sevenmaps probe` and `sevenmaps readiness` read robots.txt as
the scan does, --allow-private or not (docs/operations.md, "The command line"): a loopback server counts
every request each host receives."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import served_on_loopback
from starlette.applications import Starlette
from starlette.routing import Mount

from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.devtools.fleet.apps import FleetState, ServerDay, legacy_sse_app, mcp_app

ROBOTS = {"closed.test": (200, b"User-agent: 7Maps-bot\nDisallow: /\n"), "broken.test": (503, b"")}


class _Handler(BaseHTTPRequestHandler):
    seen: Counter[str]

    def _answer(self) -> None:
        host = (self.headers.get("Host") or "").split(":")[0]
        self.seen[host] += 1
        if self.path == "/robots.txt":
            status, body = ROBOTS.get(host, (404, b""))
        else:
            status, body = 404, b"not an MCP server"
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def counting_server() -> Iterator[tuple[int, Counter[str]]]:
    seen: Counter[str] = Counter()
    handler = type("Handler", (_Handler,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], seen
    server.shutdown()
    server.server_close()


def _ask(command: str, lake, host: str, port: int) -> list[str]:
    return ["--lake", str(lake.root), command, f"http://{host}/mcp", "--allow-private", "--quiet",
            "--resolve", f"{host}:{port}"]


@pytest.mark.parametrize("command", ["probe", "readiness"])
def test_an_opted_out_host_is_never_contacted_by_probe_or_readiness(command, lake, counting_server, capsys):
    port, seen = counting_server
    assert main(["--lake", str(lake.root), "opt-out", "add", "gone.test"]) == 0
    capsys.readouterr()
    main(_ask(command, lake, "gone.test", port) + (["--json"] if command == "probe" else []))
    out = capsys.readouterr().out
    assert seen["gone.test"] == 0, f"{command} contacted an opted-out host"
    if command == "probe":
        assert json.loads(out)["skip_reason"] == "host opted out"
    # a host that did not opt out is contacted (the server is real and counting)
    main(_ask(command, lake, "open.test", port))
    assert seen["open.test"] >= 1


def test_probe_obeys_robots_txt_with_allow_private_and_never_blames_the_host_for_an_unreadable_one(
        lake, counting_server, capsys):
    port, seen = counting_server
    assert main(_ask("probe", lake, "closed.test", port) + ["--json"]) == 3
    answer = json.loads(capsys.readouterr().out)
    assert answer["outcome"] == "skipped" and answer["skip_reason"].startswith("robots.txt disallows 7Maps-bot")
    assert seen["closed.test"] == 1, "only robots.txt may be read"
    assert main(_ask("probe", lake, "broken.test", port) + ["--json"]) == 3
    answer = json.loads(capsys.readouterr().out)
    assert answer["outcome"] == "not_checked" and "robots_unavailable" in answer["outcome_detail"]
    assert seen["broken.test"] == 1, "a host whose robots.txt could not be read was contacted for MCP"


def test_readiness_obeys_robots_txt_with_allow_private(lake, counting_server, capsys):
    port, seen = counting_server
    main(_ask("readiness", lake, "closed.test", port) + ["--json"])
    assert seen["closed.test"] == 1, "only robots.txt may be read"


def test_an_owners_plain_http_server_is_read_through_its_own_redirect_and_over_sse(lake, capsys):
    """An owner checks their own server on loopback over plain http (--allow-private): the official SDK's app
    mounted at /mcp redirects to /mcp/ on the same site, which is no step down from https, and its SSE server
    names a plain-http message URL on the same origin (helper-62's run: both were refused as plain http)."""
    tools = [{"name": "list_items", "description": "List the items", "inputSchema": {"type": "object"}}]
    state = FleetState(by_server={"owner": ServerDay(tools=tools)})
    inner = mcp_app("owner", "127.0.0.1", "mcp_json", state, path="/")
    mounted = Starlette(routes=[Mount("/mcp", app=inner)], lifespan=inner.router.lifespan_context)
    with served_on_loopback(mounted, "an owner's SDK server mounted at /mcp") as url:
        assert main(["--lake", str(lake.root), "probe", f"{url}/mcp", "--allow-private", "--json", "--quiet"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["outcome"] == "ok" and answer["redirect_location"] == f"{url}/mcp/", answer["outcome_detail"]
    with served_on_loopback(legacy_sse_app("owner", "127.0.0.1", state), "an owner's SDK server over SSE") as url:
        main(["--lake", str(lake.root), "readiness", f"{url}/sse", "--remote-type", "sse", "--allow-private",
              "--json", "--quiet"])
    lines = {line["line"]: line for line in json.loads(capsys.readouterr().out)["lines"]}
    assert lines["answers"]["passed"] and lines["definition_tokens"]["seen"], lines["answers"]
    https = lines["https_no_redirects"]
    assert https["evidence"] == "http, 0 redirect(s)" and not https["passed"]
