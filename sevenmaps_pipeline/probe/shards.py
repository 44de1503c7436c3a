"""A scan split into shards by host (docs/scaling.md, "Past one machine").

Each host belongs to exactly one shard, so every shard keeps the politeness rule on its own (one request
at a time per host) and shards can run side by side: in processes on one machine, or on many machines.
All shards of a day read the one registry snapshot the day's first step took (probe/run.py
`take_snapshot`); each writes its own part files under its own run id, with its own control check.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from urllib.parse import urlsplit


def shard_of(host: str, count: int) -> int:
    """The shard of `host` among `count`: a fixed hash, so a host's shard never depends on the others."""
    digest = hashlib.sha256(host.lower().rstrip(".").encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


@dataclass(frozen=True)
class Shard:
    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"shard {self.index} of {self.count} does not exist (shards are 0..count-1)")

    @property
    def label(self) -> str:
        return f"s{self.index + 1}of{self.count}"

    def holds(self, url: str | None) -> bool:
        """Whether the listing with this URL is this shard's (a URL without a host: the first shard's)."""
        try:
            host = urlsplit(url or "").hostname or ""
        except ValueError:
            host = ""
        return shard_of(host, self.count) == self.index if host else self.index == 0
