"""Telling our machine's trouble from a server's (docs/methodology.md, "Our machine's trouble").

A request can fail before it reaches the server for reasons that are ours alone: the prober out of file
descriptors, memory or local ports, no route from this machine to the address's network, our resolver
failing. Such a failure says nothing about the server, so it is never `unreachable` (d): the check is
`not_checked` (`prober_resources`, n), checked again at the end of the scan, and redone by a later slice.
A name that does not exist is the server's (d), as a refused connection is.
"""

from __future__ import annotations

import errno
import os
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass

import httpcore

from ..rules.methods import OVERLOAD_METHOD, OVERLOAD_PARAMS

# What the kernel says when the shortage is on our side of the connection: our open files (the process's,
# the system's), buffers, memory, local ports.
OUR_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM, errno.EADDRNOTAVAIL})
# "No route": ours when this machine has none (no IPv6), theirs when a router on the way said so (an ICMP
# net-unreachable or net-prohibited: a firewall's reject, a withdrawn prefix): told apart by `no_route_from_here`.
NO_ROUTE = frozenset({errno.ENETUNREACH, errno.ENETDOWN, errno.EAFNOSUPPORT})
# What a resolver answers for a name with no address: the server's (its name does not resolve).
NO_SUCH_NAME = frozenset(code for code in (getattr(socket, "EAI_NONAME", None), getattr(socket, "EAI_NODATA", None),
                                           getattr(socket, "EAI_ADDRFAMILY", None)) if code is not None)
# "Try again" (a SERVFAIL, or every nameserver silent) and "failed": either side's nameservers.
TRY_AGAIN = frozenset(code for code in (getattr(socket, "EAI_AGAIN", None), getattr(socket, "EAI_FAIL", None))
                      if code is not None)


class OurTrouble(httpcore.ConnectError):
    """Our machine, not the server, kept the request from being made: the check is n, never d."""


@dataclass
class PendingLookup:
    name: str
    asked: float  # time.monotonic()


# The lookups of the check running in this task that have not ended: a step whose time ran out while its name
# was still being looked up asks whose silence it was (probe/checker.py).
PENDING_LOOKUPS: ContextVar[list[PendingLookup] | None] = ContextVar("sevenmaps_pending_lookups", default=None)


def watch_lookups() -> list[PendingLookup]:
    """A fresh record of the lookups left pending by the check about to run in this task."""
    pending: list[PendingLookup] = []
    PENDING_LOOKUPS.set(pending)
    return pending


def causes(exc: BaseException | None) -> Iterator[BaseException]:
    """An error and its causes, as httpx re-raises httpcore's and ours re-raise the kernel's."""
    while exc is not None:
        yield exc
        exc = exc.__cause__ or exc.__context__


def errno_of(exc: BaseException | None) -> int | None:
    """The errno of the first OSError among an error's causes (a name lookup's excepted)."""
    return next((cause.errno for cause in causes(exc) if isinstance(cause, OSError)
                 and not isinstance(cause, socket.gaierror) and cause.errno is not None), None)


def no_route_from_here(address: str, port: int) -> bool:
    """Whether this machine has no route to `address`: a UDP connect looks the route up and sends nothing."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as route:
            route.connect((address, port))
    except OSError as exc:  # no route, no such family here, or no descriptor left to ask with: ours all
        return exc.errno in NO_ROUTE or exc.errno in OUR_ERRNOS
    return False


def judged(exc: Exception, address: str, port: int) -> Exception:
    """A failed connection to `address`, ours if the kernel's words say so and, for "no route", if this machine
    has none; otherwise as it came (the server's)."""
    if errno_of(exc) in NO_ROUTE and no_route_from_here(address, port):
        trouble = OurTrouble(f"our machine has no route to {address} ({exc})")
        trouble.__cause__ = exc
        return trouble
    return exc


def our_trouble(exc: BaseException | None) -> str | None:
    """Why the request failed on our side, if it did: the first of its chain of causes that is ours."""
    for cause in causes(exc):
        if isinstance(cause, OurTrouble):
            return str(cause)
        if isinstance(cause, OSError) and not isinstance(cause, socket.gaierror) and cause.errno in OUR_ERRNOS:
            return f"our machine: {os.strerror(cause.errno)} (errno {errno.errorcode.get(cause.errno, cause.errno)})"
        if isinstance(cause, MemoryError):
            return "our machine: out of memory"
    return None


class Resolver:
    """The process's name lookups, in threads of their own, and when our resolver last answered.

    Each lookup gets a thread (up to `lookup_threads`), so a slow resolver never makes one check wait in our
    queue behind another's lookup inside its step's time (asyncio's default pool has min(32, cores + 4)
    threads: 64 checks at once waited up to 8 s there and were called timeouts). "Try again" is asked once
    more after `lookup_retry_s`; failing again, it is the name's own (d) only if our resolver answered some
    other lookup meanwhile, else ours (n)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: tuple[int, ThreadPoolExecutor] | None = None
        self.last_answer = float("-inf")  # time.monotonic() of the latest lookup our resolver answered

    def pool(self) -> ThreadPoolExecutor:
        # Made in the process that uses it: a pool inherited through fork has no threads left to run on.
        with self._lock:
            if self._pool is None or self._pool[0] != os.getpid():
                self._pool = (os.getpid(), ThreadPoolExecutor(OVERLOAD_PARAMS["lookup_threads"],
                                                              thread_name_prefix="sevenmaps-lookup"))
            return self._pool[1]

    def answered(self) -> None:
        self.last_answer = time.monotonic()

    def answered_since(self, moment: float) -> bool:
        return self.last_answer > moment


RESOLVER = Resolver()


def failed_twice(name: str, exc: socket.gaierror, first_asked: float) -> httpcore.ConnectError:
    """A name that got "try again" twice: the server's if our resolver answered another name meanwhile."""
    if RESOLVER.answered_since(first_asked):
        return httpcore.ConnectError(f"cannot resolve {name}: {exc} (asked twice; our resolver answered other "
                                     f"names meanwhile)")
    return OurTrouble(f"our resolver: no answer for {name}, asked twice ({exc}), and none for any other name "
                      f"meanwhile ({OVERLOAD_METHOD})")


def silent_resolver(lookup: PendingLookup) -> str | None:
    """Ours, if a lookup still unanswered when its step's time ran out had waited as long as a resolver waits
    for a nameserver (`silent_lookup_s`: a lookup begun late in the step, after a server stalled and broke its
    connection, is no sign of ours) and met a resolver that answered no other name meanwhile: what to say
    (else None: the server's)."""
    waited = time.monotonic() - lookup.asked
    if waited < OVERLOAD_PARAMS["silent_lookup_s"] or RESOLVER.answered_since(lookup.asked):
        return None
    return (f"our resolver: no answer for {lookup.name} in {waited:.1f} s, and none for any other name "
            f"meanwhile ({OVERLOAD_METHOD})")
