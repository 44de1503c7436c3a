"""Where everything lives in the lake (docs/data-dictionary.md, "Lake layout"). One place builds every path."""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..packaged import workplace
from ..rules.methods import STATUS_PARAMS

# The source checkout when run from source (the devtools and tests use it), else the working directory.
PROJECT_ROOT = workplace()
LAKE_ENV = "SEVENMAPS_LAKE"

# Raw inputs that a day's signed root covers; raw/hourly, raw/five_minute and raw/sensors are not covered.
COVERED_RAW = ("registry", "probes", "origins", "agent_reports", "readiness", "readiness_surfaces", "skills",
               "packages", "domains")
DAY_DIR = re.compile(r"^day=(\d{4}-\d{2}-\d{2})$")


def folder_day(name: str) -> dt.date | None:
    """The day a `day=YYYY-MM-DD` folder's name says, or None for any other name (`day=2026-11-30.bak`, a day that
    is no date such as `day=2026-13-40`): a stray folder never stops a reader (integrity/stray.py names it)."""
    match = DAY_DIR.match(name)
    if match is None:
        return None
    try:
        return dt.date.fromisoformat(match.group(1))
    except ValueError:
        return None
# What a lake holds once anything has run in it (a scan, a control, the UI's Dagster home): a folder with none of
# these is no lake, however empty (a fresh clone's data_lake/ with its README, a mistyped --lake /tmp).
LAKE_FOLDERS = ("raw", "curated", "roots", "control", "log", ".dagster")


def default_lake_root() -> Path:
    return Path(os.environ.get(LAKE_ENV) or workplace() / "data_lake").resolve()


def day_str(day: dt.date | str) -> str:
    return day if isinstance(day, str) else day.isoformat()


def days_text(days: list[dt.date]) -> str:
    """Days in a line: `2026-12-03`, or `2026-12-03 .. 2026-12-06 (4 days)`."""
    return str(days[0]) if len(days) == 1 else f"{days[0]} .. {days[-1]} ({len(days)} days)"


