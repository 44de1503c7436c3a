"""The map server's answers as documented (docs/agents.md, "What each tool returns"), through the official MCP
SDK client against `sevenmaps serve`'s app on loopback over hand-made days built by the real day builds:
every tool publishes a real output schema and every answer fits it (a wrong one is never sent); a bad
argument is one sentence naming it and what it allows; every form of a server that route answers with is
accepted by every tool that takes a server; and the doc's table names exactly the server's own tools, their
arguments and ranges, and the keys each answer has."""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]
import pytest
from conftest import land_probes, probe, served_on_loopback
from mcp import Client

from sevenmaps_pipeline.curated.day import rebuild_day
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.surfaces import mcp_server
from sevenmaps_pipeline.surfaces.serve import make_app

DAYS = [dt.date(2026, 11, 10) + dt.timedelta(days=i) for i in range(3)]
NOW = dt.datetime.combine(DAYS[-1] + dt.timedelta(days=1), dt.time(12), dt.UTC)
AGENTS_MD = Path(__file__).resolve().parents[1] / "docs" / "agents.md"
TOOLS = {"route", "server_status", "verify_lock", "changes_since", "watch", "report_road"}
# The keys every answer carries (publishing/mapday.py MapDay.served), said once above the doc's table.
SERVED = {"map_day", "signed", "signed_root", "note", "tables_not_built", "open_day", "provisional_days"}


def tool(name: str, description: str) -> dict:
    return {"name": name, "description": description, "inputSchema": {"type": "object"}}


FORECAST = [tool("get_forecast", "Get the weather forecast for a city.")]
NOTES = [tool("search_notes", "Search the notes in the notebook.")]
URLS = {"forecast": "https://forecast.example.com/mcp", "notes": "https://notes.example.net/mcp"}


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> LakePaths:
    lake = LakePaths.at(tmp_path_factory.mktemp("answers") / "lake")
    for i, day in enumerate(DAYS):
        notes = NOTES + ([tool("delete_note", "Delete a note from the notebook.")] if i == len(DAYS) - 1 else [])
        land_probes(lake, [probe(URLS["forecast"], "ok", day=day, tools=FORECAST),
                           probe(URLS["notes"], "ok", day=day, tools=notes)], day=day)
        rebuild_day(lake, day)
    return lake


def session(lake: LakePaths, work):
    """`work(client)` against the map's server on loopback, as `sevenmaps serve` serves it."""
    with served_on_loopback(make_app(lake, clock=lambda: NOW), "the map's server") as url:
        async def go():
            async with Client(f"{url}/mcp") as client:
                return await work(client)
        return asyncio.run(go())


def listed(lake: LakePaths) -> dict:
    async def work(client):
        return {t.name: t for t in (await client.list_tools()).tools}
    return session(lake, work)


def calls(lake: LakePaths, wanted: list[tuple[str, dict]]) -> list:
    async def work(client):
        return [await client.call_tool(name, args) for name, args in wanted]
    return session(lake, work)


def first_routed(lake: LakePaths) -> dict:
    (answer,) = calls(lake, [("route", {"task": "weather forecast for a city"})])
    return answer.structured_content["tools"][0]


def test_every_tool_publishes_a_real_output_schema_and_every_answer_fits_it(lake):
    tools = listed(lake)
    assert set(tools) == TOOLS
    for name, t in tools.items():
        schema = t.output_schema
        assert schema and schema.get("properties"), f"{name} publishes no output schema"
        assert schema.get("additionalProperties") is False, f"{name}'s answer is not closed"
        undescribed = [key for key, p in schema["properties"].items() if not p.get("description")]
        assert not undescribed, f"{name}'s answer keys without a description: {undescribed}"
        jsonschema.Draft202012Validator.check_schema(schema)
    routed = first_routed(lake)
    answers = calls(lake, [
        ("route", {"task": "weather forecast for a city", "risk": "green", "limit": 3}),
        ("server_status", {"server": routed["server_key"]}),
        ("verify_lock", {"server": routed["url"], "tools_hash": routed["tools_hash"]}),
        ("verify_lock", {"server": URLS["notes"], "tools_hash": "0" * 64}),
        ("changes_since", {"since": DAYS[0].isoformat()}),
        ("watch", {"days": 7}),
        ("report_road", {"server": routed["server_id"], "tool": routed["tool"], "ok": True, "ms": 120}),
    ])
    for (name, _), answer in zip([("route", 0), ("server_status", 0), ("verify_lock", 0), ("verify_lock", 0),
                                  ("changes_since", 0), ("watch", 0), ("report_road", 0)], answers, strict=True):
        assert not answer.is_error, answer.content
        jsonschema.validate(answer.structured_content, tools[name].output_schema)
        assert set(answer.structured_content) >= SERVED, name
    assert answers[2].structured_content["unchanged"] is True
    assert answers[3].structured_content["unchanged"] is False  # the optional keys of a changed lock fit too
    assert any(c["kind"] for c in answers[4].structured_content["changes"]), "the notes server changed on day 3"


