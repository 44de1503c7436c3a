"""A loopback stand-in for GitHub's REST API, serving the real shapes the code-host client reads:
`GET /repos/{owner}/{repo}` (the repository object's fields the rubric uses, and more as GitHub sends),
`GET /repos/{owner}/{repo}/contents/{path}?ref=` (a file as base64, GitHub's contents shape),
404 `{"message": "Not Found", ...}`, and the rate-limit headers, with a 403 "API rate limit exceeded"
once the budget is spent. Records every request's headers so tests can see what the client sent."""

from __future__ import annotations

import base64
import hashlib
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

DOCS = "https://docs.github.com/rest/repos/repos#get-a-repository"


class CodeHostApp:
    def __init__(self, repos: dict[str, dict[str, Any]], budget: int = 60,
                 files: dict[str, bytes] | None = None) -> None:
        """`repos`: "owner/repo" -> fields; `files`: "owner/repo/<path>" -> content, on every ref."""
        self.repos, self.budget = repos, budget
        self.files = {k.lower(): v for k, v in (files or {}).items()}
        self.requests: list[dict[str, str]] = []
        self.reset_at = int(time.time()) + 3600
        self.app = Starlette(routes=[Route("/repos/{owner}/{repo}", self.repository),
                                     Route("/repos/{owner}/{repo}/contents/{path:path}", self.contents)])

    def _spend(self) -> tuple[dict[str, str], JSONResponse | None]:
        limits = {"x-ratelimit-limit": "60", "x-ratelimit-reset": str(self.reset_at),
                  "x-ratelimit-resource": "core"}
        if self.budget <= 0:
            return limits, JSONResponse(
                {"message": "API rate limit exceeded for 127.0.0.1. (But here's the good news: "
                 "Authenticated requests get a higher rate limit.)",
                 "documentation_url": "https://docs.github.com/rest/overview/rate-limits"},
                status_code=403, headers={**limits, "x-ratelimit-remaining": "0"})
        self.budget -= 1
        return {**limits, "x-ratelimit-remaining": str(self.budget)}, None

    async def contents(self, request: Request) -> JSONResponse:
        self.requests.append({**dict(request.headers), "path": request.url.path})
        headers, refused = self._spend()
        if refused is not None:
            return refused
        owner, repo, path = (request.path_params[k] for k in ("owner", "repo", "path"))
        content = self.files.get(f"{owner}/{repo}/{path}".lower())
        if content is None or f"{owner}/{repo}".lower() not in self.repos:
            return JSONResponse({"message": "Not Found", "documentation_url": DOCS, "status": "404"},
                                status_code=404, headers=headers)
        encoded = base64.b64encode(content).decode()
        # GitHub wraps the base64 at 60 characters per line.
        wrapped = "\n".join(encoded[i:i + 60] for i in range(0, len(encoded), 60)) + "\n"
        sha = hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()
        return JSONResponse({"type": "file", "encoding": "base64", "size": len(content),
                             "name": path.rsplit("/", 1)[-1], "path": path, "content": wrapped, "sha": sha,
                             "url": f"{request.base_url}repos/{owner}/{repo}/contents/{path}",
                             "html_url": f"https://github.com/{owner}/{repo}/blob/main/{path}"}, headers=headers)

    async def repository(self, request: Request) -> JSONResponse:
        self.requests.append(dict(request.headers))
        headers, refused = self._spend()
        if refused is not None:
            return refused
        full = f"{request.path_params['owner']}/{request.path_params['repo']}"
        repo = self.repos.get(full.lower())
        if repo is None:
            return JSONResponse({"message": "Not Found", "documentation_url": DOCS, "status": "404"},
                                status_code=404, headers=headers)
        owner, name = full.split("/")
        return JSONResponse({"id": 1, "name": name, "full_name": full, "owner": {"login": owner, "type": "User"},
                             "html_url": f"https://github.com/{full}", "fork": False, "visibility":
                             "private" if repo.get("private") else "public", "default_branch": "main",
                             "created_at": "2024-01-01T00:00:00Z", "updated_at": repo.get("pushed_at"),
                             **repo}, headers=headers)
