"""The one partitioning of the map: UTC days. The open day is offered (the scan and the curated tables
run on it); only the signed root waits for a day to end."""

import os

import dagster as dg

PARTITIONS_START = os.environ.get("SEVENMAPS_PARTITIONS_START", "2025-09-01")

daily_partitions = dg.DailyPartitionsDefinition(start_date=PARTITIONS_START, timezone="UTC", end_offset=1)

# History and lookback windows: the day and the 29 before it.
last_30_days = dg.TimeWindowPartitionMapping(start_offset=-29, end_offset=0)
