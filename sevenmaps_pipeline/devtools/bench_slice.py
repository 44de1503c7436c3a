"""One hour of the simulated registry (docs/scaling.md, "The registry at truth"): the hourly slice's scan, the
readiness probe that follows it and the daily lookups, each timed against the same fleet, with their sum.

- The slice is the day's first (it takes the registry snapshot, and no origin's robots.txt is cached yet):
  `scan_day` over the endpoints whose slot is that hour (probe/slices.py), about a 24th of the registry, in
  a lake of its own; its endpoints are checked against their intended outcomes too.
- Readiness runs as after the day's first slice: over the slice's endpoints, in the slice's lake (the robots.txt
  of the slice's origins already there, no document of the day read yet: the day's first readiness run asks
  every origin and domain it meets, later ones only those no earlier run met), with the fleet's code host.
- The lookups run a steady day: every domain was last looked up on one of the 30 days before (landed here
  untimed, a 30th each day), so those whose 30 days have run out are asked again, and every package is
  looked up, at the clients' own spacing (lookups/spaced.py). A cold day (every domain asked) is given as
  the spacing's bound, not measured.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths
from ..lake.schemas import RAW_DOMAINS, conform
from ..lookups.codehost import CodeHostClient
from ..lookups.daily import lookup_day
from ..lookups.osv import LookupClient
from ..lookups.rdap import RdapClient
from ..probe.config import ProbeConfig
from ..probe.run import ReplayClock, readiness_day, scan_day
from ..probe.slices import slot_hour
from ..rules.methods import DOMAIN_AGE_PARAMS
from ..rules.psl import domain_of_url
from .bench_truth import Intent, recorded, truth, wrong_examples

SLICE_HOUR = 0  # the day's first slice
SLICE_GOAL_SECONDS = 600.0  # the slice, readiness and the lookups together, within their hour with room


def registry_domains(lake: LakePaths, day: dt.date) -> list[str]:
    rows = pq.read_table(lake.registry_file(day), columns=["listing", "url"]).to_pylist()
    return sorted({d for r in rows if r["listing"] == "probe" and r["url"]
                   for d in [domain_of_url(r["url"])] if d})


def land_domain_ages(lake: LakePaths, day: dt.date, domains: list[str]) -> int:
    """Each domain looked up (ok) on one of the `refresh_days` days before `day`, a share each day by a hash of
    its name; those whose lookup was `refresh_days` ago are due today. Returns how many are due."""
    refresh = DOMAIN_AGE_PARAMS["refresh_days"]
    by_age: dict[int, list[str]] = {}
    for domain in domains:
        age = 1 + int.from_bytes(hashlib.sha256(domain.encode()).digest()[:4], "big") % refresh
        by_age.setdefault(age, []).append(domain)
    for age, names in by_age.items():
        if age >= refresh:
            continue
        then = day - dt.timedelta(days=age)
        at = dt.datetime.combine(then, dt.time(6), dt.UTC)
        rows = [{"day": then, "looked_up_at": at, "domain": d, "registered_at": dt.datetime(2019, 5, 1, tzinfo=dt.UTC),
                 "status": "ok", "rdap_url": None} for d in names]
        write_parquet(lake, lake.raw_dir("domains", then) / "bench-ages.parquet",
                      conform(pa.Table.from_pylist(rows, RAW_DOMAINS.schema), RAW_DOMAINS))
    return len(by_age.get(refresh, []))


def run_hour(info: dict[str, Any], whole: LakePaths, day: dt.date, config: ProbeConfig, intents: dict[str, Intent],
             workdir: Path) -> dict[str, Any]:
    """The slice, readiness and the lookups one after another against the running fleet (`info`: its
    INFO file, devtools/fleet/serve.py); `whole` is the lake of the day's whole scan."""
    sliced = LakePaths.at(workdir / "slice-lake")
    started = time.perf_counter()
    scan = scan_day(sliced, day, info["registry_url"], config, ReplayClock(day, SLICE_HOUR), hours=(SLICE_HOUR,))
    slice_seconds = time.perf_counter() - started
    keys = [k for k in intents if slot_hour(k, day) == SLICE_HOUR]
    slice_truth = truth(intents, recorded(sliced, day), keys)
    slice_truth["wrong_examples"] = wrong_examples(sliced, day, slice_truth["wrong_keys"])

    started = time.perf_counter()
    with CodeHostClient(base_url=info["codehost_url"]) as codehost:
        ready = readiness_day(sliced, day, config, ReplayClock(day, SLICE_HOUR), codehost, through_hour=SLICE_HOUR)
    readiness_seconds = time.perf_counter() - started

    domains = registry_domains(whole, day)
    due = land_domain_ages(whole, day, domains)
    urls = info["lookup_urls"]
    started = time.perf_counter()
    with LookupClient(urls["osv_url"], urls["npm_url"], urls["pypi_url"]) as packages, \
            RdapClient(urls["rdap_bootstrap_url"]) as rdap:
        looked = lookup_day(whole, day, ReplayClock(day, 6)(), packages, rdap)
        spacing = packages.min_interval, rdap.min_interval
    lookups_seconds = time.perf_counter() - started
    total = slice_seconds + readiness_seconds + lookups_seconds
    return {
        "hour": SLICE_HOUR, "endpoints": len(keys), "scan_seconds": slice_seconds, "scan_outcomes": scan.outcomes,
        "truth": slice_truth, "readiness_seconds": readiness_seconds, "readiness_checks": ready.checks,
        "readiness_documents": ready.surfaces, "readiness_outcomes": dict(sorted(ready.outcomes.items())),
        "lookups_seconds": lookups_seconds, "packages": looked.packages, "domains": len(domains),
        "domains_due": due, "domains_asked": looked.domains_asked,
        "package_spacing_seconds": spacing[0], "rdap_spacing_seconds": spacing[1],
        "cold_rdap_seconds": len(domains) * spacing[1],
        "total_seconds": total, "goal_seconds": SLICE_GOAL_SECONDS,
    }


def hour_lines(s: dict[str, Any], registry_endpoints: int) -> list[str]:
    lines = [f"  one hourly slice (hour {s['hour']:02d}, the day's first: {s['endpoints']:,} of "
             f"{registry_endpoints:,} endpoints) with readiness and the lookups at this registry's scale:",
             f"    slice scan                            {s['scan_seconds']:8.1f} s",
             f"    readiness of the slice's endpoints    {s['readiness_seconds']:8.1f} s   ({s['readiness_checks']:,} "
             f"checks, {s['readiness_documents']:,} documents)",
             f"    daily lookups, a steady day           {s['lookups_seconds']:8.1f} s   ({s['packages']:,} packages "
             f"at {s['package_spacing_seconds']} s apart; {s['domains_asked']:,} of {s['domains']:,} domains "
             f"due, at {s['rdap_spacing_seconds']} s apart; a cold day's RDAP alone: {s['cold_rdap_seconds']:,.0f} s)",
             f"    the three together                    {s['total_seconds']:8.1f} s   (goal at 25,000 endpoints: "
             f"<= {s['goal_seconds']:.0f} s)"]
    return lines