def test_an_answer_that_does_not_fit_its_schema_is_never_sent(lake, monkeypatch):
    real = mcp_server.route
    monkeypatch.setattr(mcp_server, "route", lambda *a, **k: {**real(*a, **k), "ranked_by_payment": True})
    (answer,) = calls(lake, [("route", {"task": "weather forecast for a city"})])
    assert answer.is_error and answer.structured_content is None
    text = answer.content[0].text
    assert "ranked_by_payment" not in text and text.startswith("the map could not answer") and "\n" not in text


BAD_ARGUMENTS = [
    ("route", {"task": "weather", "limit": 50}, "limit must be an integer from 1 to 20 (got 50)"),
    ("route", {"task": "weather", "risk": "purple"}, "risk must be one of green, yellow, red (got 'purple')"),
    ("route", {"limit": 3}, "task is missing: route needs it, a string of at most 500 characters"),
    ("route", {"task": "!!! ???"}, "task must name what to do in plain words"),
    ("server_status", {"server": "x" * 600}, "server must be a string of at most 500 characters (got 600 characters)"),
    ("server_status", {"server": "https://nowhere.example.com/mcp"},
     "server 'https://nowhere.example.com/mcp' names no endpoint on the map of 2026-11-12"),
    ("verify_lock", {"server": URLS["notes"], "tools_hash": "abc"},
     "tools_hash must be the 64 hex digits the map publishes for a tool list, in either case (got 3 characters)"),
    ("verify_lock", {"server": URLS["notes"], "tools_hash": "g" * 2 + "0" * 62},
     "tools_hash must be the 64 hex digits the map publishes for a tool list, in either case (got 64 characters, 2 of "
     "them not hex digits)"),
    ("changes_since", {"since": "2026-13-01"}, "since must be a day as YYYY-MM-DD (got '2026-13-01')"),
    ("changes_since", {"since": "12 Nov 2026"}, "since must be a day as YYYY-MM-DD (got '12 Nov 2026')"),
    ("changes_since", {"since": "2026-01-01"}, "since must be a day on or after 2026-09-13"),
    ("watch", {"days": 0}, "days must be an integer from 1 to 60 (got 0)"),
    ("watch", {"days": "a week"}, "days must be an integer from 1 to 60 (got 'a week')"),
    ("watch", {"server": "nowhere"}, "server 'nowhere' names no endpoint"),
    ("report_road", {"server": URLS["notes"], "tool": "search_notes", "ok": "maybe"},
     "ok must be true or false (got 'maybe')"),
    ("report_road", {"server": URLS["notes"], "tool": "search_notes", "ok": False, "fail": "broken"},
     "fail must be one of unreachable, auth, args, server_error, timeout, rate_limited, wrong_result (got 'broken')"),
    ("report_road", {"server": URLS["notes"], "tool": "search_notes", "ok": True, "ms": -1},
     "ms must be an integer from 0 to 86,400,000, or null (got -1)"),
]


def test_a_bad_argument_is_one_sentence_naming_it_and_what_it_allows(lake):
    answers = calls(lake, [(name, args) for name, args, _ in BAD_ARGUMENTS])
    for (name, args, expected), answer in zip(BAD_ARGUMENTS, answers, strict=True):
        assert answer.is_error, (name, args)
        text = answer.content[0].text
        assert text.startswith(expected), (name, text)
        assert "\n" not in text and "validation error" not in text and "isoformat" not in text, text
        assert not text.startswith("Error executing tool"), text


def test_every_form_of_a_server_that_route_answers_with_is_accepted_by_every_tool(lake):
    routed = first_routed(lake)
    forms = [routed["server_key"], routed["server_id"], routed["url"], routed["server_name"]]
    landed = lake.root / "raw" / "agent_reports"
    before = set(landed.rglob("mcp-*.parquet"))
    wanted = []
    for form in forms:
        wanted += [("server_status", {"server": form}),
                   ("verify_lock", {"server": form, "tools_hash": routed["tools_hash"]}),
                   ("changes_since", {"server": form, "since": DAYS[0].isoformat()}),
                   ("watch", {"server": form}),
                   ("report_road", {"server": form, "tool": routed["tool"], "ok": True})]
    answers = calls(lake, wanted)
    for (name, args), answer in zip(wanted, answers, strict=True):
        assert not answer.is_error, (name, args, answer.content[0].text)
    by_tool: dict[str, list[dict]] = {}
    for (name, _), answer in zip(wanted, answers, strict=True):
        by_tool.setdefault(name, []).append(answer.structured_content)
    assert {a["server_key"] for a in by_tool["server_status"]} == {routed["server_key"]}
    assert all(a["unchanged"] is True for a in by_tool["verify_lock"])
    assert {a["scope"] for a in by_tool["changes_since"]} == {routed["server_key"]}
    assert {a["server"] for a in by_tool["report_road"]} == {routed["server_key"]}
    assert len(set(landed.rglob("mcp-*.parquet")) - before) == len(forms)


