"""A deterministic synthetic generator: lands raw probe and registry Parquet exactly as the prober will.

Same seed, same lake. The mix follows what the live registry shows: about half of the endpoints answer
with tools, about a fifth sit behind 401/403, a few ask for payment (402), the rest are down with varied
codes; endpoints appear and disappear, some flap, some tool lists change (some without a server version
bump), a few listings are skipped, and some days have no check at all (the run did not happen).
Vectorised with numpy and pyarrow so 100,000 endpoints x 30 days land in a few minutes.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .. import __version__
from ..lake.keys import origin, server_id, server_key
from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths
from ..lake.schemas import RAW_PROBES, RAW_REGISTRY, conform
from ..rules.fingerprints import summarize_tools
from .synth_reports import day_reports, land_day_reports, reporter_ids

# None as numpy object, for np.where over optional values (the result is an object array, as with a bare None).
NULL = np.array(None, dtype=object)

PROBER_VERSION = f"synth/{__version__}"

ARCHETYPES = ("ok", "flappy", "auth", "pay", "down", "robots", "listing_skip")
ARCHETYPE_P = (0.46, 0.06, 0.20, 0.02, 0.20, 0.02, 0.04)
DOWN_OUTCOMES = ("timeout", "unreachable", "http_404", "http_500", "http_502", "http_503", "not_mcp",
                 "rpc_error", "redirect", "no_tool_list", "http_429", "http_400", "http_405")
DOWN_P = (0.22, 0.22, 0.14, 0.08, 0.05, 0.05, 0.05, 0.04, 0.04, 0.03, 0.02, 0.03, 0.03)
LISTING_SKIPS = ("non-https URL", "templated URL", "private or localhost host", "sse-only remote")
PROTOCOLS = ("2025-06-18", "2025-03-26", "2025-11-25", "2024-11-05", "2026-07-28")
PROTOCOL_P = (0.55, 0.15, 0.22, 0.05, 0.03)

VERBS = ("get", "list", "search", "read", "fetch", "create", "update", "delete", "send", "run", "deploy",
         "convert", "extract", "verify", "book", "pay", "grant", "query", "upload", "cancel")
NOUNS = ("issue", "file", "record", "invoice", "flight", "hotel", "payment", "user", "repo", "page",
         "ticket", "order", "document", "event", "report", "image", "message", "table", "route", "price")


@dataclass(frozen=True)
class SynthResult:
    days: list[dt.date]
    missing_days: list[dt.date]
    probe_rows: int
    registry_rows: int
    distinct_tool_lists: int
    report_rows: int = 0


def _tool(rng: random.Random, i: int) -> dict:
    verb, noun = rng.choice(VERBS), rng.choice(NOUNS)
    tool: dict = {"name": f"{verb}_{noun}" + (f"_{i}" if rng.random() < 0.3 else "")}
    if rng.random() < 0.93:
        tool["description"] = f"{verb.capitalize()} a {noun} " + " ".join(
            rng.choice(NOUNS) for _ in range(rng.randint(3, 30)))
    if rng.random() < 0.97:
        props = {f"{rng.choice(NOUNS)}_{k}": {"type": rng.choice(["string", "integer", "boolean"])}
                 for k in range(rng.randint(0, 5))}
        tool["inputSchema"] = {"type": "object", "properties": props, "required": sorted(props)[:1]}
    if rng.random() < 0.4:
        read_only = verb in ("get", "list", "search", "read", "fetch", "query", "verify", "extract")
        tool["annotations"] = {"readOnlyHint": read_only, "destructiveHint": verb in ("delete", "cancel")}
    return tool


def _toolset(seed: int, n_tools: int) -> list[dict]:
    rng = random.Random(seed)
    return [_tool(rng, i) for i in range(n_tools)]


def _mutate(tools: list[dict], seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = [dict(t) for t in tools]
    kind = rng.random()
    if kind < 0.35 or not out:
        out.append(_tool(rng, len(out) + 100))
    elif kind < 0.55 and len(out) > 1:
        out.pop(rng.randrange(len(out)))
    elif kind < 0.85:
        t = out[rng.randrange(len(out))]
        t["description"] = (t.get("description") or "") + " Now also " + rng.choice(VERBS) + "s things."
    else:
        t = out[rng.randrange(len(out))]
        t["annotations"] = {"readOnlyHint": False, "destructiveHint": True}
    return out


def synthesize(lake: LakePaths, servers: int, days: int, seed: int, end_day: dt.date,
               missing_days: int | None = None,
               progress: Callable[[str], None] | None = None, mean_tools: float = 11.0,
               agent_reports: bool = True) -> SynthResult:
    """Land `days` UTC days ending on `end_day` for `servers` endpoints into `lake`; tool lists have about
    `mean_tools` tools (geometric, 1..60); with `agent_reports`, each day's batch of agent reports too
    (synth_reports.py)."""
    if servers < 1 or days < 1:
        raise ValueError("servers and days must be at least 1")
    rng = np.random.default_rng(seed)
    day_list = [end_day - dt.timedelta(days=days - 1 - i) for i in range(days)]
    n_missing = missing_days if missing_days is not None else (days // 15 if days >= 10 else 0)
    missing_idx = set(rng.choice(np.arange(1, days - 1), size=min(n_missing, max(days - 2, 0)),
                                 replace=False).tolist()) if days > 2 and n_missing else set()

    # Per-endpoint attributes, fixed for the whole run.
    arche = rng.choice(len(ARCHETYPES), size=servers, p=ARCHETYPE_P)
    first = np.where(rng.random(servers) < 0.85, 0, rng.integers(1, max(days, 2), servers))
    leaves = rng.random(servers) < 0.06
    last = np.where(leaves, np.minimum(days - 1, first + rng.integers(1, max(days, 2), servers)), days - 1)
    latency = np.clip(rng.lognormal(np.log(450), 0.6, servers), 40, 7000)
    down_code = rng.choice(len(DOWN_OUTCOMES), size=servers, p=DOWN_P)
    protocol = rng.choice(len(PROTOCOLS), size=servers, p=PROTOCOL_P)
    auth_status = np.where(rng.random(servers) < 0.8, 401, 403)
    has_prm = rng.random(servers) < 0.5
    listing_skip = rng.integers(0, len(LISTING_SKIPS), servers)

    pool_size = max(50, min(5000, servers // 4))
    tool_counts = np.clip(rng.geometric(1.0 / mean_tools, pool_size), 1, 60)
    toolset_of = rng.integers(0, pool_size, servers)
    # Some tool lists change on some days; 30% of those changes keep the same server version ("silent").
    changer = rng.random(servers) < 0.08
    change_days = {int(i): sorted(set(rng.integers(1, days, rng.integers(1, 4)).tolist()))
                   for i in np.flatnonzero(changer)} if days > 1 else {}
    silent_change = rng.random(servers) < 0.3

    names = [f"io.github.synth{i % 997}/server-{i}" for i in range(servers)]
    urls = []
    for i in range(servers):
        host = f"mcp{i}.example{i % 89}.com"
        if ARCHETYPES[arche[i]] == "listing_skip":
            reason = LISTING_SKIPS[listing_skip[i]]
            host = {"non-https URL": host, "templated URL": "{tenant}." + host,
                    "private or localhost host": f"mcp{i}.internal", "sse-only remote": host}[reason]
            scheme = "http" if reason == "non-https URL" else "https"
        else:
            scheme = "https"
        urls.append(f"{scheme}://{host}/mcp")
    keys = [server_key(u) for u in urls]
    static = {
        "server_key": pa.array(keys), "server_id": pa.array([server_id(k) for k in keys]),
        "server_name": pa.array(names), "url": pa.array(urls),
        "origin": pa.array([origin(u) for u in urls]),
    }

    # Distinct tool lists: the pool, then one variant per (endpoint, change) met on the way.
    lists_json: list[str] = []
    lists_hash: list[str] = []
    lists_count: list[int] = []
    lists_size: list[int] = []

    def add_list(tools: list[dict]) -> int:
        s = summarize_tools(tools)
        lists_json.append(s.tools_json)
        lists_hash.append(s.tools_hash)
        lists_count.append(s.tool_count)
        lists_size.append(s.tool_list_size)
        return len(lists_json) - 1

    pool_tools = [_toolset(seed * 1_000_003 + k, int(tool_counts[k])) for k in range(pool_size)]
    for tools in pool_tools:
        add_list(tools)
    variant_cache: dict[tuple[int, int], int] = {}

    def list_id(i: int, day_idx: int) -> tuple[int, int]:
        changes = change_days.get(i)
        if not changes:
            return int(toolset_of[i]), 0
        variant = sum(1 for c in changes if c <= day_idx)
        if variant == 0:
            return int(toolset_of[i]), 0
        if (i, variant) not in variant_cache:
            tools = pool_tools[int(toolset_of[i])]
            for v in range(1, variant + 1):
                tools = _mutate(tools, seed * 7919 + i * 31 + v)
            variant_cache[(i, variant)] = add_list(tools)
        return variant_cache[(i, variant)], variant

    probe_rows = registry_rows = report_rows = 0
    reporters = reporter_ids(max(50, servers // 20))
    idx_all = np.arange(servers)
    for d_idx, day in enumerate(day_list):
        present = idx_all[(first <= d_idx) & (last >= d_idx)]
        if d_idx in missing_idx:
            if progress:
                progress(f"{day}: no run (a missed day)")
            continue
        day_rng = np.random.default_rng([seed, d_idx])
        run_id = f"synth-{day.isoformat()}-{seed}"
        fetched_at = dt.datetime.combine(day, dt.time(1, 0), dt.UTC)

        # Registry snapshot of the day.
        kinds = arche[present]
        listing = np.where(kinds == ARCHETYPES.index("listing_skip"), "skip", "probe")
        skip_reason = np.where(listing == "skip", np.array(LISTING_SKIPS)[listing_skip[present]], NULL)
        reg = pa.table({
            "day": pa.array([day] * len(present), pa.date32()),
            "fetched_at": pa.array([fetched_at] * len(present), pa.timestamp("us", tz="UTC")),
            "server_name": static["server_name"].take(present),
            "server_version": pa.array(["1.0.0"] * len(present)),
            "status": pa.array(["active"] * len(present)),
            "remote_type": pa.array(np.where(skip_reason == "sse-only remote", "sse", "streamable-http")),
            "url": static["url"].take(present),
            "server_key": static["server_key"].take(present),
            "server_id": static["server_id"].take(present),
            "listing": pa.array(listing),
            "skip_reason": pa.array(skip_reason.tolist(), pa.string()),
        })
        write_parquet(lake, lake.registry_file(day), conform(reg, RAW_REGISTRY))
        registry_rows += reg.num_rows

        # The scan: probe-listed endpoints, a few not reached (the run ended early for them).
        probed = present[(listing == "probe") & (day_rng.random(len(present)) > 0.004)]
        k = arche[probed]
        n = len(probed)
        roll = day_rng.random(n)
        outcome = np.full(n, "ok", dtype=object)
        outcome[(k == ARCHETYPES.index("ok")) & (roll < 0.02)] = "timeout"
        outcome[(k == ARCHETYPES.index("flappy")) & (roll < 0.5)] = "unreachable"
        outcome[k == ARCHETYPES.index("auth")] = "needs_auth"
        outcome[k == ARCHETYPES.index("pay")] = "http_402"
        is_down = k == ARCHETYPES.index("down")
        outcome[is_down] = np.array(DOWN_OUTCOMES, dtype=object)[down_code[probed[is_down]]]
        outcome[is_down & (roll < 0.05)] = "ok"  # down endpoints come back now and then
        outcome[k == ARCHETYPES.index("robots")] = "skipped"

        http = np.full(n, None, dtype=object)
        for j, o in enumerate(outcome):
            if o == "ok":
                http[j] = 200
            elif o == "needs_auth":
                http[j] = int(auth_status[probed[j]])
            elif o.startswith("http_"):
                http[j] = int(o[5:])
            elif o in ("not_mcp", "rpc_error", "no_tool_list"):
                http[j] = 200
            elif o == "redirect":
                http[j] = 302

        ok = outcome == "ok"
        lid = np.full(n, -1, dtype=np.int64)
        version = np.full(n, "1.0.0", dtype=object)
        for j in map(int, np.flatnonzero(ok)):
            i = int(probed[j])
            lid[j], variant = list_id(i, d_idx)
            bumps = variant if not silent_change[i] else 0
            version[j] = f"1.{bumps}.0"

        jitter = day_rng.lognormal(0, 0.25, n)
        hs = latency[probed] * jitter
        hs = np.where(outcome == "timeout", 8000 + day_rng.integers(0, 22000, n), hs)
        hs = np.where(np.isin(outcome, ["unreachable"]), day_rng.integers(5, 3000, n), hs)
        start_hour = 1.0 + (0.5 * d_idx) % 18
        offsets = start_hour * 3600 + np.sort(day_rng.random(n)) * 3 * 3600
        day_start = dt.datetime.combine(day, dt.time(), dt.UTC)
        started = pa.array((np.datetime64(day_start.replace(tzinfo=None), "us")
                            + (offsets * 1e6).astype("timedelta64[us]")), pa.timestamp("us", tz="UTC"))

        dictionary = pa.array(lists_json, pa.string())
        has_list = lid >= 0
        lid_arr = pa.array(lid, mask=~has_list)
        tool_count = pa.array(np.array(lists_count)[np.maximum(lid, 0)], pa.int32(), mask=~has_list)
        tool_size = pa.array(np.array(lists_size)[np.maximum(lid, 0)], pa.int64(), mask=~has_list)
        auth = outcome == "needs_auth"
        prm = auth & has_prm[probed]
        keys_today = static["server_key"].take(probed)
        www_auth = np.where(prm, np.char.add(np.char.add('Bearer resource_metadata="https://',
                                                         np.array(keys_today.to_pylist(), dtype=str)),
                                             '/.well-known/oauth-protected-resource"'),
                            np.where(auth, 'Bearer realm="mcp"', NULL))
        detail = np.array([_detail(o, h) for o, h in zip(outcome, http, strict=True)], dtype=object)
        table = pa.table({
            "day": pa.array([day] * n, pa.date32()),
            "check_kind": pa.array(["daily"] * n),
            "run_id": pa.array([run_id] * n),
            "server_key": keys_today,
            "server_id": static["server_id"].take(probed),
            "server_name": static["server_name"].take(probed),
            "server_version": pa.array(["1.0.0"] * n),
            "remote_type": pa.array(["streamable-http"] * n),
            "url": static["url"].take(probed),
            "origin": static["origin"].take(probed),
            "started_at": started,
            "handshake_ms": pa.array(np.where(outcome == "skipped", 0, hs).astype(np.int32)),
            "outcome": pa.array(outcome.tolist(), pa.string()),
            "outcome_detail": pa.array(detail.tolist(), pa.string()),
            "http_status": pa.array(http.tolist(), pa.int32()),
            "protocol_version": pa.array(np.where(ok, np.array(PROTOCOLS)[protocol[probed]], NULL).tolist(),
                                         pa.string()),
            "server_info_name": pa.array(np.where(ok, np.array(names, dtype=object)[probed], NULL).tolist(),
                                         pa.string()),
            "server_info_version": pa.array(np.where(ok, version, NULL).tolist(), pa.string()),
            "tools_json": dictionary.take(lid_arr),
            "tool_count": tool_count,
            "tool_list_size": tool_size,
            "tools_hash": pa.array(lists_hash, pa.string()).take(lid_arr),
            "pages_read": pa.array(np.where(ok, 1, 0).astype(np.int32)),
            "tool_list_complete": pa.array(np.where(ok, True, NULL).tolist(), pa.bool_()),
            "www_authenticate": pa.array(www_auth.tolist(), pa.string()),
            "resource_metadata_url": pa.array(
                [f"https://{k}/.well-known/oauth-protected-resource" if p else None
                 for k, p in zip(keys_today.to_pylist(), prm, strict=True)], pa.string()),
            "payment_json": pa.array(np.where(outcome == "http_402",
                                              json.dumps({"accepts": [{"payTo": "0xSYNTH", "network": "base"}]}),
                                              NULL).tolist(), pa.string()),
            "redirect_location": pa.array(np.where(outcome == "redirect", "https://elsewhere.example.net/mcp",
                                                   NULL).tolist(), pa.string()),
            "skip_reason": pa.array(np.where(outcome == "skipped", "robots.txt disallows 7Maps-bot",
                                             NULL).tolist(), pa.string()),
            "prober_version": pa.array([PROBER_VERSION] * n),
        })
        control = conform(pa.table({
            "day": pa.array([day], pa.date32()), "check_kind": ["control"], "run_id": [run_id],
            "server_key": ["control.7maps.test/mcp"], "server_id": [server_id("control.7maps.test/mcp")],
            "url": ["https://control.7maps.test/mcp"], "origin": ["https://control.7maps.test"],
            "started_at": pa.array([day_start + dt.timedelta(hours=start_hour)], pa.timestamp("us", tz="UTC")),
            "handshake_ms": pa.array([35], pa.int32()), "outcome": ["ok"], "http_status": pa.array([200], pa.int32()),
            "prober_version": [PROBER_VERSION],
        }), RAW_PROBES)
        table = pa.concat_tables([conform(table, RAW_PROBES), control])
        write_parquet(lake, lake.raw_dir("probes", day) / f"{run_id}.parquet", table,
                      dictionary_pagesize_limit=64 << 20)
        probe_rows += table.num_rows
        if agent_reports:
            checked = outcome != "skipped"
            reports = day_reports(day, d_idx, seed, [k for k, c in zip(keys_today.to_pylist(), checked, strict=True)
                                                     if c], outcome[checked].tolist(), reporters)
            report_rows += land_day_reports(lake, day, reports, f"reports-{seed}")
        if progress:
            progress(f"{day}: {table.num_rows:,} checks, {reg.num_rows:,} listings")
    return SynthResult(day_list, sorted(day_list[i] for i in missing_idx), probe_rows, registry_rows,
                       len(lists_json), report_rows)


def _detail(outcome: str, http: int | None) -> str:
    return {
        "ok": "initialize and tools/list answered",
        "needs_auth": f"HTTP {http} before any tool was listed",
        "http_402": "HTTP 402 on initialize (asks for payment)",
        "timeout": "no answer to initialize within 8000 ms",
        "unreachable": "connection refused",
        "redirect": "redirects to another registrable domain (not followed)",
        "not_mcp": "HTTP 200 with text/html, not JSON-RPC",
        "rpc_error": "initialize answered with JSON-RPC error -32603",
        "no_tool_list": "tools/list answered without a tools array",
        "skipped": "robots.txt disallows 7Maps-bot",
    }.get(outcome, f"HTTP {http}")
