"""Builds each curated table for one UTC day: bind the inputs, run `sql/<table>.sql`, write one file.

Plain library code (no Dagster): the assets in `defs/` call these, and so do tests and benchmarks.
"""

from .common import BuildResult, probe_files, registry_in_force
from .lookup_tables import build_domain_ages, build_package_advisories
from .map_tables import build_daily_status, build_failure_reasons, build_quarantine, build_server_history
from .readiness_tables import build_readiness_discovery, build_readiness_lines, build_readiness_scores
from .report_tables import build_agent_reports, build_incidents, build_rating_aggregates, build_reliable_rankings
from .tool_facts import build_tool_facts
from .tool_tables import (
    build_findings,
    build_server_categories,
    build_token_cost,
    build_tool_changes,
    build_tools,
    changes_method,
)

__all__ = [
    "BuildResult", "build_agent_reports", "build_daily_status", "build_domain_ages", "build_failure_reasons",
    "build_package_advisories", "build_findings", "build_incidents",
    "build_quarantine", "build_rating_aggregates", "build_readiness_discovery", "build_readiness_lines",
    "build_readiness_scores", "build_reliable_rankings", "build_server_categories",
    "build_server_history", "build_token_cost", "build_tool_changes", "build_tool_facts", "build_tools",
    "changes_method", "probe_files", "registry_in_force",
]
