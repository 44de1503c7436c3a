-- naming_listings: one row per endpoint (server_key) of the registry snapshot in force, the listing that names
-- it on every surface (status-1.4; docs/methodology.md, "Its name"): a listing to probe first, then an active
-- one, then one whose reverse-DNS namespace owns its URL's host, then one whose URL is plain (no port, query,
-- fragment, trailing slash or dot: registry/listing.py namespace_owns_host and plain_url, the same patterns),
-- so that a stranger's listing of another's endpoint under a variant URL never names it, then by name, URL
-- and version (nulls last), so never the file's order. A temporary view, not a table:
-- daily_status takes the name, version and URL of its endpoints listed to probe (sql/daily_status.sql
-- `listed`), server_categories the registry text (curated/tool_tables.py listing_text_table); the daily scan
-- and the hourly checks contact an endpoint under the same listing by the same order in Python
-- (probe/scan.py naming_order; tests/test_naming_order_property.py holds the two orders to one listing).
-- Inputs:
--   registry  the registry snapshot in force (raw registry rows; lake/paths.py registry_in_force, bound by
--             curated/common.py bind_registry)
SELECT *
FROM registry
WHERE server_key IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY server_key
                           ORDER BY listing IS DISTINCT FROM 'probe', status IS DISTINCT FROM 'active',
                                    NOT coalesce(regexp_full_match(split_part(server_name, '/', 1), '[A-Za-z0-9.-]+')
                                        AND contains(lower(array_to_string(list_reverse(
                                            string_split(split_part(server_name, '/', 1), '.')), '.')), '.')
                                        AND (lower(regexp_extract(url, '^[Hh][Tt][Tt][Pp][Ss]?://([A-Za-z0-9.-]+)', 1))
                                                 = lower(array_to_string(list_reverse(
                                                     string_split(split_part(server_name, '/', 1), '.')), '.'))
                                             OR ends_with(lower(regexp_extract(
                                                     url, '^[Hh][Tt][Tt][Pp][Ss]?://([A-Za-z0-9.-]+)', 1)),
                                                 '.' || lower(array_to_string(list_reverse(
                                                     string_split(split_part(server_name, '/', 1), '.')), '.')))),
                                        false),
                                    NOT coalesce(regexp_full_match(url, 'https://[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(/[^?#]*[^/?#])?'),
                                        false),
                                    server_name NULLS LAST, url NULLS LAST, server_version NULLS LAST) = 1
