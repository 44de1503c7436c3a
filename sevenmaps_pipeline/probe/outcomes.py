"""What a check's steps come back with, and how a step ends a check early: a classified outcome
(probe/checker.py)."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from ..registry.listing import SkipReason
from ..rules.outcomes import NOT_CHECKED, PROBER_RESOURCES, not_checked_detail
from .netguard import refused_address
from .ours import our_trouble
from .values import json_int
from .wire import Reply, loads

MODERN_ERROR_CODES = {-32020, -32021, -32022}


@dataclass(frozen=True)
class Answer:
    """What one POST came back with: a parsed JSON-RPC reply for a 2xx, else the capped raw body."""

    status_code: int
    headers: httpx.Headers
    reply: Reply | None
    body: bytes


class _Outcome(Exception):
    """Ends a check early with a classified outcome."""

    def __init__(self, outcome: str, detail: str, status: int | None = None) -> None:
        super().__init__(detail)
        self.outcome, self.detail, self.status = outcome, detail, status


def transport_failure(exc: httpx.HTTPError, step: str) -> _Outcome:
    """A request that got no HTTP answer, classified: our machine's trouble (not_checked, never the server's
    fault: probe/ours.py), a timeout, a refused non-public address (skipped, never the server's fault), else
    unreachable, naming the step."""
    ours = our_trouble(exc)
    if ours is not None:
        return _Outcome(NOT_CHECKED, not_checked_detail(PROBER_RESOURCES, f"{step}: {ours}"))
    if isinstance(exc, httpx.TimeoutException):
        return _Outcome("timeout", f"{step}: {type(exc).__name__}")
    if isinstance(exc, httpx.ConnectError):
        if refused_address(exc):
            return _Outcome("skipped", f"{SkipReason.NON_PUBLIC}: {exc}")
        return _Outcome("unreachable", f"{step}: {exc or type(exc).__name__}")
    return _Outcome("unreachable", f"{step}: {type(exc).__name__}: {exc}")


def modern_error_code(response: Answer, reply: Reply | None) -> int | None:
    """The JSON-RPC code that marks a 2026-07-28 server refusing the handshake, if this is one."""
    if response.status_code in (400, 404):
        obj, _ = loads(response.body or b"{}")
        error = obj.get("error") if isinstance(obj, dict) else None
        code = json_int(error.get("code")) if isinstance(error, dict) else None
        if code in MODERN_ERROR_CODES or (response.status_code == 404 and code == -32601):
            return code
    code = json_int(reply.error.get("code")) if reply is not None and reply.kind == "error" else None
    return code if code in MODERN_ERROR_CODES else None
