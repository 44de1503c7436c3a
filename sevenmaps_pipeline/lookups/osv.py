"""OSV (https://osv.dev): the advisories of a package version, and the public metadata of npm and PyPI
packages (docs/methodology.md, "Package advisories").

- `POST /v1/querybatch` answers, per query and in order, only the ids (and `modified`) of the advisories
  that affect the version, with a `next_page_token` when there are more; at most 1,000 queries a batch.
- `GET /v1/vulns/{id}` gives an advisory: its `severity[]` (CVSS vectors), `database_specific.severity`
  (GHSA's LOW | MODERATE | HIGH | CRITICAL) and `affected[].ranges[].events[]` (the `fixed` versions).
- npm: `GET {npm}/{name}` (`dist-tags.latest`, `time`); PyPI: `GET {pypi}/pypi/{name}/json` (`info.version`,
  `releases`).

Every base URL is configurable ($SEVENMAPS_OSV_URL, $SEVENMAPS_NPM_URL, $SEVENMAPS_PYPI_URL); requests are
spaced (`min_interval`) so no service is hammered; nothing any of them answers can raise: every lookup is a
result or a reason.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from .spaced import SpacedJsonClient

OSV_URL_ENV, NPM_URL_ENV, PYPI_URL_ENV = "SEVENMAPS_OSV_URL", "SEVENMAPS_NPM_URL", "SEVENMAPS_PYPI_URL"
DEFAULTS = {OSV_URL_ENV: "https://api.osv.dev", NPM_URL_ENV: "https://registry.npmjs.org",
            PYPI_URL_ENV: "https://pypi.org"}
ECOSYSTEMS = {"npm": "npm", "pypi": "PyPI"}
BATCH = 1000
MAX_PAGES = 10
MAX_BODY = 8 << 20
MAX_ADVISORIES = 50  # read per package; more are counted in its osv_status, not read
MAX_FIXED = 50  # fixed versions kept per advisory
# The reasons of lookups/spaced.py for a fault that may pass (a batch is asked once more: its queries only read).
PASSING = ("rate limited (HTTP 429)", "HTTP 5", "no answer (", "no whole answer")
# An advisory id as OSV's databases write them (GHSA-xxxx-xxxx-xxxx, CVE-2024-1234, PYSEC-2024-1, MAL-...): an id
# that is not one is never asked for (it would be a path of ours) nor kept.
_ADVISORY_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,99}")
# A severity kept: GHSA's labels, or a CVSS vector (the SQL orders the labels; a vector is shown as it is).
_SEVERITY_LABELS = frozenset({"CRITICAL", "HIGH", "MODERATE", "MEDIUM", "LOW"})
_CVSS_VECTOR = re.compile(r"CVSS:[0-9.]{1,4}/[A-Za-z0-9:/.]{1,190}")


@dataclass
class Advisory:
    id: str
    severity: str | None  # CRITICAL | HIGH | MODERATE | LOW, or the first CVSS vector, or None
    fixed: list[str] = field(default_factory=list)  # versions that fix it, for this package
    summary: str | None = None


@dataclass
class PackageLookup:
    registry_type: str
    package: str
    version: str | None
    latest_version: str | None = None
    latest_published_at: str | None = None
    metadata_status: str = "unseen"
    osv_status: str = "unseen"
    advisories: list[Advisory] = field(default_factory=list)


def _base(env: str, given: str | None) -> str:
    return (given or os.environ.get(env) or DEFAULTS[env]).rstrip("/")


class LookupClient(SpacedJsonClient):
    """The package lookups: metadata from npm and PyPI, advisories from OSV."""

    def __init__(self, osv_url: str | None = None, npm_url: str | None = None, pypi_url: str | None = None,
                 min_interval: float = 0.05, timeout: float = 15.0) -> None:
        super().__init__(min_interval, timeout, MAX_BODY)
        self.osv, self.npm, self.pypi = _base(OSV_URL_ENV, osv_url), _base(NPM_URL_ENV, npm_url), \
            _base(PYPI_URL_ENV, pypi_url)
        self._vulns: dict[str, Advisory | str] = {}

    def __enter__(self) -> LookupClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def metadata(self, lookup: PackageLookup) -> None:
        if lookup.registry_type == "npm":
            answer = self.request_json("GET", f"{self.npm}/{quote(lookup.package, safe='@')}", service="npm")
            if isinstance(answer, dict):
                tags: dict = answer["dist-tags"] if isinstance(answer.get("dist-tags"), dict) else {}
                latest = tags.get("latest") if isinstance(tags.get("latest"), str) else None
                times: dict = answer["time"] if isinstance(answer.get("time"), dict) else {}
                published = times.get(latest) if latest and isinstance(times.get(latest), str) else None
                lookup.latest_version, lookup.latest_published_at = latest, published
                lookup.metadata_status = "ok" if latest else "no latest version"
            else:
                lookup.metadata_status = answer if isinstance(answer, str) else "not a package document"
            return
        answer = self.request_json("GET", f"{self.pypi}/pypi/{quote(lookup.package, safe='')}/json", service="pypi")
        if isinstance(answer, dict) and isinstance(answer.get("info"), dict):
            latest = answer["info"].get("version") if isinstance(answer["info"].get("version"), str) else None
            files = (answer.get("releases") or {}).get(latest) if isinstance(answer.get("releases"), dict) else None
            published = None
            if isinstance(files, list) and files and isinstance(files[0], dict):
                value = files[0].get("upload_time_iso_8601")
                published = value if isinstance(value, str) else None
            lookup.latest_version, lookup.latest_published_at = latest, published
            lookup.metadata_status = "ok" if latest else "no latest version"
        else:
            lookup.metadata_status = answer if isinstance(answer, str) else "not a package document"

    def advisories(self, lookups: list[PackageLookup]) -> None:
        """Each lookup's advisories for its version (the registry's version, else the latest)."""
        queries = [(lk, lk.version or lk.latest_version) for lk in lookups]
        askable = [(lk, v) for lk, v in queries if v]
        for lk, v in queries:
            if not v:
                lk.osv_status = "no version to check"
        for start in range(0, len(askable), BATCH):
            chunk = askable[start:start + BATCH]
            found = [_Listed() for _ in chunk]
            pending = list(range(len(chunk)))
            tokens: dict[int, str] = {}
            for _page in range(MAX_PAGES):
                body = {"queries": [{"package": {"name": chunk[i][0].package,
                                                 "ecosystem": ECOSYSTEMS[chunk[i][0].registry_type]},
                                     "version": chunk[i][1], **({"page_token": tokens[i]} if i in tokens else {})}
                                    for i in pending]}
                answer = self.request_json("POST", f"{self.osv}/v1/querybatch", service="osv", json=body)
                if isinstance(answer, str) and answer.startswith(PASSING):  # asked once more, as the service asked
                    answer = self.request_json("POST", f"{self.osv}/v1/querybatch", service="osv", json=body)
                results = answer.get("results") if isinstance(answer, dict) else None
                if not isinstance(results, list) or len(results) != len(pending):
                    why = answer if isinstance(answer, str) else "an answer that is not OSV's batch shape"
                    for i in pending:
                        chunk[i][0].osv_status = f"osv: {why}"
                        found[i] = _Listed()  # what earlier pages said is not the whole answer: unseen
                    pending = []
                    break
                next_pending = []
                for i, result in zip(pending, results, strict=True):
                    token = found[i].take(result)
                    if token:
                        tokens[i] = token
                        next_pending.append(i)
                    else:
                        chunk[i][0].osv_status = "ok"
                pending = next_pending
                if not pending:
                    break
            for i in pending:
                chunk[i][0].osv_status = f"ok (more than {MAX_PAGES} pages: the rest unread)"
            for i, (lk, _v) in enumerate(chunk):
                self._read_advisories(lk, found[i])

    def _read_advisories(self, lookup: PackageLookup, listed: _Listed) -> None:
        """The package's advisories read one by one (at most MAX_ADVISORIES); what was not read, and why, is added
        to its osv_status, which stays "ok" only when every advisory listed was read."""
        unread: dict[str, int] = {}
        for vid in listed.ids:
            detail = self.vuln(vid, lookup)
            if isinstance(detail, Advisory):
                lookup.advisories.append(detail)
            else:
                lookup.advisories.append(Advisory(vid, None))
                unread[detail] = unread.get(detail, 0) + 1
        notes = [f"{n} advisory not read ({why})" if n == 1 else f"{n} advisories not read ({why})"
                 for why, n in unread.items()]
        if listed.beyond:
            notes.append(f"{listed.beyond} more advisories listed, not read")
        if listed.refused:
            notes.append(f"{listed.refused} listed with no valid id, left out")
        if notes and lookup.osv_status.startswith("ok"):
            lookup.osv_status = "; ".join([lookup.osv_status, *notes])

    def vuln(self, vid: str, lookup: PackageLookup) -> Advisory | str:
        """The advisory, its fixed versions those of this package (cached per advisory and package)."""
        key = f"{vid}|{lookup.registry_type}|{lookup.package.lower()}"
        cached = self._vulns.get(key)
        if cached is None:
            answer = self.request_json("GET", f"{self.osv}/v1/vulns/{quote(vid, safe='')}", service="osv")
            cached = answer if isinstance(answer, str) else _advisory(vid, answer, lookup)
            self._vulns[key] = cached
        return cached


class _Listed:
    """What OSV's batch listed for one package, page after page: the ids to read (at most MAX_ADVISORIES, in
    OSV's order, once each: only what is read is held), and how many more ids and invalid ones it listed."""

    def __init__(self) -> None:
        self.ids: dict[str, None] = {}
        self.beyond = self.refused = 0

    def take(self, result: Any) -> str | None:
        """Read one page's result for the package; its next page token, if it has one."""
        if not isinstance(result, dict):
            return None
        vulns = result.get("vulns")
        for v in vulns if isinstance(vulns, list) else []:
            vid = v.get("id") if isinstance(v, dict) else None
            if not (isinstance(vid, str) and _ADVISORY_ID.fullmatch(vid)):
                self.refused += 1
            elif len(self.ids) < MAX_ADVISORIES or vid in self.ids:
                self.ids[vid] = None
            else:
                self.beyond += 1
        token = result.get("next_page_token")
        return token if isinstance(token, str) and token else None


