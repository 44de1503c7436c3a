"""Politeness, tested once where it is kept (probe/hosts.py), against a loopback server that counts what each
host receives: one request at a time per host, at most `concurrency` hosts at once, an opted-out host never
contacted, robots.txt read once per origin per run and obeyed (disallowed, or unreadable: our trouble), and
one item's failure, or one host's, never the run's end. The scan loops (daily, frequent, readiness) all run
on this runner."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections import Counter

from sevenmaps_pipeline.probe.config import ProbeConfig, Timeouts
from sevenmaps_pipeline.probe.hosts import HostRunner, HostSession, NotAdmitted, Robots, by_host
from sevenmaps_pipeline.probe.origins import OriginBook
from sevenmaps_pipeline.registry.listing import SkipReason

NOW = dt.datetime(2026, 11, 20, 12, tzinfo=dt.UTC)
ROBOTS = {"private.test": b"User-agent: *\nDisallow: /\n", "partial.test": b"User-agent: 7Maps-bot\nDisallow: /no\n"}


class HostCounter:
    """Answers every request after `pause` s; per Host header: requests, most in flight at once; robots.txt
    from ROBOTS (404 for other hosts, 503 for broken.test)."""

    def __init__(self, pause: float = 0.05) -> None:
        self.pause = pause
        self.requests: Counter[str] = Counter()
        self.robots: Counter[str] = Counter()
        self.in_flight: Counter[str] = Counter()
        self.most: Counter[str] = Counter()
        self.hosts_now = self.most_hosts = 0
        self.port = 0

    async def __aenter__(self) -> HostCounter:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode()
                path = head.split(" ", 2)[1]
                host = next(line.split(":", 1)[1].strip() for line in head.split("\r\n") if line.lower()
                            .startswith("host:"))
                self.requests[host] += 1
                self.in_flight[host] += 1
                if self.in_flight[host] == 1:
                    self.hosts_now += 1
                    self.most_hosts = max(self.most_hosts, self.hosts_now)
                self.most[host] = max(self.most[host], self.in_flight[host])
                await asyncio.sleep(self.pause)
                if path == "/robots.txt":
                    self.robots[host] += 1
                    status, body = (503, b"") if host == "broken.test" else \
                        ((200, ROBOTS[host]) if host in ROBOTS else (404, b""))
                else:
                    status, body = 200, b"ok"
                self.in_flight[host] -= 1
                if self.in_flight[host] == 0:
                    self.hosts_now -= 1
                writer.write(b"HTTP/1.1 %d X\r\nContent-Length: %d\r\n\r\n%s" % (status, len(body), body))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


HOSTS = ["a.test", "b.test", "c.test", "d.test", "private.test", "partial.test", "broken.test", "gone.test"]


def _run(concurrency: int, robots: Robots, urls: list[str]) -> tuple[HostCounter, dict[str, str], list[str]]:
    async def main() -> tuple[HostCounter, dict[str, str], list[str]]:
        async with HostCounter() as server:
            config = ProbeConfig(host_map={h: server.port for h in HOSTS}, concurrency=concurrency,
                                 opted_out_hosts=frozenset({"gone.test"}), timeouts=Timeouts(robots_txt=5))
            runner: HostRunner[str] = HostRunner(config, lambda: NOW, robots, OriginBook())
            outcome: dict[str, str] = {}
            failures: list[str] = []

            async def work(session: HostSession, url: str) -> None:
                if url.endswith("/raise"):
                    raise RuntimeError("our own bug")
                refused = await session.admission(url)
                if refused is not None:
                    outcome[url] = str(refused.kind) if refused.kind else f"unavailable: {refused.unavailable}"
                    return
                answer = await session.client_for(url).get(url)
                outcome[url] = f"HTTP {answer.status_code}"

            def failed(url: str, exc: BaseException, whole_host: bool) -> None:
                failures.append(f"{url}: {type(exc).__name__}")

            await runner.run(by_host(urls, lambda u: u), work, failed)
            return server, outcome, failures

    return asyncio.run(main())


def test_one_request_at_a_time_per_host_and_at_most_the_concurrency_of_hosts():
    urls = [f"http://{h}/mcp/{i}" for h in ("a.test", "b.test", "c.test", "d.test") for i in range(4)]
    server, outcome, failures = _run(2, Robots.never(), urls)
    assert failures == [] and set(outcome.values()) == {"HTTP 200"}
    assert {h: server.requests[h] for h in ("a.test", "b.test", "c.test", "d.test")} == dict.fromkeys(
        ("a.test", "b.test", "c.test", "d.test"), 4)
    assert max(server.most.values()) == 1, "two requests were in flight on one host"
    assert server.most_hosts == 2, "hosts did not run side by side up to the concurrency, or ran past it"


def test_robots_is_read_once_per_origin_and_obeyed_and_opted_out_hosts_are_never_contacted():
    robots = Robots(lambda book, origin, now: book.of_day(origin, now.date()))
    urls = (["http://private.test/mcp", "http://private.test/other", "http://partial.test/no/mcp",
             "http://partial.test/yes/mcp", "http://broken.test/mcp", "http://gone.test/mcp", "http://a.test/mcp",
             "http://a.test/raise", "http://a.test/after"])
    server, outcome, failures = _run(4, robots, urls)
    assert outcome["http://private.test/mcp"] == outcome["http://private.test/other"] == SkipReason.ROBOTS
    assert outcome["http://partial.test/no/mcp"] == SkipReason.ROBOTS
    assert outcome["http://partial.test/yes/mcp"] == "HTTP 200"
    assert outcome["http://broken.test/mcp"].startswith("unavailable: robots.txt answered HTTP 503")
    assert outcome["http://gone.test/mcp"] == SkipReason.OPTED_OUT
    assert server.requests["gone.test"] == 0, "an opted-out host was contacted"
    assert server.robots == Counter({"private.test": 1, "partial.test": 1, "broken.test": 1, "a.test": 1})
    assert server.requests["private.test"] == 1 and server.requests["broken.test"] == 1  # robots.txt alone
    # one item's failure is that item's; its host goes on
    assert failures == ["http://a.test/raise: RuntimeError"] and outcome["http://a.test/after"] == "HTTP 200"


def test_a_name_the_guard_refuses_is_skipped_without_a_request():
    async def main() -> str:
        config = ProbeConfig(concurrency=2)  # no host map: loopback is refused, as in production
        runner: HostRunner[str] = HostRunner(config, lambda: NOW, Robots(lambda b, o, n: None), OriginBook())
        seen: list[str] = []

        async def work(session: HostSession, url: str) -> None:
            refused = await session.admission(url)
            seen.append(str(refused.kind) if refused else "admitted")

        await runner.run({"127.0.0.1": ["https://127.0.0.1/mcp"]}, work, lambda *a: seen.append("failed"))
        return seen[0]

    assert asyncio.run(main()) == SkipReason.NON_PUBLIC


def test_a_host_is_never_in_two_sessions_at_once_even_over_two_runs_of_one_runner():
    async def main() -> HostCounter:
        async with HostCounter() as server:
            config = ProbeConfig(host_map={h: server.port for h in HOSTS}, concurrency=4)
            runner: HostRunner[str] = HostRunner(config, lambda: NOW, Robots.never(), OriginBook())

            async def work(session: HostSession, url: str) -> None:
                assert await session.admission(url) is None
                await session.client_for(url).get(url)

            def failed(url: str, exc: BaseException, whole_host: bool) -> None:
                raise AssertionError(f"{url}: {exc!r}")

            urls = [f"http://a.test/mcp/{i}" for i in range(4)] + [f"http://b.test/mcp/{i}" for i in range(4)]
            await asyncio.gather(runner.run(by_host(urls, lambda u: u), work, failed),
                                 runner.run(by_host(urls, lambda u: u), work, failed))
            return server

    server = asyncio.run(main())
    assert server.requests == Counter({"a.test": 8, "b.test": 8})
    assert max(server.most.values()) == 1, "two runs of one runner had one host in flight twice"
    assert server.most_hosts == 2


def test_the_client_is_handed_out_only_for_a_url_admitted_on_the_sessions_host():
    async def main() -> tuple[HostCounter, list[str]]:
        async with HostCounter() as server:
            config = ProbeConfig(host_map={h: server.port for h in HOSTS}, concurrency=2)
            runner: HostRunner[str] = HostRunner(config, lambda: NOW, Robots.never(), OriginBook())
            errors: list[str] = []

            async def work(session: HostSession, url: str) -> None:
                if url.endswith("/unasked"):  # a loop that forgot to ask
                    await session.client_for(url).get(url)
                elif url.endswith("/elsewhere"):  # a loop that asks for another host's URL in this host's session
                    await session.admission("http://b.test/mcp")
                else:
                    assert await session.admission(url) is None
                    await session.client_for(url).get(url)

            def failed(url: str, exc: BaseException, whole_host: bool) -> None:
                errors.append(f"{url}: {type(exc).__name__}")

            await runner.run({"a.test": ["http://a.test/unasked", "http://a.test/elsewhere", "http://a.test/mcp"]},
                             work, failed)
            return server, errors

    server, errors = asyncio.run(main())
    assert errors == ["http://a.test/unasked: NotAdmitted", "http://a.test/elsewhere: NotAdmitted"]
    assert server.requests == Counter({"a.test": 1}), "a URL was contacted without being admitted"
    assert issubclass(NotAdmitted, RuntimeError)


CHILD = """
import asyncio, datetime as dt, json, sys
from pathlib import Path
from sevenmaps_pipeline.probe.config import ProbeConfig
from sevenmaps_pipeline.probe.hosts import HostRunner, Robots, by_host
from sevenmaps_pipeline.probe.origins import OriginBook
port, leases, urls = int(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])
config = ProbeConfig(host_map={"a.test": port, "b.test": port}, concurrency=2, host_leases=leases)

