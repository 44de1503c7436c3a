"""What a scan may do and how long it may wait: the methodology's `client` and `timeouts_ms`
(docs/methodology.md, "The prober"), in one place."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__

USER_AGENT = "7Maps-bot/0.2 (+https://7it.co.il/7maps/bot/)"
# The rubric's bad-call step never goes as 7Maps-bot, which promises never to call a tool: it is its own
# agent, made only where the server's verified owner asked for it (docs/methodology.md, "The bad call").
BAD_CALL_USER_AGENT = "7Maps-owner-requested-bad-call/0.2 (one tools/call with bad arguments, asked for by the " \
    "server's verified owner; +https://7it.co.il/7maps/bot/)"
ROBOTS_TOKEN = "7Maps-bot"  # the bare product token handed to the robots.txt parser
PROTOCOL_VERSION = "2025-06-18"
MODERN_PROTOCOL_VERSION = "2026-07-28"
PROBER_VERSION = f"sevenmaps-prober/{__version__}"


@dataclass(frozen=True)
class Timeouts:
    """Seconds, from the methodology's `timeouts_ms` (docs/methodology.md)."""

    robots_txt: float = 3.0
    initialize: float = 8.0
    notifications_initialized: float = 5.0
    tools_list_per_page: float = 8.0
    well_known_per_origin: float = 4.0  # the three well-known documents of an origin, together
    check_overall: float = 30.0  # five_minute_check_overall: never applied to daily checks
    legacy_sse_endpoint_event: float = 10.0
    session_end: float = 2.0


class HostMap(dict[str, int]):
    """Demo and test configuration's name -> loopback port map, its names normalised once (lower case, no
    trailing dot): a scan builds one client per host, and normalising a map of every fleet name for each
    of them grows with the square of the registry's size."""

    def __init__(self, names: dict[str, int] | None = None) -> None:
        if isinstance(names, HostMap):
            super().__init__(names)
        else:
            super().__init__({k.lower().rstrip("."): v for k, v in (names or {}).items()})


@dataclass(frozen=True)
class ProbeConfig:
    timeouts: Timeouts = field(default_factory=Timeouts)
    max_pages: int = 5
    max_body_bytes: int = 8 << 20  # a tools list larger than this is not a tool list
    max_handshake_bytes: int = 1 << 20  # initialize / server/discover answers
    max_small_body_bytes: int = 64 << 10  # error bodies, 402 payment bodies, well-known documents
    robots_max_bytes: int = 512 << 10
    concurrency: int = 64
    # Demo and test configuration only: names sent to loopback ports, and the CA that signs them.
    host_map: dict[str, int] = field(default_factory=dict)
    ca_file: Path | None = None
    allow_private: bool = False  # `sevenmaps probe --allow-private`: an owner checking their own server
    opted_out_hosts: frozenset[str] = frozenset()
    user_agent: str = USER_AGENT
    # The lake's host leases (probe/leases.py): a host in flight in one run is not contacted by another run
    # of the lake's lanes at once. None outside a lake (`sevenmaps probe`, library tests).
    host_leases: Path | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "host_map", HostMap(self.host_map))
