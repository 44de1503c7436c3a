"""How a listing's namespace was proven (docs/methodology.md, "Readiness": the namespace line).

The official MCP Registry publishes a name only after proving its namespace: `io.github.<account>/...`
by GitHub sign-in as that account (or an owner of that organisation); a reverse-domain name such as
`com.example/...` by a DNS TXT record on example.com (which also covers `com.example.*` subdomains) or
by an HTTP file at `https://example.com/.well-known/mcp-registry-auth` (that domain only). So a listing
imported from the registry counts as proven, and its method follows from its name; which of DNS and the
HTTP file it was is told by whether the file answers. It shows who published the listing, not that the
product named in it endorses the listing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .hosts import host_of, ip_literal
from .psl import registrable_domain

_NAME = re.compile(r"^([a-zA-Z0-9.-]+)/[a-zA-Z0-9._-]+$")
WHAT_IT_PROVES = "shows who published the listing, not that the product named in it endorses it"


@dataclass(frozen=True)
class NamespaceProof:
    method: str  # "github" | "http" | "dns" | "dns or http" | "none"
    namespace: str | None
    evidence: str


def namespace_domain(namespace: str) -> str | None:
    """`com.example.mcp` -> `mcp.example.com`; None for a GitHub namespace or a malformed one."""
    parts = namespace.lower().split(".")
    if len(parts) < 2 or namespace.lower().startswith("io.github.") or not all(parts):
        return None
    return ".".join(reversed(parts))


def namespace_owns_host(server_name: object, url: object) -> bool:
    """Whether a listing's namespace is a domain (which the registry proves by DNS or HTTP) that is its URL's host
    or a parent of it: `com.example/mcp` for https://mcp.example.com/mcp. Never a GitHub account (`io.github.x`
    proves a login, not a domain), a public suffix (`com.github`, `uk.co`) or an address. Status-1.4 names an
    endpoint listed several times by such a listing first (probe/scan.py naming_order, and as the SQL function
    of the same name in sql/naming_listings.sql: one definition for both)."""
    m = _NAME.match(server_name) if isinstance(server_name, str) else None
    domain = namespace_domain(m.group(1)) if m else None
    if domain is None or not isinstance(url, str) or ip_literal(domain) or registrable_domain(domain) is None:
        return False
    try:
        host = (host_of(url) or "").lower().rstrip(".")
    except ValueError:
        return False
    return host == domain or host.endswith("." + domain)


def namespace_proof(server_name: object, from_registry: bool, http_file_answers: bool | None = None,
                    verified_claim: bool = False) -> NamespaceProof:
    """The proof of a listing's namespace. `http_file_answers`: whether the namespace domain's
    /.well-known/mcp-registry-auth answered with a `v=MCPv1` record (None: not asked)."""
    m = _NAME.match(server_name) if isinstance(server_name, str) else None
    namespace = m.group(1) if m else None
    if verified_claim:
        return NamespaceProof("claim", namespace, f"the owner verified control with 7Maps; {WHAT_IT_PROVES}")
    if not from_registry or namespace is None:
        return NamespaceProof("none", namespace, "not a registry listing, and no verified claim")
    if namespace.lower().startswith("io.github.") and len(namespace) > len("io.github."):
        account = namespace[len("io.github."):]
        return NamespaceProof("github", namespace, f"the registry accepted it from GitHub sign-in as {account}; "
                              f"{WHAT_IT_PROVES}")
    domain = namespace_domain(namespace)
    if domain is None:
        return NamespaceProof("none", namespace, f"{namespace!r} is not a namespace the registry can prove")
    if http_file_answers:
        return NamespaceProof("http", namespace, f"an HTTP file at https://{domain}/.well-known/mcp-registry-auth "
                              f"(that domain only); {WHAT_IT_PROVES}")
    method = "dns" if http_file_answers is False else "dns or http"
    return NamespaceProof(method, namespace, f"the registry accepted {domain} by a DNS record (covering its "
                          f"subdomains) or an HTTP file; {WHAT_IT_PROVES}")
