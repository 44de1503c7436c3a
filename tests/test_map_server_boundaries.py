"""The map's server against callers who do not play fair (`sevenmaps serve`'s app on loopback, served as
`sevenmaps serve` serves it): a report limit that names and headers cannot evade, unknown arguments refused
by the rule's words, every answer naming its map day and signed root, and an operational log that keeps no
argument text and is its owner's alone."""

from __future__ import annotations

import json
import stat

import httpx
import pytest
from conftest import copy_for_serving, served_on_loopback

from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.publishing.mapday import MapDay
from sevenmaps_pipeline.surfaces.oplog import KEY_NAME, oplog_folder
from sevenmaps_pipeline.surfaces.serve import make_app

LIMIT = 5


@pytest.fixture
def served(fleet_demo_lake, tmp_path):
    lake = copy_for_serving(fleet_demo_lake, tmp_path / "lake", also_skip=("oplog",))  # a fresh log
    with served_on_loopback(make_app(lake, reports_per_hour=LIMIT), "the map's server") as url:
        yield lake, url


def _call(url: str, tool: str, arguments: dict, headers: dict | None = None) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    answer = httpx.post(f"{url}/mcp", json=body, timeout=60, headers={
        "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18", **(headers or {})})
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
