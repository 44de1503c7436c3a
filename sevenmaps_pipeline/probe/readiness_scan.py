"""The readiness probe of the day's listings, run after each slice (docs/methodology.md, "Readiness"), as its own
check kind: it lands raw/readiness, raw/readiness_surfaces and raw/skills, and never changes a day code.

Politeness is the daily scan's: the same user agent, guarded client, caps and timeouts; robots.txt read
per origin before anything else on it (and obeyed for every document); opted-out hosts never contacted;
and one request at a time per host, by running in phases that each give every host a single worker:

1. per endpoint host: robots.txt, the origin's card paths, then each endpoint's readiness check (the
   rubric's steps, probe/checker.py with readiness=True) and its server card;
2. per other host: what phase 1 pointed elsewhere, one worker per host — each publisher domain's catalog,
   /llms.txt, markdown door and registry proof file, and each 401's RFC 9728 resource metadata;
3. the code host, one request at a time: each distinct repository's status, and each listed skill's
   SKILL.md (lookups/codehost.py).

A step that cannot run (no door, no domain, no repository) records nothing rather than a failure; our own
fault in one listing is that listing's prober_error, never the run's end.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import threading
import traceback
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..lake.keys import origin as origin_of
from ..lake.keys import server_id, server_key
from ..lookups.codehost import CodeHostClient, RepoFolder, RepoStatus, parse_repository_url
from ..registry.listing import SkipReason
from ..rules.discovery import CARD_SURFACES
from ..rules.fingerprints import summarize_tools
from ..rules.namespace import namespace_domain
from ..rules.outcomes import (
    NOT_A_RESULT,
    NOT_CHECKED,
    SKIPPED,
    not_checked_detail,
)
from ..rules.tokens import definition_tokens
from .checker import CheckResult, EndpointCheck
from .config import PROBER_VERSION, ProbeConfig
from .hosts import Admission, Clock, HostRunner, HostSession, Robots, by_host, day_copy
from .origins import OriginBook, OriginResult
from .readiness_book import ReadinessBook
from .scan import endpoints_to_check
from .sse_readiness import SseReadinessCheck
from .surfaces import (
    CARD_ACCEPT,
    DOMAIN_SURFACES,
    ORIGIN_SURFACES,
    REGISTRY_AUTH,
    CardBook,
    fetch_document,
    publisher_domain,
    revalidated,
    surface_row,
)


class ReadinessSink(Protocol):
    def add_origin(self, row: dict[str, Any]) -> None: ...

    def add_check(self, row: dict[str, Any]) -> None: ...

    def add_surface(self, row: dict[str, Any]) -> None: ...

    def add_skill(self, row: dict[str, Any]) -> None: ...


@dataclass
class ReadinessRows:
    """A sink that keeps everything in memory (`sevenmaps readiness`, tests)."""

    checks: list[dict[str, Any]] = field(default_factory=list)
    surfaces: list[dict[str, Any]] = field(default_factory=list)
    skills: list[dict[str, Any]] = field(default_factory=list)
    origins: list[dict[str, Any]] = field(default_factory=list)

    def add_origin(self, row: dict[str, Any]) -> None:
        self.origins.append(row)

    def add_check(self, row: dict[str, Any]) -> None:
        self.checks.append(row)

    def add_surface(self, row: dict[str, Any]) -> None:
        self.surfaces.append(row)

    def add_skill(self, row: dict[str, Any]) -> None:
        self.skills.append(row)


def repository_url_of(entry_json: Any) -> str | None:
    """The registry entry's repository.url (`server.repository.url`, or a flat entry's), if a string."""
    try:
        entry = json.loads(entry_json) if isinstance(entry_json, str) else None
    except ValueError:
        return None
    if not isinstance(entry, dict):
        return None
    server = entry.get("server") if isinstance(entry.get("server"), dict) else entry
    repository = server.get("repository") if isinstance(server, dict) else None
    url = repository.get("url") if isinstance(repository, dict) else None
    return url[:500] if isinstance(url, str) else None


def _required_arguments(tools: Sequence[Any]) -> int:
    total = 0
    for tool in tools:
        schema = tool.get("inputSchema") if isinstance(tool, dict) else None
        required = schema.get("required") if isinstance(schema, dict) else None
        if isinstance(required, list):
            total += sum(1 for name in required if isinstance(name, str))
    return total


def answered_via(result: CheckResult) -> str | None:
    """How the endpoint answered, as the rubric's first lines read it: the handshake that worked, whatever
    came after it (a tools/list that failed, a 401 on it, a timeout, a followed redirect to an address the guard
    refuses), else a 401 to the handshake."""
    if result.outcome == SKIPPED and result.handshake_via is not None:
        # "A handshake that answered is an answer" (docs/methodology.md, "Readiness"): a later step refused by
        # the address guard (a same-domain hop that resolves privately) does not unsee what was answered.
        return result.handshake_via
    if result.outcome in NOT_A_RESULT:
        return None  # not contacted, or our own fault: nothing was seen
    if result.handshake_via is not None:
        return result.handshake_via
    if result.outcome == "needs_auth" and result.http_status == 401:
        return "401"
    return "none"


def check_row(result: CheckResult, listing: dict[str, Any], day: dt.date, run_id: str,
              redirects: int | None) -> dict[str, Any]:
    """The raw/readiness row of one check (the repository columns are filled in phase 3)."""
    key = listing.get("server_key") or server_key(result.url)
    url = listing.get("url") or result.url
    via = answered_via(result)
    row: dict[str, Any] = {
        "day": day, "run_id": run_id, "server_key": key, "server_id": server_id(key),
        "server_name": listing.get("server_name"), "url": url, "origin": _origin_or_none(url),
        "started_at": result.started_at,
        "round_trip_ms": result.round_trip_ms if via in ("discover", "initialize", "401") else None,
        "outcome": result.outcome, "outcome_detail": result.outcome_detail[:2000], "skip_reason": result.skip_reason,
        "http_status": result.http_status, "answered_via": via,
        # a followed hop is a fact even when nothing was then seen ("Redirects": it fails the line whatever
        # the next hop did)
        "redirects_followed": redirects if via is not None or (redirects or 0) > 0 else None,
        "protocol_version": result.protocol_version if via in ("discover", "initialize") else None,
        "server_info_name": result.server_info_name, "server_info_version": result.server_info_version,
        "ttl_ms": result.ttl_ms, "cache_scope": result.cache_scope,
        "claimed_versions": ", ".join(result.claimed_versions) if result.claimed_versions else None,
        "skills_extension": result.skills_extension, "skills_count": result.skills_count,
        "www_authenticate": result.www_authenticate, "resource_metadata_url": result.resource_metadata_url,
        "later_redirect": result.later_redirect,
        "publisher_domain": publisher_domain(listing.get("server_name"), url),
        "repository_url": listing.get("repository_url") or repository_url_of(listing.get("entry_json")),
        "prober_version": PROBER_VERSION,
    }
    if result.outcome == "ok" and result.tools is not None:
        summary = summarize_tools(result.tools)
        row.update(tools_json=summary.tools_json, tool_count=summary.tool_count, tools_hash=summary.tools_hash,
                   tool_list_complete=bool(result.tool_list_complete),
                   required_arguments=_required_arguments(result.tools),
                   definition_tokens=definition_tokens(result.tools))
        if result.second_tool_names is not None:
            row["second_tool_names_json"] = json.dumps(result.second_tool_names, ensure_ascii=False)
    return row


def _origin_or_none(url: str) -> str | None:
    """The URL's origin, or None for a URL that cannot be read (`https://[::1/mcp`): its row still lands, with
    the reason (docs/methodology.md, "Outcomes": nothing one endpoint does takes the run down)."""
    try:
        return origin_of(url)
    except ValueError:
        return None


def _not_contacted(listing: dict[str, Any], now: dt.datetime, outcome: str, detail: str,
                   skip_reason: str | None = None) -> CheckResult:
    return CheckResult(url=listing["url"], started_at=now, outcome=outcome, outcome_detail=detail,
                       skip_reason=skip_reason if outcome == "skipped" else None, handshake_ms=0)


@dataclass
class _Elsewhere:
    """A document of phase 2: asked on its own host, after robots.txt there."""

    scope: str
    subject: str
    surface: str
    url: str
    accept: str


class _ReadinessRun:
    """One readiness run: phase 1 (endpoint hosts), phase 2 (the documents they point to elsewhere), on the
    host runner that keeps politeness (probe/hosts.py); phase 3 (the code host) is `_code_host_phase`."""

    def __init__(self, day: dt.date, run_id: str, config: ProbeConfig, clock: Clock, sink: ReadinessSink,
                 book: OriginBook, step_progress: Callable[[str], None] | None, bad_call: bool,
                 cards: CardBook, earlier: ReadinessBook, scan_origins: frozenset[str] | None) -> None:
        self.day, self.run_id, self.config, self.clock, self.sink = day, run_id, config, clock, sink
        self.cards, self.earlier, self.scan_origins = cards, earlier, scan_origins
        self.step_progress, self.bad_call = step_progress, bad_call
        # The day's copy of robots.txt, read by its scan or an earlier readiness run, is reused
        # (docs/methodology.md, "Per origin, once a day"); an origin neither read is read here and, when the
        # scan never reads it (`scan_origins`), landed for the day's later runs.
        self.runner: HostRunner[Any] = HostRunner(config, clock, Robots(day_copy(day), fetched=self.fetched_origin),
                                                  book)
        self.rows: list[dict[str, Any]] = []
        self.elsewhere: list[_Elsewhere] = []  # phase 2, run by host (host_of each URL)
        self.domains_seen: set[str] = set()
        self.proofs_seen: set[str] = set()  # domains whose registry proof file is asked (REGISTRY_AUTH)

    async def fetched_origin(self, origin: str, fetch: Callable[[], Awaitable[OriginResult]]) -> OriginResult:
        """A robots.txt read by this run: landed (raw/origins) when the day's scan never reads its origin (a
        publisher domain, an authorization server), so the day's later runs reuse it; an endpoint's origin is
        the scan's to land, with the well-known documents a readiness fetch does not read."""
        result = await fetch()
        if self.scan_origins is not None and origin not in self.scan_origins:
            self.sink.add_origin(result.landed_row(self.day, self.run_id))
        return result

    async def ask(self, session: HostSession, scope: str, subject: str, surface: str, url: str, accept: str) -> None:
        """One document, under robots.txt of its origin (read first, once per run)."""
        def land(answer: Any, why: str | None = None) -> None:
            self.sink.add_surface(surface_row(self.day, self.run_id, scope, subject, surface, url, accept, self.clock(),
                                              answer, why))

        if session.opted_out(url):
            land(None, "not asked: the host opted out")
            return
        refused = await session.admission(url)
        if refused is None:
            kept = self.cards.kept(surface, url) if surface in CARD_SURFACES else None
            answer = await fetch_document(session.client_for(url), url, accept,
                                          self.config.timeouts.well_known_per_origin, self.config.max_small_body_bytes,
                                          kept.etag if kept else None)
            land(revalidated(answer, kept) if surface in CARD_SURFACES else answer)
            return
        assert refused.seen is not None
        if refused.kind is SkipReason.ROBOTS:
            land(None, f"not asked: {SkipReason.ROBOTS} ({refused.seen.robots_detail})")
        else:
            land(None, f"not asked: {refused.seen.robots_detail}")

    async def check_one(self, session: HostSession, listing: dict[str, Any]) -> dict[str, Any] | None:
        url, now = listing["url"], self.clock()
        origin = origin_of(url)
        first_visit = origin not in self.runner.origins
        refused = await session.admission(url)
        if refused is not None and refused.kind is SkipReason.OPTED_OUT:
            return None  # opted out since the snapshot was taken: never contacted, nothing to score
        seen = self.runner.origins[origin]
        if first_visit and seen.unavailable is None and seen.skip_reason is None:
            for surface, path, accept in ORIGIN_SURFACES:
                if not self.earlier.read("origin", origin, surface):  # an earlier run today read it
                    await self.ask(session, "origin", origin, surface, origin + path, accept)
        if refused is not None:
            return self.refusal_row(listing, now, refused)
        return await self.checked(session, listing, now)

    def refusal_row(self, listing: dict[str, Any], now: dt.datetime, refused: Admission) -> dict[str, Any]:
        seen = refused.seen
        assert seen is not None
        if refused.kind is SkipReason.NON_PUBLIC:
            return check_row(_not_contacted(listing, now, "skipped", seen.skip_reason or "", seen.skip_reason),
                             listing, self.day, self.run_id, None)
        if refused.kind is None:  # our trouble (n), never d
            detail = not_checked_detail(seen.unavailable_reason, f"{seen.unavailable}; the endpoint was not contacted")
            return check_row(_not_contacted(listing, now, NOT_CHECKED, detail), listing, self.day, self.run_id, 0)
        reason = f"{SkipReason.ROBOTS} ({seen.robots_detail})"
        return check_row(_not_contacted(listing, now, "skipped", reason, reason), listing, self.day, self.run_id, None)

    async def checked(self, session: HostSession, listing: dict[str, Any], now: dt.datetime) -> dict[str, Any]:
        url = listing["url"]
        # An SSE-only listing is read over its own transport, the rubric's "streamable-http and sse"
        # (docs/methodology.md, "Readiness": SSE-only listings).
        kind = SseReadinessCheck if listing.get("remote_type") == "sse" else EndpointCheck
        check = kind(session.client_for(url), self.config, url, now, readiness=True,
                     progress=self.step_progress, bad_call=self.bad_call, daily_release=listing.get("daily_release"))
        result = await check.run()
        row = check_row(result, listing, self.day, self.run_id, check.redirects_followed)
        if self.bad_call:  # never landed: the CLI shows it
            row.update(bad_call_tool=result.bad_call_tool, bad_call_legible=result.bad_call_legible,
                       bad_call_evidence=result.bad_call_evidence)
        if result.outcome not in NOT_A_RESULT:
            await self.ask(session, "endpoint", row["server_key"], "server_card", url.rstrip("/") + "/server-card",
                           CARD_ACCEPT)
        if result.resource_metadata_target:
            target = result.resource_metadata_target
            self.elsewhere.append(
                _Elsewhere("endpoint", row["server_key"], "resource_metadata", target, "application/json"))
        self.point_to_domain(row["publisher_domain"], listing.get("server_name"))
        return row

    def point_to_domain(self, domain: str | None, name: Any) -> None:
        """Phase 2's documents on the publisher's domain, once per domain: its registry proof file once any
        endpoint's registry name is of that domain (whichever endpoint comes first, so a day split into runs
        asks what one run would)."""
        if not domain:
            return
        wanted: list[tuple[str, str, str]] = []
        if domain not in self.domains_seen:
            self.domains_seen.add(domain)
            wanted += DOMAIN_SURFACES
        if (domain not in self.proofs_seen and isinstance(name, str) and "/" in name
                and namespace_domain(name.split("/", 1)[0]) == domain):
            self.proofs_seen.add(domain)
            wanted.append(REGISTRY_AUTH)
        for surface, path, accept in wanted:
            if not self.earlier.read("domain", domain, surface):  # an earlier run today read it
                self.elsewhere.append(_Elsewhere("domain", domain, surface, f"https://{domain}{path}", accept))

    async def document(self, session: HostSession, doc: _Elsewhere) -> None:
        await self.ask(session, doc.scope, doc.subject, doc.surface, doc.url, doc.accept)

    def document_failed(self, doc: _Elsewhere, exc: BaseException, _whole_host: bool = False) -> None:
        # a document never takes the run down
        self.sink.add_surface(surface_row(self.day, self.run_id, doc.scope, doc.subject, doc.surface, doc.url,
                                          doc.accept, self.clock(), None, f"prober_error: {type(exc).__name__}"))


