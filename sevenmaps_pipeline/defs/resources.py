"""Where the lake and the signing key are; configurable per deployment (env vars or run config)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import dagster as dg
from pydantic import Field

from ..integrity.keys import default_key_path
from ..lake.paths import LakePaths, default_lake_root


class LakeResource(dg.ConfigurableResource):
    """The Parquet lake root and the Ed25519 signing key used for daily roots."""

    root: str = Field(default="", description="Lake root. Empty: $SEVENMAPS_LAKE, else ./data_lake.")
    signing_key: str = Field(default="", description="Private key (PEM, mode 0600, outside the lake). "
                             "Empty: $SEVENMAPS_SIGNING_KEY, else ./.secrets/7maps-signing-key.pem.")

    @property
    def paths(self) -> LakePaths:
        return LakePaths.at(self.root or default_lake_root())

    @property
    def key_path(self) -> Path:
        return Path(self.signing_key).resolve() if self.signing_key else default_key_path()


def partition_days(context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext) -> list[dt.date]:
    """The UTC days of this run: one for a single partition, several for a single-run backfill."""
    return [dt.date.fromisoformat(k) for k in context.partition_keys]
