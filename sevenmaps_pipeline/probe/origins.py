"""Once a UTC day per origin: robots.txt (RFC 9309) and the three well-known documents
(docs/methodology.md, "The prober", "Per origin, once a day").

The day's first fetch lands in raw/origins/day=D; every later slice, hourly check and readiness run of
that day reuses it (`OriginBook`, read once per run). A robots.txt we could not read (no answer, or a
5xx) is our trouble: the origin's endpoints are not_checked (robots_unavailable, day code n), unless a
policy fetched within the last 24 hours stands in for it."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pyarrow.parquet as pq
from protego import Protego

from ..lake.paths import LakePaths
from ..registry.listing import SkipReason
from ..rules.outcomes import PROBER_RESOURCES, ROBOTS_UNAVAILABLE
from .config import PROBER_VERSION, ROBOTS_TOKEN, ProbeConfig
from .netguard import refused_address
from .ours import our_trouble
from .redirects import invalid_location, redirect_target
from .wire import STREAM_NOT_A_FILE, STREAM_READ_SECONDS, is_event_stream, read_body, read_document_stream

WELL_KNOWN = {
    "oauth_protected_resource": "/.well-known/oauth-protected-resource",
    "agent_card": "/.well-known/agent-card.json",
    "agent_json": "/.well-known/agent.json",
}


# The robots policy of an origin whose robots.txt fetch found nothing listening (check_origin).
HOST_UNREACHABLE = "host_unreachable"


@dataclass
class OriginResult:
    origin: str
    fetched_at: dt.datetime
    robots_status: int | None = None
    robots_policy: str = "disallow_all"
    robots_txt: str | None = None
    robots_detail: str = ""
    documents: dict[str, tuple[int | None, str | None]] = field(default_factory=dict)
    # When robots.txt could not be read (no answer, or a 5xx) and no policy of the last 24 hours stands in:
    # what happened. Its endpoints are not_checked (robots_unavailable), never d and never off the map.
    unavailable: str | None = None
    # When it was unavailable for our machine's trouble (probe/ours.py): its endpoints are not_checked
    # (prober_resources) and asked again at the end of the scan.
    ours: bool = False
    # When its name resolves to a non-public address: its endpoints are skipped (off the map, never d).
    skip_reason: str | None = None
    _rules: Protego | None = None

    @property
    def unavailable_reason(self) -> str:
        """Its endpoints' not_checked reason when it was unavailable: ours, or robots.txt's (rules/outcomes.py)."""
        return PROBER_RESOURCES if self.ours else ROBOTS_UNAVAILABLE

    def allows(self, url: str) -> bool:
        if self.robots_policy in ("allow_all", HOST_UNREACHABLE):
            return True
        if self.robots_policy == "rules" and self._rules is None and self.robots_txt is not None:
            try:
                self._rules = Protego.parse(self.robots_txt)
            except Exception:  # noqa: BLE001 - it parsed when fetched; if not now, disallow (never guess)
                self.robots_policy = "disallow_all"
        if self.robots_policy == "disallow_all" or self._rules is None:
            return False
        return self._rules.can_fetch(url, ROBOTS_TOKEN)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> OriginResult:
        """An origin as a landed raw/origins row has it; its rules are parsed from the robots.txt it kept
        when first asked (`allows`): a run reads every landed row of two days, but asks only about the
        origins of its own endpoints."""
        return cls(origin=row["origin"], fetched_at=row["fetched_at"], robots_status=row.get("robots_status"),
                     robots_policy=row["robots_policy"], robots_txt=row.get("robots_txt"),
                     robots_detail=row.get("robots_detail") or "",
                     documents={name: (row.get(f"{name}_status"), row.get(f"{name}_json")) for name in WELL_KNOWN})

    def row(self) -> dict[str, Any]:
        row = {"origin": self.origin, "fetched_at": self.fetched_at, "robots_status": self.robots_status,
               "robots_policy": self.robots_policy, "robots_txt": self.robots_txt, "robots_detail": self.robots_detail}
        for name, (status, body) in self.documents.items():
            row[f"{name}_status"], row[f"{name}_json"] = status, body
        return row

    def landed_row(self, day: dt.date, run_id: str) -> dict[str, Any]:
        """The raw/origins row of this fetch, as the run `run_id` lands it."""
        return {"day": day, "run_id": run_id, "prober_version": PROBER_VERSION, **self.row()}


async def _answer(client: httpx.AsyncClient, url: str, cap: int, follow: bool | None,
                  deadline: float) -> str | tuple[int | None, bytes, str, str | None]:
    """One GET: its answer, or (`follow` True) the redirect target to ask next; `follow` False: a redirect
    is not followed (a second one); None: a redirect is an answer like any other (the well-knowns)."""
    async with client.stream("GET", url) as response:
        location = response.headers.get("location")
        if follow is not None and response.is_redirect and location:
            target, why = redirect_target(url, location)
            if follow and target is not None and why is None:
                return target
            why = why or "a second redirect"
            return response.status_code, b"", f"redirects to {why}; not followed", None
        if response.is_success and is_event_stream(response):
            return await _stream_answer(response, cap, deadline, whole_budget=follow is not None)
        body, problem = await read_body(response, cap)
        return response.status_code, body, problem or "", None


async def _stream_answer(response: httpx.Response, cap: int, deadline: float,
                         whole_budget: bool) -> tuple[int | None, bytes, str, str | None]:
    """A 2xx event stream (probe/wire.py): robots.txt is read for all its time, as any file is, so no rule is
    missed that a slow file would have kept; a document for at most STREAM_READ_SECONDS. Still open with lines
    of a file, it is a file that did not arrive whole: no answer, as a slow file is."""
    left = deadline - asyncio.get_running_loop().time()
    kind, body, detail = await read_document_stream(response, cap, left if whole_budget else
                                                    min(left, STREAM_READ_SECONDS))
    return (None, b"", detail, "timeout") if kind == "cut" else (response.status_code, body, detail, None)


async def _get(client: httpx.AsyncClient, url: str, timeout: float, cap: int,
               follow: bool) -> tuple[int | None, bytes, str, str | None]:
    """(status, body, detail, network outcome): the last is 'timeout', 'refused' (the connection was
    refused or the name does not resolve), 'unreachable' (a connection broken twice), 'ours' (our machine's
    trouble: probe/ours.py) or 'skipped' (the name resolves to a non-public address) without an answer.
    With `follow`, one redirect within the same registrable domain over https is followed (the methodology's
    redirect rule); any other redirect comes back as its 3xx status, with the reason in `detail`."""
    # What is left of the budget when a stream is read (a margin kept, so that the answer is ours, not the timeout's)
    deadline = asyncio.get_running_loop().time() + timeout - 0.1
    try:
        async with asyncio.timeout(timeout):  # the budget covers the one retry and the one redirect
            hop = retried = 0
            while hop < 2:
                try:
                    answer = await _answer(client, url, cap, (hop == 0) if follow else None, deadline)
                except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
                    # A broken connection is retried once, as every request of the prober is (probe/checker.py).
                    if retried:
                        raise
                    retried = 1
                    continue
                if isinstance(answer, str):
                    url, hop = answer, hop + 1
                    continue
                return answer
            raise AssertionError("unreachable: the loop returns or continues once")
    except TimeoutError:
        return None, b"", f"no answer within {timeout:g} s", "timeout"
    except httpx.TimeoutException as exc:
        return None, b"", f"{type(exc).__name__}", "timeout"
    except httpx.HTTPError as exc:
        if invalid_location(exc):
            return 302, b"", "redirects to an invalid Location; not followed", None
        if refused_address(exc):
            return None, b"", f"{SkipReason.NON_PUBLIC}: {exc}"[:300], "skipped"
        ours = our_trouble(exc)
        if ours is not None:  # nothing learnt about the host: robots.txt unavailable, its endpoints not checked
            return None, b"", ours[:300], "ours"
        if isinstance(exc, httpx.ConnectError):  # refused, or the name does not resolve: nothing listens
            return None, b"", f"{type(exc).__name__}: {exc}"[:300], "refused"
        return None, b"", f"{type(exc).__name__}: {exc}"[:300], "unreachable"


def usable(result: OriginResult) -> bool:
    """A robots.txt that was read (an answer below 500): a policy a later check may reuse. One that stood
    in for a failed fetch is not (its status is the failure's), so a stand-in never outlives its 24 hours."""
    return result.robots_status is not None and result.robots_status < 500 and result.skip_reason is None


async def check_origin(client: httpx.AsyncClient, config: ProbeConfig, origin: str,
                       fetched_at: dt.datetime, documents: bool = True,
                       cached: OriginResult | None = None) -> OriginResult:
    """robots.txt, then (with `documents`) the three well-known documents; the readiness probe asks for
    robots.txt only and for its own documents (probe/surfaces.py). `cached`: the origin's last readable
    policy of the last 24 hours (OriginBook.stand_in), used if robots.txt cannot be read now."""
    result = OriginResult(origin=origin, fetched_at=fetched_at)
    # RFC 9309 §2.3.1: follow redirects (rules stay those of this authority) — here only as the methodology's
    # redirect rule allows, once, to the same registrable domain over https; a redirect that may not be
    # followed leaves robots.txt unavailable (§2.3.1.2: like a 4xx, no rules). 4xx: no rules. 5xx or no
    # answer: RFC 9309's complete disallow means we do not check — our trouble, not the server's
    # (docs/methodology.md, "Per origin, once a day"): the endpoints are not_checked (robots_unavailable),
    # unless a policy of the last 24 hours stands in (RFC 9309 §2.4 allows caching that long). A host that
    # is down is d only from its endpoints' own MCP checks. A name that resolves to a non-public address is
    # a skip for all its endpoints.
    status, body, detail, network = await _get(client, origin + "/robots.txt", config.timeouts.robots_txt,
                                               config.robots_max_bytes, follow=True)
    result.robots_status = status
    failed = None
    if status is None:
        if network == "skipped":
            result.robots_policy, result.robots_detail = "disallow_all", f"robots.txt unreachable: {detail}"
            result.skip_reason = SkipReason.NON_PUBLIC
            return result
        failed = f"robots.txt unreachable: {detail}"
    elif 300 <= status < 400:
        result.robots_policy, result.robots_detail = "allow_all", f"HTTP {status}: {detail}; robots.txt unavailable"
    elif 200 <= status < 300 and detail == STREAM_NOT_A_FILE:
        result.robots_policy, result.robots_detail = "allow_all", f"HTTP {status}: {detail}; no rules"
    elif 200 <= status < 300:
        robots = body.decode("utf-8", "replace")
        result.robots_txt = robots
        try:
            result._rules = Protego.parse(robots)
            result.robots_policy, result.robots_detail = "rules", detail or "parsed"
        except MemoryError:
            raise  # ours, not the file's: never read as "no rules" (the host's endpoints are n, prober_error)
        except Exception as exc:  # noqa: BLE001 - an unparseable file is treated as no rules
            result.robots_policy, result.robots_detail = "allow_all", f"unparseable robots.txt: {exc}"[:300]
    elif 400 <= status < 500:
        result.robots_policy, result.robots_detail = "allow_all", f"HTTP {status}: no robots.txt"
    else:
        failed = f"robots.txt answered HTTP {status}"
    if failed is not None:
        if cached is None and network == "refused":
            # Nothing listens there (a refused connection, a name that does not resolve): there is nothing
            # to crawl that rules could protect, and robots.txt must not hide a host that is down. Its
            # endpoints' own checks decide, and fail the same way (d). Never reused as the day's copy.
            result.robots_policy = HOST_UNREACHABLE
            result.robots_detail = f"{failed}; nothing listens: the endpoints' own checks decide"[:300]
            return result
        if cached is None:
            result.robots_policy, result.robots_detail = "disallow_all", f"{failed}; not checked (RFC 9309)"
            result.unavailable, result.ours = result.robots_detail, network == "ours"
            return result
        cached.allows(origin + "/")  # its rules parsed, if not yet
        result.robots_policy, result.robots_txt, result._rules = cached.robots_policy, cached.robots_txt, cached._rules
        result.robots_detail = (f"{failed}; used the cached policy fetched at {cached.fetched_at:%Y-%m-%d %H:%M:%S} "
                                "UTC (RFC 9309: at most 24 h)")[:300]
    if not documents:
        return result
    # The methodology: 4 s per origin for the well-known documents, all three together.
    deadline = time.monotonic() + config.timeouts.well_known_per_origin
    for name, path in WELL_KNOWN.items():
        url = origin + path
        left = deadline - time.monotonic()
        if not result.allows(url) or left <= 0:
            result.documents[name] = (None, None)
            continue
        status, body, _, _ = await _get(client, url, left, config.max_small_body_bytes, follow=False)
        text = body.decode("utf-8", "replace") if status == 200 and body else None
        result.documents[name] = (status, text)
    return result



STAND_IN = dt.timedelta(hours=24)  # RFC 9309 §2.4: a cached robots.txt may be used for up to 24 hours


class OriginBook:
    """The origins already read: the landed raw/origins rows of the day and the day before (read once per
    run, never per endpoint) and those this run fetched. Per origin, the latest readable policy
    (`usable`): reused as the day's copy, or standing in for a fetch that failed."""

    def __init__(self, results: Iterable[OriginResult] = ()) -> None:
        self._latest: dict[str, OriginResult] = {}
        for result in results:
            self.add(result)

    @classmethod
    def from_lake(cls, lake: LakePaths, day: dt.date) -> OriginBook:
        results = []
        for back in (1, 0):
            for path in lake.raw_files("origins", day - dt.timedelta(days=back)):
                try:
                    rows = pq.read_table(path).to_pylist()
                except Exception:  # noqa: BLE001 - an unreadable part is quarantined later; its origins are read again
                    continue
                results += [OriginResult.from_row(row) for row in rows if row.get("fetched_at") is not None]
        return cls(results)

    def add(self, result: OriginResult) -> None:
        seen = self._latest.get(result.origin)
        if usable(result) and (seen is None or result.fetched_at >= seen.fetched_at):
            self._latest[result.origin] = result

    def of_day(self, origin: str, day: dt.date) -> OriginResult | None:
        """The origin's copy fetched on UTC `day`: every later daily slice and readiness run reuses it."""
        seen = self._latest.get(origin)
        return seen if seen is not None and seen.fetched_at.astimezone(dt.UTC).date() == day else None

    def within(self, origin: str, now: dt.datetime, age: dt.timedelta) -> OriginResult | None:
        """The origin's copy fetched at most `age` before `now` (the hourly checks: at most an hour)."""
        seen = self._latest.get(origin)
        return seen if seen is not None and dt.timedelta(0) <= now - seen.fetched_at <= age else None

    def stand_in(self, origin: str, now: dt.datetime) -> OriginResult | None:
        """The policy that may stand in for a robots.txt we cannot read now."""
        return self.within(origin, now, STAND_IN)
