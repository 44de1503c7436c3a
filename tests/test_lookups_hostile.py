"""The daily lookups against hostile or broken outside services and registry entries (docs/methodology.md,
"Package advisories and domain age"): each case is one a stranger's attack found (helper-67, 2026-12-06), served
on loopback by a plain HTTP server of its own. Nothing a service or an entry brings may raise out of a lookup,
take the day's other rows down, go where it should not, or be kept unbounded."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.curated.lookup_tables import domain_ages_of
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.lake.schemas import RAW_DOMAINS, conform
from sevenmaps_pipeline.lookups import daily
from sevenmaps_pipeline.lookups.codehost import BLOCKED_MAX, CodeHostClient
from sevenmaps_pipeline.lookups.daily import lookup_day, shipped_packages
from sevenmaps_pipeline.lookups.osv import LookupClient, PackageLookup
from sevenmaps_pipeline.lookups.rdap import RdapClient

DAY = dt.datetime.now(dt.UTC).date()
Handler = Callable[[BaseHTTPRequestHandler], None]


class Services:
    """A loopback HTTP server whose answers are `routes` (the longest matching path prefix); it keeps every
    request's method, path and body."""

    def __init__(self) -> None:
        self.routes: dict[str, Handler] = {}
        self.requests: list[dict] = []
        services = self

        class Handle(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                services.requests.append({"method": self.command, "path": self.path,
                                          "body": self.rfile.read(length) if length else b""})
                for prefix in sorted(services.routes, key=len, reverse=True):
                    if self.path.startswith(prefix):
                        return services.routes[prefix](self)
                return send(self, 404, {"error": "not found"})

            do_GET = do_POST = answer

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: object, client_address: object) -> None:
                pass  # a client that left (a lookup's deadline, a closed client) is what these tests provoke

        self.server = Server(("127.0.0.1", 0), Handle)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def asked(self, prefix: str) -> list[dict]:
        return [r for r in self.requests if r["path"].startswith(prefix)]


def send(handler: BaseHTTPRequestHandler, status: int, body: object, headers: tuple = ()) -> None:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    for name, value in headers:
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)


def answer(body: object, status: int = 200, headers: tuple = ()) -> Handler:
    return lambda handler: send(handler, status, body, headers)


@pytest.fixture
def services() -> Iterator[Services]:
    running = Services()
    yield running
    running.server.shutdown()


def _clients(services: Services, timeout: float = 15.0) -> tuple[LookupClient, RdapClient]:
    base = services.url
    return (LookupClient(f"{base}/osv", f"{base}/npm", f"{base}/pypi", min_interval=0, timeout=timeout),
            RdapClient(f"{base}/dns.json", min_interval=0, timeout=timeout))


def _listing(name: str, url: str, packages: list[tuple[str, str, str | None]]) -> dict:
    return {"server_name": name, "listing": "probe", "url": url, "entry_json": json.dumps({"server": {"packages": [
        {"registryType": kind, "identifier": ident, **({"version": version} if version else {})}
        for kind, ident, version in packages]}})}


DEEP = b'{"a":' * 5000 + b"1" + b"}" * 5000
REGISTERED = {"events": [{"eventAction": "registration", "eventDate": "2020-01-01T00:00:00Z"}]}


