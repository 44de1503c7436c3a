"""verify_lock, changes_since and watch (docs/agents.md): is an approved tool list still what a server
serves, what changed since a day, and where risk rose.

A risk level that moved only because 7Maps changed how levels are estimated is never reported (seed 000
`method_changes`): verify_lock reads both lists' levels under the current method (the published ones, or
classified again where a list's rows are of an older method) and pairs their tools as tool_changes does, and
changes_since and watch read tool_changes, whose every row compares both days under one method
(sql/tool_changes.sql).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from typing import Any

from ..rules.fingerprints import tool_fingerprint
from ..rules.methods import CHANGES_METHOD, WATCH_KINDS
from ..rules.risk import LEVELS, classify, default_vocabulary
from ..rules.tool_facts import facts_method
from .mapday import CHANGE_DAYS, MapDay

_HASH = re.compile(r"[0-9a-f]{64}")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
MAX_CHANGES = 500


def _definitions(mapday: MapDay, tools_hash: str) -> list[dict[str, Any]] | None:
    """The list's tools as tool_facts keeps them, each with its level under the current method (`_level`).
    None when the map never saw the list; [] for a list seen empty (it has no tools)."""
    rows = mapday.rows(
        "SELECT position, fingerprint, name, description, input_schema_json, annotations_json, risk, method_version "
        "FROM tool_facts WHERE tools_hash = $h "
        "QUALIFY row_number() OVER (PARTITION BY position ORDER BY day DESC) = 1 ORDER BY position", {"h": tools_hash})
    if not rows:
        seen = mapday.rows("SELECT tool_count FROM tool_lists WHERE tools_hash = $h LIMIT 1", {"h": tools_hash})
        return [] if seen and seen[0]["tool_count"] == 0 else None
    method = facts_method()
    older = [r["fingerprint"] for r in rows if r["method_version"] != method]
    # A tool the list's older rows cannot rebuild whole may have rows of the current method in another list.
    elsewhere = {r["fingerprint"]: r["risk"] for r in mapday.rows(
        "SELECT fingerprint, any_value(risk) AS risk FROM tool_facts WHERE method_version = $m AND fingerprint IN "
        "(SELECT unnest($f)) GROUP BY fingerprint", {"m": method, "f": older})} if older else {}
    # What the pairing compares: the texts as kept (the same the change records compare, as their SHA-256).
    return [{"name": r["name"], "risk": _level(r, method, elsewhere), "fingerprint": r["fingerprint"],
             "texts": (r["description"], r["input_schema_json"], r["annotations_json"])} for r in rows]


def _level(row: dict[str, Any], method: str, elsewhere: dict[str, str]) -> str | None:
    """A tool's level under the current method: its published one where its row is of that method; else read
    again from what the row keeps, when that rebuilds the very definition (its fingerprint); else the current
    method's level of the same definition in another list; else None: a row keeps a description that is not
    text as null and a name as its text, so classifying what is kept could move a level that only the method
    moved (seed 000 `method_changes`), and the answer says the level is unknown instead."""
    if row["method_version"] == method:
        return str(row["risk"])
    for tool in _rebuilt(row):
        if tool_fingerprint(tool) == row["fingerprint"]:
            return classify(tool, default_vocabulary()).risk
    return elsewhere.get(row["fingerprint"])


def _rebuilt(row: dict[str, Any]) -> list[dict[str, Any]]:
    """Every definition the row could have been made from: a field kept as null was absent or null."""
    tools: list[dict[str, Any]] = [{"name": row["name"]}] + ([{}] if row["name"] is None else [])
    for key, text in (("description", row["description"]), ("inputSchema", row["input_schema_json"]),
                      ("annotations", row["annotations_json"])):
        value = text if key == "description" else (json.loads(text) if text is not None else None)
        tools = [{**t, key: value} for t in tools] + ([dict(t) for t in tools] if value is None else [])
    return tools


def _by_name(tools: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each name's tools in order of level, then fingerprint: the order tool_changes pairs a repeated name in
    (sql/tool_changes.sql, changes-1.1), whatever order a server serves them in."""
    named: dict[str, list[dict[str, Any]]] = {}
    for t in sorted(tools, key=lambda t: (_rank(t["risk"]), t["fingerprint"])):
        named.setdefault(t["name"], []).append(t)
    return named


def _rank(level: str | None) -> int:
    return LEVELS.index(level) if level is not None else len(LEVELS)  # a level unknown pairs last


Pairs = list[tuple[dict[str, Any], dict[str, Any]]]