async def work(session, url):
    assert await session.admission(url) is None
    await session.client_for(url).get(url)

def failed(url, exc, whole_host):
    raise SystemExit(f"{url}: {exc!r}")

runner = HostRunner(config, lambda: dt.datetime.now(dt.UTC), Robots.never(), OriginBook())
asyncio.run(runner.run(by_host(urls, lambda u: u), work, failed))
"""


def test_a_host_another_run_of_the_lake_holds_is_not_contacted_until_it_lets_go(tmp_path):
    """The lanes run side by side in processes of their own (docs/operations.md, "Schedules"): a host leased
    by one process (here the test's, as a readiness run would hold it) is not contacted by another (a
    slice's run, a child process) until it is given back; the child's other host goes on meanwhile."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    import sevenmaps_pipeline
    from sevenmaps_pipeline.probe import leases

    path = tmp_path / ".host-leases"
    urls = [f"http://a.test/mcp/{i}" for i in range(3)] + [f"http://b.test/mcp/{i}" for i in range(3)]

    async def main() -> tuple[HostCounter, int, int]:
        async with HostCounter() as server:
            assert leases.try_take(path, "a.test")
            child = await asyncio.create_subprocess_exec(
                sys.executable, "-c", CHILD, str(server.port), str(path), json.dumps(urls),
                cwd=str(Path(sevenmaps_pipeline.__file__).parent.parent))
            try:
                for _ in range(1200):  # b.test done: the child is running (a generous budget, not a timing)
                    if server.requests["b.test"] == 3 or child.returncode is not None:
                        break
                    await asyncio.sleep(0.05)
                a_while_held = server.requests["a.test"]
            finally:
                leases.give_back(path, "a.test")
            code = await asyncio.wait_for(child.wait(), 120)
            return server, a_while_held, code

    server, a_while_held, code = asyncio.run(main())
    assert code == 0
    assert server.requests["b.test"] == 3 and a_while_held == 0, "a leased host was contacted by another run"
    assert server.requests["a.test"] == 3 and max(server.most.values()) == 1
    # The lease is the process's: taken again and given back in this one, it is free for the next run.
    assert leases.try_take(path, "a.test") and leases.try_take(path, "a.test")
    leases.give_back(path, "a.test")
    leases.give_back(path, "a.test")
    probe = subprocess.run([sys.executable, "-c", "import fcntl,os,sys; fd=os.open(sys.argv[1], os.O_RDWR); "
                            f"fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, {leases.offset_of('a.test')})",
                            str(path)], capture_output=True)
    assert probe.returncode == 0, probe.stderr
