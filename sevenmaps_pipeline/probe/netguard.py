"""The one place that decides where a connection may go (docs/methodology.md, "The prober": where connections may go).

An httpcore network backend resolves every name itself, refuses loopback, private, link-local and other
non-public addresses (SSRF, DNS rebinding: the address checked is the address connected to), and — only
when demo or test configuration passes a host map — sends mapped names (the fleet's `.test` hosts) to
their loopback ports. TLS still verifies the URL's hostname, because httpcore starts TLS with it.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
import time
from collections.abc import Iterable, Mapping

import httpcore

from ..rules.methods import OVERLOAD_PARAMS
from .config import HostMap
from .ours import (
    NO_SUCH_NAME,
    PENDING_LOOKUPS,
    RESOLVER,
    TRY_AGAIN,
    OurTrouble,
    PendingLookup,
    causes,
    failed_twice,
    judged,
    our_trouble,
    silent_resolver,
)
from .streams import AsyncioBackend


class RefusedAddress(httpcore.ConnectError):
    """The name resolves to an address the prober must not reach: the listing is skipped, never d."""


def refused_address(exc: BaseException | None) -> bool:
    """Whether an error (as httpx re-raises it, from httpcore's) is our refusal of a non-public address."""
    return any(isinstance(cause, RefusedAddress) for cause in causes(exc))


# Every IANA special-purpose block (the IPv4 and IPv6 Special-Purpose Address Registries) that is not
# globally reachable, plus multicast and the deprecated ranges; kept explicit rather than trusting
# `ipaddress.is_global`, whose answers vary by Python version (3.11 calls NAT64, 6to4, 3fff::/20 and
# fec0::/10 global). Blocks that embed an IPv4 address are judged by the address they embed.
NON_PUBLIC_V4 = tuple(ipaddress.IPv4Network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24", "192.168.0.0/16",
    "192.175.48.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    "255.255.255.255/32"))
NON_PUBLIC_V6 = tuple(ipaddress.IPv6Network(n) for n in (
    "::/128", "::1/128", "::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "3fff::/20",
    "5f00::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8"))
# (block, how to find the IPv4 address it carries)
EMBEDDING_V6 = (
    (ipaddress.IPv6Network("::ffff:0:0/96"), lambda ip: ip.ipv4_mapped),
    (ipaddress.IPv6Network("64:ff9b::/96"), lambda ip: ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)),
    (ipaddress.IPv6Network("2002::/16"), lambda ip: ip.sixtofour),
)


def is_public_address(address: str) -> bool:
    """True only for a globally reachable unicast address; an IPv6 address that carries an IPv4 one
    (IPv4-mapped, NAT64 64:ff9b::/96, 6to4 2002::/16) is as public as the address it carries, and Teredo
    (2001::/32, inside 2001::/23) and local-use NAT64 (64:ff9b:1::/48) never are."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        for block, embedded in EMBEDDING_V6:
            if ip in block:
                return is_public_address(str(embedded(ip)))
        return not any(ip in block for block in NON_PUBLIC_V6)
    return not any(ip in block for block in NON_PUBLIC_V4)


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


async def _lookup(name: str, port: int, timeout: float | None) -> list:
    """The name's addresses; a failure told as the server's (no such name, no answer while our resolver
    answered others) or ours (probe/ours.py). Pending until it ends: a step whose time runs out meanwhile asks
    whose silence it was (probe/checker.py)."""
    pending, lookup = PENDING_LOOKUPS.get(), PendingLookup(name, time.monotonic())
    if pending is not None:
        pending.append(lookup)
    try:
        infos = await _resolve(name, port, timeout, lookup.asked)
    except asyncio.CancelledError:
        raise  # the step's time ran out while it was looked up: left pending
    except BaseException:
        if pending is not None:
            pending.remove(lookup)
        raise
    if pending is not None:
        pending.remove(lookup)
    return infos


async def _resolve(name: str, port: int, timeout: float | None, first_asked: float) -> list:
    for attempt in (1, 2):
        try:
            async with asyncio.timeout(timeout):
                # socket.getaddrinfo itself, in threads, as asyncio's own loop resolves: uvloop's resolver would
                # be libuv's (probe/loop.py); in threads of its own, so no lookup waits in our queue.
                infos = await asyncio.get_running_loop().run_in_executor(
                    RESOLVER.pool(), functools.partial(socket.getaddrinfo, name, port, type=socket.SOCK_STREAM))
            if not _is_address(name):  # an address is read, not asked: no sign our resolver reaches out
                RESOLVER.answered()
            return infos
        except TimeoutError as exc:
            ours = silent_resolver(PendingLookup(name, first_asked))
            if ours is not None:
                raise OurTrouble(ours) from exc
            raise httpcore.ConnectTimeout(f"resolving {name} timed out") from exc
        except socket.gaierror as exc:
            if exc.errno in NO_SUCH_NAME:  # an answer, but not one that shows our resolver reaches out (a cache's)
                raise httpcore.ConnectError(f"cannot resolve {name}: {exc}") from exc
            if exc.errno not in TRY_AGAIN:  # EAI_SYSTEM, EAI_MEMORY...: our resolver's own failure
                raise OurTrouble(f"our resolver failed looking up {name}: {exc}") from exc
            if attempt == 2:
                raise failed_twice(name, exc, first_asked) from exc
        except OSError as exc:  # not the resolver's answer: our machine's (open files, memory)
            raise OurTrouble(f"looking up {name}: {our_trouble(exc) or exc}") from exc
        await asyncio.sleep(OVERLOAD_PARAMS["lookup_retry_s"])
    raise AssertionError("unreachable: the second attempt returns or raises")


class GuardedBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, host_map: Mapping[str, int] | None = None, allow_private: bool = False) -> None:
        self._inner = AsyncioBackend()
        self._host_map = host_map if isinstance(host_map, HostMap) else HostMap(dict(host_map or {}))
        self._allow_private = allow_private

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable | None = None) -> httpcore.AsyncNetworkStream:
        name = host.lower().rstrip(".")
        if name in self._host_map:
            mapped = self._host_map[name]
            if mapped <= 0:
                raise httpcore.ConnectError(f"connection refused ({name} is down in the fleet timeline)")
            return await self._inner.connect_tcp("127.0.0.1", mapped, timeout, local_address, socket_options)
        infos = await _lookup(name, port, timeout)
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        allowed = [a for a in addresses if self._allow_private or is_public_address(a)]
        if not allowed:
            raise RefusedAddress(f"{name} resolves to a non-public address ({', '.join(addresses)[:200]}); "
                                 "not contacted")
        failures: list[Exception] = []
        for address in allowed:
            try:
                return await self._inner.connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failures.append(judged(exc, address, port))
        # Ours only if every address failed for our reasons (no IPv6 here says nothing of a refused IPv4).
        theirs = [failure for failure in failures if our_trouble(failure) is None]
        raise (theirs or failures)[0]

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable | None = None) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are never probed")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
