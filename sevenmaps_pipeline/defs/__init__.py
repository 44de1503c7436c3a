"""The Dagster layer: thin assets, checks, jobs and schedules over the library."""
