"""One built day of the map, opened for the surfaces (the map's MCP server, the site, badges and feeds):
each table of that day bound by its own file (never a scan of every day), the windows the answers need
(30 days of daily_status, the change days of tool_changes, every tool list ever computed), the current
status (the daily status replaced by newer hourly checks, sql/current_status.sql), the incidents with a
person's reviews applied at read time (sql/incidents_now.sql: a closed incident stops being live at once)
and the signed root the day belongs to (docs/agents.md).

Opened `live` (the map's server, `sevenmaps route` without --day), it also reads the days after it as they
land (curated/open_day.py: the day that just ended until its map is built, and the open day): the endpoints
checked since replace the served day's status, tool list and changes in every answer, which says so
(`open_day`). Opened for the record (the signed day's site, the other readers) it never does.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from ..curated.common import registry_in_force
from ..curated.open_day import OpenDay, links_now, open_days
from ..integrity.served import read_files_problem, served_root, stat_signature
from ..lake import duck
from ..lake.keys import server_key
from ..lake.parquet_io import footer_readable
from ..lake.paths import LakePaths, folder_day
from ..lake.schemas import BY_NAME, DAILY_STATUS, RAW_FIVE_MINUTE, RAW_HOURLY, RAW_REGISTRY
from ..registry.incident_reviews import reviews_file, reviews_table

# The day tables an answer reads, each bound to the served day's file.
DAY_TABLES = ("daily_status", "server_history", "tools", "token_cost", "findings", "server_categories",
              "tool_changes", "incidents", "reliable_rankings", "readiness_scores", "readiness_lines",
              "domain_ages", "failure_reasons", "rating_aggregates", "package_advisories")
HISTORY_DAYS = 30
CHANGE_DAYS = 60
# The five-minute uptime's longest window (sql/five_minute_uptime.sql: 30 days, and 90 once older checks exist).
FIVE_MINUTE_WINDOW_DAYS = 90


class NoMapError(RuntimeError):
    """The lake has no built day to answer from."""


# What to do about it, in the CLI's words (helper-85: the message named no command).
BUILD_A_DAY = ("build one: `sevenmaps run` scans and maps today, `sevenmaps backfill --from D --to D` maps a day "
               "already scanned (`sevenmaps status` says which), `sevenmaps demo` makes the demo lake")


class UnknownServerError(LookupError):
    """A server name, URL, key or id that names no endpoint on the served day."""


class AmbiguousServerError(UnknownServerError):
    """A registry name that several endpoints of the served day share."""


class LeftTheMapError(UnknownServerError):
    """An endpoint that was on an earlier day's map and is not on the served day's: `last_day` is the newest."""

    def __init__(self, message: str, last_day: dt.date) -> None:
        super().__init__(message)
        self.last_day = last_day


@dataclass
class MapDay:
    lake: LakePaths
    day: dt.date
    con: duckdb.DuckDBPyConnection
    root: dict[str, Any] | None = None
    unsigned_why: str | None = None  # a root that is there but does not hold: why the day is shown unsigned
    _signed_reads: list[Path] = field(default_factory=list)  # the built files read (of signed days, mostly)
    _expected: list[Path] = field(default_factory=list)  # the files of the windows read, there or not
    _every_day: list[str] = field(default_factory=list)  # the tables read of every day
    _inputs_stat: tuple = ()  # what they and their roots were when the day was opened
    missing_tables: list[str] = field(default_factory=list)
    live: bool = False
    # The provisional builds read (live): the latest of each day after the served day, oldest first (the day
    # that just ended, until its map is built, and the open day); open_day is the newest of them.
    open_days: list[OpenDay] = field(default_factory=list)
    open_day: OpenDay | None = None
    _frequent_at_open: list[Path] = field(default_factory=list)
    _links_at_open: tuple[tuple[str, str], ...] = ()
    reviews: bool = True
    held: bool = False  # the day-wide answers computed once and kept (publishing/status.py hold_day)
    _reviews_at_open: tuple[int, int] | None = None

    @classmethod
    def open(cls, lake: LakePaths, day: dt.date | None = None, reviews: bool = True, *,
             live: bool = False, files_checked_by_caller: bool = False) -> MapDay:
        """The served day: `day`, else the latest day whose daily_status is built. With `reviews` (the live
        answers), a person's incident reviews apply as they are now; without (the site: a record of the
        day), the day's incidents read as built. `live`: the open day's provisional build is read too, when
        it is of a later day. `files_checked_by_caller`: the root is read without checking the day's files against
        it (a site worker, whose parent checks them before any page is kept)."""
        if day is None:
            day = latest_built_day(lake)
            if day is None:
                raise NoMapError(f"no built day in {lake.root}: {BUILD_A_DAY}")
        elif not lake.curated_file("daily_status", day).is_file():
            latest = lake.latest_built_day()
            raise NoMapError(f"{day} is not built in {lake.root} (no curated/daily_status/day={day}; "
                             + (f"the latest built day is {latest})" if latest else "no day is built yet)"))
        con = duck.connect()
        opened = cls(lake, day, con, live=live, reviews=reviews)
        try:
            opened._bind()
        except BaseException:
            con.close()
            raise
        # Signed only while its files are those its root signed (integrity/served.py): a file changed since is
        # never shown beside "signed" and the root's hashes.
        served = served_root(lake, day, check_files=not files_checked_by_caller)
        opened.unsigned_why = served.problem
        if served.doc is not None and not files_checked_by_caller:  # and what it reads of earlier signed days
            opened.unsigned_why = read_files_problem(lake, day, opened._signed_reads, opened._expected,
                                                     opened._every_day)
        opened._inputs_stat = opened._signed_inputs_stat()
        if served.doc is not None and opened.unsigned_why is None:
            doc = served.doc
            opened.root = {"day": day.isoformat(), "root": doc.get("root"), "signed_at": doc.get("signed_at"),
                           "previous_root": doc.get("previous_root"), "path": f"roots/day={day}.json"}
        return opened

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> MapDay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- binding ---------------------------------------------------------------------------------------

    def _files(self, table: str, days: int | None) -> list[Path]:
        """The built files of `table` read: the served day's and the `days` before it (None: every day's)."""
        if days is None:
            folder = self.lake.root / "curated" / table
            found = sorted(folder.glob("day=*/part-0.parquet")) if folder.is_dir() else []
            # a folder not named as a day's (`day=...bak`) is no day of the map (integrity/stray.py)
            files = [f for f in found if (d := folder_day(f.parent.name)) is not None and d <= self.day]
            self._every_day.append(table)
        else:
            window = [self.lake.curated_file(table, self.day - dt.timedelta(days=back)) for back in range(days)]
            files = [f for f in window if f.is_file()]
            self._expected += window
        self._signed_reads += files  # each is checked against its day's root when the day is opened
        return files

    def signed_inputs_changed(self) -> bool:
        """Whether a built file read, or the root of its day, has been written since the day was opened."""
        return self._signed_inputs_stat() != self._inputs_stat

    def _signed_inputs_stat(self) -> tuple:
        days = {d for f in self._signed_reads if (d := folder_day(f.parent.name)) is not None} | {self.day}
        return stat_signature(self.lake, self._signed_reads, sorted(days))

    def _open(self, table: str) -> list[Path]:
        """The provisional files of `table` read, one per day after the served day (live only)."""
        return [f for build in self.open_days for f in build.files(table)]

    def _bind(self) -> None:
        if self.live:
            self._links_at_open = links_now(self.lake)  # before reading: a swap meanwhile reopens, never misses
            self.open_days = open_days(self.lake, after=self.day)
            self.open_day = self.open_days[-1] if self.open_days else None
        self._frequent_at_open = self._frequent_recent()
        for table in DAY_TABLES:
            files = self._files(table, 1)
            if not files:
                self.missing_tables.append(table)
            # The served day's changes and those of the open day so far: what "changed today" reads.
            extra = self._open(table) if table == "tool_changes" else []
            name = "signed_tools" if table == "tools" else "incidents_built" if (
                table == "incidents" and self.reviews) else table
            duck.bind_input(self.con, name, files + extra, BY_NAME[table].schema)
        if self.reviews:
            self._bind_reviews()
        # An endpoint checked since the served day shows the list of its latest check, else the one it last listed.
        duck.bind_input(self.con, "open_tools_days", self._open("tools"), BY_NAME["tools"].schema)
        self.con.execute("CREATE TEMP VIEW open_tools AS SELECT * FROM open_tools_days "
                         "QUALIFY day = max(day) OVER (PARTITION BY server_key)")
        self.con.execute("CREATE TEMP VIEW tools AS SELECT * FROM open_tools UNION ALL BY NAME SELECT * FROM "
                         "signed_tools WHERE server_key NOT IN (SELECT server_key FROM open_tools)")
        # Each endpoint's latest check since the served day (the day that just ended, and the open day).
        duck.bind_input(self.con, "open_status_days", self._open("daily_status"), DAILY_STATUS.schema)
        self.con.execute("CREATE TEMP VIEW open_status AS SELECT * FROM open_status_days QUALIFY row_number() "
                         "OVER (PARTITION BY server_key ORDER BY day DESC, checked_at DESC NULLS LAST) = 1")
        duck.bind_input(self.con, "status_window",
                        self._files("daily_status", HISTORY_DAYS) + self._open("daily_status"), DAILY_STATUS.schema)
        duck.bind_input(self.con, "change_window",
                        self._files("tool_changes", CHANGE_DAYS) + self._open("tool_changes"),
                        BY_NAME["tool_changes"].schema)
        duck.bind_input(self.con, "tool_facts", self._files("tool_facts", None) + self._open("tool_facts"),
                        BY_NAME["tool_facts"].schema)
        # Each list's definition tokens, counted once (the open day's new lists by its provisional builds):
        # the token cost of a list shown from a check since the served day (publishing/status.py TOKEN_COST).
        duck.bind_input(self.con, "tool_lists", self._files("tool_lists", None) + self._open("tool_lists"),
                        BY_NAME["tool_lists"].schema)
        duck.bind_input(self.con, "hourly_checks", self.hourly_files(), RAW_HOURLY.schema)
        # Owners' five-minute checks (not covered by roots): the status shown now (sql/current_status.sql) reads
        # those since the served day as it reads the hourly ones, in the day's record too (its index says so);
        # their uptime (sql/five_minute_uptime.sql) the 90 days through the served day, live through the latest.
        duck.bind_input(self.con, "five_minute_checks", self.five_minute_files(since_too=True), RAW_FIVE_MINUTE.schema)
        duck.bind_input(self.con, "five_minute_checks_for_uptime", self.five_minute_files(), RAW_FIVE_MINUTE.schema)
        # The registry snapshot the served day was built from (sql/daily_status.sql): every name it lists an
        # endpoint under names that endpoint, not only the one its row carries (docs/agents.md, server_status).
        registry = registry_in_force(self.lake, self.day)
        self._signed_reads += [registry] if registry else []  # a covered raw file, checked as the built ones
        duck.bind_input(self.con, "registry_listings", [registry] if registry else [], RAW_REGISTRY.schema)
        self._view("current_status")
        self._view("five_minute_uptime", reads={"five_minute_checks": "five_minute_checks_for_uptime"})

    def _view(self, name: str, reads: dict[str, str] | None = None) -> None:
        """The view of sql/<name>.sql, each input named in `reads` read from another binding."""
        lines = duck.load_sql(name).splitlines()
        body = "\n".join(line for line in lines if not line.lstrip().startswith("--"))
        for table, bound in (reads or {}).items():
            body = re.sub(rf"\b{table}\b", bound, body)
        self.con.execute(f"CREATE TEMP VIEW {name} AS {body}")

    def _bind_reviews(self) -> None:
        """`incidents` as a person's reviews leave it now (sql/incidents_now.sql): every review when the served
        day is the newest built day, else those made before it ended (what that day's build read). An
        unreadable reviews file stops the opening, naming the file: it never reads as "nobody closed one"."""
        self._reviews_at_open = self._reviews_stat()
        newest = latest_built_day(self.lake)
        before = None if newest is None or self.day >= newest else \
            dt.datetime.combine(self.day + dt.timedelta(days=1), dt.time(), dt.UTC)
        self.con.register("incident_reviews", reviews_table(self.lake, before))
        self._view("incidents_now")
        self.con.execute("CREATE OR REPLACE TEMP VIEW incidents AS SELECT * FROM incidents_now")

    def _reviews_stat(self) -> tuple[int, int] | None:
        try:
            found = reviews_file(self.lake).stat()
        except FileNotFoundError:
            return None
        return found.st_mtime_ns, found.st_size

    def _after(self) -> list[dt.date]:
        """The days after the served day whose frequent checks can be newer than it: the next day, and (live)
        every day through the newest provisional one."""
        last = max(self.day + dt.timedelta(days=1), self.through())
        return [self.day + dt.timedelta(days=i) for i in range(1, (last - self.day).days + 1)]

    def five_minute_files(self, since_too: bool = False) -> list[Path]:
        """90 days of five-minute checks through the served day; live (or `since_too`: the status shown now),
        through the latest day checked too. The record's uptime (the day's site) never reads past the day: its
        figure is the same whenever the site is built."""
        days = [self.day - dt.timedelta(days=back) for back in range(FIVE_MINUTE_WINDOW_DAYS)]
        return [f for day in (days + self._after() if self.live or since_too else days)
                for f in self.lake.raw_files("five_minute", day) if footer_readable(f)]

    def hourly_files(self) -> list[Path]:
        """The hourly checks that can be newer than the day's daily check: that day's and the days after it (a torn
        file of a day not built yet is left out: its day's build moves it to quarantine/)."""
        return [f for day in [self.day, *self._after()] for f in self.lake.raw_files("hourly", day)
                if footer_readable(f)]

    def _frequent_recent(self) -> list[Path]:
        """The hourly and five-minute batches of the served day and the days after: where new ones land."""
        return self.hourly_files() + [f for day in [self.day, *self._after()]
                                      for f in self.lake.raw_files("five_minute", day)]

    def inputs_changed(self) -> bool:
        """Whether what this opened day reads has changed since: a newer built day, its signature, a new
        hourly batch (which can change the status shown now) or five-minute batch (an owner's uptime), or a
        person's incident review (an incident closed stops being live at once)."""
        signed_since = self.root is None and self.unsigned_why is None and self.lake.root_file(self.day).exists()
        return (latest_built_day(self.lake) != self.day or signed_since
                or self.signed_inputs_changed()  # a file read, or a root, written since
                or self._frequent_recent() != self._frequent_at_open
                or (self.live and links_now(self.lake) != self._links_at_open)
                or (self.reviews and self._reviews_stat() != self._reviews_at_open))

    # --- reading ---------------------------------------------------------------------------------------

    def rows(self, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        cursor = self.con.execute(sql, params or {})
        names = [d[0] for d in cursor.description or []]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def resolve(self, server: str) -> dict[str, Any]:
        """The endpoint `server` names on the served day: its server_key, 12-hex server_id, URL or a registry
        name the registry in force lists it under (its row carries one: sql/daily_status.sql); a name that
        several endpoints share is refused with their keys."""
        text = (server or "").strip()
        if not text:
            raise UnknownServerError("server is empty: pass its URL, server_key, 12-hex server_id or registry name")
        candidates = {text, text.lower()}
        with contextlib.suppress(ValueError):  # not a URL: a key, an id or a name
            candidates.add(server_key(text if "://" in text else f"https://{text}"))
        found = self.rows("SELECT server_key, server_id, server_name, url FROM daily_status "
                          "WHERE server_key = ANY($c) OR server_id = lower($t) OR server_name = $t "
                          "OR server_key IN (SELECT server_key FROM registry_listings WHERE server_name = $t) "
                          "ORDER BY server_key",
                          {"c": sorted(candidates), "t": text})
        if not found:
            # by its registry name too, as the day it was last on the map listed it (helper-94: a name was "no
            # endpoint" where its URL was "not on the map since")
            (last,) = duck.one(self.con, "SELECT max(day) FROM status_window WHERE server_key = ANY($c) "
                               "OR server_id = lower($t) OR server_name = $t", {"c": sorted(candidates), "t": text})
            if last is not None and last < self.day:  # it left the map (helper-85: the error said to pass a URL)
                raise LeftTheMapError(f"server {text[:200]!r} is not on the map of {self.day}: it was last on the "
                                      f"map of {last} (its listing skipped, opted out or no longer listed since)", last)
            raise UnknownServerError(f"server {text[:200]!r} names no endpoint on the map of {self.day}: pass its "
                                     "URL, server_key, 12-hex server_id or registry name")
        if len(found) > 1:
            keys = ", ".join(r["server_key"] for r in found[:10])
            raise AmbiguousServerError(f"server {text[:200]!r} names {len(found)} endpoints on {self.day} ({keys}): "
                                       "pass one's URL, server_key or server_id")
        return found[0]

    def served(self) -> dict[str, Any]:
        """What every answer says it was computed from: the map day and its signed root, and, live, the open
        day's provisional build where one was read."""
        served = {"map_day": self.day.isoformat(),
                  "signed_root": self.root,
                  "signed": self.root is not None,
                  "note": None if self.root else f"{self.day} is shown unsigned: {self.unsigned_why}" if (
                      self.unsigned_why) else f"{self.day} is not signed yet (days are signed after they end)",
                  "tables_not_built": self.missing_tables}
        if self.live:
            served["open_day"] = self.open_day.served() if self.open_day else None
            # Every day read provisionally (the day that just ended, until its map is built, and the open day).
            served["provisional_days"] = [b.day.isoformat() for b in self.open_days]
        return served

    def through(self) -> dt.date:
        """The latest day an answer's changes run through: the open day when its build is read."""
        return self.open_day.day if self.open_day else self.day


def latest_built_day(lake: LakePaths) -> dt.date | None:
    return lake.latest_built_day()


__all__ = ["AmbiguousServerError", "LeftTheMapError", "MapDay", "NoMapError", "UnknownServerError", "latest_built_day"]