def _as_list(value: Any) -> list:
    """A field that should be a list, as one (anything else is read as empty)."""
    return value if isinstance(value, list) else []


def _severity(doc: dict) -> str | None:
    """GHSA's label, else the first CVSS vector; anything else a source calls a severity is not kept."""
    specific = doc.get("database_specific")
    label = specific.get("severity") if isinstance(specific, dict) else None
    if isinstance(label, str) and label.strip().upper() in _SEVERITY_LABELS:
        return label.strip().upper()
    for item in _as_list(doc.get("severity")):
        score = item.get("score") if isinstance(item, dict) else None
        if isinstance(score, str) and _CVSS_VECTOR.fullmatch(score.strip()):
            return score.strip()
    return None


def _advisory(vid: str, doc: Any, lookup: PackageLookup) -> Advisory:
    if not isinstance(doc, dict):
        return Advisory(vid, None)
    fixed: dict[str, None] = {}
    ecosystem = ECOSYSTEMS[lookup.registry_type]
    for affected in _as_list(doc.get("affected")):
        if not isinstance(affected, dict):
            continue
        package: dict = affected["package"] if isinstance(affected.get("package"), dict) else {}
        if package.get("ecosystem") != ecosystem or str(package.get("name", "")).lower() != lookup.package.lower():
            continue
        for rng in _as_list(affected.get("ranges")):
            for event in _as_list(rng.get("events")) if isinstance(rng, dict) else []:
                value = event.get("fixed") if isinstance(event, dict) else None
                if isinstance(value, str) and len(fixed) < MAX_FIXED:
                    fixed[value[:100]] = None
    summary = doc.get("summary") if isinstance(doc.get("summary"), str) else None
    return Advisory(vid, _severity(doc), list(fixed), summary[:300] if summary else None)
