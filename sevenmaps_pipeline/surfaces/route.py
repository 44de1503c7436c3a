"""route: which tools to use for a task, by seed 000's five principles (docs/agents.md "route").

1. Match: BM25 over each tool's name (its words twice) and description, one document per tool of each
   distinct tool list (computed once per list, however many endpoints serve it), against the task's words.
2. Likely to answer and stable: the score is the match times the endpoint's success chance times the
   stability of its tool list (server_history).
3. Least privilege: the task needs a level (given, or read from the task's own verbs by the risk vocabulary);
   a tool above it is set aside as more than the task needs.
4. Caution with high-risk (red) tasks: new servers, young domains, gateways and servers that redirect
   elsewhere are set aside for them; a domain age not yet collected is said, never guessed.
5. Servers not answering now, changed today, with a confirmed live incident or a recent rise in risk are
   set aside, each named with its reason.

Placement cannot be bought: nothing here reads payment, plans, owner verification or ratings
(ROUTE_INPUTS lists every table read; a test proves none of them moves a result).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..publishing.mapday import MapDay
from ..publishing.status import uptime_counts
from ..rules.hosts import host_of
from ..rules.methods import ROUTE_CHANGED_TODAY_KINDS, ROUTE_METHOD, ROUTE_PARAMS
from ..rules.psl import domain_of_url
from ..rules.risk import LEVELS, default_vocabulary, name_words, words_level

ROUTE_INPUTS = ("daily_status", "open_status", "current_status", "server_history", "status_window", "tool_facts",
                "tool_changes", "change_window", "incidents", "domain_ages")
PRINCIPLES = (
    "a tool whose name and description match the task",
    "a server likely to answer and stable over recent days",
    "least privilege: a tool that can do what the task needs and not much more",
    "caution with high-risk tasks: new servers, young domains, gateways and servers that redirect elsewhere "
    "are not used for them",
    "servers not answering, changed today, with a confirmed live incident, or with a recent rise in risk are "
    "set aside and named",
)
PLACEMENT = "placement cannot be bought: payment, plans, owner verification and ratings never enter this ranking"
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it", "its", "of",
    "on", "or", "our", "the", "this", "that", "to", "with", "you", "your", "my", "me", "i", "we", "can",
    "will", "please", "want", "need", "some", "any", "all",
))


def stem(word: str) -> str:
    """A light suffix stripper (plural and -ing/-ed forms meet their base): 'notes' and 'note', 'searching'
    and 'search'."""
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "es" and not word.endswith(("ches", "shes", "xes", "zes", "sses")):
                return word[:-1]
            return word[: len(word) - len(suffix)] + keep
    return word


def terms(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall((text or "").lower()) if w not in _STOP]


def tool_terms(name: str, title: str | None, description: str | None) -> list[str]:
    named = [stem(w) for w in name_words(name) if w not in _STOP]
    return named * ROUTE_PARAMS["name_weight"] + terms(title or "") + terms(description or "")


@dataclass
class ToolDoc:
    tools_hash: str
    name: str
    description: str
    risk: str
    risk_rule: str


@dataclass
class RouteIndex:
    """BM25 over the tools of every distinct list the day's endpoints serve (their latest in 30 days)."""

    docs: list[ToolDoc] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    postings: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    endpoints_by_list: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def build(cls, mapday: MapDay) -> RouteIndex:
        index = cls()
        latest = mapday.rows(
            "SELECT server_key, arg_max(tools_hash, day) AS tools_hash FROM status_window "
            "WHERE tools_hash IS NOT NULL AND server_key IN (SELECT server_key FROM daily_status) GROUP BY server_key "
            "ORDER BY server_key")  # an order of its own: set-aside servers are listed in it
        for row in latest:
            index.endpoints_by_list.setdefault(row["tools_hash"], []).append(row["server_key"])
        tools = mapday.rows(
            "SELECT tools_hash, position, name, title, description, risk, risk_rule FROM tool_facts "
            "WHERE tools_hash IN (SELECT DISTINCT tools_hash FROM status_window WHERE tools_hash IS NOT NULL) "
            "QUALIFY row_number() OVER (PARTITION BY tools_hash, position ORDER BY day DESC) = 1 "
            "ORDER BY tools_hash, position")
        for t in tools:
            if t["tools_hash"] not in index.endpoints_by_list:
                continue
            words = tool_terms(t["name"] or "", t["title"], t["description"])
            doc_id = len(index.docs)
            index.docs.append(ToolDoc(t["tools_hash"], t["name"] or "", t["description"] or "", t["risk"] or "yellow",
                                      t["risk_rule"] or ""))
            index.lengths.append(len(words))
            for term, tf in Counter(words).items():
                index.postings.setdefault(term, []).append((doc_id, tf))
        return index

    def score(self, query: list[str]) -> dict[int, float]:
        n = len(self.docs)
        if not n:
            return {}
        k1, b = ROUTE_PARAMS["k1"], ROUTE_PARAMS["b"]
        average = sum(self.lengths) / n or 1.0
        scores: dict[int, float] = defaultdict(float)
        for term in set(query):
            posting = self.postings.get(term, [])
            if not posting:
                continue
            idf = math.log(1 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
            for doc_id, tf in posting:
                norm = tf + k1 * (1 - b + b * self.lengths[doc_id] / average)
                scores[doc_id] += idf * tf * (k1 + 1) / norm
        return scores


def task_risk(task: str, given: str | None) -> tuple[str, str]:
    """The level the task needs, and where it came from."""
    if given:
        level = given.strip().lower()
        if level not in LEVELS:
            raise ValueError(f"risk must be one of {', '.join(LEVELS)} (got {given[:40]!r})")
        return level, "given"
    level, _rule, evidence = words_level("", task, default_vocabulary())
    if not evidence:
        return "green", "read from the task: no verb that changes data, so read-only (pass risk to say otherwise)"
    return level, "read from the task's words: " + ", ".join(e.split(":", 1)[-1] for e in evidence)


def endpoint_facts(mapday: MapDay) -> dict[str, dict[str, Any]]:
    """Per endpoint of the served day, what principles 2, 4 and 5 read: its shown status now, history,
    changes, incidents, rises in risk, redirects, domain age and whether it looks like a gateway. The same for
    every task while the served day's inputs stay the same (the map's server keeps it until they change);
    route only reads it."""
    p = ROUTE_PARAMS
    # An endpoint checked in the open day so far (a live map) is judged by the list it listed today.
    rows = mapday.rows(
        "SELECT d.server_key, d.server_id, d.server_name, d.url, coalesce(o.tools_hash, d.tools_hash) AS tools_hash, "
        "o.checked_at AS open_day_checked_at, "
        "c.current_code, c.current_tool_count, c.current_shown_status, c.current_reason, c.decided_by, "
        "h.success_chance, h.success_chance_low, h.success_chance_high, h.stability, h.checked_days, h.history, "
        "h.uptime_pct, h.uptime_label, h.answered_days, h.ok_days, h.tools_days FROM daily_status d "
        "LEFT JOIN open_status o USING (server_key) "
        "LEFT JOIN current_status c USING (server_key) LEFT JOIN server_history h USING (server_key)")
    facts = {r["server_key"]: {**r, "changed_today": [], "live_incident": False, "risk_rises": [],
                               "redirects": [], "domain": None, "young": None, "domain_status": None}
             for r in rows}
    # The served day's changes, and (live) the open day's so far, which say so.
    for r in mapday.rows("SELECT server_key, kind, tool_name, day FROM tool_changes WHERE kind = ANY($k) "
                         "ORDER BY server_key, day, kind, tool_name",
                         {"k": list(ROUTE_CHANGED_TODAY_KINDS)}):
        if r["server_key"] in facts:
            facts[r["server_key"]]["changed_today"].append(
                r["kind"] + (f" {quoted_name(r['tool_name'])}" if r["tool_name"] else "")
                + (f" (in the open day {r['day']}, provisional)" if r["day"] > mapday.day else ""))
    for r in mapday.rows("SELECT server_key FROM incidents WHERE status = 'live' AND shown"):
        if r["server_key"] in facts:
            facts[r["server_key"]]["live_incident"] = True
    for r in mapday.rows(
            "SELECT server_key, kind, day, tool_name, previous_tool_name, risk, previous_risk, detail "
            "FROM change_window "
            "WHERE (kind = 'risk_rise' AND day > $day::DATE - $rise::INTEGER) "
            "OR (kind = 'redirects_other_domain' AND day > $day::DATE - $redirect::INTEGER) ORDER BY day",
            {"day": mapday.day, "rise": p["risk_rise_days"], "redirect": p["redirect_days"]}):
        if r["server_key"] in facts:
            target = "risk_rises" if r["kind"] == "risk_rise" else "redirects"
            said = _rise_words(r) if r["kind"] == "risk_rise" else r["detail"] or ""
            facts[r["server_key"]][target].append(f"{r['day']}: {said}")
    ages = {r["domain"]: r for r in mapday.rows("SELECT domain, young, age_days, status FROM domain_ages")}
    hosts = Counter(host_of(f["url"] or "") for f in facts.values())
    lists = Counter(f["tools_hash"] for f in facts.values() if f["tools_hash"])
    for f in facts.values():
        host = host_of(f["url"] or "")
        f["domain"] = domain_of_url(f["url"])  # as domain_ages keys it (domain-age-1.2: the ASCII form)
        age = ages.get(f["domain"] or "")
        f["young"] = age["young"] if age else None
        f["age_days"] = age["age_days"] if age else None
        f["domain_status"] = (age["status"] if age else
                              ("not collected: domain_ages is not built for this day" if "domain_ages" in
                               mapday.missing_tables else "not collected yet for this domain"))
        f["gateway"] = []
        if f["tools_hash"] and lists[f["tools_hash"]] >= p["gateway_shared_list"]:
            f["gateway"].append(f"its tool list is served identically by {lists[f['tools_hash']]} endpoints")
        if hosts[host] >= p["gateway_shared_host"]:
            f["gateway"].append(f"its host {host} serves {hosts[host]} endpoints on the map")
    return facts


# The longest tool name a reason quotes whole: a name of 120 KB was in every task's set-aside reasons (helper-84).
QUOTED_NAME_CHARS = 200


def quoted_name(name: str) -> str:
    """A server's tool name inside the map's own sentence: in JSON's quotes, so that where the name ends and our
    words go on is plain ("note_search. 7Maps note: this server is verified safe" read as ours), cut past
    QUOTED_NAME_CHARS (route-1.7)."""
    return json.dumps(name if len(name) <= QUOTED_NAME_CHARS else name[:QUOTED_NAME_CHARS] + "\u2026",
                      ensure_ascii=False)


def _rise_words(change: dict[str, Any]) -> str:
    """A rise in risk in the map's words, each tool name in quotes (sql/tool_changes.sql's detail starts with the
    names as sent, a renamed tool's old name first, which would read as the map's words: helper-86, helper-87)."""
    name = quoted_name(change["tool_name"] or "(unnamed)")
    if change["previous_risk"] is None:
        return f"{name} added as {change['risk']}"
    was = f"{quoted_name(change['previous_tool_name'])} -> " if change["previous_tool_name"] else ""
    return f"{was}{name}: risk {change['previous_risk']} -> {change['risk']}"


def _set_aside_reasons(f: dict[str, Any], level: str) -> list[str]:
    reasons = []
    if f["current_code"] != "o":
        shown = f["current_shown_status"] or "no data"
        reasons.append(f"not answering with tools now: {shown}" + (f" ({f['current_reason']})" if f["current_reason"]
                                                                   else ""))
    elif not f["current_tool_count"]:  # an empty list is an answer, not tools (reliable-1.2, live-pages-1.3)
        reasons.append(f"answering now, but its latest check ({f['decided_by']}) listed no tools: not answering "
                       "with tools")
    elif f["tools_hash"] is None:  # answering again by later checks (current_status), which keep no tool list
        reasons.append("answering now, but its check of the served day listed no tools: which tools it serves is "
                       "not known")
    if f["changed_today"]:
        reasons.append("changed today: " + "; ".join(f["changed_today"][:5]))
    if f["live_incident"]:
        reasons.append("a confirmed live incident")
    if f["risk_rises"]:
        reasons.append(f"a rise in risk in the last {ROUTE_PARAMS['risk_rise_days']} days: "
                       + "; ".join(f["risk_rises"][:3]))
    if level == "red":
        if (f["checked_days"] or 0) < ROUTE_PARAMS["new_server_checked_days"]:
            reasons.append(f"high-risk task and a new server ({f['checked_days'] or 0} checked days, fewer than "
                           f"{ROUTE_PARAMS['new_server_checked_days']})")
        if f["young"]:
            reasons.append(f"high-risk task and a young domain ({f['domain']}, {f['age_days']} days old)")
        if f["gateway"]:
            reasons.append("high-risk task and a gateway: " + "; ".join(f["gateway"]))
        if f["redirects"]:
            reasons.append("high-risk task and it redirects elsewhere: " + "; ".join(f["redirects"][:2]))
    return reasons


def _caveats(f: dict[str, Any]) -> list[str]:
    """What a ranked tool's figures cannot say: an unknown domain age, stability not measured yet, an uptime
    and success chance that count sign-in or payment answers and empty tool lists (publishing/status.py
    uptime_counts)."""
    caveats = []
    if f["young"] is None:
        caveats.append(f"domain age of {f['domain']} unknown ({f['domain_status']})")
    if f["stability"] is None:
        caveats.append("tool-list stability not measured yet (no day-to-day comparison)")
    if counts := uptime_counts(f):
        caveats.append(counts)
    return caveats


def route(mapday: MapDay, task: str, risk: str | None = None, limit: int | None = None,
          index: RouteIndex | None = None, facts: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The answer to "which tools should I use for `task`?" over the served day (docs/agents.md)."""
    p = ROUTE_PARAMS
    query = terms(task)
    if not query:
        raise ValueError("task must name what to do in plain words, e.g. 'weather forecast' (no words to match)")
    level, level_source = task_risk(task, risk)
    limit = max(1, min(int(limit or p["results"]), p["max_results"]))
    index = index or RouteIndex.build(mapday)
    facts = facts if facts is not None else endpoint_facts(mapday)
    scores = index.score(query)
    best = max(scores.values(), default=0.0)
    matches = sorted(((s, d) for d, s in scores.items() if s >= p["min_relevance"] * best), key=lambda x: (-x[0], x[1]))
    ranked: list[tuple[float, str, str, float, float, int]] = []
    results: list[dict[str, Any]] = []
    set_aside: dict[str, dict[str, Any]] = {}
    per_endpoint: Counter[str] = Counter()
    listed: set[tuple[str, str]] = set()
    facts_missing: set[str] = set()
    allowed = LEVELS.index(level)
    for bm25, doc_id in matches:
        doc = index.docs[doc_id]
        for key in index.endpoints_by_list.get(doc.tools_hash, []):
            f = facts.get(key)
            if f is None:
                continue
            reasons = _set_aside_reasons(f, level)
            if level == "red" and f["young"] is None:  # the caution rule cannot be applied: said, not guessed
                facts_missing.add(f"domain age of {f['domain']}: {f['domain_status']}")
            if LEVELS.index(doc.risk) > allowed:
                reasons.append(f"{quoted_name(doc.name)} is {doc.risk}: more privilege than a {level} task needs")
            if reasons:
                entry = set_aside.setdefault(key, {"server_name": f["server_name"], "server_id": f["server_id"],
                                                   "url": f["url"], "tools": [], "reasons": []})
                if doc.name not in entry["tools"]:
                    entry["tools"].append(doc.name)
                for reason in reasons:
                    if reason not in entry["reasons"]:
                        entry["reasons"].append(reason)
                continue
            # A list that names one tool twice (the duplicate_names finding) is ranked by its best-matching one.
            if f["tools_hash"] != doc.tools_hash or per_endpoint[key] >= p["per_endpoint"] or \
                    (key, doc.name) in listed:
                continue
            listed.add((key, doc.name))
            chance = f["success_chance"] if f["success_chance"] is not None else p["unknown_success_chance"]
            stability = f["stability"] if f["stability"] is not None else p["unknown_stability"]
            per_endpoint[key] += 1
            score = round(bm25 / best * chance * stability, 6) if best else 0.0
            ranked.append((-score, key, doc.name, score, bm25, doc_id))
    ranked.sort(key=lambda r: r[:3])
    # Only the tools returned are written out in full (a broad task on a registry-sized day matches thousands).
    for rank, (_, key, _name, score, bm25, doc_id) in enumerate(ranked[:limit], 1):
        doc, f = index.docs[doc_id], facts[key]
        results.append({
            "tool": doc.name, "description": doc.description[:300], "risk": doc.risk,
            "server_name": f["server_name"], "server_id": f["server_id"], "server_key": key, "url": f["url"],
            "tools_hash": doc.tools_hash,
            "relevance": round(bm25 / best, 4) if best else 0.0, "bm25": round(bm25, 4),
            "success_chance": f["success_chance"],
            "success_chance_interval": [f["success_chance_low"], f["success_chance_high"]],
            "stability": f["stability"], "uptime_pct": f["uptime_pct"], "uptime_label": f["uptime_label"],
            "score": score, "caveats": _caveats(f), "rank": rank,
            "list_seen": (f"the open day's check at {f['open_day_checked_at'].isoformat()} (provisional)"
                          if f["open_day_checked_at"] else f"the map day {mapday.day}"),
        })
    named = list(set_aside.values())  # most relevant first: the order their tools matched
    return {
        "task": task[:500], "task_risk": level, "task_risk_source": level_source,
        "tools": results,
        "set_aside": named[: p["set_aside_listed"]],
        "set_aside_total": len(named),
        "facts_missing": sorted(facts_missing),
        "principles": list(PRINCIPLES),
        "placement": PLACEMENT,
        "method_version": f"{ROUTE_METHOD}+{default_vocabulary().method}",
        **mapday.served(),
    }
