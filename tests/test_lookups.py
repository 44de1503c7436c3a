"""The daily outside lookups (docs/methodology.md, "Package advisories", "Domain age"): npm and PyPI metadata
and OSV advisories for the packages registry entries ship, RDAP registration dates for the map's domains,
each through a client with a configurable base URL against loopback fixtures in the real APIs' shapes
(devtools/fleet/lookups_app.py); never the servers themselves. Through Dagster: the lookups job and the
two day tables."""

from __future__ import annotations

import copy
import datetime as dt
import json

import dagster as dg
import pyarrow.parquet as pq
import pytest

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.defs.runner import defs, run_days
from sevenmaps_pipeline.devtools.fleet.run import Fleet, load_timeline
from sevenmaps_pipeline.lake.paths import LakePaths, registry_in_force
from sevenmaps_pipeline.lookups.daily import lookup_day, shipped_packages
from sevenmaps_pipeline.lookups.osv import LookupClient, PackageLookup
from sevenmaps_pipeline.lookups.rdap import RdapClient
from sevenmaps_pipeline.probe.config import ProbeConfig
from sevenmaps_pipeline.probe.run import ReplayClock, scan_day, take_snapshot

TODAY = dt.datetime.now(dt.UTC).date()


@pytest.fixture(scope="module")
def fleet():
    timeline = copy.deepcopy(load_timeline())
    timeline["servers"] = [s for s in timeline["servers"] if s["name"] in ("weather", "notes", "deploy")]
    timeline["extra_listings"], timeline["opted_out_hosts"] = [], []
    with Fleet(timeline=timeline, today=TODAY) as running:
        yield running


def _clients(fleet):
    urls = fleet.lookup_urls()
    return LookupClient(urls["osv_url"], urls["npm_url"], urls["pypi_url"], min_interval=0), \
        RdapClient(urls["rdap_bootstrap_url"], min_interval=0)


def test_the_clients_read_osv_npm_pypi_and_rdap_shapes(fleet):
    packages, rdap = _clients(fleet)
    with packages, rdap:
        weather = PackageLookup("npm", "@fleet/weather-mcp", "1.0.0")
        fixed = PackageLookup("npm", "@fleet/weather-mcp", "1.1.0")
        notes = PackageLookup("pypi", "fleet-notes-mcp", "2.1.0")
        missing = PackageLookup("npm", "no-such-package", None)
        for lookup in (weather, fixed, notes, missing):
            packages.metadata(lookup)
        packages.advisories([weather, fixed, notes, missing])
        assert (weather.latest_version, weather.metadata_status, weather.osv_status) == ("1.2.0", "ok", "ok")
        (advisory,) = weather.advisories
        assert (advisory.id, advisory.severity, advisory.fixed) == ("GHSA-flt1-wthr-0001", "HIGH", ["1.1.0"])
        assert fixed.advisories == [] and fixed.osv_status == "ok"
        assert notes.latest_version == "2.1.0" and notes.advisories == []
        assert missing.metadata_status == "not found (HTTP 404)" and missing.osv_status == "no version to check"
        deploy = rdap.domain("deploy.test")
        assert deploy.status == "ok" and (TODAY - deploy.registered_at.date()).days == 20
        assert rdap.domain("nobody.invalid").status == "not found (HTTP 404)"
    # One batch for every package, the user agent on every request.
    batches = [r for r in fleet.lookups.requests if r["path"].endswith("/v1/querybatch")]
    assert len(batches) == 1 and len(batches[0]["body"]["queries"]) == 3
    assert {r["user-agent"] for r in fleet.lookups.requests} == {"7Maps-bot/0.2 (+https://7it.co.il/7maps/bot/)"}


def test_an_answer_in_another_shape_is_a_reason_never_a_crash(fleet):
    packages = LookupClient(f"{fleet.codehost_url}/npm", f"{fleet.codehost_url}/osv", f"{fleet.codehost_url}/rdap",
                            min_interval=0)  # every service asked at the wrong place
    with packages:
        lookup = PackageLookup("npm", "@fleet/weather-mcp", "1.0.0")
        packages.metadata(lookup)
        packages.advisories([lookup])
    assert lookup.metadata_status != "ok" and lookup.osv_status.startswith("osv: ")
    with RdapClient(f"{fleet.codehost_url}/npm/nothing", min_interval=0) as rdap:
        assert rdap.domain("deploy.test").status.startswith("the bootstrap file")


