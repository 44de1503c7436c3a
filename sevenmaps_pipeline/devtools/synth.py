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
from ..registry.listing import SkipReason
from ..rules.fingerprints import summarize_tools
from .synth_lists import RealToolLists
from .synth_reports import day_reports, land_day_reports, reporter_ids

# None as numpy object, for np.where over optional values (the result is an object array, as with a bare None).
NULL = np.array(None, dtype=object)

PROBER_VERSION = f"synth/{__version__}"

ARCHETYPES = ("ok", "flappy", "auth", "pay", "down", "robots", "listing_skip")
ARCHETYPE_P = (0.46, 0.06, 0.20, 0.02, 0.20, 0.02, 0.04)
DOWN_OUTCOMES = ("timeout", "unreachable", "http_404", "http_500", "http_502", "http_503", "not_mcp",
                 "rpc_error", "redirect", "no_tool_list", "http_429", "http_400", "http_405")
DOWN_P = (0.22, 0.22, 0.14, 0.08, 0.05, 0.05, 0.05, 0.04, 0.04, 0.03, 0.02, 0.03, 0.03)
# The listing rules' own texts (registry/listing.py), as a real snapshot stores them.
LISTING_SKIPS = (SkipReason.NOT_HTTPS.value, SkipReason.TEMPLATED.value, SkipReason.PRIVATE.value,
                 SkipReason.SSE_ONLY.value)
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


@dataclass(frozen=True)
class _Endpoints:
    """Per-endpoint attributes, fixed for the whole run (position i is endpoint i)."""

    archetype: np.ndarray
    first_day: np.ndarray
    last_day: np.ndarray
    latency_ms: np.ndarray
    down_code: np.ndarray
    protocol: np.ndarray
    auth_status: np.ndarray
    has_prm: np.ndarray
    listing_skip: np.ndarray
    names: list[str]
    columns: dict[str, pa.Array]  # server_key, server_id, server_name, url, origin

    def present_on(self, day_idx: int) -> np.ndarray:
        return np.arange(len(self.names))[(self.first_day <= day_idx) & (self.last_day >= day_idx)]


