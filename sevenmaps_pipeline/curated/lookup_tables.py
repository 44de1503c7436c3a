"""The outside lookups of a day (docs/methodology.md, "Package advisories", "Domain age"): the advisories
of the packages the registry ships (sql/package_advisories.sql) and the age of the map's registrable
domains (sql/domain_ages.sql), from raw/packages and raw/domains (lookups/daily.py)."""

from __future__ import annotations

import datetime as dt
import time

import pyarrow as pa
import pyarrow.compute as pc

from ..lake import duck
from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths
from ..lake.schemas import DOMAIN_AGES, PACKAGE_ADVISORIES, RAW_DOMAINS, RAW_PACKAGES, conform
from ..rules.methods import ADVISORIES_METHOD, DOMAIN_AGE_METHOD, DOMAIN_AGE_PARAMS
from ..rules.psl import domain_of_url
from .common import BuildResult, days_back, require_status


def build_package_advisories(lake: LakePaths, day: dt.date) -> BuildResult:
    started = time.perf_counter()
    with duck.session() as con:
        duck.bind_input(con, "raw_packages", lake.raw_files("packages", day), RAW_PACKAGES.schema)
        table = conform(duck.run_sql(con, "package_advisories", {"day": day, "method_version": ADVISORIES_METHOD}),
                        PACKAGE_ADVISORIES)
    path = write_parquet(lake, lake.curated_file("package_advisories", day), table)
    with_advisories = sum(1 for n in table.column("advisories").to_pylist() if n)
    return BuildResult("package_advisories", day, path, table.num_rows, time.perf_counter() - started,
                       {"with_advisories": with_advisories})


def build_domain_ages(lake: LakePaths, day: dt.date) -> BuildResult:
    started = time.perf_counter()
    require_status(lake, day)
    with duck.session() as con:
        status = con.sql("SELECT server_key, url FROM read_parquet($f)",
                         params={"f": str(lake.curated_file("daily_status", day))}).to_arrow_table()
    keys = status.column("server_key").to_pylist()
    domains = [domain_of_url(url or f"https://{key}")
               for key, url in zip(keys, status.column("url").to_pylist(), strict=True)]
    pairs = pa.table({"server_key": pa.array(keys, pa.string()), "domain": pa.array(domains, pa.string())})
    table = domain_ages_of(lake, day, pairs.filter(pc.is_valid(pairs.column("domain"))))
    path = write_parquet(lake, lake.curated_file("domain_ages", day), table)
    young = sum(1 for y in table.column("young").to_pylist() if y)
    return BuildResult("domain_ages", day, path, table.num_rows, time.perf_counter() - started, {"young": young})


def domain_ages_of(lake: LakePaths, day: dt.date, map_domains: pa.Table) -> pa.Table:
    """sql/domain_ages.sql over `map_domains` (server_key, domain: its ASCII form, rules/psl.py domain_of_url) and
    the raw/domains lookups of the refresh window."""
    refresh = DOMAIN_AGE_PARAMS["refresh_days"]
    files = [f for d in days_back(day, refresh - 1) for f in lake.raw_files("domains", d)]
    with duck.session() as con:
        con.register("map_domains", map_domains)
        duck.bind_input(con, "raw_domains", files, RAW_DOMAINS.schema)
        return conform(duck.run_sql(con, "domain_ages", {
            "day": day, "refresh_days": refresh, "young_days": DOMAIN_AGE_PARAMS["young_days"],
            "method_version": DOMAIN_AGE_METHOD}), DOMAIN_AGES)
