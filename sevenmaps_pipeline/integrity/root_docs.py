"""The signed roots as documents: each field type-checked, read from a folder, and their lines compared with
the files a day holds now."""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .capped import Unreadable, read_capped
from .report import Code, VerifyReport

ROOT_NAME = re.compile(r"^day=(\d{4}-\d{2}-\d{2})\.json$")
LINE = re.compile(r"^([0-9a-f]{64})  ((?:raw|curated)/[A-Za-z0-9_]+/day=(\d{4}-\d{2}-\d{2})/[^\n\r]+)$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
B64_SIG = re.compile(r"^[A-Za-z0-9+/]{86}==$")





@dataclass(frozen=True)
class RootDoc:
    day: dt.date
    previous_day: dt.date | None
    previous_root: str
    root: str
    signature: str
    signed_at: dt.datetime
    lines: list[str]
    log: dict[str, Any] | None
    rel: str
    raw: dict[str, Any]


def parse_root_doc(data: bytes, day: dt.date, rel: str) -> tuple[RootDoc | None, str | None]:
    """A root document, every field type-checked; (None, why) when it is not one."""
    try:
        doc = json.loads(data.decode("utf-8"), object_pairs_hook=_no_key_twice)  # UTF-8 only, as jq reads it
    except _KeyTwice as exc:  # which of two values a reader takes is the reader's: no document says two things
        return None, f"root file has the key {str(exc)[:40]!r} twice"
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"root file is not JSON ({exc})"
    except RecursionError:
        return None, "root file is JSON nested too deeply to read"
    if not isinstance(doc, dict):
        return None, "root file is not a JSON object"
    why = _fields_problem(doc, day)
    if why:
        return None, why
    previous_day = doc.get("previous_day")
    if previous_day is not None and not isinstance(previous_day, str):
        return None, "previous_day is neither null nor a day"
    try:
        previous = dt.date.fromisoformat(previous_day) if previous_day else None
        signed_at = dt.datetime.fromisoformat(doc["signed_at"])
    except ValueError:
        return None, "previous_day or signed_at is not an ISO date/time"
    if signed_at.tzinfo is None:
        return None, "signed_at has no time zone"
    lines = doc.get("lines")
    if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
        return None, "lines is not a list of text lines"
    why = _lines_problem(lines, day)
    if why:
        return None, why
    log = doc.get("log")
    if log is not None and not isinstance(log, dict):
        return None, "log is not an object"
    why = _log_problem(log)
    if why:
        return None, why
    return RootDoc(day, previous, doc["previous_root"], doc["root"], doc["signature"], signed_at, lines, log, rel,
                   doc), None


class _KeyTwice(ValueError):
    pass


def _no_key_twice(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _KeyTwice(key)
        out[key] = value
    return out


def _log_problem(log: dict[str, Any] | None) -> str | None:
    """What is wrong with the root's log record, if anything: its origin a text, its first index and tree size
    whole numbers (a statement signs their text, so "5" would pass for 5), its checkpoint a text."""
    if log is None:
        return None
    if "origin" in log and not isinstance(log["origin"], str):
        return "log.origin is not a text"
    for name in ("first_index", "tree_size"):
        value = log.get(name)
        if name in log and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            return f"log.{name} is not a whole number"
    if "checkpoint" in log and not isinstance(log["checkpoint"], str):
        return "log.checkpoint is not a text"
    return None


def _fields_problem(doc: dict[str, Any], day: dt.date) -> str | None:
    """What is wrong with the document's text fields (day, root, previous_root, signature), if anything."""
    for name in ("day", "root", "signature", "signed_at", "previous_root"):
        if not isinstance(doc.get(name), str):
            return f"root file has no text field {name!r}"
    if doc["day"] != day.isoformat():
        return f"root file names day {doc['day'][:20]!r}"
    if not HEX64.match(doc["root"]):
        return "root is not 64 lower-case hex digits"
    if doc["previous_root"] and not HEX64.match(doc["previous_root"]):
        return "previous_root is not 64 lower-case hex digits"
    if not B64_SIG.match(doc["signature"]):
        return "signature is not base64 of a 64-byte Ed25519 signature"
    return None


def _lines_problem(lines: list[str], day: dt.date) -> str | None:
    """What is wrong with the document's lines, if anything: each '<sha256>  <path>' of a file of this day,
    no '..', sorted by path, none twice."""
    for i, line in enumerate(lines):
        m = LINE.match(line)
        if not m:
            return f"line {i} is not '<sha256 hex>  <raw|curated path>': {line[:100]!r}"
        if m.group(3) != day.isoformat():
            return f"line {i} names a file of another day: {m.group(2)[:100]}"
        if ".." in m.group(2).split("/"):
            return f"line {i} has a '..' path element"
    paths = [line[66:] for line in lines]
    if paths != sorted(paths) or len(set(paths)) != len(paths):
        return "lines are not sorted by path, or name a file twice"
    return None


def _root_files(roots_dir: Path) -> list[tuple[dt.date, Path]]:
    if not roots_dir.is_dir():
        return []
    found = []
    for path in roots_dir.iterdir():
        m = ROOT_NAME.match(path.name)
        if m:
            try:
                found.append((dt.date.fromisoformat(m.group(1)), path))
            except ValueError:
                continue
    return sorted(found)


def diff_lines(recorded: list[str], actual: list[str]) -> list[tuple[Code, str, str]]:
    """(kind, line, path) of every file that differs between a root's lines and the files now."""
    rec = {line[66:]: line[:64] for line in recorded}
    act = {line[66:]: line[:64] for line in actual}
    out = []
    for path in sorted(set(rec) | set(act)):
        if path not in act:
            out.append((Code.FILE_MISSING, f"file missing: {path}", path))
        elif path not in rec:
            out.append((Code.FILE_ADDED, f"file added after signing: {path}", path))
        elif rec[path] != act[path]:
            out.append((Code.FILE_CHANGED, f"file changed: {path} (signed sha256 {rec[path]}, now {act[path]})", path))
    return out



MAX_ROOT_BYTES = 256 << 20  # a day of the real registry is well under 1 MiB of lines


def read_root_docs(report: VerifyReport, roots_dir: Path, base: Path) -> list[RootDoc]:
    docs = []
    for day, path in _root_files(roots_dir):
        rel = path.relative_to(base).as_posix()
        try:
            data = read_capped(path, MAX_ROOT_BYTES)  # helper-93: a FIFO hung verify, a link to /dev/zero ate memory
        except Unreadable as exc:
            report.add(Code.ROOT_UNREADABLE, f"root file unreadable: {rel} ({exc})", day, rel)
            continue
        doc, problem = parse_root_doc(data, day, rel)
        if doc is None:
            report.add(Code.ROOT_UNREADABLE, f"root file unreadable: {rel} ({problem})", day, rel)
            continue
        docs.append(doc)
    return docs
