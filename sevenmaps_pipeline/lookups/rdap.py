"""Domain age from the public RDAP record (RFC 9224 bootstrap, RFC 9083 responses; docs/methodology.md,
"Domain age"): the registrable domain's `events[]` entry with `eventAction` `registration`. The lookup
goes to the registry's RDAP service named by IANA's bootstrap file (`dns.json`: `services` of
`[[tlds], [base URLs]]`), never to the server itself.

The bootstrap URL is configurable ($SEVENMAPS_RDAP_BOOTSTRAP_URL, default IANA's); requests are spaced and
nothing an RDAP server answers can raise: every lookup is a date or a reason.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from .spaced import SpacedJsonClient

BOOTSTRAP_ENV = "SEVENMAPS_RDAP_BOOTSTRAP_URL"
DEFAULT_BOOTSTRAP = "https://data.iana.org/rdap/dns.json"
MAX_BODY = 1 << 20


@dataclass
class DomainRecord:
    domain: str
    registered_at: dt.datetime | None
    status: str  # ok | a reason
    rdap_url: str | None = None


def _parse(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


class RdapClient(SpacedJsonClient):
    def __init__(self, bootstrap_url: str | None = None, min_interval: float = 0.2, timeout: float = 15.0) -> None:
        super().__init__(min_interval, timeout, MAX_BODY, accept="application/rdap+json")
        self.bootstrap_url = bootstrap_url or os.environ.get(BOOTSTRAP_ENV) or DEFAULT_BOOTSTRAP
        self._services: dict[str, str] | None = None
        self.bootstrap_problem: str | None = None

    def __enter__(self) -> RdapClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def services(self) -> dict[str, str]:
        """TLD -> the RDAP base URL (the first https one, else the first), from the bootstrap file."""
        if self._services is None:
            self._services = {}
            doc = self.request_json("GET", self.bootstrap_url)
            entries = doc.get("services") if isinstance(doc, dict) else None
            if not isinstance(entries, list):
                self.bootstrap_problem = f"the bootstrap file {self.bootstrap_url}: " + (
                    doc if isinstance(doc, str) else "no services list")
                return self._services
            for entry in entries:
                if not (isinstance(entry, list) and len(entry) >= 2 and isinstance(entry[0], list)
                        and isinstance(entry[1], list)):
                    continue
                urls = [u for u in entry[1] if isinstance(u, str) and u.startswith(("https://", "http://"))]
                if not urls:
                    continue
                base = next((u for u in urls if u.startswith("https://")), urls[0])
                for tld in entry[0]:
                    if isinstance(tld, str):
                        self._services.setdefault(tld.lower(), base if base.endswith("/") else base + "/")
        return self._services

    def domain(self, domain: str) -> DomainRecord:
        domain = domain.lower().rstrip(".")
        labels = domain.split(".")
        services = self.services()
        base = next((services[".".join(labels[i:])] for i in range(len(labels)) if ".".join(labels[i:]) in services),
                    None)
        if base is None:
            return DomainRecord(domain, None, self.bootstrap_problem or "no RDAP service for its TLD in the bootstrap")
        url = f"{base}domain/{quote(domain)}"
        doc = self.request_json("GET", url)
        if not isinstance(doc, dict):
            return DomainRecord(domain, None, doc if isinstance(doc, str) else "not an RDAP object", url)
        for event in doc.get("events") or []:
            if isinstance(event, dict) and event.get("eventAction") == "registration":
                when = _parse(event.get("eventDate"))
                if when is not None:
                    return DomainRecord(domain, when, "ok", url)
        return DomainRecord(domain, None, "no registration event in the record", url)
