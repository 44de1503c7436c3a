"""The day's outside lookups (docs/methodology.md, "Package advisories", "Domain age"), landed as raw
inputs of the day's tables (covered by its root):

- `raw/packages`: every npm and PyPI package the day's registry entries ship (`packages[]`), its public
  metadata and the shipped version against OSV, once a day;
- `raw/domains`: the RDAP registration date of each registrable domain of the endpoints listed that day,
  refreshed rarely (`DOMAIN_AGE_PARAMS["refresh_days"]`): a domain with an answer that recent, or a failed
  lookup since yesterday, is not asked again. The server itself is never contacted.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths, registry_in_force
from ..lake.schemas import RAW_DOMAINS, RAW_PACKAGES, conform
from ..rules.methods import DOMAIN_AGE_PARAMS
from ..rules.psl import domain_of_url
from .osv import ECOSYSTEMS, LookupClient, PackageLookup
from .rdap import DomainRecord, RdapClient

MAX_PACKAGES = 20_000  # package versions asked a day; those past it have their rows, "not asked" (advisories-1.3)
MAX_PACKAGES_PER_ENTRY = 50  # an entry's package versions asked, in its order: no entry can crowd out the others'
MAX_DOMAINS = 20_000  # domains asked a day, of those with no fresh lookup: the rest wait for a later day
MAX_NAME = 214  # npm's longest package name
# The names a registry may hold, so that a name is only ever one path segment of ours: npm's (a scope, then a
# name; no leading dot or underscore; URL-safe; upper case only in old names) and PyPI's (PEP 508). A name that is
# not one gets its row, with the reason, and is never asked about.
_VALID_NAME = {"npm": re.compile(r"(?i)(?:@[a-z0-9~-][a-z0-9._~-]*/)?[a-z0-9~-][a-z0-9._~-]*"),
               "pypi": re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")}


@dataclass
class LookupDay:
    day: dt.date
    packages: int = 0  # rows landed: one per package and version listed (advisories-1.2)
    with_advisories: int = 0
    packages_not_asked: int = 0  # rows whose version was never asked about: an invalid name, past a limit
    entries_unreadable: int = 0  # listings whose entry_json is no JSON (cut at the client's bound): no packages read
    domains_asked: int = 0
    domains_cached: int = 0
    domains_waiting: int = 0  # due but past the day's MAX_DOMAINS: asked on a later day
    seconds: float = 0.0


def shipped_packages(rows: list[dict[str, Any]],
                     unreadable: list[str] | None = None) -> dict[tuple[str, str, str | None], dict[str, Any]]:
    """(registry_type, name, version) -> the entries shipping that version of the package (`server_names`), and
    `passed_over`: whether every entry listing it lists it past its first MAX_PACKAGES_PER_ENTRY package versions.
    Every version listed is checked for itself, so no entry can hide another's version behind its own
    (advisories-1.2; None: no version given, the latest is checked); an entry listing thousands cannot crowd out
    the others' (advisories-1.3). In (registry_type, name, version) order."""
    found: dict[tuple[str, str, str | None], dict[str, Any]] = {}
    for row in rows:
        listed: set[tuple[str, str, str | None]] = set()
        try:
            entry = json.loads(row.get("entry_json") or "null")
        except (ValueError, RecursionError):  # cut at the registry client's bound, or never JSON: counted
            if unreadable is not None:
                unreadable.append(str(row.get("server_name") or row.get("url") or "?"))
            continue
        server = entry.get("server") if isinstance(entry, dict) and isinstance(entry.get("server"), dict) else entry
        packages = server.get("packages") if isinstance(server, dict) else None
        for package in packages if isinstance(packages, list) else []:
            if not isinstance(package, dict):
                continue
            kind = str(package.get("registryType") or package.get("registry_type") or "").lower()
            name = package.get("identifier") or package.get("name")
            if kind not in ECOSYSTEMS or not isinstance(name, str) or not name.strip():
                continue
            version = package.get("version")
            version = version.strip()[:100] if isinstance(version, str) and version.strip() not in ("", "latest") \
                else None
            # Cut one past the longest name, so that a longer one stays invalid (valid_name) and is stored bounded.
            key = (kind, name.strip()[:MAX_NAME + 1], version)
            listed.add(key)
            item = found.setdefault(key, {"server_names": set(), "passed_over": True})
            item["passed_over"] = item["passed_over"] and len(listed) > MAX_PACKAGES_PER_ENTRY
            if row.get("server_name"):
                item["server_names"].add(row["server_name"])
    return dict(sorted(found.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or "")))


