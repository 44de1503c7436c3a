"""The small things a newcomer trips on (issue 36, point 6), through the real entry point over a hand-made,
signed lake: `ui` refuses a lake that is not there before anything starts; `serve` on a port in use says so in
one line (exit 2) before it says it serves; the site serves the public key and the log's vkey and links them;
`GET /mcp` and every method but POST there are answered 405 with Allow: POST at once, in words true of the
method (DELETE: no session to end); `sevenmaps server ID` prints one server's dated days, status, tools and
changes from server_status; the 30-day bars carry dates."""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import httpx
import pytest
from conftest import land_probes, probe, served_on_loopback

from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.cli.one_server import server_text
from sevenmaps_pipeline.curated.day import rebuild_day
from sevenmaps_pipeline.integrity.keys import generate_key
from sevenmaps_pipeline.integrity.roots import sign_through
from sevenmaps_pipeline.lake.keys import server_id, server_key
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.publishing import charts
from sevenmaps_pipeline.publishing.mapday import MapDay
from sevenmaps_pipeline.publishing.site import build_site
from sevenmaps_pipeline.publishing.status import server_status
from sevenmaps_pipeline.surfaces.serve import make_app

DAYS = [dt.date(2026, 11, 1) + dt.timedelta(days=i) for i in range(3)]
SIGNED_AT = dt.datetime(2026, 11, 4, 12, tzinfo=dt.UTC)
URL, DOWN_URL = "https://weather.example.com/mcp", "https://down.example.com/mcp"
ID = server_id(server_key(URL))
PATIENCE = 30.0  # seconds: a bound for a hang, never a measure of speed
CLI = [sys.executable, "-m", "sevenmaps_pipeline.cli"]


def _tool(name: str, description: str) -> dict:
    return {"name": name, "description": description, "inputSchema": {"type": "object"}}


@pytest.fixture(scope="module")
def signed(tmp_path_factory) -> LakePaths:
    """Three days, signed, with their site: a weather server that gains a tool that deletes on the last day,
    and one that stops answering."""
    base = tmp_path_factory.mktemp("rough")
    lake = LakePaths.at(base / "lake")
    for i, day in enumerate(DAYS):
        tools = [_tool("get_forecast", "Get the weather forecast for a city.")]
        if i == 2:
            tools.append(_tool("delete_alert", "Delete a weather alert permanently."))
        land_probes(lake, [probe(URL, "ok", day=day, tools=tools),
                           probe(DOWN_URL, "timeout" if i else "ok", day=day)], day=day)
        rebuild_day(lake, day)
    sign_through(lake, DAYS[-1], generate_key(base / "keys" / "signing.pem"), now=SIGNED_AT)
    build_site(lake, DAYS[-1])
    return lake


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, env=env, check=False)


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


class DagsterStarted(BaseException):  # noqa: N818 - not an error: what the stand-in for exec raises
    """Raised instead of replacing the test's process with `dagster dev` (a BaseException: main passes it on)."""


@pytest.fixture
def no_dagster(monkeypatch, tmp_path) -> list[list[str]]:
    """`sevenmaps ui` in this process, but `dagster dev` never exec'd in its place: its command is recorded
    and DagsterStarted raised (what the UI sets for itself, restored after)."""
    started: list[list[str]] = []

    def execv(_path: str, argv: list[str]) -> None:
        started.append(argv)
        raise DagsterStarted

    monkeypatch.setattr(os, "execv", execv)
    monkeypatch.setattr("signal.signal", lambda *_: None)
    monkeypatch.chdir(tmp_path)
    for name in ("DAGSTER_HOME", "SEVENMAPS_LAKE", "PYTHONWARNINGS"):  # cmd_ui sets PYTHONWARNINGS for dagster dev
        monkeypatch.setenv(name, "")
    monkeypatch.delenv("DAGSTER_HOME")
    return started