def test_a_hostile_answer_from_one_service_never_loses_the_days_other_rows(services, tmp_path):
    base = services.url
    services.routes.update({
        # One TLD's service is a URL no request can be made to, another's sends JSON nested past any parser.
        "/dns.json": answer({"services": [[["good", "deep"], [f"{base}/rdap/"]], [["broken"], ["https://[::1"]]]}),
        "/rdap/domain/x.deep": answer(DEEP), "/rdap/domain/x.good": answer(REGISTERED),
        "/npm/": answer({"dist-tags": {"latest": "2.0.0"}}),
        "/osv/v1/querybatch": answer({"results": [{"vulns": [{"id": "GHSA-aaaa-bbbb-cccc"}]}]}),
        # An advisory whose lists are numbers and whose severity is markup.
        "/osv/v1/vulns/": answer({"severity": 5, "affected": 5, "database_specific": {"severity": "<script>"}}),
    })
    rows = [_listing("x/a", "https://mcp.x.good/mcp", [("npm", "p", "1.0.0")]),
            _listing("x/b", "https://mcp.x.deep/mcp", []), _listing("x/c", "https://mcp.x.broken/mcp", [])]
    lake = LakePaths.at(tmp_path / "lake")
    packages, rdap = _clients(services)
    with packages, rdap:
        report = lookup_day(lake, DAY, dt.datetime.now(dt.UTC), packages, rdap, registry_rows=rows)
    assert (report.packages, report.domains_asked) == (1, 3)
    (package,) = pq.read_table(lake.raw_files("packages", DAY)[0]).to_pylist()
    assert package["osv_status"] == "ok" and package["advisory_ids"] == ["GHSA-aaaa-bbbb-cccc"]
    assert json.loads(package["advisories_json"])[0]["severity"] is None  # no label, no vector: unknown
    domains = {r["domain"]: r["status"] for r in pq.read_table(lake.raw_files("domains", DAY)[0]).to_pylist()}
    assert domains == {"x.good": "ok", "x.deep": "JSON nested too deeply to read",
                       "x.broken": "no RDAP service for its TLD in the bootstrap"}


def test_an_rdap_record_in_another_shape_or_with_dates_no_registration_has_is_a_reason(services, tmp_path):
    base = services.url
    records = {"numbers": {"events": 5},
               "future": {"events": [{"eventAction": "registration", "eventDate": "2999-01-01Z"}]},
               "ancient": {"events": [{"eventAction": "registration", "eventDate": "0001-01-01T00:00:00+05:00"}]},
               "far": {"events": [{"eventAction": "registration", "eventDate": "9999-12-31T23:59:59-05:00"}]},
               "good": REGISTERED}
    services.routes["/dns.json"] = answer({"services": [[["test"], [f"{base}/rdap/"]]]})
    for name, record in records.items():
        services.routes[f"/rdap/domain/{name}.test"] = answer(record)
    with RdapClient(f"{base}/dns.json", min_interval=0) as rdap:
        found = {name: rdap.domain(f"{name}.test") for name in records}
    assert found["numbers"].status == "no registration event in the record"
    for name in ("future", "ancient", "far"):
        assert found[name].registered_at is None and "between 1985 and today" in found[name].status
    assert found["good"].registered_at == dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
    # Landed, every date is one Python and Arrow can read back.
    lake = LakePaths.at(tmp_path / "lake")
    packages, rdap = _clients(services)
    with packages, rdap:
        lookup_day(lake, DAY, dt.datetime.now(dt.UTC), packages, rdap, registry_rows=[
            _listing(f"x/{name}", f"https://mcp.{name}.test/mcp", []) for name in records])
    assert len(pq.read_table(lake.raw_files("domains", DAY)[0]).to_pylist()) == len(records)


def test_an_answer_is_read_within_its_time_and_size_as_a_whole(services):
    def drip(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("content-length", "100")
        handler.end_headers()
        for _ in range(100):  # a byte every 0.2 s: each read comes in time, the answer never does
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.2)

    base = services.url
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = b"".join(deflate.compress(b" " * (1 << 20)) for _ in range(64)) + deflate.flush()  # 64 MiB decoded
    services.routes.update({"/dns.json": answer({"services": [[["test"], [f"{base}/rdap/"]]]}),
                            "/rdap/domain/slow.test": drip,
                            "/rdap/domain/bomb.test": answer(bomb, headers=(("content-encoding", "gzip"),))})
    with RdapClient(f"{base}/dns.json", min_interval=0, timeout=1.0) as rdap:
        assert rdap.domain("slow.test").status == "no whole answer within 1 s"
        assert rdap.domain("bomb.test").status == "answer too large"
    assert len(bomb) < (1 << 20) and len(gzip.decompress(bomb)) > (1 << 20)