def parse_day(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError as exc:
        raise ValueError(f"not a UTC day in YYYY-MM-DD form: {value!r}") from exc


@dataclass(frozen=True)
class LakePaths:
    """The fixed layout of one lake root."""

    root: Path

    @classmethod
    def at(cls, root: str | os.PathLike[str] | None = None) -> LakePaths:
        return cls(Path(root).resolve() if root else default_lake_root())

    def holds_lake(self) -> bool:
        """Whether anything has run in this folder: one of LAKE_FOLDERS is in it."""
        return any((self.root / name).is_dir() for name in LAKE_FOLDERS)

    # raw -------------------------------------------------------------------------------------------
    def raw_dir(self, kind: str, day: dt.date | str) -> Path:
        return self.root / "raw" / kind / f"day={day_str(day)}"

    def raw_files(self, kind: str, day: dt.date | str) -> list[Path]:
        folder = self.raw_dir(kind, day)
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.glob("*.parquet") if not p.name.startswith("."))

    def raw_entries(self, kind: str, day: dt.date | str) -> list[Path]:
        """Everything not hidden in the day's raw folder: its files and whatever else landed (a hidden name is a
        write in flight)."""
        folder = self.raw_dir(kind, day)
        return sorted(p for p in folder.iterdir() if not p.name.startswith(".")) if folder.is_dir() else []

    def registry_file(self, day: dt.date | str) -> Path:
        return self.raw_dir("registry", day) / "servers.parquet"

    # curated ---------------------------------------------------------------------------------------
    def curated_dir(self, table: str, day: dt.date | str) -> Path:
        return self.root / "curated" / table / f"day={day_str(day)}"

    def curated_file(self, table: str, day: dt.date | str) -> Path:
        return self.curated_dir(table, day) / "part-0.parquet"

    def day_cache_file(self, kind: str, day: dt.date | str) -> Path:
        """A cache of one day's derived state (curated/baselines.py, curated/history_state.py): outside every
        day partition, never signed, safe to delete."""
        return self.root / "cache" / f"{kind}-{day_str(day)}.parquet"

    # the open day (provisional, never signed) -------------------------------------------------------
    @property
    def provisional_dir(self) -> Path:
        """The open day's provisional tables, rebuilt after each slice (curated/open_day.py): `builds/<id>/`
        and `current`, a link to the newest build. Never signed, exported or published as a day."""
        return self.root / "provisional"

    # integrity -------------------------------------------------------------------------------------
    @property
    def roots_dir(self) -> Path:
        return self.root / "roots"

    def root_file(self, day: dt.date | str) -> Path:
        return self.roots_dir / f"day={day_str(day)}.json"

    @property
    def log_dir(self) -> Path:
        """The RFC 6962 log of every signed line, as C2SP tiles (docs/verifying.md)."""
        return self.root / "log"

    @property
    def exports_dir(self) -> Path:
        return self.root / "exports"

    @property
    def well_known(self) -> Path:
        return self.root / ".well-known" / "7maps.json"

    @property
    def host_leases(self) -> Path:
        """The lock file of the hosts in flight in the lake's runs (probe/leases.py); holds no data."""
        return self.root / ".host-leases"

    # serving ---------------------------------------------------------------------------------------
    @property
    def warehouse(self) -> Path:
        return self.root / "warehouse.duckdb"

    @property
    def internal_warehouse(self) -> Path:
        """Views over the internal-only tables, for reviewers; never exported."""
        return self.root / "internal.duckdb"

    @property
    def quarantine_dir(self) -> Path:
        return self.root / "quarantine"

    # operator control (not covered by roots: it is what the operator decides, not what was observed) ----
    @property
    def opt_outs_file(self) -> Path:
        """The opt-out registry every check kind reads (registry/opt_outs.py)."""
        return self.root / "control" / "opt_outs.parquet"

    @property
    def owners_file(self) -> Path:
        """The owners' claims and notes (registry/owners.py)."""
        return self.root / "control" / "owners.parquet"

    def latest_built_day(self) -> dt.date | None:
        """The latest day whose daily_status is built (in the lake itself, never a provisional build)."""
        folder = self.root / "curated" / "daily_status"
        days = [d for p in folder.glob("day=*/part-0.parquet")
                if (d := folder_day(p.parent.name)) is not None] if folder.is_dir() else []
        return max(days) if days else None

    def days_with_data(self) -> list[dt.date]:
        """Every day that has a covered raw or curated partition folder."""
        days: set[dt.date] = set()
        parents = [self.root / "raw" / k for k in COVERED_RAW]
        curated = self.root / "curated"
        if curated.is_dir():
            parents += [p for p in curated.iterdir() if p.is_dir()]
        for parent in parents:
            if not parent.is_dir():
                continue
            for child in parent.iterdir():
                day = folder_day(child.name)
                if day is not None and child.is_dir():
                    days.add(day)
        return sorted(days)


@dataclass(frozen=True)
class OpenDayLake(LakePaths):
    """The lake as a provisional build of the open day sees it (curated/open_day.py): that day's curated
    tables and day caches live in the build's `folder`; a day before it that has ended but is not built yet
    is read from its own latest provisional build (`earlier`: (day, folder) pairs), its day caches kept in
    this build's folder too; every other day, and all raw data, where they are. So the day's builders run
    unchanged and can never write a curated partition or a cache of the lake itself."""

    open_day: dt.date
    folder: Path
    earlier: tuple[tuple[dt.date, Path], ...] = ()

    def curated_dir(self, table: str, day: dt.date | str) -> Path:
        name = day_str(day)
        if name == self.open_day.isoformat():
            return self.folder / "curated" / table / f"day={name}"
        for earlier, folder in self.earlier:
            if name == earlier.isoformat():
                return folder / "curated" / table / f"day={name}"
        return super().curated_dir(table, day)

    def day_cache_file(self, kind: str, day: dt.date | str) -> Path:
        name = day_str(day)
        if name == self.open_day.isoformat() or any(name == d.isoformat() for d, _ in self.earlier):
            return self.folder / "cache" / f"{kind}-{name}.parquet"
        return super().day_cache_file(kind, day)


def registry_in_force(lake: LakePaths, day: dt.date) -> Path | None:
    """The registry snapshot in force on `day`: the latest on or before it within the status lookback
    (STATUS_PARAMS lookback_days), read alike by the day's rows, the hourly and five-minute checks and the
    day's outside lookups."""
    for back in range(int(STATUS_PARAMS["lookback_days"]) + 1):
        path = lake.registry_file(day - dt.timedelta(days=back))
        if path.is_file():
            return path
    return None
