"""A loopback stand-in for GitHub's REST API, serving the real shapes the code-host client reads:
`GET /repos/{owner}/{repo}` (the repository object's fields the rubric uses, and more as GitHub sends),
404 `{"message": "Not Found", ...}`, and the rate-limit headers, with a 403 "API rate limit exceeded"
once the budget is spent. Records every request's headers so tests can see what the client sent."""

from __future__ import annotations

import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

DOCS = "https://docs.github.com/rest/repos/repos#get-a-repository"


class CodeHostApp:
    def __init__(self, repos: dict[str, dict[str, Any]], budget: int = 60) -> None:
        self.repos, self.budget = repos, budget
        self.requests: list[dict[str, str]] = []
        self.reset_at = int(time.time()) + 3600
        self.app = Starlette(routes=[Route("/repos/{owner}/{repo}", self.repository)])

    async def repository(self, request: Request) -> JSONResponse:
        self.requests.append(dict(request.headers))
        limits = {"x-ratelimit-limit": "60", "x-ratelimit-reset": str(self.reset_at),
                  "x-ratelimit-resource": "core"}
        if self.budget <= 0:
            return JSONResponse({"message": "API rate limit exceeded for 127.0.0.1. (But here's the good news: "
                                 "Authenticated requests get a higher rate limit.)",
                                 "documentation_url": "https://docs.github.com/rest/overview/rate-limits"},
                                status_code=403, headers={**limits, "x-ratelimit-remaining": "0"})
        self.budget -= 1
        headers = {**limits, "x-ratelimit-remaining": str(self.budget)}
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
