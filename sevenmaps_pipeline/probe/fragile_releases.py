"""Requests the prober leaves out for servers they would take down (docs/methodology.md, "Per endpoint" and
"Readiness").

The official Python SDK's first releases with streamable HTTP, 1.8.0 to 1.9.x, fail for good, answering HTTP 500 to
every request until restarted, after two requests a conforming client may send:
- **a session ended with DELETE** (stateful servers): the transport says a client that no longer needs a session
  SHOULD end it so, and the official clients do. Run on loopback: 1.8.0, 1.8.1, 1.9.0 and 1.9.4 answered the next
  initialize with 500; 1.10.0, 1.10.1 and 1.12.4 with 200.
- **a method they do not know** (stateless servers): readiness asks `server/discover` first ([R]). 1.8.0, 1.8.1 and
  1.9.0 answered the next initialize with 500; 1.9.4 and 1.10.1 with 200.
One check of ours would take such a server down for everyone, and its next check would read as its fault. A FastMCP
server of those releases gives the SDK's release as its own `serverInfo.version`, which is all a client can see of
it. A server that fails so under a version of its own cannot be told apart."""

from __future__ import annotations

import re

# The releases of either failure, both counted for both: 1.9.4 does not fail on an unknown method, but a server of
# it cannot know server/discover either (2026-07-28), so not asking changes nothing the map reads.
_FRAGILE = re.compile(r"1\.(8|9)\.\d+")


def fragile(server_info_version: str | None) -> bool:
    """Whether a server reporting this release is one the requests above would take down: its session is left to
    expire rather than ended with DELETE, and readiness asks it `initialize` without `server/discover` first (by its
    daily check's release)."""
    return bool(server_info_version and _FRAGILE.fullmatch(server_info_version.strip()))