def test_no_name_id_or_version_from_an_entry_or_a_service_becomes_a_path_of_ours(services, tmp_path):
    services.routes.update({
        "/npm/": answer({"dist-tags": {"latest": "1.0.0"}}),
        "/pypi/": answer({"info": {"version": "1.0.0"}}),
        "/osv/v1/querybatch": answer({"results": [{"vulns": [{"id": "../../../npm/x"}, {"id": "GHSA-ok"}]}] * 2}),
        "/osv/v1/vulns/GHSA-ok": answer({"id": "GHSA-ok", "database_specific": {"severity": "moderate"}}),
    })
    rows = [_listing("x/a", "https://mcp.a.test/mcp", [("pypi", "../../../admin", "1"), ("npm", "..", "1"),
                                                      ("pypi", "x/../../npm/victim", "1"), ("npm", "@acme/tool", "1"),
                                                      ("pypi", "good-name", "1"), ("npm", "a" * 300, "1")])]
    lake = LakePaths.at(tmp_path / "lake")
    packages, rdap = _clients(services)
    with packages, rdap:
        lookup_day(lake, DAY, dt.datetime.now(dt.UTC), packages, rdap, registry_rows=rows)
    landed = {r["package"]: r for r in pq.read_table(lake.raw_files("packages", DAY)[0]).to_pylist()}
    for name, kind in (("../../../admin", "pypi"), ("..", "npm"), ("x/../../npm/victim", "pypi"), ("a" * 215, "npm")):
        assert landed[name]["metadata_status"] == f"not asked: not a valid {kind} package name"
    paths = [r["path"] for r in services.requests]
    assert sorted(p for p in paths if p.startswith(("/npm", "/pypi", "/osv/v1/vulns"))) == [
        "/npm/@acme%2Ftool", "/osv/v1/vulns/GHSA-ok", "/osv/v1/vulns/GHSA-ok", "/pypi/pypi/good-name/json"]
    good = landed["good-name"]
    assert good["advisory_ids"] == ["GHSA-ok"] and json.loads(good["advisories_json"])[0]["severity"] == "MODERATE"
    assert good["osv_status"] == "ok; 1 listed with no valid id, left out"


def test_an_entry_cannot_hide_another_entrys_version_behind_its_own(services, tmp_path):
    def batch(handler: BaseHTTPRequestHandler) -> None:
        queries = json.loads(services.requests[-1]["body"])["queries"]
        send(handler, 200, {"results": [{"vulns": [{"id": "GHSA-real"}]} if q["version"] == "1.0.0" else {}
                                        for q in queries]})

    services.routes.update({"/npm/": answer({"dist-tags": {"latest": "1.0.0"}}), "/osv/v1/querybatch": batch,
                            "/osv/v1/vulns/GHSA-real": answer({"id": "GHSA-real"})})
    rows = [_listing("com.victim/mcp", "https://mcp.victim.test/mcp", [("npm", "victim-mcp", "1.0.0")]),
            _listing("com.attacker/mcp", "https://mcp.attacker.test/mcp", [("npm", " victim-mcp ", "~~~~")])]
    assert set(shipped_packages(rows)) == {("npm", "victim-mcp", "1.0.0"), ("npm", "victim-mcp", "~~~~")}
    lake = LakePaths.at(tmp_path / "lake")
    packages, rdap = _clients(services)
    with packages, rdap:
        lookup_day(lake, DAY, dt.datetime.now(dt.UTC), packages, rdap, registry_rows=rows)
    assert len(services.asked("/npm/")) == 1  # a package's metadata once, whatever versions are listed
    curated.build_package_advisories(lake, DAY)
    built = {r["version"]: r for r in pq.read_table(lake.curated_file("package_advisories", DAY)).to_pylist()}
    assert built["1.0.0"]["advisory_ids"] == ["GHSA-real"] and built["1.0.0"]["server_names"] == ["com.victim/mcp"]
    assert built["~~~~"]["advisories"] == 0 and built["~~~~"]["server_names"] == ["com.attacker/mcp"]