def test_ui_refuses_a_lake_that_is_not_there_and_creates_nothing(tmp_path, no_dagster, capsys):
    missing = tmp_path / "nope"
    assert main(["ui", "--lake", str(missing), "--port", "0"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith(f"error: no lake at {missing} (nothing has run there): run `make demo` first")
    assert "sevenmaps ui --new" in line
    # A folder nothing has run in is no lake either (a fresh clone's data_lake/ with its README, a mistyped
    # --lake /tmp): Dagster would make a home in it.
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "README.md").write_text("the lake's folder\n")
    assert main(["ui", "--lake", str(tmp_path / "empty"), "--port", "0"]) == 2
    assert _one_error_line(capsys.readouterr().err).startswith(f"error: no lake at {tmp_path / 'empty'} (")
    assert not missing.exists() and [p.name for p in (tmp_path / "empty").iterdir()] == ["README.md"] and not no_dagster
    # --new starts a new lake: its folder and Dagster home made, then `dagster dev`.
    with pytest.raises(DagsterStarted):
        main(["ui", "--new", "--lake", str(missing), "--port", "0"])
    assert (missing / ".dagster" / "dagster.yaml").is_file() and no_dagster[0][1:3] == ["dev", "-m"]


def test_serve_on_a_port_in_use_says_so_in_one_line_before_it_says_it_serves(tmp_path):
    lake = tmp_path / "lake"
    (lake / "raw").mkdir(parents=True)  # a lake with nothing built yet (a folder holding none is refused first)
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        done = _run("serve", "--lake", str(lake), "--port", str(port), timeout=PATIENCE * 4)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "serv" not in done.stdout  # nothing said it serves
    line = _one_error_line(done.stderr)
    assert line.startswith(f"error: cannot serve on 127.0.0.1:{port} (") and "--port N" in line


def _raw(url: str, request: str) -> tuple[str, dict[str, str]]:
    """One request on its own connection, with a plain socket: the status line and headers of the answer,
    under a generous timeout (a stream held open would time out here, not pass)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=PATIENCE) as sock:
        sock.sendall(f"{request} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n"
                     "Connection: close\r\n\r\n".encode())
        got = b""
        while chunk := sock.recv(65536):
            got += chunk
    head = got.split(b"\r\n\r\n", 1)[0].decode().split("\r\n")
    return head[0], {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}


def test_get_mcp_and_every_method_but_post_are_answered_405_allow_post_at_once(tmp_path):
    # The streamable HTTP transport: a server that offers no server-sent stream answers GET with 405 (and a
    # stateless one DELETE likewise); an answer that never came would time out above, not pass.
    with served_on_loopback(make_app(LakePaths.at(tmp_path / "empty")), "the map's server") as url:
        for request in ("GET /mcp", "GET /mcp/", "HEAD /mcp", "HEAD /mcp/", "DELETE /mcp", "OPTIONS /mcp",
                        "PUT /mcp"):
            status, headers = _raw(url, request)
            assert status == "HTTP/1.1 405 Method Not Allowed", (request, status)
            assert headers.get("allow") == "POST", (request, headers)


def test_a_405_on_mcp_says_what_is_true_of_the_method_asked(tmp_path):
    # Found through the official TypeScript SDK client (tests/test_ts_sdk_client.py): a client that kept a
    # session id ends it with DELETE /mcp, and was told that the server "offers no server-sent stream".
    with served_on_loopback(make_app(LakePaths.at(tmp_path / "empty")), "the map's server") as url:
        get = httpx.get(f"{url}/mcp", headers={"Accept": "text/event-stream"}, timeout=PATIENCE)
        delete = httpx.delete(f"{url}/mcp", headers={"Mcp-Session-Id": "kept-from-before"}, timeout=PATIENCE)
        put = httpx.put(f"{url}/mcp", content=b"{}", timeout=PATIENCE)
    assert [r.status_code for r in (get, delete, put)] == [405, 405, 405]
    assert get.text == "the map's MCP server offers no server-sent stream: POST your JSON-RPC requests to /mcp\n"
    assert delete.text == ("the map's MCP server is stateless and keeps no session to end: POST your JSON-RPC "
                           "requests to /mcp\n")
    assert put.text == "the map's MCP server answers POST alone: POST your JSON-RPC requests to /mcp\n"


def test_the_site_serves_the_public_key_and_the_vkey_and_links_them(signed):
    site = signed.root / "site" / "current"
    assert (site / ".well-known" / "7maps.json").read_bytes() == signed.well_known.read_bytes()
    assert (site / "integrity" / "vkey").read_bytes() == (signed.log_dir / "vkey").read_bytes()
    page = (site / "servers" / f"{ID}.html").read_text()
    assert "href=\"../.well-known/7maps.json\"" in page and "href=\"../integrity/vkey\"" in page
    assert "href=\".well-known/7maps.json\"" in (site / "index.html").read_text()
    with served_on_loopback(make_app(signed), "the map's server") as url:
        key = httpx.get(url + "/.well-known/7maps.json", timeout=PATIENCE)
        assert key.status_code == 200 and key.content == signed.well_known.read_bytes()
        assert key.headers["content-type"] == "application/json"
        vkey = httpx.get(url + "/integrity/vkey", timeout=PATIENCE)
        assert vkey.status_code == 200 and vkey.content == (signed.log_dir / "vkey").read_bytes()
        assert vkey.headers["content-type"].startswith("text/plain")
        # The live pages link them as the site's pages do: one level down, sent to the site's own.
        live = httpx.get(url + "/live/.well-known/7maps.json", timeout=PATIENCE, follow_redirects=True)
        assert live.status_code == 200 and live.content == key.content


def test_the_30_day_bars_show_their_dates(signed):
    svg = charts.day_code_bars("oonod", DAYS[-1])
    tree = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    written = [t.text for t in tree.iter(f"{ns}text")]
    assert written == ["2026-10-30", "2026-11-03"]  # the first and last days, under the bars
    titles = [t.text for t in tree.iter(f"{ns}title")][1:]
    assert [t.split(":")[0] for t in titles] == ["2026-10-30", "2026-10-31", "2026-11-01", "2026-11-02", "2026-11-03"]
    page = (signed.root / "site" / "current" / "servers" / f"{ID}.html").read_text()
    first = DAYS[-1] - dt.timedelta(days=29)  # the server page's bars: the 30 days through the map day
    assert f">{first}</text>" in page and f">{DAYS[-1]}</text>" in page


def test_server_prints_one_servers_dated_days_status_tools_and_changes(signed):
    with MapDay.open(signed, DAYS[-1]) as mapday:
        expected = server_status(mapday, URL)
    done = _run("server", ID, "--lake", str(signed.root), "--day", DAYS[-1].isoformat())
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[0] == f"{expected['server_name'] or URL}  (server_id {ID})"
    # a day asked for is that day's record (helper-85: it said "status shown now")
    assert f"status shown on the map of {DAYS[-1]}: {expected['shown_status']} (" in done.stdout
    at = (expected["current"] or {}).get("decided_at") or expected["daily"]["checked_at"]
    assert f" check at {dt.datetime.fromisoformat(str(at)):%Y-%m-%dT%H:%M:%S}Z" in done.stdout  # as down since's
    codes = expected["history"]["history"]
    # Each line of codes, a week's, starts with the day of its first code.
    first = DAYS[-1] - dt.timedelta(days=len(codes) - 1)
    for i in range(0, len(codes), 7):
        assert f"  {first + dt.timedelta(days=i)}  {' '.join(codes[i:i + 7])}" in out, (i, out)
    assert codes.endswith("ooo")
    tools = {t["name"]: t["risk"] for t in expected["tools"]}
    assert set(tools) == {"get_forecast", "delete_alert"}
    for name, risk in tools.items():
        assert any(line.startswith(f"  {name}  {risk}  (") for line in out), (name, out)
    assert expected["changes"] and any(
        line.startswith(f"  {DAYS[-1]}  ") and "delete_alert" in line for line in out), out
    # --json is server_status's whole answer; every form of the server names the same one.
    for form in (URL, server_key(URL), ID):
        done = _run("server", form, "--json", "--lake", str(signed.root), "--day", DAYS[-1].isoformat())
        assert done.returncode == 0 and json.loads(done.stdout) == json.loads(json.dumps(expected, default=str))
    done = _run("server", "nobody.example.org", "--lake", str(signed.root))
    assert done.returncode == 2 and "names no endpoint" in _one_error_line(done.stderr)


def test_route_refuses_a_limit_the_mcp_tool_refuses(signed, capsys):
    for limit in ("0", "-2", "21"):  # in this process: the command's own check, not the interpreter's start-up
        assert main(["route", "weather forecast", "--limit", limit, "--lake", str(signed.root)]) == 2
        said = capsys.readouterr()
        assert _one_error_line(said.err) == f"error: --limit must be a whole number from 1 to 20 (got {limit})"
        assert said.out == ""
    assert main(["route", "weather forecast", "--limit", "1", "--lake", str(signed.root)]) == 0
    assert len(json.loads(capsys.readouterr().out)["tools"]) <= 1


def test_server_text_says_what_the_page_says_beside_uptime(signed):
    """The text of `sevenmaps server` carries what the server page carries beside the figures (a user found
    it without them): what uptime counts, since when it is down, the owner's note, the five-minute uptime, a
    change's detail, and the success chance at the page's precision (91.5%, never a rounded-up 100%)."""
    with MapDay.open(signed, DAYS[-1]) as mapday:
        s = server_status(mapday, URL)
    s["history"].update(success_chance=0.9151, success_chance_low=0.7564, success_chance_high=0.9951)
    s["uptime_counts"] = "listed tools on 19 of its 29 answered days; on the others it asked for sign-in, ..."
    s["shown_status"], s["down_since"] = "down", "2026-11-02T04:00:00Z"
    s["owner_note"] = {"host": "weather.example.com", "note": "Maintenance on Sundays."}
    s["five_minute_uptime"] = {"label_30d": "30-day five-minute uptime", "uptime_30d_pct": 99.3}
    s["changes"] = [{"day": DAYS[-1].isoformat(), "kind": "silent", "tool_name": "get_forecast",
                     "detail": "description changed", "risk": None, "previous_risk": None}]
    text = "\n".join(server_text(s))
    assert "success chance 91.5% (90% interval 75.6% to 99.5%)" in text
    assert "\nuptime and success chance count answers: this server listed tools on 19 of its 29" in text
    assert "; down since 2026-11-02T04:00:00Z" in text
    assert "verified control of weather.example.com; never counted in the figures): Maintenance on Sundays." in text
    assert "30-day five-minute uptime: 99.3% (checks every five minutes" in text
    assert f"  {DAYS[-1]}  silent  get_forecast: description changed" in text

