"""Researchers' snapshots: `exports/<day>[_<day>]/`, a dated, immutable folder anyone can verify offline.

It holds every published table's signed files for those days (byte-identical, at their lake paths), the
day root documents, the log (checkpoint, tiles, entries) and a C2SP tlog-proof per included file, the
public key and vkey, `SHA256SUMS` (so `sha256sum -c SHA256SUMS` works), a Frictionless Data Package v2
`datapackage.json` and Croissant 1.1 `croissant.json` (publishing/descriptors.py), a README and `WITHHELD.txt`
naming every signed file left out and why (docs/verifying.md "Snapshots").

A snapshot shares no file with the lake: each data file is a reflink (its own inode, blocks shared until
either side writes) where the filesystem can, else a copy, never a hard link, so editing a snapshot in
place never changes the signed lake. Its files are ordinary writable files (0644 under the usual umask),
whatever the lake's 0444: a researcher's copy is theirs to trim or re-share, and SHA256SUMS and
`sevenmaps verify --export` check it, not its mode bits."""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..integrity.capped import Unreadable, read_capped
from ..integrity.log import LogState, read_state
from ..integrity.manifest import sha256_file
from ..integrity.proof import TlogProof
from ..integrity.root_docs import MAX_ROOT_BYTES, parse_root_doc
from ..integrity.roots import read_root, signed_days
from ..integrity.tiles import expected_files
from ..lake.parquet_io import STALE_SECONDS
from ..lake.paths import LakePaths, days_text, folder_day
from ..lake.schemas import TableSpec, table_of, withheld_reason
from .descriptors import DataFile, croissant, datapackage

log = logging.getLogger(__name__)


class ExportError(RuntimeError):
    pass


@dataclass(frozen=True)
class ExportResult:
    folder: Path
    days: list[dt.date]
    files: int
    withheld: int
    bytes: int
    created: bool  # False: the snapshot already existed and was left as it is


def snapshot_name(first: dt.date, last: dt.date) -> str:
    return first.isoformat() if first == last else f"{first.isoformat()}_{last.isoformat()}"


def default_folder(lake: LakePaths, first: dt.date, last: dt.date) -> Path:
    return lake.exports_dir / snapshot_name(first, last)


# Linux's FICLONE ioctl (linux/fs.h: _IOW(0x94, 9, int)): the target file shares the source's blocks,
# copy on write. Filesystems without reflinks (ext4, tmpfs) refuse it (EOPNOTSUPP, EXDEV across
# filesystems, EINVAL, ENOTTY): then a plain copy.
FICLONE = 0x40049409


def copy_independent(source: Path, target: Path) -> str:
    """`target`, a new file of its own with `source`'s bytes: "reflink" where the filesystem can, else
    "copy". Never a hard link: a snapshot edited in place must not change the signed lake."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(source, "rb") as src, open(target, "xb") as dst:
        try:
            fcntl.ioctl(dst.fileno(), FICLONE, src.fileno())
            return "reflink"
        except OSError:
            pass
    shutil.copyfile(source, target)  # onto the empty file made above; sendfile on Linux
    return "copy"


# What `sha256sum -c SHA256SUMS` leaves unseen, with standard tools (docs/verifying.md section 6, word for word):
# it reads only the files a list names, so a day's file no root signs (which DuckDB's `day=*` glob reads) and a
# signed file deleted with its line both passed every step (helper-93). These print each one; nothing when whole.
COMPLETENESS_CHECK = (
    "export LC_ALL=C                                   # one byte order for sort and comm",
    "signed=$(mktemp)                                  # outside the folder: no file of the snapshot",
    "jq -r '.lines[] | .[66:]' roots/day=*.json | sort -u > \"$signed\"        # every file these days' roots sign",
    "find raw curated ! -type d | sort | comm -23 - \"$signed\"                # each file here that no root signs",
    "{ find raw curated ! -type d; grep -v '^#' WITHHELD.txt | cut -f1; } | sort | comm -13 - \"$signed\""
    "  # each signed file neither here nor in WITHHELD.txt",
    "rm \"$signed\"",
)


def _readme(name: str, days: list[dt.date], tables: dict[str, TableSpec], checkpoint_size: int) -> str:
    # Each table also by the name an analyst of the lake knows it (its view in warehouse.duckdb) and its folder.
    rows = "\n".join(f"| `{n}` | `{spec.view}` | `{spec.location.split('/day=', 1)[0]}/` | {spec.grain} |"
                     for n, spec in sorted(tables.items()))
    first, last = days[0], days[-1]
    completeness = "\n    ".join(COMPLETENESS_CHECK)
    return f"""# 7Maps snapshot {name}

