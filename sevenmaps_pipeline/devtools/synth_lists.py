"""Real-shaped tool lists for the synthetic lake (`synthesize(..., shape="real")`, docs/scaling.md, "A
real-shaped lake").

Every list is a real server's list from the corpora in tests/data/ (devtools/tool_corpus.py): its tools, their
count, names, descriptions and schemas exactly as `tools/list` returned them, with one light mark that makes
it a list of its own (a short tag at the end of each description, or of the name where a tool has none), so
tool counts, list sizes, tokens and description lengths are the corpora's. About a tenth of the endpoints
share one of a few popular lists (servers / 200 of them), the others have their own: about 45,000 distinct
lists a day among 100,000 endpoints. Each day after the first, each endpoint's list changes with
probability `change_rate` (7%): a tool added (from another real server), one dropped, or a description
reworded, one change at a time on top of the last, as a real server changes.

Fast enough for 100,000 endpoints x 30 days: each real tool's compact JSON and fingerprint text are split
once where the mark goes, so a list is string joins and one SHA-256 per tool, computed once per list (its
hash, count and size kept); the JSON of the lists a part file holds is joined again for that part only, so
memory holds one part's texts, never the lake's.
"""

from __future__ import annotations

import functools
import hashlib
import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from ..rules.fingerprints import FINGERPRINT_FIELDS, canonical_json, compact_json, tools_hash
from .tool_corpus import SHAPE_LISTS, load_servers

# Where a list's mark goes in a tool's texts: a character JSON always escapes, so it is found once.
_SPOT = "\x00"
_SPOT_JSON = "\\u0000"
# The corpora's own bookkeeping on a tool (tests/data/README.md): not part of what the server published.
_BOOKKEEPING = ("server", "_meta_other")


def published(tool: dict[str, Any]) -> dict[str, Any]:
    """A corpus tool as its server published it: the fields it carried, the others it carried unpacked from
    `_meta_other`, no `title` or `annotations` where it gave none, no corpus bookkeeping."""
    out = {k: v for k, v in tool.items()
           if k not in _BOOKKEEPING and not (k in ("title", "annotations") and v is None)}
    out.update(tool.get("_meta_other") or {})
    return out


@dataclass(frozen=True)
class _PoolTool:
    """A real tool's compact JSON and fingerprint text, each split where a list's mark goes."""

    json: tuple[str, str]
    fingerprint: tuple[str, str]
    in_name: bool  # marked at the end of its name (it has no description)
    name: str


@dataclass(frozen=True)
class Pool:
    tools: tuple[_PoolTool, ...]
    lists: tuple[tuple[int, ...], ...]  # each corpus server's tools, as indexes into `tools`


def _split(text: str) -> tuple[str, str] | None:
    head, sep, tail = text.partition(_SPOT_JSON)
    return (head, tail) if sep and _SPOT_JSON not in tail else None


def _pool_tool(tool: dict[str, Any]) -> _PoolTool | None:
    in_name = not (isinstance(tool.get("description"), str) and tool["description"])
    field = "name" if in_name else "description"
    if not isinstance(tool.get(field), str):
        return None
    spotted = {**tool, field: tool[field] + _SPOT}
    text = _split(compact_json(spotted))
    fingerprint = _split(canonical_json({k: spotted[k] for k in FINGERPRINT_FIELDS if k in spotted}))
    if text is None or fingerprint is None:  # a text that holds a NUL of its own: left out of the pool
        return None
    return _PoolTool(text, fingerprint, in_name, str(tool["name"]))


@functools.cache
def corpus_pool() -> Pool:
    """Every tool of the corpora's servers that has tools, once."""
    tools: list[_PoolTool] = []
    lists: list[tuple[int, ...]] = []
    for server in load_servers(SHAPE_LISTS):
        kept = [t for t in (_pool_tool(published(dict(raw))) for raw in server.tools) if t is not None]
        if kept:
            lists.append(tuple(range(len(tools), len(tools) + len(kept))))
            tools += kept
    if not lists:
        raise FileNotFoundError("no tool list in the corpora of tests/data/ (devtools/tool_corpus.py)")
    return Pool(tuple(tools), tuple(lists))


Entry = tuple[int, str]  # a pool tool and the words a change added to its mark


def _mark(tool: _PoolTool, tag: str, extra: str) -> str:
    return (f"_{tag}" if tool.in_name else f" [{tag}]") + extra


