"""Where the lake and the signing key are; configurable per deployment (env vars or run config)."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import dagster as dg
from pydantic import Field

from ..integrity.keys import SigningKeyError, default_key_path, load_private_key, read_published_key
from ..integrity.witness import WitnessConfig
from ..lake.paths import LakePaths, default_lake_root
from ..lookups.codehost import CodeHostClient
from ..lookups.osv import LookupClient
from ..lookups.rdap import RdapClient
from ..probe.config import ProbeConfig
from ..probe.run import ReplayClock, utc_now
from ..registry.most_used import DIRECTORY_LISTS_ENV, read_directory_lists
from ..registry.skills_list import SKILLS_LIST_ENV, SkillsList, read_skills_list
from .home import bound_lake

LAKE_TAG = "sevenmaps/lake"


class LakeResource(dg.ConfigurableResource):
    """The Parquet lake root and the Ed25519 signing key used for daily roots."""

    root: str = Field(default="", description="Lake root. Empty: $SEVENMAPS_LAKE, else ./data_lake.")
    signing_key: str = Field(default="", description="Private key (PEM, mode 0600, outside the lake). "
                             "Empty: $SEVENMAPS_SIGNING_KEY, else ./.secrets/7maps-signing-key.pem.")

    @property
    def paths(self) -> LakePaths:
        return LakePaths.at(self.root or default_lake_root())

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        """Refuse a lake that is not the Dagster home's own (docs/operations.md, "Dagster homes"), and
        record the lake on the run (tag `sevenmaps/lake`) however the run was launched."""
        instance, run = context.instance, context.dagster_run
        if instance is None:
            return
        root = self.paths.root
        home = getattr(instance, "root_directory", None)
        owner = bound_lake(Path(home)) if home else None
        if owner is not None and owner != root:
            raise dg.Failure(description=f"this Dagster home ({home}) belongs to the lake {owner}, and the run "
                             f"was given the lake {root}: refused, so one lake's runs never paint another's "
                             "assets. Run it with that lake's own home (unset DAGSTER_HOME).")
        if run is not None and run.tags.get(LAKE_TAG) != str(root):
            instance.add_run_tags(run.run_id, {LAKE_TAG: str(root)})

    witnesses: list[str] = Field(default_factory=list, description="Witnesses asked to cosign each new "
                                 "checkpoint, each '<vkey> <url>' (tlog-witness add-checkpoint). Empty: "
                                 "$SEVENMAPS_WITNESSES (one per line), else none.")

    @property
    def key_path(self) -> Path:
        return Path(self.signing_key).resolve() if self.signing_key else default_key_path()

    def public_key(self):
        """The signing key's public half (the key this deployment signs with), else the published one."""
        try:
            return load_private_key(self.key_path, self.paths).public_key()
        except SigningKeyError:
            return read_published_key(self.paths)

    def witness_configs(self):


        entries = self.witnesses or [w for w in os.environ.get("SEVENMAPS_WITNESSES", "").splitlines() if w.strip()]
        return [WitnessConfig.parse(w) for w in entries]


def partition_days(context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext) -> list[dt.date]:
    """The UTC days of this run: one for a single partition, several for a single-run backfill."""
    return [dt.date.fromisoformat(k) for k in context.partition_keys]


SCAN_CONCURRENCY_ENV = "SEVENMAPS_SCAN_CONCURRENCY"


def scan_concurrency() -> int:
    """Endpoints checked at once ($SEVENMAPS_SCAN_CONCURRENCY, default 64; docs/scaling.md: a whole-registry
    scan at once wants 256)."""
    raw = os.environ.get(SCAN_CONCURRENCY_ENV, "").strip() or "64"
    if not raw.isdigit() or not 1 <= int(raw) <= 4096:
        raise ValueError(f"{SCAN_CONCURRENCY_ENV}={raw!r}: the endpoints checked at once must be a whole number "
                         "from 1 to 4096 (each is a different host: one request at a time per host)")
    return int(raw)


SCAN_SHARDS_ENV = "SEVENMAPS_SCAN_SHARDS"
MAX_SCAN_SHARDS = 64


def scan_shards() -> int:
    """Steps a slice's scan is split into, by host ($SEVENMAPS_SCAN_SHARDS, default 1; docs/scaling.md, "The
    scan in shards by host"): with more than one, the slice job runs them side by side under the
    multiprocess executor."""
    raw = os.environ.get(SCAN_SHARDS_ENV, "").strip() or "1"
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_SCAN_SHARDS:
        raise ValueError(f"{SCAN_SHARDS_ENV}={raw!r}: the shards of a slice's scan must be a whole number from 1 to "
                         f"{MAX_SCAN_SHARDS}")
    return int(raw)


