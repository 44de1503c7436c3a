"""The map's server through the official TypeScript MCP SDK client (issue 36: "try it through both official SDK
clients"), the second real client beside the Python SDK's of tests/test_mcp_answers.py: `sevenmaps serve`'s
app on loopback over the demo lake, and tests/ts_client/check_server.mjs (the SDK's Client over its
StreamableHTTPClientTransport, pinned in tests/ts_client/package-lock.json) lists the tools, calls each as
docs/agents.md documents it with servers and hashes taken from earlier answers, and calls one with a bad
argument. The SDK itself checks every answer against its tool's outputSchema (Client.callTool, after
listTools); the script proves its validator refuses spoilt answers, so that "accepted" means something.

Its packages are installed by `make test` (npm ci), never at test time: no test reaches beyond 127.0.0.1."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from conftest import copy_for_serving, served_on_loopback
from test_open_day import OPEN, land_nine_oclock_slice, open_day_lake

from sevenmaps_pipeline.surfaces.serve import make_app

CLIENT = Path(__file__).resolve().parent / "ts_client"
SCRIPT = CLIENT / "check_server.mjs"
TOOLS = {"route", "server_status", "verify_lock", "changes_since", "watch", "report_road"}


def pinned_sdk() -> str:
    """The SDK version package.json pins, and that node_modules holds it (a stale install fails here, by name)."""
    pinned = json.loads((CLIENT / "package.json").read_text())["dependencies"]["@modelcontextprotocol/sdk"]
    installed = CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
    assert installed.is_file(), (f"{CLIENT / 'node_modules'} has no @modelcontextprotocol/sdk: run `make test`, "
                                 "which installs the TypeScript client's packages (npm ci --prefix tests/ts_client)")
    version = json.loads(installed.read_text())["version"]
    assert version == pinned, f"node_modules holds the SDK {version}, package.json pins {pinned}: run `make test`"
    return pinned


def run_client(url: str) -> dict:
    node = shutil.which("node")
    assert node, "the TypeScript SDK client test needs Node.js (node on PATH): install it, then run `make test`"
    done = subprocess.run([node, str(SCRIPT), f"{url}/mcp"], cwd=CLIENT, capture_output=True, text=True, timeout=180)
    assert done.stdout.strip(), f"the client printed no summary (exit {done.returncode}): {done.stderr[-3000:]}"
    summary = json.loads(done.stdout)
    assert done.returncode == 0 and not summary["problems"], json.dumps(summary["problems"], indent=1)
    return summary


def agrees(summary: dict, version: str) -> None:
    """What the TypeScript client found, held to what the server promises."""
    assert summary["sdk"]["version"] == version
    server = summary["server"]
    assert server["info"]["name"] == "7maps" and server["has_instructions"]
    # The newest protocol version the SDK speaks is the one agreed, and there is no session to keep (stateless).
    assert server["protocol_version"] == server["offered_protocol_version"]
    assert server["session_id"] is None
    # The stream the SDK asks for after the handshake is refused as the spec allows (405), which the SDK takes
    # quietly; every request is answered with JSON, the one notification with 202; nothing went astray.
    assert summary["http"].get("GET 405 text/plain") == 1, summary["http"]
    assert set(summary["http"]) == {"POST 200 application/json", "POST 202 application/json", "GET 405 text/plain",
                                    "DELETE 405 text/plain"}
    assert summary["transport_errors"] == []
    # A client resuming with a session id it kept is answered without a handshake, and its DELETE to end the
    # session is the 405 the SDK takes as "none to end" (its words: tests/test_rough_edges.py).
    assert summary["resumed"] == {"answered": True, "ended": True}
    assert summary["http"]["DELETE 405 text/plain"] == 1
    assert summary["prompts"] == 0 and summary["resources"] == 0  # announced by the SDK's server, both empty

    assert set(summary["tools_listed"]) == TOOLS
    for name, schema in summary["output_schemas"].items():
        assert schema["properties"] and schema["validator_cached"] and schema["refuses_an_empty_answer"], name
    assert summary["output_schemas"]["report_road"]["read_only"] is False
    assert all(summary["output_schemas"][name]["read_only"] for name in TOOLS - {"report_road"})

    assert {c["tool"] for c in summary["calls"]} == TOOLS
    for c in summary["calls"]:
        assert not c["is_error"] and c["sdk_validated"] and c["text_is_the_answer"], c
        assert c["refuses_an_added_key"] and c["refuses_a_wrong_open_day"], c

    bad = summary["bad_argument"]
    assert bad["is_error"] and not bad["structured"] and bad["one_sentence"], bad
    assert bad["text"] == "limit must be an integer from 1 to 20 (got 50)"


def test_the_official_typescript_sdk_client_lists_calls_and_accepts_every_answer(fleet_demo_lake, tmp_path):
    version = pinned_sdk()
    lake = copy_for_serving(fleet_demo_lake, tmp_path / "lake", also_skip=("oplog",))  # report_road lands here
    with served_on_loopback(make_app(lake), "the map's server") as url:
        summary = run_client(url)
    agrees(summary, version)
    # server_status of the routed server by its four forms, and of every other server the answers named
    # (down, set aside, changed).
    assert summary["used"]["servers_asked"] >= 5


def test_the_typescript_client_accepts_answers_that_read_the_open_day(tmp_path):
    """Every answer also reading today's provisional build (open_day filled in, where the demo's are null)."""
    version = pinned_sdk()
    lake = open_day_lake(tmp_path / "lake")
    land_nine_oclock_slice(lake)
    with served_on_loopback(make_app(lake), "the map's server") as url:
        summary = run_client(url)
    agrees(summary, version)
    assert {c["open_day"] for c in summary["calls"]} == {OPEN.isoformat()}
