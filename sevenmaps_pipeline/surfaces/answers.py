"""The shapes of the map server's answers (docs/agents.md, "What each tool returns"): each tool's return type,
from which the MCP SDK publishes the tool's output schema and against which it validates every answer before
it leaves (a key missing, added or of the wrong type is our fault, answered as one, never sent).

The top level of every answer is typed key by key and closed (no other key may appear); nested rows that are
the day's table rows as they stand (a status row, a finding, a change) are objects whose columns are the data
dictionary's (docs/data-dictionary.md), typed loosely here so that a new column there is not a break here.
No `from __future__ import annotations`: pydantic reads these annotations when the server starts.
"""

from typing import Annotated, Any, Literal, NotRequired

from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict

Row = dict[str, Any]
CLOSED = ConfigDict(extra="forbid")
Risk = Literal["green", "yellow", "red"]
# The keys that name an endpoint, in every form a tool that takes `server` accepts (publishing/mapday.py resolve).
ServerName = Annotated[str | None, Field(description="the server's name in the official MCP registry")]
ServerId = Annotated[str, Field(description="the endpoint's 12-hex server_id")]
ServerKey = Annotated[str, Field(description="the endpoint's key: its normalised URL (docs/data-dictionary.md)")]
Url = Annotated[str, Field(description="the endpoint's URL")]
MethodVersion = Annotated[str, Field(description="the method (and risk vocabulary) the answer was computed by")]
Total = Annotated[int, Field(description="rows found, before the cut at 500")]
Truncated = Annotated[bool, Field(description="whether rows follow these (ask for them with next_offset)")]
Offset = Annotated[int, Field(description="the rows skipped before these (the `offset` asked)")]
NextOffset = Annotated[int | None, Field(description="the `offset` that asks for the next 500 rows; null when none "
                                         "follow")]


@with_config(CLOSED)
class OpenDayRead(TypedDict):
    """The open day's provisional build an answer also read (curated/open_day.py OpenDay.served)."""

    day: Annotated[str, Field(description="the open day, YYYY-MM-DD")]
    slices_through: Annotated[str | None, Field(description="the slice (YYYY-MM-DD-HH:00) that started the build")]
    last_check_at: Annotated[str | None, Field(description="the newest check the build read")]
    built_at: Annotated[str, Field(description="when the build was made")]
    endpoints_checked: Annotated[int, Field(description="endpoints checked today so far")]
    build: Annotated[str, Field(description="the build's id")]
    note: Annotated[str, Field(description="that the build is provisional")]


@with_config(CLOSED)
class Served(TypedDict):
    """What every answer says it rests on (publishing/mapday.py MapDay.served)."""

    map_day: Annotated[str, Field(description="the built day the answer was computed from, YYYY-MM-DD")]
    signed_root: Annotated[Row | None, Field(description="that day's signed root {day, root, signed_at, "
                                             "previous_root, path}; null while the day is not signed")]
    signed: Annotated[bool, Field(description="whether the map day is signed")]
    note: Annotated[str | None, Field(description="why the day is not signed yet, or another caveat")]
    tables_not_built: Annotated[list[str], Field(description="tables of the day that do not exist yet")]
    open_day: Annotated[OpenDayRead | None, Field(description="the open day's provisional build read, if newer")]
    provisional_days: Annotated[list[str], Field(description="every day read provisionally")]


@with_config(CLOSED)
class RoutedTool(TypedDict):
    """One ranked tool of a route answer (surfaces/route.py)."""

    rank: Annotated[int, Field(description="1 is the best")]
    tool: Annotated[str, Field(description="the tool's name")]
    description: Annotated[str, Field(description="the tool's description, its first 300 characters")]
    risk: Annotated[Risk, Field(description="the tool's risk level")]
    server_name: ServerName
    server_id: ServerId
    server_key: ServerKey
    url: Url
    tools_hash: Annotated[str, Field(description="the served tool list's hash (pass it to verify_lock)")]
    relevance: Annotated[float, Field(description="BM25 over the best match's BM25")]
    bm25: Annotated[float, Field(description="the match of the tool's words with the task's")]
    success_chance: Annotated[float | None, Field(description="server_history's success chance")]
    success_chance_interval: Annotated[list[float | None], Field(description="its 90% interval [low, high]")]
    stability: Annotated[float | None, Field(description="the tool list's stability")]
    uptime_pct: Annotated[float | None, Field(description="uptime over the checked days")]
    uptime_label: Annotated[str | None, Field(description="what the uptime covers")]
    score: Annotated[float, Field(description="relevance x success chance x stability")]
    caveats: Annotated[list[str], Field(description="what the map does not know about this tool")]
    list_seen: Annotated[str, Field(description="which check the tool list is from")]