def test_an_entry_listing_thousands_of_versions_cannot_crowd_out_the_others(services, tmp_path, monkeypatch):
    services.routes.update({"/npm/": answer({"dist-tags": {"latest": "1.0.0"}}),
                            "/osv/v1/querybatch": lambda h: send(h, 200, {"results": [
                                {} for _ in json.loads(services.requests[-1]["body"])["queries"]]})})
    flood = [("npm", "flood-mcp", f"0.0.{i}") for i in range(3000)] + [("npm", "victim-mcp", "9.9.9")]
    rows = [_listing("com.attacker/mcp", "https://mcp.attacker.test/mcp", flood),
            _listing("com.victim/mcp", "https://mcp.victim.test/mcp", [("npm", "victim-mcp", "1.0.0")]),
            _listing("com.other/mcp", "https://mcp.other.test/mcp", [("npm", "zz-other-mcp", "2.0.0")])]
    monkeypatch.setattr(daily, "MAX_PACKAGES", 51)  # one fewer than the 52 that may be asked: the attacker's
    lake = LakePaths.at(tmp_path / "lake")         # first 50, the victim's and the other's
    packages, rdap = _clients(services)
    asked_on: list[set] = []
    with packages, rdap:
        for day in (DAY, DAY + dt.timedelta(days=1)):
            report = lookup_day(lake, day, dt.datetime.now(dt.UTC), packages, rdap, registry_rows=rows)
            landed = {(r["package"], r["version"]): r for r in pq.read_table(lake.raw_files("packages", day)[0])
                      .to_pylist()}
            assert report.packages == len(landed) == 3003 and report.packages_not_asked == 3003 - 51  # every row
            asked_on.append({key for key, r in landed.items() if not r["osv_status"].startswith("not asked")})
            left = {key for key, r in landed.items() if r["osv_status"].endswith("(each is asked in turn)")}
            assert len(asked_on[-1]) == 51 and len(left) == 1
    # Over two days every version that may be asked was, the attacker's beyond its first 50 never.
    may = {("flood-mcp", f"0.0.{i}") for i in range(50)} | {("victim-mcp", "1.0.0"), ("zz-other-mcp", "2.0.0")}
    assert report.entries_unreadable == 0
    assert asked_on[0] | asked_on[1] == may and asked_on[0] != asked_on[1]
    assert landed[("flood-mcp", "0.0.50")]["osv_status"] == (
        "not asked: each entry listing it lists more than 50 package versions before it")
    assert landed[("victim-mcp", "9.9.9")]["osv_status"].startswith("not asked: each entry")


def test_an_entry_cut_at_the_clients_bound_is_counted_not_lost_silently(services, tmp_path):
    """The registry client keeps at most 100,000 characters of an entry: one cut there is no JSON, and its packages
    cannot be read; the day's report says how many such listings there were (a stranger's review)."""
    cut = {**_listing("com.big/mcp", "https://mcp.big.test/mcp", [("npm", "big-mcp", "1.0.0")])}
    cut["entry_json"], cut["listing"] = cut["entry_json"][:-5], "skipped"  # no domain to ask: nothing is asked
    lake = LakePaths.at(tmp_path / "lake")
    packages, rdap = _clients(services)
    with packages, rdap:
        report = lookup_day(lake, DAY, dt.datetime.now(dt.UTC), packages, rdap, registry_rows=[cut])
    assert (report.entries_unreadable, report.packages) == (1, 0)


def test_domains_past_the_days_limit_are_asked_on_the_next_days(services, tmp_path, monkeypatch):
    base = services.url
    services.routes.update({"/dns.json": answer({"services": [[["good"], [f"{base}/rdap/"]]]}),
                            "/rdap/domain/": answer(REGISTERED)})
    rows = [_listing(f"x/{d}", f"https://mcp.{d}.good/mcp", []) for d in ("a", "b", "c", "d", "e")]
    monkeypatch.setattr(daily, "MAX_DOMAINS", 2)
    days = _domains_asked_day_by_day(services, LakePaths.at(tmp_path / "lake"), rows, 3)
    assert [waiting for waiting, _ in days] == [3, 1, 0]
    assert [asked for _, asked in days] == [["a.good", "b.good"], ["c.good", "d.good"], ["e.good"]]  # each once