async def readiness_scan(listings: Iterable[dict[str, Any]], day: dt.date, run_id: str, config: ProbeConfig,
                         clock: Clock, sink: ReadinessSink, codehost: CodeHostClient | None = None,
                         skills: Sequence[RepoFolder] = (), already_checked: Iterable[str] = (),
                         progress: Callable[[int, int], None] | None = None,
                         step_progress: Callable[[str], None] | None = None,
                         _operator_bad_call: bool = False, book: OriginBook | None = None,
                         cards: CardBook | None = None, earlier: ReadinessBook | None = None,
                         scan_origins: Collection[str] | None = None) -> ReadinessSink:
    """Probe every endpoint the daily scan would contact (except `already_checked`: a resumed run, or the
    endpoints of the day's earlier runs), then the documents elsewhere, then the code host; every row goes to
    `sink`. `step_progress` is told each step of each endpoint check (`sevenmaps readiness` shows them).
    `_operator_bad_call` is step 5 of the rubric, a tool call: only `sevenmaps readiness --bad-call` passes
    it, never the daily runs. `cards`: the server cards held from earlier runs, revalidated with If-None-Match
    (none: every card asked afresh). `earlier`: what the day's earlier runs read (origins' and domains'
    documents, repositories, skills), never asked again (none: everything is asked). `scan_origins`: the
    origins of the day's snapshot's endpoints; a robots.txt this run reads elsewhere is landed for later runs
    (none: nothing is landed)."""
    to_check, _ = endpoints_to_check(listings)
    skip = set(already_checked)
    pending = [listing for key, listing in to_check.items() if key not in skip]
    earlier = earlier if earlier is not None else ReadinessBook()
    run = _ReadinessRun(day, run_id, config, clock, sink, book if book is not None else OriginBook(), step_progress,
                        _operator_bad_call, cards if cards is not None else CardBook(), earlier,
                        frozenset(scan_origins) if scan_origins is not None else None)
    total, done = len(pending), 0
    phase = _Phase()

    def count() -> None:
        nonlocal done
        done += 1
        if progress:
            progress(done, total)

    def land(row: dict[str, Any]) -> None:
        # Each check lands as soon as it is complete: at once, or once the code host has answered for its
        # repository (it carries that answer), so nothing one endpoint (or a later phase) does loses another's.
        if _repository_to_ask(row) is None:
            sink.add_check(row)
        else:
            run.rows.append(row)

    async def endpoint(session: HostSession, listing: dict[str, Any]) -> None:
        row = await run.check_one(session, listing)
        if row is not None:
            land(row)
        count()

    def endpoint_failed(listing: dict[str, Any], exc: BaseException, _whole_host: bool = False) -> None:
        # one endpoint never takes its host or the run down
        land(_prober_error(listing, day, run_id, clock(), exc))
        count()

    try:
        await run.runner.run(by_host(pending, lambda listing: listing["url"], endpoint_failed), endpoint,
                             endpoint_failed)
        await run.runner.run(by_host(run.elsewhere, lambda doc: doc.url, run.document_failed), run.document,
                             run.document_failed)
        unread = [folder for folder in skills if _skill_key(folder) not in earlier.skills]
        await asyncio.to_thread(_code_host_phase, run.rows, codehost, unread, day, run_id, clock, sink,
                                earlier.repositories, phase)
    finally:
        # A cancelled task leaves its thread running: stop it before its next row, and wait out the one it
        # may be landing, so each check lands exactly once and no landed row changes after
        # (docs/methodology.md, "Readiness": each check's row lands as soon as it is complete).
        phase.stop.set()
        with phase.landing:
            for row in run.rows:  # left by a phase that failed: landed without the code host's answer
                row["repo_detail"] = "not read: the readiness run ended before the code host answered"
                sink.add_check(row)
            run.rows.clear()
    return sink