def _paired(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> tuple[
        Pairs, Pairs, list[dict[str, Any]], list[dict[str, Any]]]:
    """(changed pairs, renamed pairs, added, removed) as tool_changes pairs two lists (sql/tool_changes.sql): an
    identical definition on both sides (with multiplicity) is no change; then tools of one name pair one to one
    (a list may repeat a name); then the same description and inputSchema under a new name is a rename (a
    description is needed to recognise it)."""
    left_before, left_after = _unpaired(before, after), _unpaired(after, before)
    old, new = _by_name(left_before), _by_name(left_after)
    pairs, rest_after, rest_before = [], [], []
    for name in dict.fromkeys(t["name"] for t in left_after + left_before):
        olds, news = old.get(name, []), new.get(name, [])
        pairs += list(zip(olds, news, strict=False))
        rest_after += news[len(olds):]
        rest_before += olds[len(news):]
    renamed, added, removed = _renamed(rest_before, rest_after)
    return pairs, renamed, added, removed


def _renamed(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> tuple[
        Pairs, list[dict[str, Any]], list[dict[str, Any]]]:
    """(renames, added, removed): twins (the same description and inputSchema) pair in fingerprint order."""
    def twins(tools: list[dict[str, Any]]) -> dict[tuple[Any, Any], list[dict[str, Any]]]:
        grouped: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
        for t in sorted(tools, key=lambda t: t["fingerprint"]):
            grouped.setdefault(t["texts"][:2], []).append(t)
        return grouped

    old = twins(before)
    renamed: Pairs = []
    added, removed = [], []
    for key, news in twins(after).items():
        olds = old.pop(key, []) if key[0] else []  # no description, or an empty one: never guessed as a rename
        renamed += list(zip(olds, news, strict=False))
        added += news[len(olds):]
        removed += olds[len(news):]
    removed += [t for olds in old.values() for t in olds]
    return renamed, _in_order(added, after), _in_order(removed, before)


def _in_order(tools: list[dict[str, Any]], order: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ids = {id(t) for t in tools}
    return [t for t in order if id(t) in ids]


def _unpaired(tools: list[dict[str, Any]], other: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tools left once each identical definition of `other` has taken one of them."""
    spare = Counter(t["fingerprint"] for t in other)
    left = []
    for t in tools:
        if spare[t["fingerprint"]] > 0:
            spare[t["fingerprint"]] -= 1
        else:
            left.append(t)
    return left


def _shown_now(mapday: MapDay, key: str) -> str | None:
    rows = mapday.rows("SELECT current_shown_status FROM current_status WHERE server_key = $k", {"k": key})
    return rows[0]["current_shown_status"] if rows else None


def verify_lock(mapday: MapDay, server: str, tools_hash: str) -> dict[str, Any]:
    """Whether `server` still serves the approved list `tools_hash`, and if not, tool by tool what differs
    and whether risk rose (both sides classified with the current method)."""
    # A hash in upper case is the same digest: read as the lower case the map publishes, as a server_id is read
    # in either case (MapDay.resolve), and said so when refused (docs/agents.md, verify_lock).
    approved_hash = (tools_hash or "").strip().lower()
    if not _HASH.fullmatch(approved_hash):
        # 64 characters of which one is not a hex digit is a different mistake from a hash cut short
        got = (f"{len(approved_hash)} characters" if len(approved_hash) != 64 else
               f"64 characters, {sum(c not in '0123456789abcdef' for c in approved_hash)} of them not hex digits")
        raise ValueError("tools_hash must be the 64 hex digits the map publishes for a tool list, in either case "
                         f"(got {got})")
    endpoint = mapday.resolve(server)
    key = endpoint["server_key"]
    # The endpoint's check of the open day so far (a live map), else the served day's.
    (today,) = mapday.rows(
        "SELECT day, code, shown_status, tools_hash, checked_at, true AS provisional FROM open_status "
        "WHERE server_key = $k UNION ALL BY NAME (SELECT day, code, shown_status, tools_hash, checked_at, false "
        "AS provisional FROM daily_status WHERE server_key = $k) ORDER BY day DESC LIMIT 1", {"k": key})
    seen = mapday.rows("SELECT day, tools_hash FROM status_window WHERE server_key = $k AND tools_hash IS NOT NULL "
                       "ORDER BY day DESC LIMIT 1", {"k": key})
    current_hash, seen_on = (today["tools_hash"], today["day"]) if today["tools_hash"] else (
        (seen[0]["tools_hash"], seen[0]["day"]) if seen else (None, None))
    answer: dict[str, Any] = {
        "server_name": endpoint["server_name"], "server_id": endpoint["server_id"], "url": endpoint["url"],
        "approved_tools_hash": approved_hash, "current_tools_hash": current_hash,
        "current_list_seen_on": seen_on.isoformat() if seen_on else None,
        # The status shown now, as every surface shows it (current_status), beside the check the lock rests on.
        "shown_status": _shown_now(mapday, key) or today["shown_status"],
        "checked_at": today["checked_at"].isoformat() if today["checked_at"] else None,
        "rests_on": (f"the open day's check at {today['checked_at'].isoformat()} (provisional)" if today["provisional"]
                     else f"the map day {mapday.day}"),
        "method_version": f"{CHANGES_METHOD}+{facts_method()}",  # as tool_changes' rows: the levels are the facts'
        **mapday.served(),
    }
    if current_hash is None:
        answer.update(unchanged=None, verdict=f"no tool list seen in the last 30 days ({today['shown_status']}): "
                      "the lock cannot be checked")
        return answer
    if not today["tools_hash"]:
        # a day not checked (n) is no data, not a server "not answering" (helper-94); and the lock rests on the
        # list compared, not on a day that listed none
        why = (f"not checked on {today['day']} (no data)" if today["code"] == "n" else
               f"not answering with tools on {today['day']} ({today['shown_status']})")
        _noted(answer, f"{why}; compared with the list last seen on {seen_on}")
        answer["rests_on"] = f"the list last seen, on {seen_on} ({why})"
    if current_hash == approved_hash:
        answer.update(unchanged=True, verdict="unchanged: the server serves exactly the approved list",
                      added=[], removed=[], changed=[], renamed=[], risk_rose=False)
        return answer
    approved = _definitions(mapday, approved_hash)
    current = _definitions(mapday, current_hash) or []
    if approved is None:
        answer.update(unchanged=False, risk_rose=None, added=None, removed=None, changed=None, renamed=None,
                      verdict="changed: the server serves another list, and the map never saw the approved one, so "
                      "it cannot say tool by tool what differs",
                      current_tools=[{"name": t["name"], "risk": t["risk"]} for t in current])
        return answer
    answer.update(_differences(approved, current))
    if answer.get("levels_unknown"):
        _noted(answer, "the level of " + ", ".join(answer["levels_unknown"])[:300] + " under the current method is "
               "unknown (the map keeps its definition only in part, under an older method): a rise in it is not told")
    return answer


def _differences(approved: list[dict[str, Any]], current: list[dict[str, Any]]) -> dict[str, Any]:
    """Tool by tool what differs between two lists, and where risk rose, as tool_changes records it."""
    pairs, renames, new_tools, gone_tools = _paired(approved, current)
    unknown = sorted({_label(t["name"]) for t in approved + current if t["risk"] is None})
    added = [{"tool": t["name"], "risk": t["risk"]} for t in new_tools]
    removed = [{"tool": t["name"], "risk": t["risk"]} for t in gone_tools]
    # A field the map keeps only in the fingerprint (a description that is not text, a schema absent or null)
    # is still a change: `definition`, as tool_changes names it.
    changed = [{"tool": now["name"], "fields": [f for f, a, b in zip(("description", "inputSchema", "annotations"),
                                                                     was["texts"], now["texts"], strict=True)
                                                if a != b] or ["definition"],
                "previous_risk": was["risk"], "risk": now["risk"]} for was, now in pairs]
    renamed = [{"tool": now["name"], "previous_tool": was["name"], "previous_risk": was["risk"], "risk": now["risk"]}
               for was, now in renames]
    rises = [_label(a["tool"]) for a in added if a["risk"] == "red"] + [
        _label(c["tool"]) for c in changed + renamed
        if c["risk"] is not None and c["previous_risk"] is not None
        and LEVELS.index(c["risk"]) > LEVELS.index(c["previous_risk"])]
    answer = {"unchanged": False, "added": added, "removed": removed, "changed": changed, "renamed": renamed,
              "risk_rose": bool(rises), "risk_rose_in": rises,
            "verdict": ("changed, and risk rose: " + ", ".join(rises)) if rises else
            "changed, without a rise in risk" if (added or removed or changed or renamed) else
            "changed, though no tool differs in what the map keeps of it"}
    if unknown:
        answer["levels_unknown"] = unknown
        untold = [_label(a["tool"]) for a in added if a["risk"] is None] + [
            _label(c["tool"]) for c in changed + renamed if None in (c["risk"], c["previous_risk"])]
        if untold and not rises:  # a definite "no rise" would hide one that a level unknown may hold
            answer["risk_rose"] = None
            answer["verdict"] = "changed; whether risk rose in " + ", ".join(untold)[:300] + " is unknown"
    return answer


def _label(name: str | None) -> str:
    return name or "(unnamed)"  # a nameless tool, as the change records' details name it


def _noted(answer: dict[str, Any], note: str) -> None:
    """Adds a caveat to the answer's note (which may already say the day is not signed yet)."""
    answer["note"] = f"{answer['note']}; {note}" if answer.get("note") else note


def _since(mapday: MapDay, since: str | dt.date) -> dt.date:
    if isinstance(since, dt.date):
        day = since
    else:
        text = str(since).strip()
        try:  # a day exactly as YYYY-MM-DD: the words the caller is told, never Python's own
            if not _DAY.fullmatch(text):
                raise ValueError(text)
            day = dt.date.fromisoformat(text)
        except ValueError:
            raise ValueError(f"since must be a day as YYYY-MM-DD (got {text[:40]!r})") from None
    earliest = mapday.day - dt.timedelta(days=CHANGE_DAYS)
    if day < earliest:
        raise ValueError(f"since must be a day on or after {earliest}: changes are kept {CHANGE_DAYS} days "
                         f"(got {day})")
    return day


def _change_rows(mapday: MapDay, where: str, params: dict[str, Any],
                 offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """At most MAX_CHANGES rows from `offset` on, newest first, in an order that is the same on every call (a list may
    hold two tools of one name, so every column that tells two changes apart orders them), and how many there are:
    the page cut in the query, not after it (helper-101: paging through 25,660 changes read them all each time)."""
    if offset < 0:
        raise ValueError(f"offset must be 0 or more, not {offset}")
    rows = mapday.rows(
        "SELECT c.day, c.server_key, c.server_id, s.server_name, c.kind, c.tool_name, c.previous_tool_name, "
        "c.changed_fields, c.risk, c.previous_risk, c.detail, c.previous_day, c.method_version, "
        "count(*) OVER () AS _total "
        "FROM change_window c LEFT JOIN daily_status s USING (server_key) WHERE " + where +
        " ORDER BY c.day DESC, c.server_key, c.kind, c.tool_name, c.previous_tool_name, c.detail, c.risk, "
        "c.previous_risk, c.changed_fields::VARCHAR LIMIT $page OFFSET $skip",
        {**params, "page": MAX_CHANGES, "skip": offset})
    total = rows[0]["_total"] if rows else _count_changes(mapday, where, params)
    for r in rows:
        del r["_total"]
        if mapday.live:  # a change of the open day so far (curated/open_day.py)
            r["provisional"] = r["day"] > mapday.day
        for k in ("day", "previous_day"):
            r[k] = r[k].isoformat() if r[k] else None
    return rows, total


def _count_changes(mapday: MapDay, where: str, params: dict[str, Any]) -> int:
    """How many changes there are, for a page past the last (which has no row to carry the count)."""
    ((total,),) = mapday.con.execute("SELECT count(*) FROM change_window c LEFT JOIN daily_status s USING (server_key) "
                                     "WHERE " + where, params).fetchall()
    return int(total)


def _paged(offset: int, shown: int, total: int) -> dict[str, Any]:
    """Where a page of changes lies among all of them: `truncated` when rows follow it, which `next_offset` asks for
    (helper-100: 500 of 25,660 changes came back, all of the newest day, and the rest could not be reached)."""
    more = total > offset + shown
    return {"offset": offset, "total": total, "truncated": more, "next_offset": offset + shown if more else None}


def changes_since(mapday: MapDay, server: str | None, since: str | dt.date, offset: int = 0) -> dict[str, Any]:
    """Every change recorded after `since` through the served day, for one server or all ("all" or None), a page
    of MAX_CHANGES from `offset` on."""
    day = _since(mapday, since)
    params: dict[str, Any] = {"since": day, "through": mapday.through()}
    where = "c.day > $since::DATE AND c.day <= $through::DATE"
    scope = "all"
    if server and server.strip().lower() not in ("all", "*"):
        endpoint = mapday.resolve(server)
        params["k"] = endpoint["server_key"]
        where += " AND c.server_key = $k"
        scope = endpoint["server_key"]
    rows, total = _change_rows(mapday, where, params, offset)
    return {"scope": scope, "since": day.isoformat(), "through": mapday.through().isoformat(), "changes": rows,
            **_paged(offset, len(rows), total), **mapday.served()}


def watch(mapday: MapDay, days: int = 7, server: str | None = None, offset: int = 0) -> dict[str, Any]:
    """The feed of rises in risk and of sign-in, payment and redirect changes over the last `days` days, a page of
    MAX_CHANGES from `offset` on."""
    days = max(1, min(int(days), CHANGE_DAYS))
    params: dict[str, Any] = {"since": mapday.through() - dt.timedelta(days=days), "through": mapday.through(),
                              "kinds": list(WATCH_KINDS)}
    where = "c.day > $since::DATE AND c.day <= $through::DATE AND c.kind = ANY($kinds)"
    if server and server.strip().lower() not in ("all", "*"):
        params["k"] = mapday.resolve(server)["server_key"]
        where += " AND c.server_key = $k"
    rows, total = _change_rows(mapday, where, params, offset)
    return {"window_days": days, "kinds": list(WATCH_KINDS), "entries": rows, **_paged(offset, len(rows), total),
            **mapday.served()}