def valid_name(registry_type: str, name: str) -> bool:
    return len(name) <= MAX_NAME and _VALID_NAME[registry_type].fullmatch(name) is not None


def _not_asked(lookup: PackageLookup, passed_over: bool) -> str | None:
    """Why a package version listed is never asked about; None: it may be."""
    if not valid_name(lookup.registry_type, lookup.package):
        return f"not a valid {lookup.registry_type} package name"
    if passed_over:
        return f"each entry listing it lists more than {MAX_PACKAGES_PER_ENTRY} package versions before it"
    return None


def _todays_turn(eligible: list[PackageLookup], day: dt.date) -> list[PackageLookup]:
    """At most MAX_PACKAGES of them, a window that moves with the day over their (type, name, version) order, so
    that when more are listed each is asked in turn (advisories-1.3: a fixed first 20,000 would leave the same
    ones, PyPI's after npm's, unasked every day); the rest say so."""
    if len(eligible) <= MAX_PACKAGES:
        return eligible
    start = day.toordinal() * MAX_PACKAGES % len(eligible)
    turn = {id(lk) for lk in (eligible[start:] + eligible[:start])[:MAX_PACKAGES]}
    for lookup in eligible:
        if id(lookup) not in turn:
            lookup.metadata_status = lookup.osv_status = (
                f"not asked: past the day's limit of {MAX_PACKAGES:,} package versions (each is asked in turn)")
    return [lk for lk in eligible if id(lk) in turn]


def _recent_domains(lake: LakePaths, day: dt.date) -> tuple[dict[str, str], dict[str, dt.date]]:
    """(domain -> status of its latest lookup still fresh: ok within refresh_days, a failure since yesterday;
    domain -> the day it was last asked, within refresh_days)."""
    fresh: dict[str, str] = {}
    asked: dict[str, dt.date] = {}
    for back in range(0, DOMAIN_AGE_PARAMS["refresh_days"]):
        for path in lake.raw_files("domains", day - dt.timedelta(days=back)):
            try:
                table = pq.read_table(path, columns=["domain", "status"]).to_pylist()
            except Exception:  # noqa: BLE001 - an unreadable batch: those domains are asked again
                continue
            for row in table:
                asked.setdefault(row["domain"], day - dt.timedelta(days=back))
                if row["domain"] not in fresh and (row["status"] == "ok" or back <= 1):
                    fresh[row["domain"]] = row["status"]
    return fresh, asked


def lookup_day(lake: LakePaths, day: dt.date, now: dt.datetime, packages: LookupClient, rdap: RdapClient,
               registry_rows: list[dict[str, Any]] | None = None) -> LookupDay:
    started = time.perf_counter()
    report = LookupDay(day)
    if registry_rows is None:
        registry = registry_in_force(lake, day)
        registry_rows = pq.read_table(registry).to_pylist() if registry is not None else []
    run_id = f"lookups-{now:%H%M%S}-{uuid.uuid4().hex[:8]}"
    domains = sorted({d for r in registry_rows if r.get("listing") == "probe" and r.get("url")
                      for d in [domain_of_url(r["url"])] if d})
    recent, last_asked = _recent_domains(lake, day)
    report.domains_cached = sum(d in recent for d in domains)
    # The day's limit is taken of the domains due (domain-age-1.3), those asked longest ago first (never asked
    # first of all): those asked are fresh for 30 days (a failure for a day), so the next day's due are the ones
    # waiting, and domains that keep failing never hold the others back. Under 1.2, domains past the first 20,000
    # in name order never were.
    due = sorted((d for d in domains if d not in recent), key=lambda d: (last_asked.get(d, dt.date.min), d))
    report.domains_waiting = max(0, len(due) - MAX_DOMAINS)
    due = due[:MAX_DOMAINS]
    unreadable: list[str] = []
    shipped = shipped_packages(registry_rows, unreadable)
    report.entries_unreadable = len(unreadable)
    lookups = [(PackageLookup(kind, name, version), sorted(info["server_names"]))
               for (kind, name, version), info in shipped.items()]
    eligible: list[PackageLookup] = []
    for (lookup, _), info in zip(lookups, shipped.values(), strict=True):
        why = _not_asked(lookup, info["passed_over"])
        if why is None:
            eligible.append(lookup)
        else:
            lookup.metadata_status = lookup.osv_status = f"not asked: {why}"
    askable = _todays_turn(eligible, day)
    report.packages_not_asked = len(lookups) - len(askable)
    # Each service keeps its own turn (lookups/spaced.py): npm's and PyPI's metadata and RDAP are asked side by
    # side, each at its own spacing, and OSV once the versions are known (docs/methodology.md, "Package
    # advisories"). The rows keep the order of the names, whichever answered first.
    by_registry: dict[str, list[PackageLookup]] = {}
    for lookup in askable:
        by_registry.setdefault(lookup.registry_type, []).append(lookup)
    with ThreadPoolExecutor(len(by_registry) + 1, thread_name_prefix="lookups") as pool:
        asking = pool.submit(_ask_domains, rdap, due, day, now)
        for done in [pool.submit(_ask_metadata, packages, group) for group in by_registry.values()]:
            done.result()
        _ask_advisories(packages, askable)
        # The packages' rows land before the domains are waited for: a slow RDAP service holds up only its own.
        _land_packages(lake, day, now, run_id, lookups, report)
        asked = asking.result()
    if asked:
        write_parquet(lake, lake.raw_dir("domains", day) / f"{run_id}.parquet",
                      conform(pa.Table.from_pylist(asked, RAW_DOMAINS.schema), RAW_DOMAINS))
    report.domains_asked = len(asked)
    report.seconds = time.perf_counter() - started
    return report


