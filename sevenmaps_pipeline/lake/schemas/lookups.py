"""The daily lookups (packages and advisories, domain ages) and why the day's checks failed."""

from __future__ import annotations

import pyarrow as pa

from .spec import UTC_TS, TableSpec, col

RAW_PACKAGES = TableSpec(
    name="packages", layer="raw", location="raw/packages/day=YYYY-MM-DD/<run_id>.parquet",
    grain="one row per npm or PyPI package and version that the day's registry entries ship, as looked up "
    "that day (public metadata, then that version against OSV)", view="raw_packages",
    schema=pa.schema([
        col("day", pa.date32(), "UTC day of the lookup (equals the folder's day=)", False),
        col("looked_up_at", UTC_TS, "when (UTC)", False),
        col("registry_type", pa.string(), "npm | pypi", False),
        col("package", pa.string(), "the package name (identifier)", False),
        col("version", pa.string(), "the version the registry entries ship (null: none given; advisories-1.1 "
            "and before: the highest listed)"),
        col("server_names", pa.list_(pa.string()), "the registry entries that ship that version"),
        col("latest_version", pa.string(), "the package registry's latest version (npm dist-tags.latest, PyPI "
            "info.version)"),
        col("latest_published_at", pa.string(), "when the latest version was published, as the package registry "
            "says"),
        col("metadata_status", pa.string(), "ok, or why the metadata is unseen", False),
        col("osv_status", pa.string(), "ok, or why the advisories are unseen", False),
        col("checked_version", pa.string(), "the version checked against OSV (the listed one, else the latest)"),
        col("advisory_ids", pa.list_(pa.string()), "OSV ids of the advisories affecting that version"),
        col("advisories_json", pa.string(), "per advisory: id, severity, fixed versions, summary (JSON)"),
    ]),
)

RAW_DOMAINS = TableSpec(
    name="domains", layer="raw", location="raw/domains/day=YYYY-MM-DD/<run_id>.parquet",
    grain="one row per RDAP lookup of a registrable domain of the map (refreshed rarely: a domain with a "
    "record younger than the refresh window is not looked up again)", view="raw_domains",
    schema=pa.schema([
        col("day", pa.date32(), "UTC day of the lookup", False),
        col("looked_up_at", UTC_TS, "when (UTC)", False),
        col("domain", pa.string(), "the registrable domain (Public Suffix List), in ASCII (xn--) form since "
            "domain-age-1.2", False),
        col("registered_at", UTC_TS, "the RDAP record's registration event date"),
        col("status", pa.string(), "ok, or why there is no date", False),
        col("rdap_url", pa.string(), "the RDAP URL asked (from IANA's bootstrap)"),
    ]),
)

PACKAGE_ADVISORIES = TableSpec(
    name="package_advisories", layer="curated",
    location="curated/package_advisories/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per package, version and UTC day: the advisories OSV lists for each version the registry "
    "entries ship (advisories-1.2; before, one version per package)",
    view="package_advisories",
    schema=pa.schema([
        col("day", pa.date32(), "UTC day", False),
        col("registry_type", pa.string(), "npm | pypi", False),
        col("package", pa.string(), "the package name", False),
        col("version", pa.string(), "the version the registry entries ship (null: none given)"),
        col("checked_version", pa.string(), "the version checked against OSV"),
        col("latest_version", pa.string(), "the package registry's latest version"),
        col("server_names", pa.list_(pa.string()), "the registry entries that ship that version"),
        col("advisories", pa.int32(), "advisories affecting the checked version (null when unseen)"),
        col("advisory_ids", pa.list_(pa.string()), "their OSV ids"),
        col("severities", pa.list_(pa.string()), "their severities, in the order of advisory_ids"),
        col("fixed_versions", pa.list_(pa.string()), "versions that fix at least one of them"),
        col("max_severity", pa.string(), "CRITICAL | HIGH | MODERATE | LOW | (a CVSS vector) | null"),
        col("lookup_status", pa.string(), "ok, or why the advisories or the metadata are unseen", False),
        col("method_version", pa.string(), "version of the advisory rules", False),
    ]),
)

DOMAIN_AGES = TableSpec(
    name="domain_ages", layer="curated", location="curated/domain_ages/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per registrable domain of the endpoints on the map that UTC day, with its registration date "
    "from RDAP (the latest record within the refresh window)", view="domain_ages",
    schema=pa.schema([
        col("day", pa.date32(), "UTC day", False),
        col("domain", pa.string(), "the registrable domain", False),
        col("endpoints", pa.int32(), "endpoints on the map under it", False),
        col("registered_at", UTC_TS, "registration date (RDAP), null when unseen"),
        col("age_days", pa.int32(), "days from registration to the day"),
        col("young", pa.bool_(), "registered fewer than young_days days before (the route's caution rule); null "
            "when unseen"),
        col("looked_up_on", pa.date32(), "the day of the record used"),
        col("status", pa.string(), "ok, or why the age is unseen (never looked up, or the lookup's reason)", False),
        col("method_version", pa.string(), "version of the domain-age rule", False),
    ]),
)

FAILURE_REASONS = TableSpec(
    name="failure_reasons", layer="curated", location="curated/failure_reasons/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per failure class and UTC day (every class, 0 when none): the day's failed daily checks "
    "(day code d) by the classes the Agent-Ready directory publishes", view="failure_reasons",
    schema=pa.schema([
        col("day", pa.date32(), "UTC day", False),
        col("reason_class", pa.string(), "http_4xx | unreachable | http_5xx | timeout | not_mcp | rate_limited | "
            "refused | redirect", False),
        col("label", pa.string(), "the class in words, as the Agent-Ready directory words it", False),
        col("position", pa.int32(), "the class's place in that list, from 1", False),
        col("failed_checks", pa.int64(), "endpoints whose deciding daily check that day failed this way", False),
        col("share", pa.float64(), "failed_checks / all failed checks of the day (null when none failed)"),
        col("method_version", pa.string(), "version of the failure classes", False),
    ]),
)
