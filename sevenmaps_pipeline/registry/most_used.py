"""The most used endpoints, checked every hour (docs/operations.md, "Hourly checks"):

- those agents reported on in the last 7 built days (curated agent_reports: validated reports only, so a
  report nobody could send legitimately never buys a server hourly checks);
- those in the directory lists the operator keeps (`$SEVENMAPS_DIRECTORY_LISTS`): a file with one
  endpoint URL per line, optionally after the directory's name (`claude https://mcp.example.com/mcp`);
  blank lines and `#` comments are ignored. The Claude and ChatGPT connector directories are the lists
  meant here; they are not fetched by us, the operator copies them in.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass

from ..lake import duck
from ..lake.keys import server_key
from ..lake.paths import LakePaths
from .list_file import list_lines
from .listing import carries_credentials

DIRECTORY_LISTS_ENV = "SEVENMAPS_DIRECTORY_LISTS"
REPORT_DAYS = 7
MAX_LISTED = 5_000


@dataclass(frozen=True)
class DirectoryLists:
    keys: dict[str, str]  # server_key -> the directory that lists it
    problems: tuple[str, ...]


def read_directory_lists(path: str | os.PathLike[str]) -> DirectoryLists:
    keys: dict[str, str] = {}
    problems: list[str] = []
    for number, line in list_lines(path, "directory lists"):
        parts = line.split()
        directory, url = (parts[0], parts[1]) if len(parts) == 2 else ("directory", parts[0])
        if len(parts) > 2 or not url.lower().startswith("https://"):
            problems.append(f"line {number}: not '[directory] https://URL': {line[:200]!r}")
        elif carries_credentials(url):
            problems.append(f"line {number}: the URL carries credentials; never checked")
        elif len(keys) >= MAX_LISTED:
            problems.append(f"line {number}: more than {MAX_LISTED:,} endpoints; the rest are not read")
            break
        else:
            try:
                keys.setdefault(server_key(url), directory)
            except ValueError as exc:  # one such line dropped the whole list, naming no line (helper-83)
                problems.append(f"line {number}: not a URL that names an endpoint ({exc})")
    return DirectoryLists(keys, tuple(problems))


def reported_on(lake: LakePaths, today: dt.date, days: int = REPORT_DAYS) -> set[str]:
    """Endpoints with a validated agent report on any of the `days` built days before `today`."""
    paths = [lake.curated_file("agent_reports", today - dt.timedelta(days=i)) for i in range(1, days + 1)]
    files = [str(f) for f in paths if f.is_file()]
    if not files:
        return set()
    with duck.connect() as con:
        rows = con.execute("SELECT DISTINCT server_key FROM read_parquet($files)", {"files": files}).fetchall()
    return {key for (key,) in rows if key}


def most_used(lake: LakePaths, today: dt.date, lists: DirectoryLists | None) -> dict[str, str]:
    """server_key -> why it is checked hourly ('agent reports' and/or the directory's name)."""
    why: dict[str, str] = {}
    for key in sorted(reported_on(lake, today)):
        why[key] = "agent reports"
    for key, directory in (lists.keys.items() if lists else ()):
        why[key] = f"{why[key]}, {directory} directory" if key in why else f"{directory} directory"
    return why