def test_each_service_is_asked_one_request_at_a_time_spaced_and_the_services_side_by_side(fleet, tmp_path):
    """npm's and PyPI's metadata and RDAP go out from their own threads, each service at its own spacing
    (lookups/spaced.py), so a day of 5,600 packages and 700 domains is the longest service's queue, not the sum."""
    lake = LakePaths.at(tmp_path / "lake")
    listed = [{"server_name": f"test.side/{i}", "listing": "probe", "url": f"https://mcp.side{i}.test/mcp",
               "entry_json": json.dumps({"server": {"packages": [
                   {"registryType": "npm", "identifier": f"side-npm-{i}", "version": "1.0.0"},
                   {"registryType": "pypi", "identifier": f"side-pypi-{i}", "version": "1.0.0"}]}})}
              for i in range(4)]
    urls, spacing = fleet.lookup_urls(), 0.3
    before = len(fleet.lookups.requests)
    with LookupClient(urls["osv_url"], urls["npm_url"], urls["pypi_url"], min_interval=spacing) as packages, \
            RdapClient(urls["rdap_bootstrap_url"], min_interval=spacing) as rdap:
        report = lookup_day(lake, TODAY, dt.datetime.now(dt.UTC), packages, rdap, registry_rows=listed)
    assert (report.packages, report.domains_asked) == (8, 4)
    asked = fleet.lookups.requests[before:]
    services = {name: [r["at"] for r in asked if r["path"].startswith(f"/{name}/")] for name in ("npm", "pypi")}
    services["rdap"] = [r["at"] for r in asked if "/rdap/domain/" in r["path"]]
    for name, times in services.items():
        assert len(times) == 4, (name, times)
        # A service's requests one after another, spaced (the spacing is the client's; arrivals may bunch a little).
        assert all(b - a > spacing / 2 for a, b in zip(times, times[1:], strict=False)), (name, times)
    # Side by side: each service's first request came before every other service's last.
    assert max(t[0] for t in services.values()) < min(t[-1] for t in services.values()), services
    packages_file, = lake.raw_files("packages", TODAY)
    rows = pq.read_table(packages_file).to_pylist()
    assert [(r["registry_type"], r["package"]) for r in rows] == sorted((r["registry_type"], r["package"])
                                                                        for r in rows)


def test_the_lookups_job_lands_raw_inputs_and_the_day_tables_are_built(fleet, lake, monkeypatch):
    monkeypatch.setenv("SEVENMAPS_NO_SCAN", "1")
    scan_day(lake, TODAY, fleet.registry_url, ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file),
             ReplayClock(TODAY, 3))
    shipped = shipped_packages(pq.read_table(lake.registry_file(TODAY)).to_pylist())
    assert set(shipped) == {("npm", "@fleet/weather-mcp", "1.0.0"), ("pypi", "fleet-notes-mcp", "2.1.0")}
    asked_before, servers_before = len(fleet.lookups.requests), len(fleet.recorded)
    prober = {"replay_day": f"{TODAY}T12", **fleet.lookup_urls()}
    with dg.DagsterInstance.ephemeral() as instance:
        result = defs.resolve_job_def("lookups_job").execute_in_process(
            instance=instance, run_config={"resources": {"lake": {"config": {"root": str(lake.root)}},
                                                         "prober": {"config": prober}}})
        assert result.success
        # The servers themselves are never asked: every lookup went to the outside services' fixtures.
        assert len(fleet.recorded) == servers_before and len(fleet.lookups.requests) > asked_before
        curated.build_quarantine(lake, TODAY)
        assert run_days("daily_map_job", TODAY, TODAY, instance, lake.root, prober={"no_scan": True}).success
    advisories = {r["package"]: r for r in pq.read_table(lake.curated_file("package_advisories", TODAY)).to_pylist()}
    weather = advisories["@fleet/weather-mcp"]
    assert (weather["advisories"], weather["advisory_ids"], weather["severities"], weather["fixed_versions"],
            weather["max_severity"], weather["latest_version"], weather["lookup_status"]) == (
        1, ["GHSA-flt1-wthr-0001"], ["HIGH"], ["1.1.0"], "HIGH", "1.2.0", "ok")
    assert weather["server_names"] == ["test.weather/weather"]
    assert advisories["fleet-notes-mcp"]["advisories"] == 0
    ages = {r["domain"]: r for r in pq.read_table(lake.curated_file("domain_ages", TODAY)).to_pylist()}
    assert ages["deploy.test"]["age_days"] == 20 and ages["deploy.test"]["young"] is True
    assert ages["weather.test"]["young"] is False and ages["weather.test"]["method_version"] == "domain-age-1.3"
    # A second run the same day asks RDAP nothing new (refreshed rarely), but checks OSV again.
    rdap_before = [r for r in fleet.lookups.requests if "/rdap/domain/" in r["path"]]
    packages, rdap = _clients(fleet)
    with packages, rdap:
        report = lookup_day(lake, TODAY, dt.datetime.now(dt.UTC), packages, rdap)
    assert report.domains_asked == 0 and report.domains_cached == 3 and report.packages == 2
    assert [r for r in fleet.lookups.requests if "/rdap/domain/" in r["path"]] == rdap_before