def _domains_asked_day_by_day(services, lake: LakePaths, rows: list[dict], count: int) -> list[tuple[int, list]]:
    """(domains left waiting, domains asked) on each of `count` days ending today, the lookups run once a day."""
    out = []
    packages, rdap = _clients(services)
    with packages, rdap:
        for back in range(count - 1, -1, -1):
            day = DAY - dt.timedelta(days=back)
            report = lookup_day(lake, day, dt.datetime.now(dt.UTC), packages, rdap, registry_rows=rows)
            out.append((report.domains_waiting, sorted(r["domain"] for path in lake.raw_files("domains", day)
                                                       for r in pq.read_table(path).to_pylist())))
    return out


def test_domains_that_keep_failing_never_hold_the_others_back(services, tmp_path, monkeypatch):
    """A second review: with more failing domains than a day asks, sorting first, a healthy one was never asked
    (a failure is asked again after a day). Those asked longest ago, or never, come first."""
    base = services.url
    services.routes.update({"/dns.json": answer({"services": [[["good", "bad"], [f"{base}/rdap/"]]]}),
                            "/rdap/domain/z.good": answer(REGISTERED)})  # every x.bad: 404, a failure
    rows = [_listing(f"x/{d}", f"https://mcp.{d}/mcp", []) for d in ("a.bad", "b.bad", "c.bad", "d.bad", "z.good")]
    monkeypatch.setattr(daily, "MAX_DOMAINS", 2)
    asked_on = [asked for _, asked in _domains_asked_day_by_day(services, LakePaths.at(tmp_path / "lake"), rows, 4)]
    # Never asked before, z.good goes first once a.bad and b.bad are due again; by name order it never would.
    assert asked_on[:3] == [["a.bad", "b.bad"], ["c.bad", "d.bad"], ["a.bad", "z.good"]]


def test_advisories_that_could_not_be_read_are_named_and_a_long_wait_is_kept(services):
    ids = [{"id": f"GHSA-{i:04d}"} for i in range(20_000)] + [{"id": "GHSA-0001"}]  # and a repeat
    services.routes.update({
        "/osv/v1/querybatch": answer({"results": [{"vulns": ids}, {"vulns": [{"id": "GHSA-busy"}]}]}),
        "/osv/v1/vulns/GHSA-busy": answer({}, 503, (("retry-after", "86400"),)),
        "/osv/v1/vulns/": answer({"database_specific": {"severity": "LOW"}}),
    })
    many, busy = PackageLookup("npm", "many", "1.0.0"), PackageLookup("npm", "busy", "1.0.0")
    with LookupClient(f"{services.url}/osv", min_interval=0) as client:
        client.advisories([many, busy])
        asked_before = len(services.requests)
        assert client.vuln("GHSA-9999", many) == "rate limited: the service asked us to wait 86400 s more"
        assert len(services.requests) == asked_before  # not asked again while it asked us to wait
    assert len(many.advisories) == 50 and len({a.id for a in many.advisories}) == 50
    assert many.osv_status == "ok; 19950 more advisories listed, not read"
    assert busy.osv_status == "ok; 1 advisory not read (HTTP 503)" and busy.advisories[0].severity is None


def test_the_bootstraps_services_are_asked_over_https_at_public_names_or_on_its_own_origin(services):
    base = services.url
    services.routes.update({
        "/dns.json": answer({"services": [
            [["plain"], ["http://rdap.example.net/"]], [["meta"], ["https://169.254.169.254/"]],
            [["dotted"], ["https://127.1/"]], [["hex"], ["https://0x7f.0.0.1/"]],
            [["creds"], ["https://user:pw@rdap.example.net/"]],
            [["private"], ["https://rdap.corp.internal/"]], [["own"], [f"{base}/rdap/"]],
            [["xn--p1ai"], [f"{base}/rdap/"]]]}),
        "/rdap/domain/": answer(REGISTERED)})
    with RdapClient(f"{base}/dns.json", min_interval=0) as rdap:
        assert set(rdap.services()) == {"own", "xn--p1ai"}
        assert rdap.domain("x.plain").status == "no RDAP service for its TLD in the bootstrap"
        idn = rdap.domain("пример.рф")
        assert (idn.domain, idn.status) == ("xn--e1afmkfd.xn--p1ai", "ok")
        assert rdap.domain("127.0.0.1").status == "not a domain name RDAP can be asked about"
    assert [r["path"] for r in services.asked("/rdap/")] == ["/rdap/domain/xn--e1afmkfd.xn--p1ai"]


