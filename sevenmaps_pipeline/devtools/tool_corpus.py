"""The real tool lists the rules are measured on (tests/data/README.md), and the development/evaluation split
fixed before any rule was tuned on them (docs/methodology.md, "Measured on data it was not tuned on").

Four files: risk_corpus.json (311 tools of 11 servers, the set the words-only risk rule was written
against, all development), and corpus_npm.json, corpus_pypi_github.json and corpus_fresh.json (tool lists
read over stdio from npm and PyPI packages, and tool snapshots committed in public repositories, each with
its source and version; corpus_fresh.json a later gathering of servers and publishers the first two lack).
A server's side is its publisher's, so two servers of one publisher (whose tools share wording) never sit
on both sides: sha256 of the salt and the publisher, even first byte evaluation; the
publishers of risk_corpus.json's servers are development. The split as it
was fixed is recorded in tests/data/corpus_split.json; tests/test_tool_corpus.py holds the rule to it, so
it cannot move while rules are tuned. A fifth file, corpus_holdout.json, gathered blind after the evaluation
side had been read tool by tool, by publishers none of the others has, is a side of its own: measured, never
tuned on."""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..packaged import SOURCE_ROOT

DATA = (SOURCE_ROOT or Path.cwd()) / "tests" / "data"
LEGACY = DATA / "risk_corpus.json"
LISTS = (DATA / "corpus_npm.json.gz", DATA / "corpus_pypi_github.json.gz", DATA / "corpus_fresh.json.gz")
# The bench lake's tool lists are drawn from the first two gatherings: the real-shaped day of docs/scaling.md
# was measured on them, and a lake drawn from more lists would be another day, not the same one measured again.
SHAPE_LISTS = LISTS[:2]
SPLIT_FILE = DATA / "corpus_split.json"
SPLIT_SALT = "7maps-corpus-split-1"
DEVELOPMENT, EVALUATION, HOLDOUT = "development", "evaluation", "holdout"
# Gathered after the evaluation side had been read tool by tool (risk-1.7, docs/changelog.md), blind to the rules and
# by publishers none of LISTS has: the rules are measured on it, never tuned (docs/methodology.md, "the holdout").
HOLDOUT_FILE = DATA / "corpus_holdout.json.gz"


@dataclass(frozen=True)
class CorpusServer:
    """One server's tool list as it was read, with the registry text that listed it."""

    id: str
    publisher: str
    name: str  # the registry name where the package declares one, else the package or repository
    description: str
    tools: tuple[dict[str, Any], ...]
    source: str  # the file it came from


# The publishers of risk_corpus.json's servers: their other servers are development too (one publisher's
# wording is one style), as `publisher` spells them.
LEGACY_PUBLISHERS = frozenset({"github", "playwright", "microsoft", "chromedevtools", "mongodb-js", "mongodb",
                               "firecrawl", "mendableai", "notionhq", "sentry", "getsentry", "modelcontextprotocol",
                               "upstash"})


def publisher(raw: str) -> str:
    """One spelling per publisher across the files: an npm scope, a PyPI author and a GitHub owner alike."""
    name = raw.strip().lower()
    return name.removeprefix("github:").removeprefix("@").split("/")[0]


def publisher_side(raw: str) -> str:
    """The fixed side of a publisher: never chosen by how the rules do on it."""
    name = publisher(raw)
    if name in LEGACY_PUBLISHERS:
        return DEVELOPMENT
    digest = hashlib.sha256(f"{SPLIT_SALT}:{name}".encode()).digest()
    return EVALUATION if digest[0] % 2 == 0 else DEVELOPMENT


_LEGACY_PUBLISHER = {"chrome-devtools-mcp": "chromedevtools", "mongodb-mcp-server": "mongodb-js",
                     "firecrawl-mcp": "firecrawl"}


def _read_once(read: Callable[[Path], list[CorpusServer]]) -> Callable[[Path], list[CorpusServer]]:
    """`read(path)` parsed once a process for each version of the file (its size and modification time): the
    corpora take 0.5-1.5 s of CPU to parse, and the suite's tests and benches asked for them some forty times. What
    it gives is a tuple of frozen servers whose tools no reader changes (docs/development.md, "The suite's time")."""
    @functools.lru_cache(maxsize=16)
    def parsed(path: Path, _size: int, _mtime_ns: int) -> tuple[CorpusServer, ...]:
        return tuple(read(path))

    def servers(path: Path) -> list[CorpusServer]:
        stat = path.stat()
        return list(parsed(path, stat.st_size, stat.st_mtime_ns))
    return servers


@_read_once
def _legacy_servers(path: Path) -> list[CorpusServer]:
    doc = json.loads(path.read_text())
    by_server: dict[str, list[dict]] = {}
    for tool in doc["tools"]:
        by_server.setdefault(tool["server"], []).append(tool)
    return [CorpusServer(id=f"legacy:{name}", publisher=_LEGACY_PUBLISHER.get(name, publisher(name)),
                         name=name, description=doc["sources"].get(name, ""), tools=tuple(tools), source=path.name)
            for name, tools in by_server.items()]


@_read_once
def _list_servers(path: Path) -> list[CorpusServer]:
    doc = json.loads(gzip.decompress(path.read_bytes()))
    return [CorpusServer(id=s["id"], publisher=str(s.get("publisher") or s["id"]),
                         name=str(s.get("registry_name") or s.get("package") or s.get("repo") or s["id"]),
                         description=str(s.get("description") or ""), tools=tuple(s.get("tools") or ()),
                         source=path.name)
            for s in doc["servers"]]


def load_servers(lists: Iterable[Path] = LISTS, legacy: Path = LEGACY) -> list[CorpusServer]:
    servers = _legacy_servers(legacy) if legacy.exists() else []
    for path in lists:
        if path.exists():
            servers += _list_servers(path)
    return servers


def load_holdout(path: Path = HOLDOUT_FILE) -> list[CorpusServer]:
    return _list_servers(path) if path.exists() else []


def side_of(server: CorpusServer) -> str:
    """The legacy set is development whatever its publisher: the rules were written against it; the holdout is
    its own side."""
    if server.source == HOLDOUT_FILE.name:
        return HOLDOUT
    return DEVELOPMENT if server.source == LEGACY.name else publisher_side(server.publisher)


def split_record(servers: list[CorpusServer]) -> dict[str, Any]:
    """What tests/data/corpus_split.json holds: each server's side, and the rule that put it there."""
    return {"rule": f"sha256('{SPLIT_SALT}:' + publisher.lower()), first byte even: evaluation; "
                    f"{LEGACY.name}: development (the rules were written against it)",
            "servers": {s.id: {"publisher": publisher(s.publisher), "side": side_of(s), "tools": len(s.tools)}
                        for s in sorted(servers, key=lambda s: s.id)}}


def write_split(path: Path = SPLIT_FILE) -> dict[str, Any]:
    record = split_record(load_servers())
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return record


if __name__ == "__main__":
    written = write_split()
    sides = [v["side"] for v in written["servers"].values()]
    print(f"{SPLIT_FILE}: {sides.count(DEVELOPMENT)} development, {sides.count(EVALUATION)} evaluation servers")