def _land_packages(lake: LakePaths, day: dt.date, now: dt.datetime, run_id: str,
                   lookups: list[tuple[PackageLookup, list[str]]], report: LookupDay) -> None:
    rows = [{"day": day, "looked_up_at": now, "registry_type": lk.registry_type, "package": lk.package,
             "version": lk.version, "server_names": names, "latest_version": lk.latest_version,
             "latest_published_at": lk.latest_published_at, "metadata_status": lk.metadata_status[:300],
             "osv_status": lk.osv_status[:300], "checked_version": lk.version or lk.latest_version,
             "advisory_ids": [a.id for a in lk.advisories],
             "advisories_json": json.dumps([a.__dict__ for a in lk.advisories])} for lk, names in lookups]
    if rows:
        write_parquet(lake, lake.raw_dir("packages", day) / f"{run_id}.parquet",
                      conform(pa.Table.from_pylist(rows, RAW_PACKAGES.schema), RAW_PACKAGES))
    report.packages, report.with_advisories = len(rows), sum(bool(r["advisory_ids"]) for r in rows)


# Nothing one package or domain brings may take the day's other rows down: the clients answer every odd answer
# with a reason, and a fault they did not foresee becomes that one row's reason (docs/methodology.md).
def _ask_metadata(packages: LookupClient, lookups: list[PackageLookup]) -> None:
    answered: dict[tuple[str, str], PackageLookup] = {}  # a package's metadata is asked once, whatever versions
    for lookup in lookups:
        known = answered.get((lookup.registry_type, lookup.package))
        if known is not None:
            lookup.latest_version, lookup.latest_published_at = known.latest_version, known.latest_published_at
            lookup.metadata_status = known.metadata_status
            continue
        try:
            packages.metadata(lookup)
        except Exception as exc:  # noqa: BLE001 - one package's fault is its row's reason
            lookup.metadata_status = f"lookup failed ({type(exc).__name__})"
        answered[(lookup.registry_type, lookup.package)] = lookup


def _ask_advisories(packages: LookupClient, lookups: list[PackageLookup]) -> None:
    try:
        packages.advisories(lookups)
    except Exception as exc:  # noqa: BLE001 - the batch's fault is every row's reason, none of them lost
        for lookup in lookups:
            lookup.osv_status, lookup.advisories = f"osv: lookup failed ({type(exc).__name__})", []


def _ask_domains(rdap: RdapClient, domains: list[str], day: dt.date, now: dt.datetime) -> list[dict[str, Any]]:
    asked = []
    for domain in domains:
        try:
            record = rdap.domain(domain)
        except Exception as exc:  # noqa: BLE001 - one domain's fault is its row's reason
            record = DomainRecord(domain, None, f"lookup failed ({type(exc).__name__})")
        asked.append({"day": day, "looked_up_at": now, "domain": domain, "registered_at": record.registered_at,
                      "status": record.status[:300], "rdap_url": record.rdap_url})
    return asked
