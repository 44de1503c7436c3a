"""Shared fixtures: a lake in a temp dir, a real Ed25519 key, and writers for hand-made raw rows."""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from sevenmaps_pipeline.integrity.keys import generate_key
from sevenmaps_pipeline.lake.keys import origin, server_id, server_key
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.lake.schemas import DAILY_STATUS, RAW_PROBES, RAW_REGISTRY, conform
from sevenmaps_pipeline.rules.fingerprints import summarize_tools

warnings.filterwarnings("ignore", message=".*is currently in beta.*")
# The tests' days are in 2026; the code location's partitions start there (docs/operations.md, "The first day"),
# never at the first day of whatever lake the checkout holds.
os.environ.setdefault("SEVENMAPS_FIRST_DAY", "2026-01-01")
# No test ever reaches the real code host: the readiness lookups default to a closed loopback port unless
# a test serves its own fixture (docs/development.md).
os.environ["SEVENMAPS_CODEHOST_URL"] = "http://127.0.0.1:9"
os.environ.pop("SEVENMAPS_GITHUB_TOKEN", None)

# No test resolves a public name: in the test processes only loopback names and numeric addresses resolve;
# any other name (a fleet `.test` name asked of the system resolver because a host-map rule regressed, a
# public name) fails at once as a name that does not exist, and no DNS query leaves the machine. The
# names refused are kept in REFUSED_NAMES for the tests that assert the refusal.
# The machine's own name is in its /etc/hosts (gRPC and Dagster ask for it).
LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", socket.gethostname().lower()}
REFUSED_NAMES: list[str] = []
_system_getaddrinfo = socket.getaddrinfo