def _missing_day_indexes(rng: np.random.Generator, days: int, missing_days: int | None) -> set[int]:
    """Days with no run at all; never the first or the last day."""
    n_missing = missing_days if missing_days is not None else (days // 15 if days >= 10 else 0)
    return set(rng.choice(np.arange(1, days - 1), size=min(n_missing, max(days - 2, 0)),
                          replace=False).tolist()) if days > 2 and n_missing else set()


def _draw_endpoints(rng: np.random.Generator, servers: int, days: int) -> _Endpoints:
    # The draws' order is the lake's: the same seed must land the same bytes.
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
    names = [f"io.github.synth{i % 997}/server-{i}" for i in range(servers)]
    urls = [_url(i, arche[i], listing_skip[i]) for i in range(servers)]
    keys = [server_key(u) for u in urls]
    columns = {
        "server_key": pa.array(keys), "server_id": pa.array([server_id(k) for k in keys]),
        "server_name": pa.array(names), "url": pa.array(urls),
        "origin": pa.array([origin(u) for u in urls]),
    }
    return _Endpoints(arche, first, last, latency, down_code, protocol, auth_status, has_prm, listing_skip,
                      names, columns)


def _url(i: int, archetype: int, listing_skip: int) -> str:
    """Endpoint i's URL; a listing_skip endpoint's URL is what the registry listing skips it for."""
    host = f"mcp{i}.example{i % 89}.com"
    if ARCHETYPES[archetype] == "listing_skip":
        reason = LISTING_SKIPS[listing_skip]
        host = {SkipReason.NOT_HTTPS: host, SkipReason.TEMPLATED: "{tenant}." + host,
                SkipReason.PRIVATE: f"mcp{i}.internal", SkipReason.SSE_ONLY: host}[SkipReason(reason)]
        scheme = "http" if reason == SkipReason.NOT_HTTPS else "https"
    else:
        scheme = "https"
    return f"{scheme}://{host}/mcp"


class _ToolLists:
    """Distinct tool lists: the pool, then one variant per (endpoint, change) met on the way."""

    def __init__(self, rng: np.random.Generator, servers: int, days: int, seed: int, mean_tools: float):
        self.seed = seed
        pool_size = max(50, min(5000, servers // 4))
        tool_counts = np.clip(rng.geometric(1.0 / mean_tools, pool_size), 1, 60)
        self.toolset_of = rng.integers(0, pool_size, servers)
        # Some tool lists change on some days; 30% of those changes keep the same server version ("silent").
        changer = rng.random(servers) < 0.08
        self.change_days = {int(i): sorted(set(rng.integers(1, days, rng.integers(1, 4)).tolist()))
                            for i in np.flatnonzero(changer)} if days > 1 else {}
        self.silent_change = rng.random(servers) < 0.3
        self.json: list[str] = []
        self.hash: list[str] = []
        self.count: list[int] = []
        self.size: list[int] = []
        self.pool_tools = [_toolset(seed * 1_000_003 + k, int(tool_counts[k])) for k in range(pool_size)]
        for tools in self.pool_tools:
            self.add(tools)
        self.variant_cache: dict[tuple[int, int], int] = {}

    def __len__(self) -> int:
        return len(self.json)

    def columns(self, lid: np.ndarray) -> dict[str, pa.Array]:
        """tools_json, tool_count, tool_list_size and tools_hash of rows whose lists are `lid` (-1: none)."""
        has_list = lid >= 0
        lid_arr = pa.array(lid, mask=~has_list)
        return {
            "tools_json": pa.array(self.json, pa.string()).take(lid_arr),
            "tool_count": pa.array(np.array(self.count)[np.maximum(lid, 0)], pa.int32(), mask=~has_list),
            "tool_list_size": pa.array(np.array(self.size)[np.maximum(lid, 0)], pa.int64(), mask=~has_list),
            "tools_hash": pa.array(self.hash, pa.string()).take(lid_arr),
        }

    def add(self, tools: list[dict]) -> int:
        s = summarize_tools(tools)
        self.json.append(s.tools_json)
        self.hash.append(s.tools_hash)
        self.count.append(s.tool_count)
        self.size.append(s.tool_list_size)
        return len(self.json) - 1

    def list_id(self, i: int, day_idx: int) -> tuple[int, int]:
        """Endpoint i's tool list on day `day_idx`, and how many changes it has been through."""
        changes = self.change_days.get(i)
        if not changes:
            return int(self.toolset_of[i]), 0
        variant = sum(1 for c in changes if c <= day_idx)
        if variant == 0:
            return int(self.toolset_of[i]), 0
        if (i, variant) not in self.variant_cache:
            tools = self.pool_tools[int(self.toolset_of[i])]
            for v in range(1, variant + 1):
                tools = _mutate(tools, self.seed * 7919 + i * 31 + v)
            self.variant_cache[(i, variant)] = self.add(tools)
        return self.variant_cache[(i, variant)], variant


@dataclass(frozen=True)
class _Scan:
    """One day's checks before they become a table: whom, what each found, when, how long it took."""

    probed: np.ndarray  # endpoint indexes, in check order
    outcome: np.ndarray
    http: np.ndarray  # HTTP status, or None
    list_id: np.ndarray  # position in _ToolLists, -1 without a tool list
    version: np.ndarray  # server_info_version of an answering endpoint
    handshake_ms: np.ndarray
    started: pa.Array

    def part(self, rows: np.ndarray) -> _Scan:
        return _Scan(self.probed[rows], self.outcome[rows], self.http[rows], self.list_id[rows], self.version[rows],
                     self.handshake_ms[rows], self.started.take(rows))


@dataclass(frozen=True)
class _LandedDay:
    registry_rows: int
    probe_rows: int
    checked_keys: list[str]  # the endpoints checked (not skipped), for the agent reports
    checked_outcomes: list[str]


def synthesize(lake: LakePaths, servers: int, days: int, seed: int, end_day: dt.date,
               missing_days: int | None = None,
               progress: Callable[[str], None] | None = None, mean_tools: float = 11.0,
               agent_reports: bool = True, shape: str = "toy") -> SynthResult:
    """Land `days` UTC days ending on `end_day` for `servers` endpoints into `lake`; tool lists have about
    `mean_tools` tools (geometric, 1..60); with `agent_reports`, each day's batch of agent reports too
    (synth_reports.py). With `shape="real"`, the tool lists are the corpora's (synth_lists.py: about 45% of
    the endpoints' lists distinct, 7% changing a day) and each day's checks land in 24 part files, one per
    hourly slice, as the daily scan lands them."""
    if servers < 1 or days < 1:
        raise ValueError("servers and days must be at least 1")
    rng = np.random.default_rng(seed)
    day_list = [end_day - dt.timedelta(days=days - 1 - i) for i in range(days)]
    missing_idx = _missing_day_indexes(rng, days, missing_days)
    endpoints = _draw_endpoints(rng, servers, days)
    if shape not in ("toy", "real"):
        raise ValueError(f"unknown synth shape {shape!r} (toy or real)")
    tool_lists: _ToolLists | RealToolLists = (RealToolLists(servers, days, seed) if shape == "real"
                                              else _ToolLists(rng, servers, days, seed, mean_tools))

    probe_rows = registry_rows = report_rows = 0
    reporters = reporter_ids(max(50, servers // 20))
    for d_idx, day in enumerate(day_list):
        if d_idx in missing_idx:
            if progress:
                progress(f"{day}: no run (a missed day)")
            continue
        landed = _land_day(lake, day, d_idx, seed, endpoints, tool_lists, 24 if shape == "real" else 1)
        registry_rows += landed.registry_rows
        probe_rows += landed.probe_rows
        if agent_reports:
            reports = day_reports(day, d_idx, seed, landed.checked_keys, landed.checked_outcomes, reporters)
            report_rows += land_day_reports(lake, day, reports, f"reports-{seed}")
        if progress:
            progress(f"{day}: {landed.probe_rows:,} checks, {landed.registry_rows:,} listings")
    return SynthResult(day_list, sorted(day_list[i] for i in missing_idx), probe_rows, registry_rows,
                       len(tool_lists), report_rows)


def _land_day(lake: LakePaths, day: dt.date, d_idx: int, seed: int, endpoints: _Endpoints,
              tool_lists: _ToolLists | RealToolLists, parts: int = 1) -> _LandedDay:
    """The day's registry snapshot and its scan, landed as the registry fetch and the prober land them (in
    `parts` part files, each a run of its own with its control check, as the hourly slices land them)."""
    present = endpoints.present_on(d_idx)
    day_rng = np.random.default_rng([seed, d_idx])
    run_id = f"synth-{day.isoformat()}-{seed}"
    reg, listing = _registry_snapshot(day, present, endpoints)
    write_parquet(lake, lake.registry_file(day), conform(reg, RAW_REGISTRY))

    scan = _scan(day_rng, day, d_idx, present, listing, endpoints, tool_lists)
    keys_today = endpoints.columns["server_key"].take(scan.probed)
    rows = 0
    for k, part in enumerate(np.array_split(np.arange(len(scan.probed)), parts)):
        part_id = run_id if parts == 1 else f"{run_id}-s{k + 1}of{parts}"
        table = pa.concat_tables([conform(_probe_table(day, part_id, scan.part(part), keys_today.take(part),
                                                       endpoints, tool_lists), RAW_PROBES),
                                  _control_check(day, d_idx, part_id)])
        write_parquet(lake, lake.raw_dir("probes", day) / f"{part_id}.parquet", table,
                      dictionary_pagesize_limit=64 << 20)
        rows += table.num_rows
    checked = scan.outcome != "skipped"
    return _LandedDay(reg.num_rows, rows,
                      [k for k, c in zip(keys_today.to_pylist(), checked, strict=True) if c],
                      scan.outcome[checked].tolist())


def _registry_snapshot(day: dt.date, present: np.ndarray, endpoints: _Endpoints) -> tuple[pa.Table, np.ndarray]:
    """The registry's listing of the day, and whether each present endpoint is listed to "probe" or "skip"."""
    fetched_at = dt.datetime.combine(day, dt.time(1, 0), dt.UTC)
    columns = endpoints.columns
    kinds = endpoints.archetype[present]
    listing = np.where(kinds == ARCHETYPES.index("listing_skip"), "skip", "probe")
    skip_reason = np.where(listing == "skip", np.array(LISTING_SKIPS)[endpoints.listing_skip[present]], NULL)
    reg = pa.table({
        "day": pa.array([day] * len(present), pa.date32()),
        "fetched_at": pa.array([fetched_at] * len(present), pa.timestamp("us", tz="UTC")),
        "server_name": columns["server_name"].take(present),
        "server_version": pa.array(["1.0.0"] * len(present)),
        "status": pa.array(["active"] * len(present)),
        "remote_type": pa.array(np.where(skip_reason == SkipReason.SSE_ONLY.value, "sse", "streamable-http")),
        "url": columns["url"].take(present),
        "server_key": columns["server_key"].take(present),
        "server_id": columns["server_id"].take(present),
        "listing": pa.array(listing),
        "skip_reason": pa.array(skip_reason.tolist(), pa.string()),
    })
    return reg, listing


def _scan(day_rng: np.random.Generator, day: dt.date, d_idx: int, present: np.ndarray, listing: np.ndarray,
          endpoints: _Endpoints, tool_lists: _ToolLists | RealToolLists) -> _Scan:
    """The day's checks: probe-listed endpoints, a few not reached (the run ended early for them)."""
    # The day_rng draws' order is the lake's: the same seed must land the same bytes.
    probed = present[(listing == "probe") & (day_rng.random(len(present)) > 0.004)]
    n = len(probed)
    outcome = _outcomes(endpoints.archetype[probed], day_rng.random(n), endpoints.down_code[probed])
    http = _http_statuses(outcome, endpoints.auth_status[probed])
    list_id = np.full(n, -1, dtype=np.int64)
    version = np.full(n, "1.0.0", dtype=object)
    for j in map(int, np.flatnonzero(outcome == "ok")):
        i = int(probed[j])
        list_id[j], variant = tool_lists.list_id(i, d_idx)
        bumps = variant if not tool_lists.silent_change[i] else 0
        version[j] = f"1.{bumps}.0"

    jitter = day_rng.lognormal(0, 0.25, n)
    hs = endpoints.latency_ms[probed] * jitter
    hs = np.where(outcome == "timeout", 8000 + day_rng.integers(0, 22000, n), hs)
    hs = np.where(np.isin(outcome, ["unreachable"]), day_rng.integers(5, 3000, n), hs)
    offsets = _start_hour(d_idx) * 3600 + np.sort(day_rng.random(n)) * 3 * 3600
    day_start = dt.datetime.combine(day, dt.time(), dt.UTC)
    started = pa.array((np.datetime64(day_start.replace(tzinfo=None), "us")
                        + (offsets * 1e6).astype("timedelta64[us]")), pa.timestamp("us", tz="UTC"))
    return _Scan(probed, outcome, http, list_id, version, hs, started)


def _start_hour(d_idx: int) -> float:
    """The hour (UTC) the day's run starts: half an hour later each day, wrapping after 18 hours."""
    return 1.0 + (0.5 * d_idx) % 18


def _outcomes(kinds: np.ndarray, roll: np.ndarray, down_codes: np.ndarray) -> np.ndarray:
    """Each check's outcome from its endpoint's archetype, the day's roll and its down code."""
    outcome = np.full(len(kinds), "ok", dtype=object)
    outcome[(kinds == ARCHETYPES.index("ok")) & (roll < 0.02)] = "timeout"
    outcome[(kinds == ARCHETYPES.index("flappy")) & (roll < 0.5)] = "unreachable"
    outcome[kinds == ARCHETYPES.index("auth")] = "needs_auth"
    outcome[kinds == ARCHETYPES.index("pay")] = "http_402"
    is_down = kinds == ARCHETYPES.index("down")
    outcome[is_down] = np.array(DOWN_OUTCOMES, dtype=object)[down_codes[is_down]]
    outcome[is_down & (roll < 0.05)] = "ok"  # down endpoints come back now and then
    outcome[kinds == ARCHETYPES.index("robots")] = "skipped"
    return outcome


def _http_statuses(outcome: np.ndarray, auth_status: np.ndarray) -> np.ndarray:
    """The HTTP status each outcome was seen with (None where no response came)."""
    http = np.full(len(outcome), None, dtype=object)
    for j, o in enumerate(outcome):
        if o == "ok":
            http[j] = 200
        elif o == "needs_auth":
            http[j] = int(auth_status[j])
        elif o.startswith("http_"):
            http[j] = int(o[5:])
        elif o in ("not_mcp", "rpc_error", "no_tool_list"):
            http[j] = 200
        elif o == "redirect":
            http[j] = 302
    return http


def _probe_table(day: dt.date, run_id: str, scan: _Scan, keys_today: pa.Array, endpoints: _Endpoints,
                 tool_lists: _ToolLists | RealToolLists) -> pa.Table:
    """The day's daily checks as the prober writes them (before conform)."""
    n = len(scan.probed)
    probed, outcome, lid = scan.probed, scan.outcome, scan.list_id
    ok = outcome == "ok"
    columns = endpoints.columns
    detail = np.array([_detail(o, h) for o, h in zip(outcome, scan.http, strict=True)], dtype=object)
    return pa.table({
        "day": pa.array([day] * n, pa.date32()),
        "check_kind": pa.array(["daily"] * n),
        "run_id": pa.array([run_id] * n),
        "server_key": keys_today,
        "server_id": columns["server_id"].take(probed),
        "server_name": columns["server_name"].take(probed),
        "server_version": pa.array(["1.0.0"] * n),
        "remote_type": pa.array(["streamable-http"] * n),
        "url": columns["url"].take(probed),
        "origin": columns["origin"].take(probed),
        "started_at": scan.started,
        "handshake_ms": pa.array(np.where(outcome == "skipped", 0, scan.handshake_ms).astype(np.int32)),
        "outcome": pa.array(outcome.tolist(), pa.string()),
        "outcome_detail": pa.array(detail.tolist(), pa.string()),
        "http_status": pa.array(scan.http.tolist(), pa.int32()),
        "protocol_version": pa.array(np.where(ok, np.array(PROTOCOLS)[endpoints.protocol[probed]], NULL).tolist(),
                                     pa.string()),
        "server_info_name": pa.array(np.where(ok, np.array(endpoints.names, dtype=object)[probed], NULL).tolist(),
                                     pa.string()),
        "server_info_version": pa.array(np.where(ok, scan.version, NULL).tolist(), pa.string()),
        **tool_lists.columns(lid),  # after the scan: it may have met new tool list variants
        "pages_read": pa.array(np.where(ok, 1, 0).astype(np.int32)),
        "tool_list_complete": pa.array(np.where(ok, True, NULL).tolist(), pa.bool_()),
        **_auth_columns(outcome == "needs_auth", endpoints.has_prm[probed], keys_today),
        "payment_json": pa.array(np.where(outcome == "http_402",
                                          json.dumps({"accepts": [{"payTo": "0xSYNTH", "network": "base"}]}),
                                          NULL).tolist(), pa.string()),
        "redirect_location": pa.array(np.where(outcome == "redirect", "https://elsewhere.example.net/mcp",
                                               NULL).tolist(), pa.string()),
        "skip_reason": pa.array(np.where(outcome == "skipped", SkipReason.ROBOTS.value,
                                         NULL).tolist(), pa.string()),
        "prober_version": pa.array([PROBER_VERSION] * n),
    })


def _auth_columns(auth: np.ndarray, has_prm: np.ndarray, keys_today: pa.Array) -> dict[str, pa.Array]:
    """www_authenticate and resource_metadata_url: behind sign-in, half point to protected-resource metadata."""
    prm = auth & has_prm
    www_auth = np.where(prm, np.char.add(np.char.add('Bearer resource_metadata="https://',
                                                     np.array(keys_today.to_pylist(), dtype=str)),
                                         '/.well-known/oauth-protected-resource"'),
                        np.where(auth, 'Bearer realm="mcp"', NULL))
    return {
        "www_authenticate": pa.array(www_auth.tolist(), pa.string()),
        "resource_metadata_url": pa.array(
            [f"https://{k}/.well-known/oauth-protected-resource" if p else None
             for k, p in zip(keys_today.to_pylist(), prm, strict=True)], pa.string()),
    }


def _control_check(day: dt.date, d_idx: int, run_id: str) -> pa.Table:
    """The run's control check, at the run's start."""
    day_start = dt.datetime.combine(day, dt.time(), dt.UTC)
    return conform(pa.table({
        "day": pa.array([day], pa.date32()), "check_kind": ["control"], "run_id": [run_id],
        "server_key": ["control.7maps.test/mcp"], "server_id": [server_id("control.7maps.test/mcp")],
        "url": ["https://control.7maps.test/mcp"], "origin": ["https://control.7maps.test"],
        "started_at": pa.array([day_start + dt.timedelta(hours=_start_hour(d_idx))], pa.timestamp("us", tz="UTC")),
        "handshake_ms": pa.array([35], pa.int32()), "outcome": ["ok"], "http_status": pa.array([200], pa.int32()),
        "prober_version": [PROBER_VERSION],
    }), RAW_PROBES)


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
        "skipped": SkipReason.ROBOTS.value,
    }.get(outcome, f"HTTP {http}")