@with_config(CLOSED)
class SetAside(TypedDict):
    """A server whose matching tools were not used, with every reason."""

    server_name: ServerName
    server_id: ServerId
    url: Url
    tools: Annotated[list[str], Field(description="its matching tools")]
    reasons: Annotated[list[str], Field(description="why it was set aside")]


class RouteAnswer(Served):
    """route: the tools to use for a task, ranked by the methodology's five principles (docs/agents.md)."""

    task: Annotated[str, Field(description="the task asked, its first 500 characters")]
    task_risk: Annotated[Risk, Field(description="the risk level the task needs")]
    task_risk_source: Annotated[str, Field(description="given, or read from the task's words (which)")]
    tools: Annotated[list[RoutedTool], Field(description="the ranked tools, best first")]
    set_aside: Annotated[list[SetAside], Field(description="servers set aside, most relevant first")]
    set_aside_total: Annotated[int, Field(description="servers set aside, before the list's cut")]
    facts_missing: Annotated[list[str], Field(description="facts a rule needed and the map does not have")]
    principles: Annotated[list[str], Field(description="the five principles, in order")]
    placement: Annotated[str, Field(description="that placement cannot be bought")]
    method_version: MethodVersion


class StatusAnswer(Served):
    """server_status: one endpoint as the map shows it (publishing/status.py)."""

    server_name: ServerName
    server_id: ServerId
    server_key: ServerKey
    url: Url
    shown_status: Annotated[str | None, Field(description="the status shown now")]
    current: Annotated[Row | None, Field(description="current_status: what decided the status shown now")]
    down_since: Annotated[str | None, Field(description="when it is down: since the first check of its run shown "
                                            "down (a UTC time, or the day where its time is unknown), over missed "
                                            "days, a run filling the 30 days read dated from its latest "
                                            "stopped_answering record")]
    daily: Annotated[Row | None, Field(description="the map day's check (daily_status)")]
    open_day_check: Annotated[Row | None, Field(description="today's check so far (provisional), if any")]
    tools_from: Annotated[str, Field(description="which check the tool list is from")]
    history: Annotated[Row | None, Field(description="server_history: 30 codes, uptime, success chance, stability")]
    uptime_counts: Annotated[str | None, Field(description="what uptime and success chance count, when the server "
                                               "answered on some days without listing a tool: with an empty tool "
                                               "list, or only by asking for sign-in or payment")]
    tools: Annotated[list[Row], Field(description="the tools with risk level, rule and evidence")]
    risk_mix: Annotated[dict[str, int], Field(description="tools per risk level")]
    findings: Annotated[list[Row], Field(description="the day's findings (findings rows)")]
    list_facts_from: Annotated[str, Field(description="which tool list the findings, category and stability "
                                          "describe: the list shown, or the map day's when today's check listed "
                                          "another")]
    category: Annotated[Row | None, Field(description="its category and what placed it")]
    token_cost: Annotated[Row | None, Field(description="token cost of the tool list shown (its day, tools_hash, "
                                            "provisional when from today's check): definition_tokens (o200k_base), "
                                            "tokens_estimate (size / 4), against the map day's median and p90")]
    readiness: Annotated[Row | None, Field(description="the readiness score")]
    incidents: Annotated[list[Row], Field(description="live and closed incidents")]
    live_incident: Annotated[bool, Field(description="whether a confirmed incident is live")]
    failure_reports_awaiting_review: Annotated[Row | None, Field(description="never an incident")]
    changes: Annotated[list[Row], Field(description="changes of the last 60 days, newest first, the newest 100 "
                                        "when there are more")]
    changes_total: Annotated[int, Field(description="the changes of the last 60 days, all of them: more than "
                                        "`changes` holds when it is cut")]
    namespace: Annotated[Row, Field(description="how the namespace was proven")]
    owner_note: Annotated[Row | None, Field(description="the verified owner's own words")]
    five_minute_uptime: Annotated[Row | None, Field(description="an owner-verified endpoint's five-minute "
                                                    "uptime, not covered by roots")]


