"""Whether the prober could keep up while it checked an endpoint (docs/methodology.md, "When the prober is
overloaded").

A timeout is a verdict about a server only if we were there to see the answer arrive. Three measures,
taken over the exact span of each check:

- **loop lag**: a ticker asks to wake every TICK seconds; how late it woke is how long nothing else on the
  event loop could run either (a read that had arrived, a timer that should have fired). The largest lag
  seen while the check was open is kept.
- **CPU wait of the loop's thread**: the time the kernel kept the prober's thread runnable but off the
  CPU (the second field of /proc/thread-self/schedstat, in ns).
- **the machine's CPU pressure**: the time some runnable task waited for a CPU (PSI, the `some total` of
  /proc/pressure/cpu, in µs), recorded beside the other two as context but never deciding alone: other
  tasks waiting does not make our answers late, and a busy CI machine is busy all the time.

Where the files do not exist (not Linux, no PSI) that measure reads 0 and the others still decide.
Nothing here asserts a time; the thresholds are in rules/methods.py (OVERLOAD_PARAMS).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass

from ..rules.methods import OVERLOAD_METHOD, OVERLOAD_PARAMS

TICK = 0.1  # seconds between the ticker's wake-ups
_SCHEDSTAT = "/proc/thread-self/schedstat"
_PRESSURE = "/proc/pressure/cpu"


class _Counters:
    """The two kernel counters, read through descriptors opened once (in the loop's thread: thread-self is
    the thread that opens it). A check reads them four times, and opening the files each time cost about
    2% of the prober's CPU (docs/scaling.md, "The prober")."""

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}
        for path in (_SCHEDSTAT, _PRESSURE):
            with contextlib.suppress(OSError):  # not Linux, or no PSI: that measure reads 0
                self._fds[path] = os.open(path, os.O_RDONLY)

    def _read(self, path: str) -> bytes | None:
        fd = self._fds.get(path)
        if fd is None:
            return None
        try:
            return os.pread(fd, 512, 0)
        except OSError:
            return None

    def schedstat_wait(self) -> float:
        """Seconds the loop's thread has waited runnable for a CPU (0 where the kernel does not say)."""
        try:
            return int((self._read(_SCHEDSTAT) or b"").split()[1]) / 1e9
        except (IndexError, ValueError):
            return 0.0

    def pressure(self) -> float:
        """Seconds some task on the machine has waited for a CPU (0 where PSI is not available)."""
        try:
            first = (self._read(_PRESSURE) or b"").split(b"\n", 1)[0]  # some avg10=.. avg60=.. total=N
            return int(first.rsplit(b"total=", 1)[1]) / 1e6
        except (IndexError, ValueError):
            return 0.0

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


@dataclass(frozen=True)
class LoadReading:
    """What the prober saw of its own load during one check."""

    wall_s: float
    max_lag_s: float
    cpu_wait_s: float
    pressure_s: float

    def overloaded(self) -> str | None:
        """Why the prober could not keep up during the check, in one line, or None when it could."""
        p = OVERLOAD_PARAMS
        why = []
        if self.max_lag_s >= p["max_loop_lag_s"]:
            why.append(f"event loop {self.max_lag_s:.2f} s late")
        if self.cpu_wait_s >= max(p["min_cpu_wait_s"], p["cpu_wait_share"] * self.wall_s):
            why.append(f"prober waited {self.cpu_wait_s:.2f} s for a CPU")
        if not why:
            return None
        if self.wall_s > 0 and self.pressure_s > 0:  # context only: other tasks waiting is not our lateness
            why.append(f"machine CPU pressure {min(1.0, self.pressure_s / self.wall_s):.0%}")
        return f"{'; '.join(why)} during a {self.wall_s:.1f} s check ({OVERLOAD_METHOD})"


class _Window:
    __slots__ = ("max_lag", "start", "wait0", "pressure0")

    def __init__(self, counters: _Counters) -> None:
        self.max_lag = 0.0
        self.start = time.monotonic()
        self.wait0 = counters.schedstat_wait()
        self.pressure0 = counters.pressure()


class LoadMonitor:
    """Measures the loop's lag and the CPU wait over each check's span. Use inside the event loop that runs
    the checks: `async with monitor:` runs the ticker, `with monitor.watch() as reading:` spans a check.

    `reading()` of a watch is called after its block; it is None until then."""

    def __init__(self) -> None:
        self._open: set[_Window] = set()
        self._task: asyncio.Task[None] | None = None
        self._counters: _Counters | None = None
        self.max_lag_s = 0.0  # the largest lag of the whole run (the bench prints it)

    async def __aenter__(self) -> LoadMonitor:
        self._counters = _Counters()
        self._task = asyncio.create_task(self._tick())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._counters is not None:
            self._counters.close()
            self._counters = None

    @property
    def counters(self) -> _Counters:
        if self._counters is None:  # watched outside `async with` (a test): opened in this thread, kept
            self._counters = _Counters()
        return self._counters

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + TICK
            await asyncio.sleep(TICK)
            lag = max(0.0, loop.time() - due)
            if lag > self.max_lag_s:
                self.max_lag_s = lag
            for window in self._open:
                if lag > window.max_lag:
                    window.max_lag = lag

    @contextlib.contextmanager
    def watch(self) -> Iterator[list[LoadReading]]:
        """Spans one check; the list holds its LoadReading once the block has ended."""
        counters = self.counters
        window = _Window(counters)
        self._open.add(window)
        out: list[LoadReading] = []
        try:
            yield out
        finally:
            self._open.discard(window)
            reading = LoadReading(wall_s=time.monotonic() - window.start, max_lag_s=window.max_lag,
                                  cpu_wait_s=max(0.0, counters.schedstat_wait() - window.wait0),
                                  pressure_s=max(0.0, counters.pressure() - window.pressure0))
            out.append(reading)

    async def calm(self, quiet_s: float, at_most_s: float) -> bool:
        """Wait until the loop has gone `quiet_s` without a late tick (at most `at_most_s`): whether it did."""
        deadline = time.monotonic() + at_most_s
        while time.monotonic() < deadline:
            with self.watch() as reading:
                await asyncio.sleep(quiet_s)
            if reading[0].overloaded() is None:
                return True
        return False