def test_the_demos_lookups_on_a_lakes_first_day_read_the_snapshot_its_first_slice_takes(fleet, tmp_path):
    """`sevenmaps demo --days 3` failed (issue 36): the demo's lookups run at noon on its last three days, before
    each day's map run replays the day's slices, so on the lake's first day there was no registry snapshot for
    them to read. The demo lands the day's snapshot first, as the day's 00:00 slice would have."""
    from sevenmaps_pipeline.devtools.demo import _FleetDemo  # the demo's own step, its runs made in process

    class InProcess:
        def __init__(self):
            self.jobs = []

        def run(self, job, first, last, config):
            self.jobs.append(job)
            with dg.DagsterInstance.ephemeral() as instance:
                return defs.resolve_job_def(job).execute_in_process(instance=instance, run_config=config)

    lake, day, location = LakePaths.at(tmp_path / "lake"), TODAY - dt.timedelta(days=1), InProcess()
    demo = _FleetDemo(lake, tmp_path / "signing.pem", fleet, None, location, [day], set())
    assert registry_in_force(lake, day) is None
    assert demo.lookups(day) and location.jobs == ["lookups_job"]
    assert registry_in_force(lake, day) == lake.registry_file(day)
    assert lake.raw_files("packages", day) and lake.raw_files("domains", day)
    listed = {r["server_name"] for r in pq.read_table(lake.registry_file(day)).to_pylist()}
    assert "test.weather/weather" in listed


def test_the_lookups_read_the_snapshot_the_days_map_reads_when_the_scan_last_ran_weeks_ago(fleet, lake):
    """The lookups read the registry snapshot in force on the day, as the day's rows and the hourly checks do
    (within the status lookback, 29 days): with the scan's last snapshot ten days old, they read it; they
    read 7 days back before, and asked nothing while the map still listed the endpoints."""
    old = TODAY - dt.timedelta(days=10)
    take_snapshot(lake, old, fleet.registry_url, ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file),
                  ReplayClock(old, 3))
    assert registry_in_force(lake, TODAY) == lake.registry_file(old)
    packages, rdap = _clients(fleet)
    with packages, rdap:
        report = lookup_day(lake, TODAY, dt.datetime.now(dt.UTC), packages, rdap)
    assert report.packages == 2 and report.domains_asked == 3
    beyond = TODAY + dt.timedelta(days=20)  # 30 days after the snapshot: none in force, nothing asked
    assert registry_in_force(lake, beyond) is None
    packages, rdap = _clients(fleet)
    with packages, rdap:
        assert lookup_day(lake, beyond, dt.datetime.now(dt.UTC), packages, rdap).packages == 0
