"""The partitioning of the map: UTC days. The scan and the curated tables are offered the open day; the
signed root has only finished days (a day is signed only after it has ended), so no backfill can ever
ask it to sign the open day."""

import os

import dagster as dg

PARTITIONS_START = os.environ.get("SEVENMAPS_PARTITIONS_START", "2025-09-01")

daily_partitions = dg.DailyPartitionsDefinition(start_date=PARTITIONS_START, timezone="UTC", end_offset=1)
finished_days = dg.DailyPartitionsDefinition(start_date=PARTITIONS_START, timezone="UTC", end_offset=0)

# History and lookback windows: the day and the 29 before it.
last_30_days = dg.TimeWindowPartitionMapping(start_offset=-29, end_offset=0)
# Change records look back 60 days for a baseline, and histories keep 60 days of change days.
last_60_days = dg.TimeWindowPartitionMapping(start_offset=-59, end_offset=0)
# Incidents read two weeks of reports and checks.
last_14_days = dg.TimeWindowPartitionMapping(start_offset=-13, end_offset=0)