class LockAnswer(Served):
    """verify_lock: is an approved tool list still what the server serves (publishing/locks.py)."""

    server_name: ServerName
    server_id: ServerId
    url: Url
    approved_tools_hash: Annotated[str, Field(description="the tools_hash asked about")]
    current_tools_hash: Annotated[str | None, Field(description="the list served now")]
    current_list_seen_on: Annotated[str | None, Field(description="the day it was seen")]
    shown_status: Annotated[str | None, Field(description="the status shown now")]
    checked_at: Annotated[str | None, Field(description="when that check was made")]
    rests_on: Annotated[str, Field(description="which check the served list is from")]
    method_version: MethodVersion
    unchanged: Annotated[bool | None, Field(description="null when no list was seen to compare")]
    verdict: Annotated[str, Field(description="the answer in one line")]
    added: NotRequired[Annotated[list[Row] | None, Field(description="tools added, with their risk")]]
    removed: NotRequired[Annotated[list[Row] | None, Field(description="tools removed, with their risk")]]
    changed: NotRequired[Annotated[list[Row] | None, Field(description="tool by tool: fields, both risk levels")]]
    renamed: NotRequired[Annotated[list[Row] | None, Field(description="tools renamed (the same description and "
                                                           "inputSchema), with both names and risk levels")]]
    risk_rose: NotRequired[Annotated[bool | None, Field(description="whether risk rose; null when it cannot be "
                                                    "told (a level unknown, or the approved list never seen)")]]
    risk_rose_in: NotRequired[Annotated[list[str], Field(description="the tools it rose in")]]
    levels_unknown: NotRequired[Annotated[list[str], Field(description="tools whose level under the current method "
                                                           "cannot be read (a rise in them is not told)")]]
    current_tools: NotRequired[Annotated[list[Row], Field(description="the served list, when the approved one "
                                                          "was never seen")]]


class ChangesAnswer(Served):
    """changes_since: every change recorded after a day (publishing/locks.py)."""

    scope: Annotated[str, Field(description="'all' or the server_key asked about")]
    since: Annotated[str, Field(description="the day asked: changes after it")]
    through: Annotated[str, Field(description="the last day read (the open day when read)")]
    changes: Annotated[list[Row], Field(description="tool_changes rows, newest first, at most 500")]
    total: Total
    truncated: Truncated
    offset: Offset
    next_offset: NextOffset


class WatchAnswer(Served):
    """watch: the feed of rises in risk and of sign-in, payment and redirect changes (publishing/locks.py)."""

    window_days: Annotated[int, Field(description="the days watched")]
    kinds: Annotated[list[str], Field(description="the change kinds watched")]
    entries: Annotated[list[Row], Field(description="tool_changes rows of the watched kinds, newest first, at "
                                        "most 500")]
    total: Total
    truncated: Truncated
    offset: Offset
    next_offset: NextOffset


@with_config(CLOSED)
class ReportAnswer(TypedDict):
    """report_road: the report landed (surfaces/report_intake.py); the served day's keys beside it, or nulls
    with a note before the first day is built."""

    recorded: Annotated[bool, Field(description="true: the report landed")]
    server: Annotated[str, Field(description="the server as recorded: its server_key when the map day names it")]
    batch: Annotated[str, Field(description="the batch file the report landed as, under the lake")]
    counts_from: Annotated[str, Field(description="which map the report counts in")]
    map_day: Annotated[str | None, Field(description="the latest built day; null before the first")]
    signed_root: Annotated[Row | None, Field(description="its signed root, or null")]
    signed: Annotated[bool, Field(description="whether the map day is signed")]
    note: Annotated[str | None, Field(description="why the day is not signed, or that none is built")]
    tables_not_built: NotRequired[Annotated[list[str], Field(description="tables of the day not built yet")]]
    open_day: NotRequired[Annotated[OpenDayRead | None, Field(description="the open day's build read")]]
    provisional_days: NotRequired[Annotated[list[str], Field(description="days read provisionally")]]