The signed daily map of remote MCP servers for {first} .. {last} (UTC days), as the pipeline published
it: every file is byte-identical to the file the day's signed root lists. Data licence: CC BY 4.0.

## Tables

| table | view in a lake's warehouse.duckdb | files | one row per |
|---|---|---|---|
{rows}

Files are Parquet, in each table's folder above, one `day=YYYY-MM-DD/` folder a day;
`datapackage.json` (Frictionless Data Package v2: `frictionless validate datapackage.json`, which holds each file
whole in memory: for a day or a small snapshot, not the registry's range) lists each with its SHA-256 and column
descriptions; `croissant.json` (MLCommons Croissant 1.1) describes the same files, their sizes and SHA-256, and
each table's columns for ML loaders.

Load in DuckDB, once the folder is verified (below: the `day=*` glob reads every `day=` folder here, signed or
not):

    SELECT code, count(*) FROM read_parquet('curated/daily_status/day=*/part-0.parquet') GROUP BY code;

or in Polars:

    import polars as pl
    pl.read_parquet("curated/daily_status/day=*/part-0.parquet")

## Verify

This folder's own `7maps.json` and `log/vkey` prove nothing by themselves: whoever changed its files could
have signed them again with a key of their own and put that key here. Verify against the 7Maps key you
trust, obtained apart from this folder, using the pipeline:

    sevenmaps verify --export . --public-key <the 7maps.json you trust, obtained apart from this folder>

or with standard tools only:

    sha256sum -c SHA256SUMS                  # each file SHA256SUMS lists is what it says (and only those)
    # each data file's line '<sha256>  <path>' is in roots/day=D.json "lines"; the day's root is
    # sha256_hex(previous_root + "\\n" + "\\n".join(lines)), and "signature" is Ed25519 over its 32 bytes
    # by the key you trust; proofs/<path>.tlog-proof proves that line is entry N of the log whose checkpoint
    # (log/checkpoint, size {checkpoint_size}) is a C2SP signed note by the log key ("integrity.log_vkey")
    # of the 7maps.json you trust.

`sha256sum -c` never reads a file SHA256SUMS does not list, so it passes a file added under a day no root
covers and a file deleted along with its line (whoever does either can rewrite SHA256SUMS). These print each
data file here that no root signs and each signed file neither here nor in WITHHELD.txt; nothing, when the
folder is whole (every roots/day=D.json must itself pass the root and signature checks above):

    {completeness}

`WITHHELD.txt` names every signed file of these days that is not here, and why; their lines are still in
the roots, so the roots verify and nothing is left out silently.
"""


def _days_to_export(lake: LakePaths, first: dt.date, last: dt.date) -> tuple[list[dt.date], list[dt.date]]:
    """The snapshot's days, and every signed day of the lake; refused unless all the snapshot's are signed."""
    if last < first:
        raise ExportError(f"--to {last} is before --day {first}")
    days = [first + dt.timedelta(days=i) for i in range((last - first).days + 1)]
    signed = signed_days(lake)
    unsigned = [d for d in days if d not in set(signed)]
    if unsigned:
        raise ExportError(f"day {unsigned[0]} is not signed; only signed days are exported "
                          f"(signed: {signed[0]} .. {signed[-1]})" if signed else "no signed days in the lake")
    return days, signed


def _snapshot_days(folder: Path) -> list[dt.date]:
    """The days an existing folder is a snapshot of (its SHA256SUMS and the root documents in roots/), or [] when it
    is none: a root that does not read as its day's root document makes it none (helper-98: empty files named so
    passed for a snapshot)."""
    if not folder.is_dir() or not (folder / "SHA256SUMS").is_file():
        return []
    days = []
    for path in sorted((folder / "roots").glob("day=*.json")):
        day = folder_day(path.name[:-5])
        if day is None:
            continue
        try:
            doc, _ = parse_root_doc(read_capped(path, MAX_ROOT_BYTES), day, f"roots/{path.name}")
        except Unreadable:
            doc = None
        if doc is None:
            return []
        days.append(day)
    return days


def _what_is_at(folder: Path, held: list[dt.date]) -> str:
    """What an existing --out holds, in a few words for the refusal."""
    if held:
        return f"a snapshot of {days_text(held)}"
    if folder.is_symlink() and not folder.exists():
        return f"a link to {os.readlink(folder)}, which is not there"
    if not folder.is_dir():
        return "a file"
    names = sorted(p.name for p in folder.iterdir())
    if not names:
        return "an empty folder"
    return ("a folder holding " + ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
            + " (no root document of any day)")


def _already_written(folder: Path, days: list[dt.date]) -> bool:
    """True when `folder` is a snapshot of exactly `days`: snapshots are immutable, so it is left as it is
    (docs/verifying.md section 5); False when nothing is there. Anything else is refused, naming what it holds:
    a snapshot of other days, left as it is, passed for the range asked (helper-93)."""
    if not folder.exists() and not folder.is_symlink():
        return False
    held = _snapshot_days(folder)
    if held == days:
        return True
    raise ExportError(f"{folder} is {_what_is_at(folder, held)}, not a snapshot of {days_text(days)}; "
                      "choose another --out")


def _refuse_inside(lake: LakePaths, folder: Path) -> None:
    """A snapshot is written under the lake's exports/ or outside the lake, and never inside another snapshot:
    elsewhere in the lake it would be files no root signs in the folders signing and `verify` walk, and a day's
    folder it landed in would be read as that day (helper-93, docs/verifying.md section 5)."""
    where = folder.resolve()  # through links, as the files would be written
    root, exports = lake.root.resolve(), lake.exports_dir.resolve()
    if where.is_relative_to(root) and exports not in where.parents:
        raise ExportError(f"--out {folder} is inside the lake {root}, where signing and `sevenmaps verify` read "
                          f"every folder; write the snapshot under {exports}/ or outside the lake")
    inside = next((p for p in where.parents if (p / "SHA256SUMS").is_file() and (p / "roots").is_dir()), None)
    if inside is not None:
        raise ExportError(f"--out {folder} is inside the snapshot {inside}, which it would change; "
                          "choose a folder outside it")


def _first_index(day: dt.date, doc: dict, previous: dt.date | None, at: int) -> int:
    """Where the day's lines start in the log: its root's own record (`log.first_index`), held to the chain and to
    the count of the signed lines before it. A missing root made every proof of the days after it wrong
    (helper-93: the count skipped its lines, the log holds them), and a snapshot is never rewritten."""
    said = doc.get("previous_day")
    if said != (previous.isoformat() if previous else None):
        raise ExportError(f"the signed roots have a gap: roots/day={day}.json chains to {said}, whose root is not in "
                          "the lake; run `sevenmaps verify`")
    record = doc.get("log") or {}
    first = record.get("first_index", at)
    size = record.get("tree_size", first + len(doc["lines"]) if isinstance(first, int) else None)
    if first != at or size != first + len(doc["lines"]):
        raise ExportError(f"roots/day={day}.json records its lines from log entry {first} (tree size {size}), "
                          f"where the signed roots before it hold {at} lines; run `sevenmaps verify`")
    return first


def _log_positions(lake: LakePaths, signed: list[dt.date], days: list[dt.date],
                   state: LogState) -> tuple[dict[dt.date, dict], dict[str, int]]:
    """The root documents of the snapshot's days, and each of their lines' index in the log (as each root records
    it, docs/verifying.md sections 1 and 2); refused when the roots have a gap, a root's record disagrees with the
    chain, the log does not yet hold every signed line, or an entry is not the line its proof would say it is."""
    index_of: dict[str, int] = {}
    at = 0
    docs: dict[dt.date, dict] = {}
    previous: dt.date | None = None
    for day in signed:
        doc = read_root(lake, day)
        first = _first_index(day, doc, previous, at)
        if day in days:
            docs[day] = doc
            for i, line in enumerate(doc["lines"]):
                index_of[line] = first + i
        at, previous = first + len(doc["lines"]), day
    if at > state.size:
        raise ExportError(f"the log (size {state.size}) does not yet hold every signed line ({at}); "
                          "it is behind its roots: run `sevenmaps log sync` (or the next signing does it)")
    wrong = next((line for line, i in index_of.items() if state.entries[i] != line.encode()), None)
    if wrong is not None:
        raise ExportError(f"log entry {index_of[wrong]} is not the signed line of {wrong[66:]}: the log and the roots "
                          "disagree; run `sevenmaps verify`")
    return docs, index_of


@dataclass
class _Contents:
    """What a snapshot being written holds so far: its data files (datapackage resources), the signed files
    it leaves out and why, the tables it has and their bytes."""
    included: list[DataFile] = field(default_factory=list)
    withheld: list[tuple[str, str]] = field(default_factory=list)
    tables: dict[str, TableSpec] = field(default_factory=dict)
    total: int = 0


def _add_day(lake: LakePaths, tmp: Path, day: dt.date, doc: dict, index_of: dict[str, int], state: LogState,
             checkpoint: bytes, contents: _Contents) -> None:
    """One day's documented files (each with its tlog-proof) and its root document into the snapshot."""
    for line in doc["lines"]:
        digest, rel = line[:64], line[66:]
        spec, reason = table_of(rel), withheld_reason(rel)
        if reason is not None or spec is None:
            contents.withheld.append((rel, reason or "not a documented table"))
            continue
        source = lake.root / rel
        if not source.is_file() or sha256_file(source) != digest:
            raise ExportError(f"{rel} no longer matches its signed line; run `sevenmaps verify`")
        try:  # a file signed beside a table's files that is none of them (a day signed before reports-1.2)
            schema = pq.read_schema(source)
        except (pa.ArrowInvalid, OSError):
            contents.withheld.append((rel, "signed, but no Parquet file of its table"))
            continue
        copy_independent(source, tmp / rel)
        proof = TlogProof(index_of[line], state.tree.inclusion_proof(index_of[line], state.size),
                          checkpoint, line.encode())
        (tmp / "proofs" / (rel + ".tlog-proof")).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "proofs" / (rel + ".tlog-proof")).write_text(proof.render())
        size = source.stat().st_size
        contents.total += size
        contents.tables[spec.name] = spec
        contents.included.append(DataFile(rel, spec, day, size, digest, schema))
    (tmp / "roots").mkdir(exist_ok=True)
    shutil.copyfile(lake.root_file(day), tmp / "roots" / lake.root_file(day).name)