class ProberResource(dg.ConfigurableResource):
    """How the daily scan reaches the registry and the endpoints.

    Production sets $SEVENMAPS_REGISTRY_URL to the official registry's base URL. Past days are never
    scanned, so without it `raw_probes` only validates what landed; building the open day without it
    fails, naming the setting, unless `no_scan` ($SEVENMAPS_NO_SCAN=1) says the open day is to be built
    from what landed (synthetic lakes, tests): an all-n open day is never built by accident."""

    registry_url: str = Field(default="", description="Registry base URL ($SEVENMAPS_REGISTRY_URL).")
    no_scan: bool = Field(default=False, description="Build the open day without scanning it "
                          "($SEVENMAPS_NO_SCAN=1); otherwise an open day without a registry URL is an error.")
    control_url: str = Field(default="", description="An MCP endpoint we run: if it fails, the run is voided.")
    concurrency: int = Field(default=64, description="Endpoints checked at once (one request per host), "
                             "shared out among a slice's shards ($SEVENMAPS_SCAN_SHARDS).")
    opted_out_hosts: list[str] = Field(default_factory=list, description="Hosts that opted out by form.")
    readiness: bool = Field(default=True, description="After each slice of the day's scan, probe its endpoints' "
                            "readiness (docs/methodology.md, 'Readiness'); $SEVENMAPS_READINESS=0 turns it off.")
    codehost_url: str = Field(default="", description="The code host's REST API base URL for the readiness "
                              "repository lines. Empty: $SEVENMAPS_CODEHOST_URL, else https://api.github.com. "
                              "A token is read only from $SEVENMAPS_GITHUB_TOKEN.")
    codehost_timeout_seconds: float = Field(default=10.0, description="How long one code-host answer may "
                                            "take as a whole; past it the lookup gives up, naming why (its "
                                            "readiness line is then unseen).")
    skills_list: str = Field(default="", description="The Agent Skills listings: a file of GitHub skill folder "
                             "URLs, one per line. Empty: $SEVENMAPS_SKILLS_LIST, else no skills are read.")
    whole_day_scan: bool = Field(default=False, description="Built on the open day, raw_probes checks every "
                                 "endpoint at once (`sevenmaps run`: a one-off). Otherwise the day is scanned by "
                                 "its 24 hourly slices (probe_slice) and raw_probes validates what they landed.")
    directory_lists: str = Field(default="", description="The directory lists whose endpoints are checked hourly "
                                 "(a file: '[directory] https://URL' per line). Empty: $SEVENMAPS_DIRECTORY_LISTS, "
                                 "else none (the endpoints agents reported on are still checked hourly).")
    submissions_file: str = Field(default="", description="The operator's submissions file (one URL per line), "
                                  "queued by the submission job. Empty: $SEVENMAPS_SUBMISSIONS, else only "
                                  "`sevenmaps submit` queues servers.")
    osv_url: str = Field(default="", description="OSV's API base URL. Empty: $SEVENMAPS_OSV_URL, else "
                         "https://api.osv.dev.")
    npm_url: str = Field(default="", description="The npm registry. Empty: $SEVENMAPS_NPM_URL, else "
                         "https://registry.npmjs.org.")
    pypi_url: str = Field(default="", description="PyPI. Empty: $SEVENMAPS_PYPI_URL, else https://pypi.org.")
    rdap_bootstrap_url: str = Field(default="", description="IANA's RDAP bootstrap file for DNS. Empty: "
                                    "$SEVENMAPS_RDAP_BOOTSTRAP_URL, else https://data.iana.org/rdap/dns.json.")
    # Demo and test configuration only: never set these in production.
    replay_missed_hours: list[int] = Field(default_factory=list, description="Demo/test only: with replay_day, "
                                           "the hours whose slice did not run that day (their endpoints stay n).")
    host_map_json: str = Field(default="", description="Demo/test only: JSON {hostname: loopback port}.")
    ca_file: str = Field(default="", description="Demo/test only: CA bundle of the loopback fleet.")
    replay_day: str = Field(default="", description="Demo/test only: the fleet timeline's day is 'today' "
                            "(YYYY-MM-DD: its 24 slices are replayed in order by raw_probes; YYYY-MM-DDTHH: "
                            "that hour, for one probe_slice run; YYYY-MM-DDTHH:MM: that minute).")

    def probe_config(self):


        return ProbeConfig(
            concurrency=self.concurrency,
            host_map={k: int(v) for k, v in json.loads(self.host_map_json).items()} if self.host_map_json else {},
            ca_file=Path(self.ca_file) if self.ca_file else None,
            opted_out_hosts=frozenset(h.lower() for h in self.opted_out_hosts),
        )

    def skills(self):
        """The skills list's folders and the problems of its refused lines (none without a list)."""


        path = self.skills_list or os.environ.get(SKILLS_LIST_ENV, "")
        return read_skills_list(path) if path else SkillsList((), ())

    def read_directory_lists(self):
        """The operator's directory lists (None without one); ValueError when the file cannot be read."""


        path = self.directory_lists or os.environ.get(DIRECTORY_LISTS_ENV, "")
        return read_directory_lists(path) if path else None

    def package_lookups(self):
        return LookupClient(self.osv_url or None, self.npm_url or None, self.pypi_url or None)

    def rdap(self):
        return RdapClient(self.rdap_bootstrap_url or None)

    def codehost(self):
        if not self.codehost_timeout_seconds > 0:
            raise ValueError(f"codehost_timeout_seconds={self.codehost_timeout_seconds}: an answer's time must be "
                             "above 0 seconds (default 10)")
        return CodeHostClient(self.codehost_url or None, timeout=self.codehost_timeout_seconds)

    def clock(self, hour: int | None = None):
        """Now; with replay_day, the replayed day (at noon, at the replayed hour or minute, or at `hour`)."""
        if not self.replay_day:
            return utc_now
        day, _, at = self.replay_day.partition("T")
        if hour is not None:
            return ReplayClock(dt.date.fromisoformat(day), hour)
        hh, _, mm = at.partition(":")
        return ReplayClock(dt.date.fromisoformat(day), int(hh or 12), int(mm or 0))
