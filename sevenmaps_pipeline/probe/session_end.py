"""Whether the prober ends a server's session with DELETE (docs/methodology.md, "Per endpoint").

The transport says a client that no longer needs a session SHOULD end it with DELETE, and the official clients do.
The official Python SDK (`mcp`) 1.8.0 to 1.9.x, the first releases with streamable HTTP, answer HTTP 500 to every
request after one stateful session is ended so, until restarted: one check of ours would take the server down for
everyone, and its next check would read as its fault. Each was run on loopback (1.8.0, 1.8.1, 1.9.0, 1.9.4: an
initialize after the DELETE got 500; 1.10.0, 1.10.1, 1.12.4: 200). A FastMCP server of those releases gives the
SDK's release as its own `serverInfo.version`, which is all a client can see of it: such a session is left to the
server to expire, as a client that simply goes away leaves it."""

from __future__ import annotations

import re

# The SDK releases whose session manager fails for good after a DELETE: 1.8.0-1.9.x (1.10.0 fixed it).
_BREAKS_ON_DELETE = re.compile(r"1\.(8|9)\.\d+")


def ends_session(server_info_version: str | None) -> bool:
    """False for a server that reports a release known to fail after its session is ended; True otherwise."""
    return not (server_info_version and _BREAKS_ON_DELETE.fullmatch(server_info_version.strip()))