def test_both_spellings_of_a_domain_are_one_domain_and_an_address_has_none(services, tmp_path):
    services.routes.update({"/dns.json": answer({"services": [[["de"], [f"{services.url}/rdap/"]]]}),
                            "/rdap/domain/": answer(REGISTERED)})
    rows = [_listing("x/u", "https://mcp.bücher.de/mcp", []), _listing("x/a", "https://mcp.xn--bcher-kva.de/mcp", []),
            _listing("x/ip", "https://127.0.0.1/mcp", [])]
    lake = LakePaths.at(tmp_path / "lake")
    packages, rdap = _clients(services)
    with packages, rdap:
        report = lookup_day(lake, DAY, dt.datetime.now(dt.UTC), packages, rdap, registry_rows=rows)
    assert report.domains_asked == 1
    assert [r["domain"] for r in pq.read_table(lake.raw_files("domains", DAY)[0]).to_pylist()] == ["xn--bcher-kva.de"]


@pytest.mark.parametrize(("headers", "blocked_at_most"), [
    ((("x-ratelimit-reset", "9" * 20),), BLOCKED_MAX),  # past any date
    ((("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "99999999999")), BLOCKED_MAX),  # the year 5138
    ((("retry-after", "\u00b2"),), 60.0),  # a digit to str.isdigit, not to int()
    ((("x-ratelimit-reset", "\u00b9\u00b2"),), 60.0),
])
def test_the_code_hosts_rate_limit_headers_never_raise_nor_block_past_an_hour(services, headers, blocked_at_most):
    services.routes["/repos/"] = answer({}, 429 if "remaining" not in str(headers) else 403, headers)
    with CodeHostClient(services.url) as client:
        started = time.time()
        assert client.repository("acme", "x").startswith("rate limited until ")
        assert client.blocked_until <= started + blocked_at_most + 5


def test_the_code_host_reads_nested_or_bombed_answers_as_reasons(services):
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = b"".join(deflate.compress(b" " * (1 << 20)) for _ in range(8)) + deflate.flush()
    services.routes.update({"/repos/acme/deep": answer(b"[" * 100_000 + b"]" * 100_000),
                            "/repos/acme/bomb": answer(bomb, headers=(("content-encoding", "gzip"),))})
    with CodeHostClient(services.url) as client:
        assert client.repository("acme", "deep") == "code host answer is JSON nested too deeply to read"
        assert client.repository("acme", "bomb") == "code host: answer too large"


def test_lookups_landed_before_domain_age_1_2_are_read_as_it_reads_them(tmp_path):
    """A Unicode domain a 1.1 lookup kept is its ASCII form's record, and a date outside 1985 to the day a 1.1
    lookup kept is no date (helper-69's review, 2026-12-06)."""
    lake, earlier = LakePaths.at(tmp_path / "lake"), DAY - dt.timedelta(days=3)
    rows = [{"day": earlier, "looked_up_at": dt.datetime.combine(earlier, dt.time(12), dt.UTC), "domain": domain,
             "registered_at": at, "status": "ok", "rdap_url": None}
            for domain, at in (("bücher.de", dt.datetime(2020, 1, 1, tzinfo=dt.UTC)),
                               ("future.test", dt.datetime(2999, 1, 1, tzinfo=dt.UTC)),
                               ("ancient.test", dt.datetime(1970, 1, 1, tzinfo=dt.UTC)))]
    write_parquet(lake, lake.raw_dir("domains", earlier) / "lookups-old.parquet",
                  conform(pa.Table.from_pylist(rows, RAW_DOMAINS.schema), RAW_DOMAINS))
    pairs = pa.table({"server_key": ["a", "b", "c"], "domain": ["xn--bcher-kva.de", "future.test", "ancient.test"]})
    ages = {r["domain"]: r for r in domain_ages_of(lake, DAY, pairs).to_pylist()}
    assert ages["xn--bcher-kva.de"]["status"] == "ok" and ages["xn--bcher-kva.de"]["young"] is False
    for odd in ("future.test", "ancient.test"):
        assert (ages[odd]["registered_at"], ages[odd]["age_days"], ages[odd]["young"]) == (None, None, None)
        assert ages[odd]["status"] == "no registration date between 1985 and the day"


def test_an_answer_whose_headers_come_a_byte_at_a_time_is_cut_off_at_its_deadline():
    listener = socket.create_server(("127.0.0.1", 0))

    def drip_headers() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        try:
            for byte in b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}":
                conn.sendall(bytes([byte]))  # each read in time, the answer never
                time.sleep(0.15)
        except OSError:
            pass  # the client gave up and closed: as it should
        conn.close()

    threading.Thread(target=drip_headers, daemon=True).start()
    base = f"http://127.0.0.1:{listener.getsockname()[1]}"
    with LookupClient(f"{base}/osv", f"{base}/npm", f"{base}/pypi", min_interval=0, timeout=1.0) as client:
        lookup = PackageLookup("npm", "dripping", "1.0.0")
        client.metadata(lookup)
    listener.close()
    assert lookup.metadata_status == "no whole answer within 1 s"


def test_a_service_is_waited_for_as_it_asks_only_within_a_budget_then_left_alone(services):
    services.routes["/npm/"] = answer({}, 429, (("retry-after", "1"),))
    with LookupClient(f"{services.url}/osv", f"{services.url}/npm", min_interval=0) as client:
        client.wait_budget = 1.5  # a run's budget (60 s by default), small for the test
        found = []
        for name in ("a", "b", "c", "d"):
            lookup = PackageLookup("npm", name, "1.0.0")
            client.metadata(lookup)
            found.append(lookup.metadata_status)
    # The first 429 is waited for (1 s); the second would pass the budget: the service is left alone until then.
    assert found[:2] == ["rate limited (HTTP 429)", "rate limited (HTTP 429)"]
    assert all(s.startswith("rate limited: the service asked us to wait") for s in found[2:])
    assert len(services.asked("/npm/")) == 2


def test_a_batch_osv_could_not_serve_for_a_moment_is_asked_once_more(services):
    batches = []

    def busy_once(handler: BaseHTTPRequestHandler) -> None:
        batches.append(1)
        if len(batches) == 1:
            return send(handler, 503, {}, (("retry-after", "1"),))
        return send(handler, 200, {"results": [{}]})

    services.routes["/osv/v1/querybatch"] = busy_once
    lookup = PackageLookup("npm", "p", "1.0.0")
    with LookupClient(f"{services.url}/osv", min_interval=0) as client:
        client.advisories([lookup])
    assert len(batches) == 2 and lookup.osv_status == "ok" and lookup.advisories == []


def test_a_client_closed_answers_every_fetch_with_a_reason_and_leaves_no_thread(services):
    def hang(handler: BaseHTTPRequestHandler) -> None:
        time.sleep(3.0)
        send(handler, 200, {})

    services.routes["/npm/"] = hang
    client = LookupClient(f"{services.url}/osv", f"{services.url}/npm", min_interval=0, timeout=30.0)
    found: list[str] = []
    lookup = PackageLookup("npm", "slow", "1.0.0")
    asking = threading.Thread(target=lambda: (client.metadata(lookup), found.append(lookup.metadata_status)))
    asking.start()
    while not services.asked("/npm/"):
        time.sleep(0.02)
    client.close()  # while the lookup waits for its answer
    asking.join(10)
    assert not asking.is_alive() and found == ["client closed"]
    client.metadata(after := PackageLookup("npm", "late", "1.0.0"))
    assert after.metadata_status == "client closed"
    assert not [t for t in threading.enumerate() if t.name == "lookups-io" and t.is_alive()]


def test_a_client_closed_from_two_threads_at_once_closes_once_and_neither_waits(services):
    for _ in range(20):
        client = LookupClient(f"{services.url}/osv", min_interval=0)
        closers = [threading.Thread(target=client.close) for _ in range(2)]
        for closer in closers:
            closer.start()
        for closer in closers:
            closer.join(10)
        assert not [c for c in closers if c.is_alive()]
    assert not [t for t in threading.enumerate() if t.name == "lookups-io" and t.is_alive()]
