"""The prober's HTTP client: guarded connections, no cookies, no credentials, no proxies from the
environment, no automatic redirects (the checker applies the redirect rule itself), and bodies read
raw so that probe/wire.py decodes them within its caps."""

from __future__ import annotations

import ssl
import time
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import certifi
import httpx
from httpx._client import USE_CLIENT_DEFAULT, BoundAsyncStream, ClientState, UseClientDefault
from httpx._exceptions import request_context
from httpx._types import AuthTypes

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


# A client serves one host's few URLs (its endpoints, robots.txt, the well-knowns): parsed once each.
_PARSED_URLS_KEPT = 64


class ProberClient(httpx.AsyncClient):
    """httpx's client, with cookies never kept (so never sent back), and `send` without the layers the
    prober never uses: no authentication flow and no redirect loop (the checker applies the redirect rule
    itself). What it still does is what httpx's own `send` does for such a client: the request hooks (the
    credentials gate), errors tied to their request, a redirect's Location parsed (an invalid one is httpx's
    RemoteProtocolError, as before) and offered as `next_request`. The layers left out were about a
    twentieth of the prober's CPU a request (docs/scaling.md, "uvloop, and a send of the client's own")."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._never_kept = _NeverKept(CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])))
        self._parsed_urls: dict[str, httpx.URL] = {}

    def _merge_url(self, url: httpx.URL | str) -> httpx.URL:
        if not isinstance(url, str):
            return super()._merge_url(url)
        parsed = self._parsed_urls.get(url)
        if parsed is None:
            parsed = super()._merge_url(url)
            if len(self._parsed_urls) >= _PARSED_URLS_KEPT:
                self._parsed_urls.clear()
            self._parsed_urls[url] = parsed
        return parsed

    async def send(self, request: httpx.Request, *, stream: bool = False,
                   auth: AuthTypes | UseClientDefault | None = USE_CLIENT_DEFAULT,
                   follow_redirects: bool | UseClientDefault = USE_CLIENT_DEFAULT) -> httpx.Response:
        if auth is not USE_CLIENT_DEFAULT and auth is not None:
            raise CredentialsRefused("the prober never authenticates")
        if follow_redirects is True:
            raise ValueError("the prober follows redirects itself (probe/redirects.py)")
        if self.is_closed:
            raise RuntimeError("Cannot send a request, as the client has been closed.")
        self._state = ClientState.OPENED
        for hook in self._event_hooks["request"]:
            await hook(request)
        start = time.perf_counter()
        with request_context(request=request):
            response = await self._transport_for_url(request.url).handle_async_request(request)
        response.request = request
        response.stream = BoundAsyncStream(response.stream, response=response, start=start)  # type: ignore[arg-type]
        response.default_encoding = self._default_encoding
        try:
            if response.has_redirect_location:
                response.next_request = self._build_redirect_request(request, response)
            if not stream:
                await response.aread()
        except BaseException:
            await response.aclose()
            raise
        return response

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