def _repository_to_ask(row: dict[str, Any]) -> tuple[str, str] | None:
    """(owner, repo) the code host is asked about for this check, or None when none is (not contacted, no
    repository listed, or not a GitHub repository URL: then the row says so)."""
    url = row.get("repository_url")
    if row.get("answered_via") is None or url is None:
        return None
    parsed = parse_repository_url(url)
    if parsed is None:
        row["repo_detail"] = "not a GitHub repository URL"
    return parsed


def _prober_error(listing: dict[str, Any], day: dt.date, run_id: str, now: dt.datetime,
                  exc: BaseException) -> dict[str, Any]:
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    at = f" at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}" if frame else ""
    result = CheckResult(url=listing.get("url") or "", started_at=now, outcome="prober_error",
                         outcome_detail=f"readiness check: {type(exc).__name__}: {str(exc)[:300]}{at}", handshake_ms=0)
    return check_row(result, listing, day, run_id, None)


def _skill_key(folder: RepoFolder) -> str:
    return f"github.com/{folder.owner}/{folder.repo}/{folder.path}"


@dataclass
class _Phase:
    """The code-host phase's thread and the run that started it: `stop` once the run ended (the thread lands
    nothing more), `landing` held while a row is completed and landed, so the run lands what is left only
    between two rows."""

    stop: threading.Event = field(default_factory=threading.Event)
    landing: threading.Lock = field(default_factory=threading.Lock)


