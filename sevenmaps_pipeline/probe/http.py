"""The prober's HTTP client: guarded connections, no cookies, no credentials, no proxies from the
environment, no automatic redirects (the checker applies the redirect rule itself), and bodies read
raw so that probe/wire.py decodes them within its caps."""

from __future__ import annotations

import ssl
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import certifi
import httpx

from .config import ProbeConfig
from .netguard import GuardedBackend
from .transport import ProberTransport
from .wire import ACCEPT_ENCODING


class CredentialsRefused(RuntimeError):
    """A request would carry credentials (userinfo, Authorization, a cookie): it is never sent. Reaching
    this is our bug, not the server's, so a check ends as prober_error (day code n)."""


async def _refuse_credentials(request: httpx.Request) -> None:
    # The last gate before the wire (httpx turns URL userinfo into Authorization: Basic by itself): the
    # listing rules already skip such URLs; this keeps any other path (a redirect, a new caller) honest.
    if request.url.userinfo or "authorization" in request.headers or "cookie" in request.headers:
        raise CredentialsRefused(f"refused to send credentials to {request.url.host} "
                                 "(userinfo, Authorization or Cookie)")


class _NeverKept(httpx.Cookies):
    """A cookie jar that keeps nothing: a response's Set-Cookie is not even parsed (httpx would build a
    urllib request for every response to ask a jar whose policy refuses everything anyway)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None


class ProberClient(httpx.AsyncClient):
    """httpx's client, with cookies never kept (so never sent back)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._never_kept = _NeverKept(CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])))

    @property
    def cookies(self) -> httpx.Cookies:
        return self._never_kept

    @cookies.setter
    def cookies(self, cookies: object) -> None:
        if cookies:
            raise CredentialsRefused("the prober never keeps or sends cookies")


def ssl_context(config: ProbeConfig) -> ssl.SSLContext:
    if config.ca_file is not None:  # the fleet's CA: demo and test configuration only
        context = ssl.create_default_context(cafile=str(config.ca_file))
    else:

        context = ssl.create_default_context(cafile=certifi.where())
    context.set_alpn_protocols(["http/1.1"])  # the transport speaks HTTP/1.1 only (probe/transport.py)
    return context


def build_client(config: ProbeConfig, context: ssl.SSLContext | None = None,
                 max_connections: int | None = None) -> httpx.AsyncClient:
    """A client; the scan makes one per host (a host gets one request at a time, so a small pool of its
    own is all it needs, and a pool shared by thousands of hosts costs a scan of every idle connection
    on each request)."""
    context = context or ssl_context(config)
    transport = ProberTransport(context, GuardedBackend(config.host_map, allow_private=config.allow_private),
                                max_connections=max_connections or config.concurrency * 2, keepalive_expiry=5.0)
    return ProberClient(
        transport=transport,
        headers={"User-Agent": config.user_agent, "Accept-Encoding": ACCEPT_ENCODING},
        event_hooks={"request": [_refuse_credentials]},
        follow_redirects=False,
        trust_env=False,
        timeout=httpx.Timeout(30.0),
    )