def _doc_table() -> dict[str, tuple[str, str]]:
    """docs/agents.md's "What each tool returns": tool -> (arguments cell, returns cell)."""
    text = AGENTS_MD.read_text(encoding="utf-8")
    section = text.split("### What each tool returns", 1)[1].split("\n#", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`\w+`", cells[0]):
            rows[cells[0].strip("`")] = (cells[1], cells[2])
    return rows


def _plain_keys(cell: str) -> set[str]:
    return set(re.findall(r"`([a-z_][a-z0-9_]*)`", cell))


def test_the_docs_table_names_the_servers_own_tools_arguments_ranges_and_answer_keys(lake):
    tools, table = listed(lake), _doc_table()
    assert set(table) == set(tools), "docs/agents.md's table must name exactly the server's tools"
    served_said = AGENTS_MD.read_text(encoding="utf-8").split("### What each tool returns", 1)[0]
    assert _plain_keys(served_said.split("### Connecting an agent", 1)[1]) >= SERVED, "the keys every answer has"
    for name, t in tools.items():
        arguments, returns = table[name]
        properties = t.input_schema["properties"]
        assert _plain_keys(arguments) == set(properties), f"{name}'s arguments in docs/agents.md"
        for argument, said in re.findall(r"`(\w+)` \(([^)]*)\)", arguments):
            schema = properties[argument]
            span = re.search(r"\b(\d+)-(\d+)\b", said)
            if span:
                assert (int(span[1]), int(span[2])) == (schema.get("minimum"), schema.get("maximum")), argument
            default = re.search(r"default (\w+)", said)
            if default:
                assert default[1] == str(schema.get("default")), argument
            if "/" in said and "enum" in str(schema):
                options = next(s for s in schema.get("anyOf", [schema]) if "enum" in s)["enum"]
                assert said.split(",")[0].split("/") == options, argument
        for argument, schema in properties.items():
            if "minimum" in schema and "maximum" in schema and schema["maximum"] < 1000:
                assert re.search(rf"`{argument}` \([^)]*\b{schema['minimum']}-{schema['maximum']}\b", arguments), \
                    f"{name}'s {argument} range is not in docs/agents.md"
        output = t.output_schema["properties"]
        assert _plain_keys(returns) == set(output) - SERVED, f"the keys {name} answers with, in docs/agents.md"
        for key, shape in re.findall(r"`(\w+)`:[^`|]*`\{([^}]*)\}`", returns):  # a listed row's keys, if given
            keys = {k.strip() for k in shape.split(",")}
            item = t.output_schema["properties"][key]["items"]
            ref = item.get("$ref", "").rsplit("/", 1)[-1]
            assert keys == set(t.output_schema["$defs"][ref]["properties"]), (name, key)


def test_an_endpoint_that_left_the_map_is_named_with_the_day_it_was_last_on_it(tmp_path, capsys):
    """helper-85: `sevenmaps server test.away/away` (an endpoint that had opted out) said it "names no endpoint ...:
    pass its URL, server_key, 12-hex server_id or registry name", which is what had been passed."""
    from sevenmaps_pipeline.publishing.mapday import MapDay, UnknownServerError

    lake = LakePaths.at(tmp_path / "lake")
    gone = "https://gone.example.com/mcp"
    for day, urls in ((DAYS[0], [URLS["forecast"], gone]), (DAYS[1], [URLS["forecast"]])):
        land_probes(lake, [probe(url, "ok", day=day, tools=FORECAST) for url in urls], day=day)
        rebuild_day(lake, day)
    with MapDay.open(lake, DAYS[1]) as mapday:
        (name,) = {r["server_name"] for r in mapday.rows("SELECT server_name FROM status_window WHERE url = $u",
                                                            {"u": gone})}
        for server in (gone, name):  # by its registry name too (helper-94: "names no endpoint")
            with pytest.raises(UnknownServerError) as said:
                mapday.resolve(server)
            assert str(said.value) == (f"server '{server}' is not on the map of {DAYS[1]}: it was last on the map of "
                                       f"{DAYS[0]} (its listing skipped, opted out or no longer listed since)")
    # the command line says the next step: the day it was last on the map (helper-100)
    from sevenmaps_pipeline.cli import main

    assert main(["server", gone, "--lake", str(lake.root)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.endswith(f"since): add `--day {DAYS[0]}` to see it as it was then")
    assert main(["server", gone, "--day", DAYS[0].isoformat(), "--lake", str(lake.root)]) == 0
    assert f"status shown on the map of {DAYS[0]}" in capsys.readouterr().out