def _loopback_only_getaddrinfo(host, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else host
    if name is not None:
        bare = name.lower().rstrip(".")
        try:
            ipaddress.ip_address(bare.split("%", 1)[0])
        except ValueError:
            if bare not in LOOPBACK_NAMES and not bare.endswith(".localhost"):
                REFUSED_NAMES.append(bare)
                raise socket.gaierror(socket.EAI_NONAME,
                                      f"tests resolve loopback names only, not {name!r}") from None
    return _system_getaddrinfo(host, *args, **kwargs)


socket.getaddrinfo = _loopback_only_getaddrinfo

# The longest modules, with their rough seconds on one worker of this 2-core machine (a Dagster daemon's
# ticks, Dagster runs over several days, a fleet demo's runs). The four that read the
# shared demo lake go together, after the other long modules of their worker: the lake is built in a process
# of its own from the start of the run (_fleet_demo_in_background), and by then it has been built.
DEMO_READERS = ("test_ui_runs.py", "test_surfaces_demo.py", "test_analyst_docs.py", "test_ts_sdk_client.py")
LONGEST = {
    ("test_ui_backfill.py",): 65,
    DEMO_READERS: 50,
    ("test_dagster_e2e.py",): 55,
    ("test_dagster_homes.py",): 35,
    ("test_scan.py",): 25,
    ("test_prober_overload.py",): 30,
    ("test_time_zones.py",): 20,
    ("test_day_freshness.py",): 45,
    ("test_asset_metadata.py",): 15,
    ("test_wheel_install.py",): 10,
    ("test_bench_smoke.py",): 45,
}


def pytest_collection_modifyitems(session, config, items):
    """The long modules start first, dealt out to the workers so that each starts on an even share of them.

    xdist's load scheduling (`make test`: pytest -n 3) hands each worker, in order, a first chunk of
    len(items) // workers // 4 consecutive tests, then more as it runs low. Put every long module at the
    front of one worker's first chunk (greedily balanced by the seconds above), fill each chunk with
    the rest, and queue what is left after them. With all long modules at the front of one worker's chunk,
    that worker ran them one after another while the other one waited (12m26s on a fresh clone). The demo
    lake's readers come last among their worker's long modules, when the lake's build has ended."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    unit_of = {name: unit for unit in LONGEST for name in unit}
    # stable: long modules first, the demo lake's readers last of them
    ordered = sorted(items, key=lambda item: (item.path.name not in unit_of, item.path.name in DEMO_READERS))
    if workers < 2:
        items[:] = ordered
        return
    bins: list[list] = [[] for _ in range(workers)]
    loads = [0] * workers
    readers_bin = 0
    for unit in sorted(LONGEST, key=LONGEST.__getitem__, reverse=True):
        members = [item for item in ordered if item.path.name in unit]
        if members:
            k = loads.index(min(loads))
            bins[k] += members
            loads[k] += LONGEST[unit]
            readers_bin = k if unit == DEMO_READERS else readers_bin
    bins[readers_bin].sort(key=lambda item: item.path.name in DEMO_READERS)  # stable: the readers last
    rest = [item for item in ordered if item.path.name not in unit_of]
    chunk = max(len(items) // workers // 4, 2)
    if any(len(b) > chunk for b in bins):  # too few tests to deal out: long modules first, as they come
        items[:] = ordered
        return
    dealt = []
    for b in bins:
        take = chunk - len(b)
        dealt += b + rest[:take]
        rest = rest[take:]
    items[:] = dealt + rest


DAY = dt.date(2026, 11, 10)
TOOLS = [{"name": "get_weather", "description": "Read the forecast", "inputSchema": {"type": "object"}}]


@pytest.fixture(scope="session", autouse=True)
def _bench_history_of_the_tests(tmp_path_factory) -> Iterator[None]:
    """A bench part run by a test (`bench --only categories`) appends to a history of the test run's own, never
    to the checkout's .bench/history.jsonl (devtools/bench_history.py)."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SEVENMAPS_BENCH_HISTORY", str(tmp_path_factory.mktemp("bench-history") / "history.jsonl"))
        yield


@pytest.fixture
def lake(tmp_path: Path) -> LakePaths:
    return LakePaths.at(tmp_path / "lake")


@pytest.fixture
def signing_key(tmp_path: Path) -> Path:
    return generate_key(tmp_path / "keys" / "signing.pem")


def probe(url: str, outcome: str, *, day: dt.date = DAY, hour: int = 3, minute: int = 0, second: int = 0,
          run_id: str = "run-1", check_kind: str = "daily", tools: list | None = None, **extra) -> dict:
    key = server_key(url)
    row = {
        "day": day, "check_kind": check_kind, "run_id": run_id, "server_key": key, "server_id": server_id(key),
        "server_name": f"io.test/{key.split('.')[0]}", "server_version": "1.0.0", "remote_type": "streamable-http",
        "url": url, "origin": origin(url),
        "started_at": dt.datetime.combine(day, dt.time(hour, minute, second), dt.UTC),
        "handshake_ms": 250, "outcome": outcome, "prober_version": "test",
    }
    if outcome == "ok":
        summary = summarize_tools(tools if tools is not None else TOOLS)
        row.update(tools_json=summary.tools_json, tool_count=summary.tool_count,
                   tool_list_size=summary.tool_list_size, tools_hash=summary.tools_hash, http_status=200,
                   protocol_version="2025-06-18")
    row.update(extra)
    return row


def land_probes(lake: LakePaths, rows: list[dict], day: dt.date = DAY, run_id: str = "run-1") -> Path:
    table = conform(pa.Table.from_pylist(rows, RAW_PROBES.schema), RAW_PROBES)
    return write_parquet(lake, lake.raw_dir("probes", day) / f"{run_id}.parquet", table)


def land_registry(lake: LakePaths, urls: list[str], day: dt.date = DAY, skip: dict[str, str] | None = None,
                  names: list[str] | None = None, statuses: list[str] | None = None) -> Path:
    """A registry snapshot listing each of `urls` in order (a URL given twice is listed twice), named io.test/<i>
    unless `names` (parallel to `urls`) says otherwise, active unless `statuses` does."""
    skip = skip or {}
    names = names or [f"io.test/{i}" for i in range(len(urls))]
    statuses = statuses or ["active"] * len(urls)
    rows = [{"day": day, "server_name": name, "server_version": "1.0.0", "status": status,
             "remote_type": "streamable-http", "url": u, "server_key": server_key(u),
             "server_id": server_id(server_key(u)), "listing": "skip" if u in skip else "probe",
             "skip_reason": skip.get(u)} for u, name, status in zip(urls, names, statuses, strict=True)]
    return write_parquet(lake, lake.registry_file(day), conform(pa.Table.from_pylist(rows, RAW_REGISTRY.schema),
                                                                 RAW_REGISTRY))


SHOWN = {"o": "answers with tools", "a": "answers, asks for sign-in", "p": "answers, asks for payment", "d": "down",
         "n": "no data"}


def land_status(lake: LakePaths, day: dt.date, codes: dict[str, str], hashes: dict[str, str | None] | None = None,
                handshake: dict[str, int] | None = None, tool_counts: dict[str, int] | None = None,
                not_mcp: frozenset[str] = frozenset()) -> Path:
    """Write a daily_status partition by hand (for history tests): an o endpoint lists one tool unless told; a d
    endpoint in `not_mcp` answered HTTP 405 (shown "answers, but not as a standard MCP endpoint"), else timed out."""
    hashes, handshake, tool_counts = hashes or {}, handshake or {}, tool_counts or {}
    rows = [{"day": day, "server_key": k, "server_id": server_id(k), "code": c,
             "outcome": None if c == "n" else ("http_405" if k in not_mcp else
                                               {"o": "ok", "a": "needs_auth", "p": "http_402", "d": "timeout"}[c]),
             "http_status": 405 if k in not_mcp else None,
             "shown_status": "answers, but not as a standard MCP endpoint" if k in not_mcp else SHOWN[c],
             "tools_hash": hashes.get(k), "handshake_ms": handshake.get(k),
             "tool_count": tool_counts.get(k, 1) if c == "o" else None, "method_version": "test"}
            for k, c in codes.items()]
    return write_parquet(lake, lake.curated_file("daily_status", day),
                         conform(pa.Table.from_pylist(rows, DAILY_STATUS.schema), DAILY_STATUS))


def make_creating_high_risk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """7Maps changes its risk vocabulary (method risk-9.9-test): creating is now red, not yellow. Undone
    when the test ends."""
    import json

    from sevenmaps_pipeline.rules import risk

    doc = json.loads(risk.VOCABULARY.read_text())
    doc["method"] = "risk-9.9-test"
    doc["yellow_verbs"].remove("create")
    doc["red_verbs"].append("create")
    stricter = tmp_path / "risk_vocabulary.json"
    stricter.write_text(json.dumps(doc))
    monkeypatch.setattr(risk, "VOCABULARY", stricter)
    risk.default_vocabulary.cache_clear()
    request.addfinalizer(risk.default_vocabulary.cache_clear)


def copy_for_serving(source: LakePaths, target: Path, also_skip: tuple[str, ...] = ()) -> LakePaths:
    """A copy of a lake with what `sevenmaps serve` reads (report_road writes into it): not the Dagster home,
    snapshots, warehouses, nor any hidden temp file a concurrent test's run may be renaming into place."""
    def skipped(_folder: str, names: list[str]) -> list[str]:
        return [n for n in names if n in (".dagster", "exports", *also_skip) or n.endswith(".duckdb")
                or (n.startswith(".") and n != ".well-known")]

    shutil.copytree(source.root, target, symlinks=True, ignore=skipped)
    return LakePaths.at(target)


@contextlib.contextmanager
def served_on_loopback(app: Any, what: str, limits: Any = None) -> Iterator[str]:
    """`app` (ASGI) served by uvicorn on a free loopback port in a thread, as `sevenmaps serve` serves it (with
    its bounds, or `limits`: surfaces/http_bounds.py ServeLimits); yields its base URL."""
    import socket
    import threading
    import time

    import uvicorn

    # uvicorn listens on the very socket the port was taken with (a port let go could be taken meanwhile).
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    from sevenmaps_pipeline.surfaces.http_bounds import ServeLimits
    from sevenmaps_pipeline.surfaces.serve import server_config

    # As `sevenmaps serve` runs it: forwarded headers only from proxies the operator names (none here).
    server = uvicorn.Server(server_config(app, "127.0.0.1", port, log_level="critical",
                                          limits=limits or ServeLimits()))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, f"{what} did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def unassigned_port() -> int:
    """A free loopback port below the kernel's ephemeral range, for a server another process starts.

    A port the kernel hands out for bind(0) stays in its ephemeral range, where every outgoing loopback
    connection also takes its local port: while `dagster dev` spends seconds starting, the other test worker's
    connections can take the port first, and the webserver then fails to bind ("address already in use")
    while `dagster dev` itself keeps running. Below the range only another explicit choice can collide."""
    import random
    import socket

    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    below = range(10000, low) if low > 10200 else range(1024, 65536)
    for port in random.sample(below, k=200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free loopback port between {below.start} and {below.stop}")


def wait_for_ui(port: int, proc: Any, log: Path, seconds: float = 180) -> str:
    """The GraphQL URL of the Dagster UI that `proc` (its process group writing `log`) serves on `port`, once
    it answers; fails at once, with the log's tail, when the process exits or its webserver cannot bind."""
    import time

    import httpx

    def tail() -> str:
        return log.read_text(errors="replace")[-2500:]

    deadline = time.monotonic() + seconds
    while True:
        assert proc.poll() is None, f"the UI exited ({proc.returncode}): {tail()}"
        try:
            if httpx.get(f"http://127.0.0.1:{port}/server_info", timeout=2).status_code == 200:
                return f"http://127.0.0.1:{port}/graphql"
        except httpx.HTTPError:
            pass
        assert "address already in use" not in log.read_text(errors="replace"), f"the UI could not bind: {tail()}"
        assert time.monotonic() < deadline, f"the UI did not come up within {seconds:.0f} s: {tail()}"
        time.sleep(1)


def reporter(name: str) -> str:
    """A reporter id as the reporting service makes it: a keyed hash, never an IP address."""
    import hashlib
    import hmac

    return hmac.new(b"test-reporting-key", name.encode(), hashlib.sha256).hexdigest()


def report(server: str, *, ok: bool = True, who: str = "r1", paid: bool = False, day: dt.date = DAY,
           about_day: dt.date | None = None, **extra) -> dict:
    """One raw agent report (fixed fields only) about `server` (a server_key or server_id)."""
    row = {"day": day, "about_day": about_day or day, "server": server, "tool": "get_weather", "ok": ok,
           "fail": None if ok else "server_error", "ms": 120, "reporter_id": reporter(who), "paid": paid}
    row.update(extra)
    return row


def land_reports(lake: LakePaths, rows: list[dict], day: dt.date = DAY, batch: str = "batch-1") -> Path:
    from sevenmaps_pipeline.lake.schemas import RAW_AGENT_REPORTS

    table = conform(pa.Table.from_pylist(rows, RAW_AGENT_REPORTS.schema), RAW_AGENT_REPORTS)
    return write_parquet(lake, lake.raw_dir("agent_reports", day) / f"{batch}.parquet", table)


DEMO_DAYS = 4  # the fleet timeline's first four days: changes (on the last day too), red tools, downs, incidents
# The demo lake's build in a process of its own: the test processes' guards first (this module: loopback
# names only, the code host on a closed port), then `sevenmaps demo` itself; its exit code left beside the lake.
DEMO_BUILD = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import conftest
from sevenmaps_pipeline.cli import main
root = Path(sys.argv[2])
code = "raised"
try:
    code = main(conftest.demo_args(root))
    if code == 0:
        (root / "built").touch()
finally:
    (root / "exit-code").write_text(str(code))
sys.exit(0 if code == 0 else 1)
"""


def demo_args(root: Path) -> list[str]:
    return ["demo", "--days", str(DEMO_DAYS), "--lake", str(root / "lake"),
            "--signing-key", str(root / "secrets" / "signing.pem")]


def _start_demo_build(root: Path, pass_fds: tuple[int, ...] = ()) -> subprocess.Popen:
    """DEMO_BUILD in a process of its own, its output in fleet-demo.log beside the lake's folder."""
    with open(root.parent / "fleet-demo.log", "w") as log:
        return subprocess.Popen(
            [sys.executable, "-c", DEMO_BUILD, str(Path(__file__).parent), str(root)],
            env={k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}, stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT, pass_fds=pass_fds, start_new_session=True)


def _demo_root(tmp_path_factory) -> Path:
    """The demo lake's folder, shared by the xdist workers (their common temp folder)."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "fleet-demo"


@pytest.fixture(scope="session", autouse=True)
def _fleet_demo_in_background(request, tmp_path_factory) -> Iterator[None]:
    """When a selected test reads the demo lake, its build starts at the beginning of the run in a process of
    its own, holding the lake's lock until it ends, and the workers run other tests meanwhile: built by the
    first worker to need it, it held that worker for a minute and a half while a core stood idle (the UI
    backfill on the other worker spends most of its two minutes waiting for the Dagster daemon)."""
    if not any("fleet_demo_lake" in item.fixturenames for item in request.session.items):
        yield
        return
    root = _demo_root(tmp_path_factory)
    build = None
    # (the lock held: another worker is building it)
    with open(root.parent / "fleet-demo.lock", "w") as lock, contextlib.suppress(BlockingIOError):
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if not (root / "exit-code").exists() and not (root / "built").exists():
            root.mkdir(exist_ok=True)
            # the lock passes to the build (the same open file): released when the build's process ends
            build = _start_demo_build(root, pass_fds=(lock.fileno(),))
    yield
    if build is not None:  # a run that stops early ends the build; otherwise a reader may still wait for it
        try:
            build.wait(timeout=1 if request.session.shouldstop or request.session.shouldfail else 900)
        except subprocess.TimeoutExpired:
            os.killpg(build.pid, signal.SIGKILL)
            build.wait()


@pytest.fixture(scope="session")
def fleet_demo_lake(tmp_path_factory) -> LakePaths:
    """A lake made by `sevenmaps demo` itself (the loopback fleet, runs launched through the code location,
    signed and verified), shorter than the default 30 days; built once per test run, shared by the xdist
    workers: in the background from the start of the run (above), else (no build began) by the same process
    started by the first worker to need it, under a lock in their common temp folder; the others wait for it
    and reuse it. Tests only read it (a test that writes copies it first)."""
    root = _demo_root(tmp_path_factory)
    with open(root.parent / "fleet-demo.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # waits while it is being built
        if not (root / "built").is_file() and not (root / "exit-code").exists():  # no build began: this one
            root.mkdir(exist_ok=True)
            _start_demo_build(root).wait()
        if not (root / "built").is_file():  # that build failed: never built again
            log = (root.parent / "fleet-demo.log").read_text(errors="replace")
            code = (root / "exit-code").read_text() if (root / "exit-code").exists() else "without an exit code"
            pytest.fail(f"`sevenmaps demo` exited {code}: {log[-3000:]}")
    return LakePaths.at(root / "lake")
