"""What the fleet's publishers serve on their own domains (the namespace's domain of each registry name),
and the code host behind the fleet's repositories and skills: the readiness probe's other doors."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from starlette.responses import JSONResponse, PlainTextResponse, Response

from .codehost_app import CodeHostApp


def publisher_app(config: dict[str, Any]) -> Callable:
    """A publisher's site: `/llms.txt`, a markdown door (`markdown`: "negotiate" answers text/markdown to
    `Accept: text/markdown` on /, "index" serves /index.md), `catalog` at /.well-known/mcp/catalog.json,
    `ai_catalog` at /.well-known/ai-catalog.json (as application/ai-catalog+json) and the registry's proof
    file when `registry_auth`. Anything else is 404; an empty config serves nothing."""
    async def app(scope: dict, receive: Callable, send: Callable) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        path = scope.get("path", "")
        response: Response = Response("not found", status_code=404)
        if path == "/llms.txt" and config.get("llms_txt"):
            response = PlainTextResponse(config["llms_txt"])
        elif path == "/" and config.get("markdown") == "negotiate":
            if "text/markdown" in headers.get("accept", ""):
                response = Response(config.get("home_md", "# Home\n"), media_type="text/markdown")
            else:
                response = Response("<!doctype html><title>Home</title>", media_type="text/html")
        elif path == "/" and config:
            response = Response("<!doctype html><title>Home</title>", media_type="text/html")
        elif path == "/index.md" and config.get("markdown") == "index":
            response = Response(config.get("home_md", "# Home\n"), media_type="text/markdown")
        elif path == "/.well-known/mcp/catalog.json" and config.get("catalog"):
            response = JSONResponse(config["catalog"])
        elif path == "/.well-known/ai-catalog.json" and config.get("ai_catalog"):
            response = JSONResponse(config["ai_catalog"], media_type="application/ai-catalog+json")
        elif path == "/.well-known/mcp-registry-auth" and config.get("registry_auth"):
            response = PlainTextResponse("v=MCPv1; k=ed25519; p=MCowBQYDK2VwAyEAfleetfleetfleetfleetfleetfleetfleetfl=")
        await response(scope, receive, send)

    return app


def pushed_at(days_ago: int) -> str:
    when = dt.datetime.now(dt.UTC) - dt.timedelta(days=days_ago)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def codehost_for(hosts: list[Any], skills: list[dict[str, Any]]) -> CodeHostApp:
    """The code host of the fleet: each server's repository and each skill repository, with its files."""
    repos: dict[str, dict[str, Any]] = {}
    files: dict[str, bytes] = {}
    for h in hosts:
        repo = getattr(h, "repository", None)
        if repo and repo.get("full_name"):
            repos[repo["full_name"].lower()] = _repo_fields(repo)
    for repo in skills:
        repos[repo["full_name"].lower()] = _repo_fields(repo)
        for path, text in repo.get("files", {}).items():
            files[f"{repo['full_name']}/{path}"] = _file_text(text).encode()
    return CodeHostApp(repos, budget=1_000_000, files=files)


def _file_text(spec: str | dict[str, Any]) -> str:
    """A file as written, or {"frontmatter": ..., "body_words": N}: a long body of N words (about a token each)."""
    if isinstance(spec, str):
        return spec
    words = ("time", "data", "value", "item", "list", "user", "field", "index")
    body = " ".join(words[i % len(words)] for i in range(int(spec["body_words"])))
    return spec["frontmatter"] + "# Body\n\n" + body + "\n"


def _repo_fields(repo: dict[str, Any]) -> dict[str, Any]:
    return {"private": bool(repo.get("private", False)), "archived": bool(repo.get("archived", False)),
            "pushed_at": pushed_at(int(repo.get("pushed_days_ago", 10)))}
