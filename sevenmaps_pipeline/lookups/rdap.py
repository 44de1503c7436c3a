"""Domain age from the public RDAP record (RFC 9224 bootstrap, RFC 9083 responses; docs/methodology.md,
"Domain age"): the registrable domain's `events[]` entry with `eventAction` `registration`. The lookup
goes to the registry's RDAP service named by IANA's bootstrap file (`dns.json`: `services` of
`[[tlds], [base URLs]]`), never to the server itself.

The bootstrap URL is configurable ($SEVENMAPS_RDAP_BOOTSTRAP_URL, default IANA's); requests are spaced and
nothing an RDAP server answers can raise: every lookup is a date or a reason. A service the bootstrap names is
asked only over https, at a host name (no address, no private name, no credentials), unless it is on the
bootstrap file's own origin, which the operator chose. A domain is asked in its ASCII form (`xn--...`).
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from ..rules.hosts import PRIVATE_SUFFIXES, ascii_host, is_address
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


# The first domain names were registered in 1985; a date before, or after today, is no registration date.
EARLIEST_REGISTRATION = dt.datetime(1985, 1, 1, tzinfo=dt.UTC)


def _parse(value: Any) -> dt.datetime | None:
    """An RFC 3339 date in UTC (one without a zone read as UTC), or None when it is not one."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        return (parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)
    except (ValueError, OverflowError):
        return None


def _service_url(url: Any, bootstrap_origin: str) -> str | None:
    """A base URL the bootstrap names, as it may be asked (docs/methodology.md, "Domain age"), or None."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower().rstrip(".")
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return None
    if f"{parts.scheme}://{parts.netloc}".lower() == bootstrap_origin:
        return url if url.endswith("/") else url + "/"
    if parts.scheme != "https" or "@" in parts.netloc or "." not in host or host.endswith(PRIVATE_SUFFIXES) \
            or is_address(host):
        return None
    return url if url.endswith("/") else url + "/"


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
        """TLD -> the RDAP base URL (the first that may be asked: `_service_url`), from the bootstrap file."""
        if self._services is None:
            self._services = {}
            doc = self.request_json("GET", self.bootstrap_url)
            entries = doc.get("services") if isinstance(doc, dict) else None
            if not isinstance(entries, list):
                self.bootstrap_problem = f"the bootstrap file {self.bootstrap_url}: " + (
                    doc if isinstance(doc, str) else "no services list")
                return self._services
            try:
                origin = "{0.scheme}://{0.netloc}".format(urlsplit(self.bootstrap_url)).lower()
            except ValueError:
                origin = ""
            for entry in entries:
                if not (isinstance(entry, list) and len(entry) >= 2 and isinstance(entry[0], list)
                        and isinstance(entry[1], list)):
                    continue
                base = next(filter(None, (_service_url(u, origin) for u in entry[1])), None)
                if base is None:
                    continue
                for tld in entry[0]:
                    if isinstance(tld, str):
                        self._services.setdefault(tld.lower(), base)
        return self._services

    def domain(self, domain: str) -> DomainRecord:
        domain = ascii_host(domain.lower().rstrip(".")).lower()
        if is_address(domain) or not domain.isascii():
            return DomainRecord(domain, None, "not a domain name RDAP can be asked about")
        labels = domain.split(".")
        services = self.services()
        base = next((services[".".join(labels[i:])] for i in range(len(labels)) if ".".join(labels[i:]) in services),
                    None)
        if base is None:
            return DomainRecord(domain, None, self.bootstrap_problem or "no RDAP service for its TLD in the bootstrap")
        url = f"{base}domain/{quote(domain, safe='')}"
        doc = self.request_json("GET", url)
        if not isinstance(doc, dict):
            return DomainRecord(domain, None, doc if isinstance(doc, str) else "not an RDAP object", url)
        events = doc.get("events")
        dates = [_parse(e.get("eventDate")) for e in (events if isinstance(events, list) else [])
                 if isinstance(e, dict) and e.get("eventAction") == "registration"]
        if not dates:
            return DomainRecord(domain, None, "no registration event in the record", url)
        tomorrow = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
        when = next((d for d in dates if d is not None and EARLIEST_REGISTRATION <= d <= tomorrow), None)
        if when is None:
            return DomainRecord(domain, None, "no registration date between 1985 and today in the record", url)
        return DomainRecord(domain, when, "ok", url)
