"""What a server says of itself in the answers a check already receives (docs/methodology.md, "Readiness":
claimed and served revisions, the skills extension): never a request of its own."""

from __future__ import annotations

from typing import Any

from .values import header_token
from .wire import Reply, loads

# Skills over MCP (SEP-2640) is declared as this key of `capabilities.extensions` (SEP-2133's map).
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
MAX_CLAIMS = 20  # revisions kept of what one server says it supports


def add_claims(claims: list[str] | None, versions: Any) -> list[str] | None:
    """`claims` with the revisions of a `supportedVersions`/`supported` list added (strings a header could
    carry, each once, at most MAX_CLAIMS); anything else in it is ignored."""
    if not isinstance(versions, list):
        return claims
    found = list(claims or [])
    for version in versions[:100]:
        token = header_token(version)
        if token is not None and len(token) <= 40 and token not in found and len(found) < MAX_CLAIMS:
            found.append(token)
    return found or None


def error_claims(body: bytes | None, reply: Reply | None) -> Any:
    """The `supported` list of an UnsupportedProtocolVersion error (`error.data.supported`), in a JSON-RPC
    reply or in the body of a 4xx (None when there is none)."""
    error: Any = reply.error if reply is not None and reply.kind == "error" else None
    if error is None and body:
        obj, _ = loads(body)
        error = obj.get("error") if isinstance(obj, dict) else None
    data = error.get("data") if isinstance(error, dict) else None
    return data.get("supported") if isinstance(data, dict) else None


def skills_declared(capabilities: Any) -> tuple[bool, int | None] | None:
    """(whether the skills extension is declared, how many skills its settings list) from capabilities
    already received: declared when its key holds an object (SEP-2133's settings); a count only when those
    settings themselves list the skills (a `skills` array). None: no capabilities object."""
    if not isinstance(capabilities, dict):
        return None
    extensions = capabilities.get("extensions")
    settings = extensions.get(SKILLS_EXTENSION) if isinstance(extensions, dict) else None
    skills = settings.get("skills") if isinstance(settings, dict) else None
    return isinstance(settings, dict), (min(len(skills), 2**31 - 1) if isinstance(skills, list) else None)