def _add_log(lake: LakePaths, tmp: Path, state: LogState, checkpoint: bytes) -> None:
    """The log as of its checkpoint (checkpoint, vkey, tiles, entries) and the public key."""
    (tmp / "log").mkdir()
    (tmp / "log" / "checkpoint").write_bytes(checkpoint)
    shutil.copyfile(lake.log_dir / "vkey", tmp / "log" / "vkey")
    for rel, data in expected_files(state.tree, state.entries, state.size).items():
        (tmp / "log" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "log" / rel).write_bytes(data)
    shutil.copyfile(lake.well_known, tmp / "7maps.json")


def _add_documents(tmp: Path, name: str, days: list[dt.date], contents: _Contents, log_size: int) -> None:
    """datapackage.json, croissant.json, WITHHELD.txt, README.md and, last, SHA256SUMS over every file of the
    folder (the two descriptions included)."""
    created = dt.datetime.now(dt.UTC)
    package = datapackage(name, contents.included, created)
    (tmp / "datapackage.json").write_text(json.dumps(package, indent=2) + "\n")
    (tmp / "croissant.json").write_text(json.dumps(croissant(name, days, contents.included, created), indent=2) + "\n")
    (tmp / "WITHHELD.txt").write_text(
        "# Signed files of these days that this snapshot leaves out: <path><TAB><reason>.\n"
        "# Their lines stay in roots/day=D.json, so the roots still verify.\n"
        + "".join(f"{rel}\t{reason}\n" for rel, reason in contents.withheld))
    (tmp / "README.md").write_text(_readme(name, days, contents.tables, log_size))
    known = {f.rel: f.sha256 for f in contents.included}  # data files: hashed once, against their line
    sums = []
    for path in sorted(p for p in tmp.rglob("*") if p.is_file()):
        rel = path.relative_to(tmp).as_posix()
        sums.append(f"{known.get(rel) or hashlib.sha256(path.read_bytes()).hexdigest()}  {rel}")
    (tmp / "SHA256SUMS").write_text("\n".join(sums) + "\n")


