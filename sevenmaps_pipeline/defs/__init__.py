"""The Dagster layer: thin assets, checks, jobs and schedules over the library."""

import warnings

# Single-run backfills (BackfillPolicy.single_run) are a deliberate choice (docs/operations.md, "Runs");
# Dagster's beta notice about them would otherwise print in every run and code server.
warnings.filterwarnings("ignore", message=r"Parameter `backfill_policy` .* is currently in beta")
