"""Loopback stand-ins for the outside services of the daily lookups, in their real shapes:

- OSV: `POST /osv/v1/querybatch` (per query, in order: `{"vulns": [{"id", "modified"}]}` or `{}`) and
  `GET /osv/v1/vulns/{id}` (an OSV record: `summary`, `severity[]` CVSS, `database_specific.severity`,
  `affected[].package` and `ranges[].events` with `introduced`/`fixed`); 404 `{"code": 5, "message": "Bug not
  found."}` for an unknown id;
- npm: `GET /npm/{name}` (a packument: `name`, `dist-tags.latest`, `versions`, `time`);
- PyPI: `GET /pypi/pypi/{name}/json` (`info.version`, `releases` with `upload_time_iso_8601`);
- RDAP: `GET /rdap/dns.json` (IANA's bootstrap: `services` of `[[tlds], [base URLs]]`) and
  `GET /rdap/domain/{name}` (an RFC 9083 domain object with its `registration` event); 404 with an RDAP
  error object for an unknown domain.

The fleet's servers say what they ship and when their domain was registered (timeline `packages`,
`registered_days_ago`); every request is recorded so tests can see what was asked.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from ...rules.psl import registrable_domain

if TYPE_CHECKING:
    from .run import FleetHost

ECOSYSTEM = {"npm": "npm", "pypi": "PyPI"}
OLD_DOMAIN = "2019-05-01T00:00:00Z"


def _version_key(version: str) -> tuple:
    return tuple(int(p) if p.isdigit() else 0 for p in version.split("."))


class LookupsApp:
    def __init__(self, hosts: list[FleetHost], today: dt.date | None = None) -> None:
        self.requests: list[dict[str, Any]] = []
        self.packages: dict[tuple[str, str], dict[str, Any]] = {}
        self.domains: dict[str, str] = {}
        today = today or dt.datetime.now(dt.UTC).date()

        for h in hosts:
            for package in h.packages:
                self.packages[(package["registryType"], package["identifier"].lower())] = package
            domain = registrable_domain(h.host)
            if domain:
                registered = (OLD_DOMAIN if h.registered_days_ago is None else
                              f"{today - dt.timedelta(days=h.registered_days_ago)}T00:00:00Z")
                self.domains.setdefault(domain, registered)
                if h.registered_days_ago is not None:
                    self.domains[domain] = registered
        self.base = ""
        osv = Starlette(routes=[Route("/v1/querybatch", self.querybatch, methods=["POST"]),
                                Route("/v1/vulns/{vid}", self.vuln)])
        rdap = Starlette(routes=[Route("/dns.json", self.bootstrap), Route("/domain/{name}", self.domain)])
        self.routes = [Mount("/osv", osv), Mount("/npm", Starlette(routes=[Route("/{name:path}", self.npm)])),
                       Mount("/pypi", Starlette(routes=[Route("/pypi/{name}/json", self.pypi)])),
                       Mount("/rdap", rdap)]

    def _record(self, request: Request, body: Any = None) -> None:
        self.requests.append({"path": request.url.path, "method": request.method, "body": body,
                              "user-agent": request.headers.get("user-agent"), "at": time.monotonic()})

    def _affecting(self, kind: str, name: str, version: str) -> list[dict[str, Any]]:
        package = self.packages.get((kind, name.lower()))
        if package is None:
            return []
        return [a for a in package.get("advisories", [])
                if _version_key(a.get("introduced", "0")) <= _version_key(version) < _version_key(a["fixed"])]

    async def querybatch(self, request: Request) -> JSONResponse:
        body = await request.json()
        self._record(request, body)
        results = []
        for query in body.get("queries", []):
            package = query.get("package") or {}
            kind = {"npm": "npm", "PyPI": "pypi"}.get(str(package.get("ecosystem")), "")
            found = self._affecting(kind, package.get("name", ""), query.get("version", ""))
            results.append({"vulns": [{"id": a["id"], "modified": "2026-10-01T00:00:00Z"} for a in found]}
                           if found else {})
        return JSONResponse({"results": results})

    async def vuln(self, request: Request) -> JSONResponse:
        self._record(request)
        vid = request.path_params["vid"]
        for (kind, _), package in self.packages.items():
            for a in package.get("advisories", []):
                if a["id"] == vid:
                    return JSONResponse({
                        "schema_version": "1.6.0", "id": vid, "modified": "2026-10-01T00:00:00Z",
                        "published": "2026-09-20T00:00:00Z", "aliases": [f"CVE-2026-{abs(hash(vid)) % 90000 + 10000}"],
                        "summary": a.get("summary", "A fleet advisory"), "details": "Loopback fixture.",
                        "severity": [{"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:N"}],
                        "affected": [{"package": {"ecosystem": ECOSYSTEM[kind], "name": package["identifier"],
                                                  "purl": f"pkg:{kind}/{package['identifier']}"},
                                      "ranges": [{"type": "SEMVER" if kind == "npm" else "ECOSYSTEM",
                                                  "events": [{"introduced": a.get("introduced", "0")},
                                                             {"fixed": a["fixed"]}]}],
                                      "database_specific": {"source": "fleet"}}],
                        "database_specific": {"severity": a.get("severity", "MODERATE"), "cwe_ids": ["CWE-79"],
                                              "github_reviewed": True}})
        return JSONResponse({"code": 5, "message": "Bug not found."}, status_code=404)

    def _latest(self, kind: str, name: str) -> dict[str, Any] | None:
        return self.packages.get((kind, name.lower()))

    async def npm(self, request: Request) -> JSONResponse:
        self._record(request)
        name = request.path_params["name"].replace("%2F", "/").replace("%2f", "/")
        package = self._latest("npm", name)
        if package is None:
            return JSONResponse({"error": "Not found"}, status_code=404)
        latest = package.get("latest", package["version"])
        versions = sorted({package["version"], latest}, key=_version_key)
        return JSONResponse({"_id": package["identifier"], "name": package["identifier"],
                             "dist-tags": {"latest": latest},
                             "versions": {v: {"name": package["identifier"], "version": v} for v in versions},
                             "time": {"created": "2025-01-01T00:00:00.000Z", **{v: "2026-08-01T00:00:00.000Z"
                                                                                 for v in versions}}})

    async def pypi(self, request: Request) -> JSONResponse:
        self._record(request)
        package = self._latest("pypi", request.path_params["name"])
        if package is None:
            return JSONResponse({"message": "Not Found"}, status_code=404)
        latest = package.get("latest", package["version"])
        return JSONResponse({"info": {"name": package["identifier"], "version": latest, "summary": "fleet"},
                             "releases": {v: [{"upload_time_iso_8601": "2026-08-01T00:00:00.000000Z",
                                               "packagetype": "sdist"}] for v in {package["version"], latest}}})

    async def bootstrap(self, request: Request) -> JSONResponse:
        self._record(request)
        return JSONResponse({"description": "RDAP bootstrap file for Domain Name System registrations",
                             "publication": "2026-11-01T00:00:00Z", "version": "1.0",
                             "services": [[["test", "invalid"], [f"{self.base}/rdap/"]]]})

    async def domain(self, request: Request) -> JSONResponse:
        self._record(request)
        name = request.path_params["name"].lower()
        registered = self.domains.get(name)
        if registered is None:
            return JSONResponse({"errorCode": 404, "title": "Not Found", "rdapConformance": ["rdap_level_0"]},
                                status_code=404, media_type="application/rdap+json")
        return JSONResponse({"objectClassName": "domain", "ldhName": name.upper(), "handle": f"D-{name}",
                             "rdapConformance": ["rdap_level_0", "icann_rdap_response_profile_0"],
                             "status": ["client transfer prohibited"],
                             "events": [{"eventAction": "registration", "eventDate": registered},
                                        {"eventAction": "expiration", "eventDate": "2030-05-01T00:00:00Z"},
                                        {"eventAction": "last update of RDAP database",
                                         "eventDate": "2026-11-30T00:00:00Z"}]},
                            media_type="application/rdap+json")
