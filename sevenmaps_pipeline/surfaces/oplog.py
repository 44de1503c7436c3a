"""The map's MCP server's operational log (seed 000 `operational_log`; docs/agents.md "The operational log"):
per call the tool, the time, the client's name, the country (not determined here: no address database is
installed, and the address itself is never kept) and an agent code that is a keyed hash, never an IP address.
Kept to run the service and stop abuse, for 30 days (the retention job deletes older days); not published: it
lives in `oplog/` beside the lake's public files, outside every root, export and view, and is never read by
a figure.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import os
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path

from ..lake.paths import LakePaths

KEY_NAME = ".agent-code.key"
# A short log (seed 000): days older than this are deleted by the retention job.
OPLOG_DAYS = 30


def oplog_folder(lake: LakePaths) -> Path:
    return lake.root / "oplog"


def prune_oplog(lake: LakePaths, today: dt.date, keep_days: int = OPLOG_DAYS) -> list[str]:
    """Delete the operational log's days older than `keep_days` before `today`; returns their names."""
    folder = oplog_folder(lake)
    removed = []
    for path in sorted(folder.glob("day=*.jsonl")) if folder.is_dir() else ():
        try:
            day = dt.date.fromisoformat(path.name[4:14])
        except ValueError:
            continue
        if (today - day).days > keep_days:
            path.unlink()
            removed.append(path.name)
    return removed


@dataclass
class OpLog:
    folder: Path
    key: bytes

    @classmethod
    def at(cls, folder: Path) -> OpLog:
        """The log in `folder`, with its key (created once); the folder, the key and every day's file are
        its owner's alone (0700, 0600): the log is not published."""
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)
        for kept in folder.glob("day=*.jsonl"):  # a log written before the files were made private
            kept.chmod(0o600)
        key_path = folder / KEY_NAME
        if not key_path.exists():
            fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(32))
        return cls(folder, bytes.fromhex(key_path.read_text().strip()))

    def agent_code(self, address: str | None, client_name: str | None) -> str:
        """A keyed hash of who called (address and client name): the same caller gets the same code, and
        the code cannot be turned back into an address without the key. 64 hex, as reporter ids are."""
        material = f"{address or '-'}\n{client_name or '-'}".encode("utf-8", "surrogatepass")
        return hmac.new(self.key, material, hashlib.sha256).hexdigest()

    _lock = threading.Lock()

    def record(self, tool: str, client_name: str | None, agent_code: str, outcome: str,
               now: dt.datetime | None = None) -> None:
        now = now or dt.datetime.now(dt.UTC)
        line = json.dumps({"at": now.isoformat(timespec="milliseconds"), "tool": tool,
                           # a lone surrogate has no UTF-8: kept as "?", never a failed call
                           "client_name": (client_name or "unknown")[:100].encode("utf-8", "replace").decode(),
                           "country": None,
                           "agent_code": agent_code, "outcome": outcome[:300]}, ensure_ascii=False)
        path = self.folder / f"day={now.date().isoformat()}.jsonl"
        with self._lock, os.fdopen(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "a",
                                   encoding="utf-8") as handle:
            handle.write(line + "\n")

    def lines(self, day: dt.date) -> list[dict]:
        path = self.folder / f"day={day.isoformat()}.jsonl"
        if not path.is_file():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