# The working folder of an export (export_snapshot): removed on any error, but not when the process is killed.
_WORKING_FOLDER = re.compile(r"\..+\.[0-9a-f]{32}\.tmp")


def sweep_crashed_exports(lake: LakePaths, now: float | None = None) -> list[str]:
    """Remove the working folders killed exports left in the lake's exports/ (helper-89): one in which nothing has
    changed for an hour (lake/parquet_io.py STALE_SECONDS), its whole tree read, since an export writes deep in it.
    Working folders of an `--out` elsewhere are left: that folder is the user's. The names removed."""
    removed: list[str] = []
    if not lake.exports_dir.is_dir():
        return removed
    cutoff = (time.time() if now is None else now) - STALE_SECONDS
    for entry in sorted(os.scandir(lake.exports_dir), key=lambda e: e.name):
        if not (_WORKING_FOLDER.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False)):
            continue
        try:
            newest = max([entry.stat(follow_symlinks=False).st_ctime, *(
                os.lstat(os.path.join(top, name)).st_ctime for top, dirs, files in os.walk(entry.path)
                for name in dirs + files)])
        except OSError:
            continue  # gone or changing meanwhile: an export's own
        if newest < cutoff:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.name)
            log.info("removed a killed export's working folder: %s", entry.path)
    return removed