def _code_host_phase(rows: list[dict[str, Any]], codehost: CodeHostClient | None, skills: Sequence[RepoFolder],
                     day: dt.date, run_id: str, clock: Clock, sink: ReadinessSink,
                     known: Mapping[tuple[str, str], RepoStatus | str] | None = None,
                     phase: _Phase | None = None) -> None:
    """Each distinct repository once a day (`known`: the statuses the day's earlier runs read), each check of
    `rows` landed once its repository is read, then each skill's SKILL.md; a reason wherever an answer is
    missing. Nothing more once `phase.stop` is set."""
    phase = phase if phase is not None else _Phase()
    statuses: dict[tuple[str, str], RepoStatus | str] = dict(known or {})

    def status(owner: str, repo: str) -> RepoStatus | str:
        key = (owner.lower(), repo.lower())
        if key not in statuses:
            statuses[key] = codehost.repository(owner, repo) if codehost is not None else "no code host configured"
        return statuses[key]

    with phase.landing:
        rows.reverse()
    while True:  # each check lands once its repository is read, and leaves `rows` only once landed
        with phase.landing:
            if phase.stop.is_set() or not rows:
                break
            row = rows[-1]
        parsed = _repository_to_ask(row)
        answer = status(*parsed) if parsed is not None else None
        with phase.landing:
            if phase.stop.is_set():
                return  # the run landed this row itself
            if answer is not None:
                _fill_repo(row, answer)
            sink.add_check(row)
            rows.pop()
    for folder in skills:
        if phase.stop.is_set():
            return
        skill: dict[str, Any] = {"day": day, "run_id": run_id, "skill_key": _skill_key(folder),
                                 "folder_url": folder.url, "folder_name": folder.name,
                                 "requested_at": clock(), "prober_version": PROBER_VERSION}
        if codehost is None:
            skill["skill_md_detail"] = skill["repo_detail"] = "no code host configured"
        else:
            content = codehost.file(folder, "SKILL.md")
            if isinstance(content, bytes):
                skill["skill_md"] = content.decode("utf-8", "replace")
            else:
                skill["skill_md_detail"] = content
            _fill_repo(skill, status(folder.owner, folder.repo))
        sink.add_skill(skill)


def _fill_repo(row: dict[str, Any], status: RepoStatus | str) -> None:
    if isinstance(status, RepoStatus):
        row.update(repo_private=status.private, repo_archived=status.archived, repo_pushed_at=status.pushed_at)
    else:
        row["repo_detail"] = status