class RealToolLists:
    """The synth's tool lists (the interface of synth._ToolLists): endpoint i's list on day d, and the
    columns of a part file's rows."""

    def __init__(self, servers: int, days: int, seed: int, change_rate: float = 0.07,
                 shared: float = 0.10) -> None:
        self.pool = corpus_pool()
        self.seed = seed
        rng = np.random.default_rng([seed, 38])
        self.popular = max(1, servers // 200)
        self.base = np.where(rng.random(servers) < shared, rng.integers(0, self.popular, servers),
                             self.popular + np.arange(servers))
        self.server_of_base = rng.integers(0, len(self.pool.lists), self.popular + servers)
        changes = rng.random((servers, max(days, 1))) < change_rate
        changes[:, 0] = False
        self.variants = np.cumsum(changes, axis=1, dtype=np.int16)
        self.silent_change = rng.random(servers) < 0.3
        self.lid_of: dict[tuple[int, int], int] = {}
        self.entries: list[tuple[tuple[Entry, ...], str]] = []
        self.hash: list[str] = []
        self.count: list[int] = []
        self.size: list[int] = []

    def __len__(self) -> int:
        return len(self.entries)

    def list_id(self, i: int, day_idx: int) -> tuple[int, int]:
        """Endpoint i's tool list on day `day_idx`, and how many changes it has been through."""
        variant = int(self.variants[i, day_idx])
        return self._lid(int(self.base[i]) if variant == 0 else self.popular + i, i, variant), variant

    def _lid(self, key: int, i: int, variant: int) -> int:
        if (key, variant) in self.lid_of:
            return self.lid_of[(key, variant)]
        if variant == 0:
            base = int(self.base[i]) if key < self.popular else key
            entries = tuple((t, "") for t in self.pool.lists[int(self.server_of_base[base])])
            tag = hashlib.sha256(f"{self.seed}:{base}".encode()).hexdigest()[:8]
        else:
            before, tag = self.entries[self._lid(key if variant > 1 else int(self.base[i]), i, variant - 1)]
            entries = self._changed(before, random.Random(f"{self.seed}:{i}:{variant}"), variant)
        self.entries.append((entries, tag))
        fingerprints = [hashlib.sha256((self.pool.tools[t].fingerprint[0] + _mark(self.pool.tools[t], tag, extra)
                                        + self.pool.tools[t].fingerprint[1]).encode()).hexdigest()
                        for t, extra in entries]
        self.hash.append(tools_hash(fingerprints))
        self.count.append(len(entries))
        self.size.append(len(self.json_of(len(self.entries) - 1).encode()))
        self.lid_of[(key, variant)] = len(self.entries) - 1
        return len(self.entries) - 1

    def _changed(self, entries: tuple[Entry, ...], rng: random.Random, variant: int) -> tuple[Entry, ...]:
        """One change, as a real server makes one: a tool added, one dropped, or one reworded."""
        out = list(entries)
        kind = rng.random()
        if kind < 0.4 or len(out) < 2:
            names = {self.pool.tools[t].name for t, _ in out}
            for _ in range(20):
                t = rng.randrange(len(self.pool.tools))
                if self.pool.tools[t].name not in names:
                    out.append((t, ""))
                    break
        elif kind < 0.6:
            out.pop(rng.randrange(len(out)))
        else:
            k = rng.randrange(len(out))
            t, extra = out[k]
            out[k] = (t, extra + (f"_r{variant}" if self.pool.tools[t].in_name else
                                  f" Changed in revision {variant}."))
        return tuple(out)

    def json_of(self, lid: int) -> str:
        entries, tag = self.entries[lid]
        tools = self.pool.tools
        return "[" + ",".join(tools[t].json[0] + _mark(tools[t], tag, extra) + tools[t].json[1]
                              for t, extra in entries) + "]"

    def columns(self, lid: np.ndarray) -> dict[str, pa.Array]:
        """tools_json, tool_count, tool_list_size and tools_hash of rows whose lists are `lid` (-1: none)."""
        has_list = lid >= 0
        distinct = np.unique(lid[has_list])
        rows = pa.array(np.searchsorted(distinct, np.maximum(lid, 0)), mask=~has_list)
        return {
            "tools_json": pa.array([self.json_of(int(k)) for k in distinct], pa.string()).take(rows),
            "tool_count": pa.array(np.array(self.count, dtype=np.int32)[distinct], pa.int32()).take(rows),
            "tool_list_size": pa.array(np.array(self.size, dtype=np.int64)[distinct], pa.int64()).take(rows),
            "tools_hash": pa.array([self.hash[int(k)] for k in distinct], pa.string()).take(rows),
        }
