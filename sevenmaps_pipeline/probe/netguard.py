"""The one place that decides where a connection may go (DESIGN §5).

An httpcore network backend resolves every name itself, refuses loopback, private, link-local and other
non-public addresses (SSRF, DNS rebinding: the address checked is the address connected to), and — only
when demo or test configuration passes a host map — sends mapped names (the fleet's `.test` hosts) to
their loopback ports. TLS still verifies the URL's hostname, because httpcore starts TLS with it.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Mapping

import anyio
import httpcore


class RefusedAddress(httpcore.ConnectError):
    """The name resolves to an address the prober must not reach."""


def is_public_address(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


class GuardedBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, host_map: Mapping[str, int] | None = None, allow_private: bool = False) -> None:
        self._inner = httpcore.AnyIOBackend()
        self._host_map = {k.lower().rstrip("."): v for k, v in (host_map or {}).items()}
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
        try:
            with anyio.fail_after(timeout):
                infos = await anyio.getaddrinfo(name, port, type=socket.SOCK_STREAM)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"resolving {name} timed out") from exc
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {name}: {exc}") from exc
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        allowed = [a for a in addresses if self._allow_private or is_public_address(a)]
        if not allowed:
            raise RefusedAddress(f"{name} resolves to non-public address {', '.join(addresses)}; refused")
        last: Exception | None = None
        for address in allowed:
            try:
                return await self._inner.connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        assert last is not None
        raise last

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable | None = None) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are never probed")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