def export_snapshot(lake: LakePaths, first: dt.date, last: dt.date | None = None, out: Path | None = None,
                    progress=None) -> ExportResult:
    last = last or first
    days, signed = _days_to_export(lake, first, last)
    folder = Path(out) if out else default_folder(lake, first, last)
    _refuse_inside(lake, folder)
    sweep_crashed_exports(lake)  # on every export, one already written included (helper-101 F8)
    if _already_written(folder, days):
        return ExportResult(folder, days, 0, 0, 0, created=False)
    state = read_state(lake)
    checkpoint = state.checkpoint_bytes
    if checkpoint is None:
        raise ExportError("the lake has no log/checkpoint yet; sign a day first")
    if not lake.well_known.is_file():
        raise ExportError(f"no public key at {lake.well_known}")
    docs, index_of = _log_positions(lake, signed, days, state)
    tmp = folder.parent / f".{folder.name}.{uuid.uuid4().hex}.tmp"
    tmp.mkdir(parents=True)
    try:
        contents = _Contents()
        for day in days:
            _add_day(lake, tmp, day, docs[day], index_of, state, checkpoint, contents)
            if progress:
                progress(f"{day}: {sum(1 for f in contents.included if f.day == day)} files")
        _add_log(lake, tmp, state, checkpoint)
        _add_documents(tmp, snapshot_name(first, last), days, contents, state.size)
        folder.parent.mkdir(parents=True, exist_ok=True)
        os.rename(tmp, folder)  # fails if someone else made the folder meanwhile: snapshots are immutable
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and exc.filename is None:  # a write names no file (helper-99: a full disk)
            raise ExportError(f"{exc.strerror or exc} while writing the snapshot {folder}; nothing of it is left") \
                from exc
        raise
    return ExportResult(folder, days, len(contents.included), len(contents.withheld), contents.total, created=True)
