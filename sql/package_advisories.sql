-- package_advisories: one row per npm or PyPI package and version the day's registry entries ship, on day $day
-- (a version null where an entry names none: the latest is checked).
-- Inputs:
--   raw_packages  raw/packages of $day (lookups/daily.py: public metadata, then OSV for the shipped version)
-- Method ($method_version, docs/methodology.md "Package advisories"):
--   * the day's latest lookup of each package and version decides (advisories-1.2: each version listed is
--     checked for itself);
--   * advisories is null when OSV's answer is unseen (lookup_status says why), 0 when OSV lists none;
--   * max_severity: the highest of CRITICAL, HIGH, MODERATE, LOW among them (GHSA's labels); a CVSS vector
--     when that is all an advisory gives; fixed_versions: every version that fixes at least one of them.
WITH latest AS (
    SELECT *, from_json(coalesce(advisories_json, '[]'),
                        '[{"id": "VARCHAR", "severity": "VARCHAR", "fixed": ["VARCHAR"]}]') AS parsed
    FROM raw_packages
    WHERE day = $day::DATE
    QUALIFY row_number() OVER (PARTITION BY registry_type, package, version
                               ORDER BY looked_up_at DESC, source_file DESC) = 1
),
ranked AS (
    SELECT *, list_max(list_transform(parsed, lambda x: CASE upper(x.severity) WHEN 'CRITICAL' THEN 4 WHEN 'HIGH' THEN 3
                                                  WHEN 'MODERATE' THEN 2 WHEN 'MEDIUM' THEN 2 WHEN 'LOW' THEN 1
                                                  ELSE 0 END)) AS top
    FROM latest
)
SELECT
    $day::DATE AS day,
    registry_type,
    package,
    version,
    checked_version,
    latest_version,
    server_names,
    CASE WHEN osv_status = 'ok' THEN coalesce(len(advisory_ids), 0) END::INTEGER AS advisories,
    advisory_ids,
    list_transform(parsed, lambda x: coalesce(x.severity, 'unknown')) AS severities,
    list_sort(list_distinct(flatten(list_transform(parsed, lambda x: coalesce(x.fixed, []::VARCHAR[]))))) AS fixed_versions,
    CASE top WHEN 4 THEN 'CRITICAL' WHEN 3 THEN 'HIGH' WHEN 2 THEN 'MODERATE' WHEN 1 THEN 'LOW'
             ELSE list_max(list_transform(parsed, lambda x: x.severity)) END AS max_severity,
    CASE WHEN osv_status = 'ok' AND metadata_status = 'ok' THEN 'ok'
         WHEN osv_status = 'ok' THEN 'metadata: ' || metadata_status
         ELSE osv_status END AS lookup_status,
    $method_version AS method_version
FROM ranked
ORDER BY registry_type, package, version NULLS FIRST
