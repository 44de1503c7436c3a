-- naming_listings: one row per endpoint (server_key) of the registry snapshot in force, the listing that names
-- it on every surface (status-1.4; docs/methodology.md, "Its name"): a listing to probe first, then an active
-- one, then one whose namespace is a domain that owns its URL's host (namespace_owns_host: rules/namespace.py,
-- registered by lake/duck.py, the very function probe/scan.py calls), so that a stranger's listing of
-- another's endpoint under a variant URL never names it, then by name, URL and version (nulls last), so never
-- the file's order. A temporary view, not a table:
-- daily_status takes the name, version and URL of its endpoints listed to probe (sql/daily_status.sql
-- `listed`), server_categories the registry text (curated/tool_tables.py listing_text_table); the daily scan
-- and the hourly checks contact an endpoint under the same listing by the same order in Python
-- (probe/scan.py naming_order; tests/test_naming_order_property.py holds the two orders to one listing).
-- Inputs:
--   registry  the registry snapshot in force (raw registry rows; lake/paths.py registry_in_force, bound by
--             curated/common.py bind_registry)
SELECT * EXCLUDE (listings_of_key)
FROM (SELECT *, count(*) OVER (PARTITION BY server_key) AS listings_of_key FROM registry WHERE server_key IS NOT NULL)
-- (the namespace is asked only of an endpoint listed more than once: a Python function, and the rest need none)
QUALIFY row_number() OVER (PARTITION BY server_key
                           ORDER BY listing IS DISTINCT FROM 'probe', status IS DISTINCT FROM 'active',
                                    CASE WHEN listings_of_key > 1 THEN NOT namespace_owns_host(server_name, url)
                                         ELSE false END,
                                    server_name NULLS LAST, url NULLS LAST, server_version NULLS LAST) = 1
