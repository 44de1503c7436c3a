"""Readiness follows the day's slices (docs/methodology.md, "Readiness"): a run after a slice checks the
endpoints of the slices so far that have none yet, and asks nothing the day's earlier runs read (an origin's or
a domain's documents, a repository, a skill). The day's three runs, against the whole fleet on loopback, give
the readiness lines one run over the whole day gives, each document asked once."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sevenmaps_pipeline.curated.readiness_tables import build_readiness_discovery, build_readiness_lines
from sevenmaps_pipeline.devtools.fleet.registry_app import registry_entries
from sevenmaps_pipeline.devtools.fleet.run import Fleet
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.lake.schemas import RAW_REGISTRY, conform
from sevenmaps_pipeline.lookups.codehost import NO_SUCH_REPOSITORY, CodeHostClient, RepoStatus
from sevenmaps_pipeline.probe.config import ProbeConfig
from sevenmaps_pipeline.probe.origins import OriginBook
from sevenmaps_pipeline.probe.readiness_book import ReadinessBook
from sevenmaps_pipeline.probe.readiness_scan import ReadinessRows, _prober_error, _ReadinessRun
from sevenmaps_pipeline.probe.run import ReadinessWriter, readiness_day
from sevenmaps_pipeline.probe.slices import slot_hour
from sevenmaps_pipeline.probe.surfaces import CardBook
from sevenmaps_pipeline.registry.client import rows_for_entry
from sevenmaps_pipeline.registry.skills_list import read_skills_list
from sevenmaps_pipeline.rules.methods import READINESS_PARAMS

SPLIT = (7, 15, 23)  # the runs after three slices; the last covers what is left of the day
# The documents an origin or a publisher domain serves, shared by its endpoints: asked once a day whichever run.
SHARED_PATHS = ("/.well-known/mcp/server-card.json", "/.well-known/mcp.json", "/.well-known/ai-catalog.json",
                "/.well-known/mcp/catalog.json", "/llms.txt", "/.well-known/mcp-registry-auth")
TIMED_LINES = {"p50_fast"}  # a round trip on a shared machine: not the split's to keep


def _land_registry(lake: LakePaths, fleet: Fleet, day: dt.date, now: dt.datetime) -> list[dict]:
    rows = [r for e in registry_entries(fleet) for r in rows_for_entry(
        e, day, now, opted_out=fleet.timeline.get("opted_out_hosts", []), host_map=fleet.host_map)]
    write_parquet(lake, lake.registry_file(day), conform(pa.Table.from_pylist(rows, RAW_REGISTRY.schema),
                                                         RAW_REGISTRY))
    return rows


def _runs(lake: LakePaths, fleet: Fleet, day: dt.date, hours: tuple[int | None, ...], skills) -> dict:
    """The readiness runs of `hours` (None: one run over the whole day) into `lake`, with what each asked."""
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file,
                         opted_out_hosts=frozenset(fleet.timeline.get("opted_out_hosts", [])))
    first, first_code = len(fleet.recorded), len(fleet.codehost.requests)
    reports, checked = [], []
    with CodeHostClient(fleet.codehost_url) as codehost:
        for hour in hours:
            reports.append(readiness_day(lake, day, config, codehost=codehost, skills=skills, through_hour=hour))
            keys = set()
            for path in lake.raw_files("readiness", day):
                keys |= set(pq.read_table(path, columns=["server_key"]).column("server_key").to_pylist())
            checked.append(keys)
    shared = Counter((r["host"], r["path"]) for r in fleet.recorded[first:]
                     if r["method"] == "GET" and r["path"] in SHARED_PATHS)
    code = Counter(r["path"] for r in fleet.codehost.requests[first_code:] if "path" in r)
    robots = Counter(r["host"] for r in fleet.recorded[first:] if r["method"] == "GET" and r["path"] == "/robots.txt")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(READINESS_PARAMS, "p50_under_ms", 1500)
        build_readiness_discovery(lake, day)
        build_readiness_lines(lake, day)
    lines = {(r["subject_kind"], r["subject_key"], r["line"]): (r["seen"], r["passed"])
             for r in pq.read_table(lake.curated_file("readiness_lines", day)).to_pylist()
             if r["line"] not in TIMED_LINES}
    return {"reports": reports, "checked": checked, "shared": shared, "code": code, "robots": robots,
            "lines": lines}


@pytest.fixture(scope="module")
def day_both_ways(tmp_path_factory):
    """The same fleet read twice on the same day: in three runs after three slices, and in one run."""
    root = tmp_path_factory.mktemp("readiness-slices")
    with Fleet() as fleet:
        now = dt.datetime.now(dt.UTC)
        day = now.date()
        split, whole = LakePaths.at(root / "split"), LakePaths.at(root / "whole")
        rows = _land_registry(split, fleet, day, now)
        _land_registry(whole, fleet, day, now)
        skills = read_skills_list(fleet.skills_list(root)).folders
        yield {"day": day, "rows": rows, "skills": skills, "split": _runs(split, fleet, day, SPLIT, skills),
               "whole": _runs(whole, fleet, day, (None,), skills), "fleet": fleet, "root": root,
               "whole_lake": whole, "split_lake": split}


def test_each_run_checks_the_endpoints_of_the_slices_so_far(day_both_ways):
    day, split = day_both_ways["day"], day_both_ways["split"]
    every = day_both_ways["whole"]["checked"][0]
    assert len(every) >= 20
    for hour, checked in zip(SPLIT, split["checked"], strict=True):
        assert checked == {key for key in every if slot_hour(key, day) <= hour}, hour
    first, later = split["reports"][0], split["reports"][1:]
    assert 0 < first.checks < len(every) and all(report.checks > 0 for report in later)
    assert sum(report.checks for report in split["reports"]) == len(every)  # each endpoint once


def test_every_shared_document_repository_and_skill_is_asked_once_a_day(day_both_ways):
    split, whole = day_both_ways["split"], day_both_ways["whole"]
    assert split["shared"] and max(split["shared"].values()) == 1, split["shared"].most_common(3)
    assert set(split["shared"]) == set(whole["shared"])
    assert split["code"] and max(split["code"].values()) == 1
    assert set(split["code"]) == set(whole["code"])
    skills = [report.skills for report in split["reports"]]
    assert skills[0] == len(day_both_ways["skills"]) > 0 and skills[1:] == [0, 0]
    # A host the day's scan never reads (a publisher's domain): its robots.txt read once, by the first run
    # that meets it, and landed for the later runs (an endpoint's host is the scan's to read and land).
    endpoint_hosts = {r["url"].split("/")[2] for r in day_both_ways["rows"] if isinstance(r.get("url"), str)}
    elsewhere = {host: n for host, n in split["robots"].items() if host not in endpoint_hosts}
    assert elsewhere and max(elsewhere.values()) == 1, elsewhere
    assert set(elsewhere) == {h for h in whole["robots"] if h not in endpoint_hosts}
    landed = [r for path in day_both_ways["split_lake"].raw_files("origins", day_both_ways["day"])
              for r in pq.read_table(path).to_pylist()]
    landed_hosts = {r["origin"].split("/")[2] for r in landed}  # with those that did not answer at all
    assert set(elsewhere) <= landed_hosts and not landed_hosts & endpoint_hosts  # never an endpoint's origin
    book = OriginBook.from_lake(day_both_ways["split_lake"], day_both_ways["day"])
    assert all(book.of_day(r["origin"], day_both_ways["day"]) for r in landed if (r["robots_status"] or 500) < 500)


def test_the_split_day_reads_as_one_run_over_the_whole_day(day_both_ways):
    split, whole = day_both_ways["split"]["lines"], day_both_ways["whole"]["lines"]
    assert len(whole) > 200
    differ = {key: (split.get(key), seen) for key, seen in whole.items() if split.get(key) != seen}
    assert not differ and set(split) == set(whole)


def test_the_book_decides_each_shared_document_once_and_keeps_the_code_hosts_answers():
    surfaces = [
        {"scope": "origin", "subject": "https://a.test", "surface": "well_known_mcp_json", "status": 404,
         "detail": "HTTP 404"},
        {"scope": "domain", "subject": "a.test", "surface": "llms_txt", "status": None, "detail": "timed out"},
        {"scope": "domain", "subject": "a.test", "surface": "catalog", "status": None,
         "detail": "not asked: robots.txt disallows it"},
        {"scope": "domain", "subject": "a.test", "surface": "ai_catalog", "status": None,
         "detail": "prober_error: ValueError"},
        {"scope": "endpoint", "subject": "a.test/mcp", "surface": "server_card", "status": 200, "detail": "ok"},
    ]
    checks = [{"repository_url": "https://github.com/Acme/Tools", "repo_private": False, "repo_archived": True,
               "repo_pushed_at": "2026-11-01T00:00:00Z"},
              {"repository_url": "https://github.com/acme/gone", "repo_detail": NO_SUCH_REPOSITORY},
              {"repository_url": "https://github.com/acme/limited", "repo_detail": "code host answered HTTP 429"}]
    skills = [{"skill_key": "github.com/acme/s/a", "repo_private": False, "repo_archived": False,
               "repo_pushed_at": "2026-10-01T00:00:00Z"},
              {"skill_key": "github.com/acme/gone-skills/b", "repo_detail": NO_SUCH_REPOSITORY}]
    book = ReadinessBook.from_rows(surfaces, checks, skills)
    # Every shared document the day decided stays decided: asking again would read robots.txt again.
    assert all(book.read(*key) for key in (("origin", "https://a.test", "well_known_mcp_json"),
                                           ("domain", "a.test", "llms_txt"), ("domain", "a.test", "catalog"),
                                           ("domain", "a.test", "ai_catalog")))
    assert not book.read("domain", "a.test", "markdown_index")  # never decided today
    assert not book.read("endpoint", "a.test/mcp", "server_card")  # an endpoint's own: asked in its check
    assert book.repositories == {("acme", "tools"): RepoStatus("Acme", "Tools", False, True, "2026-11-01T00:00:00Z"),
                                 ("acme", "gone"): NO_SUCH_REPOSITORY,  # the rate-limited one is asked again
                                 ("acme", "s"): RepoStatus("acme", "s", False, False, "2026-10-01T00:00:00Z"),
                                 ("acme", "gone-skills"): NO_SUCH_REPOSITORY}
    assert book.skills == {"github.com/acme/s/a", "github.com/acme/gone-skills/b"}


def test_our_own_fault_is_checked_again_only_by_a_run_of_its_own_slice(day_both_ways):
    """A server that trips the prober is not asked again by every later run of the day: its check is redone
    only by a run of its own slice's hour (resumed by hand), as a whole-day run redoes it."""
    day, fleet = day_both_ways["day"], day_both_ways["fleet"]
    answered = sorted(r["server_key"] for path in day_both_ways["whole_lake"].raw_files("readiness", day)
                      for r in pq.read_table(path, columns=["server_key", "outcome"]).to_pylist()
                      if r["outcome"] == "ok" and slot_hour(r["server_key"], day) < 23)
    assert len(answered) >= 5  # the fleet's answering servers, their slices spread over the day
    key = answered[0]
    lake = LakePaths.at(day_both_ways["root"] / "ours")
    _land_registry(lake, fleet, day, dt.datetime.now(dt.UTC))
    listing = next(r for r in day_both_ways["rows"] if r.get("server_key") == key)
    writer = ReadinessWriter(lake, day, "readiness-000000-ours")
    writer.add_check(_prober_error(listing, day, "readiness-000000-ours", dt.datetime.now(dt.UTC),
                                   RuntimeError("our own fault")))
    writer.flush()
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file,
                         opted_out_hosts=frozenset(fleet.timeline.get("opted_out_hosts", [])))

    def outcomes() -> list[str]:
        return sorted(r["outcome"] for path in lake.raw_files("readiness", day)
                      for r in pq.read_table(path, columns=["server_key", "outcome"]).to_pylist()
                      if r["server_key"] == key)

    readiness_day(lake, day, config, through_hour=23)  # a later slice's run: every other endpoint, not this one
    assert outcomes() == ["prober_error"]
    readiness_day(lake, day, config, through_hour=slot_hour(key, day))  # its own hour's run, resumed
    assert outcomes() == ["ok", "prober_error"]


def test_a_domains_registry_proof_is_asked_once_any_endpoint_names_it_whichever_comes_first():
    """One run over the day and the same day split into runs ask the same domain documents: the registry proof
    file once any endpoint's registry name is of the domain, not only when the domain's first endpoint's is."""
    def asked(*names: str, earlier: ReadinessBook | None = None) -> list[str]:
        run = _ReadinessRun(dt.date(2026, 12, 5), "readiness-test", ProbeConfig(), lambda: dt.datetime.now(dt.UTC),
                            ReadinessRows(), OriginBook(), None, False, CardBook(), earlier or ReadinessBook(), None)
        for name in names:
            run.point_to_domain("pub.example", name)
        return sorted(doc.surface for doc in run.elsewhere)

    whole = asked("io.github.someone/a", "example.pub/b")
    assert whole == asked("example.pub/b", "io.github.someone/a") and "registry_auth" in whole
    assert whole.count("registry_auth") == 1 and whole.count("llms_txt") == 1
    first = asked("io.github.someone/a")
    assert "registry_auth" not in first
    decided = ReadinessBook(documents={("domain", "pub.example", surface) for surface in first})
    assert asked("example.pub/b", earlier=decided) == ["registry_auth"]  # the later run asks only what is left
