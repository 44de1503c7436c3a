"""The code host: a repository's status from GitHub's REST API (`GET /repos/{owner}/{repo}`: `private`,
`archived`, `pushed_at`), for the readiness rubric's repository lines, and a file of a repository
(`GET /repos/{owner}/{repo}/contents/{path}`: a skill's SKILL.md) (docs/methodology.md, "Readiness").

The base URL is configurable ($SEVENMAPS_CODEHOST_URL, default https://api.github.com); a token is read
from the environment ($SEVENMAPS_GITHUB_TOKEN) for each request and never stored, logged or returned, and sent
only over https or to this machine (`may_carry_token`: over plain http elsewhere it would cross the network in
clear text; a spent rate limit then says why no token was sent). Rate
limits are respected: once the API says the budget is spent (`x-ratelimit-remaining: 0` with a 403 or
429), no request is made until `x-ratelimit-reset` (at most an hour on), and every lookup until then answers
"rate limited". An answer is read within the timeout as a whole and at most MAX_BODY bytes once decoded.
Nothing it receives can raise: every answer is a RepoStatus or a reason.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import os
import re
import time
from dataclasses import dataclass
from typing import Any

import httpx

from ..rules.http_values import retry_after_seconds
from .spaced import BoundedFetcher, parse_json

DEFAULT_BASE_URL = "https://api.github.com"
BASE_URL_ENV = "SEVENMAPS_CODEHOST_URL"
TOKEN_ENV = "SEVENMAPS_GITHUB_TOKEN"
USER_AGENT = "7Maps-bot/0.2 (+https://7it.co.il/7maps/bot/)"
MAX_BODY = 1 << 20
# The longest a spent budget stops the lookups (GitHub's resets come within the hour; a reset far off is not one).
BLOCKED_MAX = 3600.0
MAX_FILE = 512 * 1024  # the largest SKILL.md read (its body's sliding line is at zero far below)
# github.com/<owner>/<repo>, optionally .git, a trailing slash or a deeper path (a folder of the repository).
_GITHUB = re.compile(r"^https://(?:www\.)?github\.com/([A-Za-z0-9-]{1,39})/([A-Za-z0-9._-]{1,100})(?:/.*)?$")
# A folder of a repository as GitHub links it: /tree/<ref>/<path> (the ref is one path segment here).
_TREE = re.compile(r"^https://(?:www\.)?github\.com/([A-Za-z0-9-]{1,39})/([A-Za-z0-9._-]{1,100})"
                   r"/tree/([A-Za-z0-9._/-]{1,200}?)/((?:[A-Za-z0-9._-]+/)*[A-Za-z0-9._-]+)/?$")


def parse_repository_url(url: Any) -> tuple[str, str] | None:
    """(owner, repo) of a GitHub repository URL as registry entries give it, else None."""
    if not isinstance(url, str):
        return None
    m = _GITHUB.match(url.strip())
    if not m:
        return None
    repo = m.group(2).removesuffix(".git")
    return (m.group(1), repo) if repo not in ("", ".", "..") else None


@dataclass(frozen=True)
class RepoFolder:
    """A folder of a GitHub repository at a ref: where a skill lives."""

    owner: str
    repo: str
    ref: str
    path: str

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def url(self) -> str:
        return f"https://github.com/{self.owner}/{self.repo}/tree/{self.ref}/{self.path}"


def parse_folder_url(url: Any) -> RepoFolder | None:
    """`https://github.com/<owner>/<repo>/tree/<ref>/<path>` (a ref of one segment), else None."""
    if not isinstance(url, str):
        return None
    m = _TREE.match(url.strip())
    if not m or any(part in (".", "..") for part in m.group(4).split("/")) or "/" in m.group(3):
        return None
    return RepoFolder(m.group(1), m.group(2).removesuffix(".git"), m.group(3), m.group(4))


# The code host's answer for a repository it does not show us: an answer about the repository, not our trouble.
NO_SUCH_REPOSITORY = "no such repository (or not public)"


@dataclass(frozen=True)
class RepoStatus:
    owner: str
    repo: str
    private: bool
    archived: bool
    pushed_at: str

    def as_facts(self) -> dict[str, Any]:
        return {"private": self.private, "archived": self.archived, "pushed_at": self.pushed_at}


def may_carry_token(base_url: str) -> bool:
    """Whether a request to `base_url` may carry the token: over https, or over http to this machine (a
    loopback address, or `localhost`: a local mirror, a test's fixture). No name is resolved, so no other
    name counts as this machine (`mirror.localhost` may be asked of a DNS server)."""
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL:
        return False
    if url.scheme == "https":
        return True
    host = url.raw_host.decode("ascii", "replace").lower().rstrip(".")  # as sent: `.host` decodes IDNA, and may raise
    if url.scheme != "http" or not host:
        return False
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return (mapped or address).is_loopback


class CodeHostClient:
    def __init__(self, base_url: str | None = None, timeout: float = 10.0) -> None:
        self.base_url = (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
        self.sends_token = may_carry_token(self.base_url)  # a token set is sent only then
        self.timeout = timeout
        self._fetcher = BoundedFetcher(timeout, {"User-Agent": USER_AGENT, "Accept": "application/vnd.github+json",
                                                 "X-GitHub-Api-Version": "2022-11-28"})
        self.blocked_until = 0.0  # epoch seconds: the API said the budget is spent until then

    def close(self) -> None:
        self._fetcher.close()

    def __enter__(self) -> CodeHostClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _rate_limited(self) -> _Reason:
        """The budget is spent: until when, and that a token set was not sent, where its absence shows."""
        withheld = bool(os.environ.get(TOKEN_ENV, "").strip()) and not self.sends_token
        note = f" ({TOKEN_ENV} not sent: the code host's URL is not https)" if withheld else ""
        return _Reason(f"rate limited until {_utc(self.blocked_until)}{note}")

    def _get_json(self, path: str, params: dict[str, str] | None = None) -> Any:
        """The decoded JSON answer at `path`, or a one-line reason (a str) it could not be read."""
        now = time.time()
        if now < self.blocked_until:
            return self._rate_limited()
        headers = {}
        token = os.environ.get(TOKEN_ENV, "").strip()
        if token and self.sends_token:
            headers["Authorization"] = f"Bearer {token}"
        answer = self._fetcher.fetch("GET", f"{self.base_url}{path}", MAX_BODY, self.timeout, headers=headers,
                                     params=params)
        if isinstance(answer, str):
            return _Reason(f"code host: {answer}")
        remaining = answer.headers.get("x-ratelimit-remaining")
        if answer.status in (403, 429) and (remaining == "0" or answer.status == 429):
            self.blocked_until = max(self.blocked_until, _blocked_until(answer.headers, now))
            return self._rate_limited()
        if answer.status == 404:
            return _Reason("not found (or not public)")
        if answer.status != 200:
            return _Reason(f"code host answered HTTP {answer.status}")
        data, why = parse_json(answer.body)
        return _Reason(f"code host answer is {why}") if why is not None else data

    def repository(self, owner: str, repo: str) -> RepoStatus | str:
        """The repository's status, or a one-line reason it could not be read."""
        data = self._get_json(f"/repos/{owner}/{repo}")
        if isinstance(data, _Reason):
            return NO_SUCH_REPOSITORY if data == "not found (or not public)" else str(data)
        if not isinstance(data, dict):
            return "code host answer is not a repository"
        private, archived, pushed = data.get("private"), data.get("archived"), data.get("pushed_at")
        if not isinstance(private, bool) or not isinstance(archived, bool) or not isinstance(pushed, str):
            return "code host answer lacks private, archived or pushed_at"
        return RepoStatus(owner, repo, private, archived, pushed[:40])

    def file(self, folder: RepoFolder, name: str, max_bytes: int = MAX_FILE) -> bytes | str:
        """A file of the folder at its ref (the contents API's base64 answer), or a one-line reason."""
        data = self._get_json(f"/repos/{folder.owner}/{folder.repo}/contents/{folder.path}/{name}",
                              {"ref": folder.ref})
        if isinstance(data, _Reason):
            return str(data)
        if not isinstance(data, dict) or data.get("type") != "file":
            return "not a file"
        size = data.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size > max_bytes:
            return f"file size {size!r} is not an integer up to {max_bytes:,} bytes"
        if data.get("encoding") != "base64" or not isinstance(data.get("content"), str):
            return "no base64 content in the answer"
        try:
            content = base64.b64decode(data["content"], validate=False)
        except (binascii.Error, ValueError):
            return "content is not valid base64"
        if len(content) != size:
            return f"content is {len(content):,} bytes, the answer says {size:,}"
        return content


def _blocked_until(headers: httpx.Headers, now: float) -> float:
    """When a spent budget is back, as the API says (`x-ratelimit-reset`, epoch seconds; else Retry-After), never
    more than BLOCKED_MAX from now and 60 s when it says nothing readable."""
    reset, retry = headers.get("x-ratelimit-reset", "").strip(), retry_after_seconds(headers.get("retry-after"))
    if reset.isascii() and reset.isdigit() and len(reset) <= 12:
        until = float(reset)
    else:
        until = now + (retry if retry is not None else 60.0)
    return min(until, now + BLOCKED_MAX)


def _utc(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


class _Reason(str):
    """Why a code-host answer could not be used (kept apart from a JSON string answer)."""
