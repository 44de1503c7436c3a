"""The map's server against callers who do not play fair (`sevenmaps serve`'s app on loopback, served as
`sevenmaps serve` serves it): a report limit that names and headers cannot evade, unknown arguments refused
by the rule's words, every answer naming its map day and signed root, and an operational log that keeps no
argument text and is its owner's alone."""

from __future__ import annotations

import datetime as dt
import json
import stat

import httpx
import pyarrow.parquet as pq
import pytest
from conftest import copy_for_serving, served_on_loopback

from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.publishing.mapday import MapDay
from sevenmaps_pipeline.surfaces.mcp_server import ReportLimiter
from sevenmaps_pipeline.surfaces.oplog import KEY_NAME, oplog_folder
from sevenmaps_pipeline.surfaces.serve import make_app

LIMIT = 5


@pytest.fixture
def served(fleet_demo_lake, tmp_path):
    lake = copy_for_serving(fleet_demo_lake, tmp_path / "lake", also_skip=("oplog",))  # a fresh log
    with served_on_loopback(make_app(lake, reports_per_hour=LIMIT), "the map's server") as url:
        yield lake, url


def _call(url: str, tool: str, arguments: dict, headers: dict | None = None, meta: dict | None = None) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments,
                                                                          **({"_meta": meta} if meta else {})}}
    answer = httpx.post(f"{url}/mcp", content=json.dumps(body), timeout=60, headers={  # JSON escapes as ASCII
        "Accept": "application/json, text/event-stream", "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-06-18", **(headers or {})})
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]


def _text(result: dict) -> str:
    return result["content"][0]["text"]


def _a_server(lake: LakePaths) -> str:
    with MapDay.open(lake) as mapday:
        return mapday.rows("SELECT server_key FROM daily_status WHERE code = 'o' ORDER BY server_key LIMIT 1")[0][
            "server_key"]


def _landed(lake: LakePaths) -> set:
    return set((lake.root / "raw" / "agent_reports").rglob("mcp-*.parquet"))


def test_one_address_lands_no_more_than_the_limit_whatever_it_calls_itself(served):
    lake, url = served
    key, before = _a_server(lake), _landed(lake)
    results = [_call(url, "report_road", {"server": key, "tool": "get_weather", "ok": True, "ms": 100 + i},
                     {"User-Agent": f"agent-{i}/1.0", "X-Forwarded-For": f"203.0.113.{i}",
                      "Forwarded": f"for=198.51.100.{i}"}) for i in range(3 * LIMIT)]
    accepted = [r for r in results if not r.get("isError")]
    refused = [r for r in results if r.get("isError")]
    assert len(accepted) == LIMIT and len(refused) == 2 * LIMIT
    assert all(_text(r).endswith(f"report refused: more than {LIMIT} reports in an hour from this address")
               for r in refused)
    assert len(_landed(lake) - before) == LIMIT, "a refused report landed"
    # One address is one reporter whatever it calls itself (helper-81: a name each was a reporter each, past the
    # ratings' cap of 3 reports a reporter and their 5 reporters for stars).
    reporters = {pq.read_table(path).column("reporter_id")[0].as_py() for path in _landed(lake) - before}
    assert len(reporters) == 1


def test_a_client_name_with_no_utf_8_is_answered_and_logged(served):
    lake, url = served
    # The 2026-07-28 envelope carries the client's name on every request, read by the SDK with JSON's escapes.
    meta = {"io.modelcontextprotocol/clientInfo": {"name": "evil\ud800", "version": "1"},
            "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "server_status"}
    answer = _call(url, "server_status", {"server": _a_server(lake)}, headers, meta)
    assert not answer.get("isError"), _text(answer)
    lines = [json.loads(line) for path in oplog_folder(lake).glob("day=*.jsonl")
             for line in path.read_text().splitlines()]
    assert any(line["tool"] == "server_status" and line["outcome"] == "ok" for line in lines)


def test_the_limit_forgets_callers_idle_for_an_hour():
    limiter = ReportLimiter(per_hour=2)
    start = dt.datetime(2026, 12, 7, tzinfo=dt.UTC)
    for i in range(1000):
        assert limiter.allow(f"caller-{i}", start)
    assert len(limiter) == 1000
    assert limiter.allow("late", start + dt.timedelta(hours=1, minutes=2))
    assert len(limiter) == 1  # each of the thousand, idle for an hour, is forgotten


def test_unknown_fields_are_refused_by_the_rules_words_and_every_answer_names_its_day(served):
    lake, url = served
    key, before = _a_server(lake), _landed(lake)
    refused = _call(url, "report_road", {"server": key, "tool": "get_weather", "ok": True, "note": "it was slow"})
    assert refused.get("isError") and _text(refused) == (
        "report refused: unexpected field(s) note: reports carry the fixed fields only")
    assert _landed(lake) == before
    wrong = _call(url, "server_status", {"server": key, "verbose": True})
    assert wrong.get("isError") and "unexpected argument(s) verbose" in _text(wrong)
    recorded = json.loads(_text(_call(url, "report_road", {"server": key, "tool": "get_weather", "ok": True})))
    status = json.loads(_text(_call(url, "server_status", {"server": key})))
    assert recorded["recorded"] is True
    assert recorded["map_day"] == status["map_day"] and recorded["signed_root"] == status["signed_root"]
    assert recorded["signed_root"], "the demo's map day is signed"


def test_the_operational_log_keeps_no_argument_text_and_is_private(served):
    lake, url = served
    secret = "my-private-task-words-42"
    _call(url, "server_status", {"server": secret})  # an unknown server: refused, the words echoed to the caller
    _call(url, "route", {"task": secret})
    _call(url, "report_road", {"server": secret, "tool": "t", "ok": True, secret: 1})
    folder = oplog_folder(lake)
    files = sorted(folder.glob("day=*.jsonl"))
    text = "".join(p.read_text() for p in files)
    assert files and secret not in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert {tuple(sorted(line)) for line in lines} == {
        ("agent_code", "at", "client_name", "country", "outcome", "tool")}
    assert {line["outcome"] for line in lines} <= {"ok", "refused"}
    for path in [*files, folder / KEY_NAME]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_report_figures_past_any_real_call_are_refused_as_arguments_never_a_fault_of_the_map(served):
    lake, url = served
    key, before = _a_server(lake), _landed(lake)
    for figures in ({"ms": 10**19}, {"result_tokens": 10**19}, {"ms": 2**63 - 1}, {"charged_usd": 1e308},
                    {"ms": 86_400_001}):
        result = _call(url, "report_road", {"server": key, "tool": "get_weather", "ok": True, **figures})
        assert result.get("isError"), figures
        (name,) = figures  # refused as the argument it is, in one sentence naming it (surfaces/arg_errors.py)
        assert "fault of the map" not in _text(result) and _text(result).startswith(f"{name} must be "), _text(result)
        assert "\n" not in _text(result), _text(result)
    assert _landed(lake) == before
    accepted = _call(url, "report_road", {"server": key, "tool": "get_weather", "ok": True, "ms": 86_400_000,
                                          "result_tokens": 1_000_000_000, "charged_usd": 1_000_000.0})
    assert not accepted.get("isError"), _text(accepted)
