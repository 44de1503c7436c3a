"""Checking a researcher's snapshot offline, with no lake: SHA256SUMS, the roots and their chain, the
signatures, the log and a tlog-proof for every included file; what was withheld is listed, never silent."""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..lake.parquet_io import write_bytes_atomic
from ..lake.schemas import withheld_reason
from .capped import MAX_LIST_BYTES, Unreadable, read_capped, read_text_capped
from .checkpoint import parse_checkpoint_text
from .export_descriptions import check_descriptions, check_package_columns
from .manifest import sha256_file
from .note import MAX_NOTE_BYTES, Verifier, parse_note, verifier_for
from .proof import MAX_PROOF_BYTES, verify_proof
from .report import Code, Trust, VerifyReport
from .root_docs import RootDoc, read_root_docs
from .stray import stray_roots
from .verify import SNAPSHOT_KEY, check_chain, finish_report, resolve_trust, tiles_as_entries_give
from .verify_log import check_log, check_state

SUM_LINE = re.compile(r"^([0-9a-f]{64})  (.+)$")


def _safe(rel: str) -> bool:
    """A path as a snapshot names its files: relative, no empty, `.` or `..` segment (helper-99: `./curated/x` was a
    key of its own for the same file, verified OK, and a million such lines hashed it a million times)."""
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and not {"", ".", ".."} & set(parts) and "\\" not in rel


@dataclass
class _Files:
    """A snapshot's files as verify reads them: each reached through no link (helper-99: `curated/evil -> /proc/self`
    led verify to read pagemap without end), the folders above them looked at once, and each file's bytes hashed
    once, by device and inode (helper-99's hard links cost no disk, and each listed one was hashed in full)."""
    folder: Path
    digests: dict[tuple[int, int], str] = field(default_factory=dict)
    folders: set[str] = field(default_factory=set)  # paths found to be folders, not links

    def held(self, rel: str) -> os.stat_result | None:
        """The status of the regular file at `rel`; None when a link is in its place or a folder's above it, or when
        nothing or no regular file is there. A name the system refuses raises, as lstat does."""
        parts = rel.split("/")
        try:
            for i in range(1, len(parts)):
                above = "/".join(parts[:i])
                if above not in self.folders:
                    mode = (self.folder / above).lstat().st_mode
                    if stat.S_ISLNK(mode):
                        return None
                    if not stat.S_ISDIR(mode):
                        break  # the lstat below says why no file is there
                    self.folders.add(above)
            st = (self.folder / rel).lstat()
        except FileNotFoundError:
            return None
        return st if stat.S_ISREG(st.st_mode) else None

    def digest(self, rel: str) -> str | None:
        """The file's SHA-256, None when it cannot be read or is reached through a link (which then differs from any
        line)."""
        try:
            st = self.held(rel)
            if st is None:
                return None
            key = (st.st_dev, st.st_ino)
            if key not in self.digests:
                self.digests[key] = sha256_file(self.folder / rel)
        except OSError:
            return None
        return self.digests[key]


def _read_sums(report: VerifyReport, folder: Path, files: _Files) -> dict[str, str]:
    path = folder / "SHA256SUMS"
    if not path.exists() and not path.is_symlink():
        report.add(Code.SUMS_MISSING, "no SHA256SUMS in the snapshot", None, "SHA256SUMS")
        return {}
    try:
        text = read_text_capped(path, MAX_LIST_BYTES)
    except Unreadable as exc:
        report.add(Code.SUMS_MISSING, f"SHA256SUMS cannot be read ({exc})", None, "SHA256SUMS")
        return {}
    sums: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        m = SUM_LINE.match(line)
        if not m or not _safe(m.group(2)):
            report.add(Code.SUMS_MALFORMED,
                       f"SHA256SUMS line {n} is not '<sha256>  <relative path>': {line[:100]!r}", None, "SHA256SUMS")
            continue
        sums[m.group(2)] = m.group(1)
    for rel, digest in sums.items():
        try:  # a link is no file of a snapshot: never followed (helper-98: one to /proc/self/pagemap hung verify)
            present = files.held(rel) is not None
        except OSError as exc:  # helper-93: a name too long for the system ended verify as a usage error
            report.add(Code.SUMS_MALFORMED, f"SHA256SUMS names what cannot be a file here ({exc.strerror}): "
                       f"{rel[:100]!r}", None, "SHA256SUMS")
            continue
        if not present:
            report.add(Code.FILE_MISSING, f"listed in SHA256SUMS but missing: {rel}", None, rel)
        elif files.digest(rel) != digest:
            report.add(Code.FILE_CHANGED, f"file changed: {rel} (SHA256SUMS says {digest})", None, rel)
    for target in folder.rglob("*"):
        rel = target.relative_to(folder).as_posix()
        if target.is_file() and rel != "SHA256SUMS" and rel not in sums:
            report.add(Code.FILE_NOT_LISTED, f"file not listed in SHA256SUMS: {rel}", None, rel)
    return sums


# What a snapshot holds (publishing/export.py): anything else in it is no part of it, and a link or a hidden entry
# may show a reader files no root covers (DuckDB's `day=*` globs follow a linked folder; SHA256SUMS and this
# check, walking without following links, would not see what is behind it).
EXPORT_ENTRIES = {"7maps.json", "README.md", "SHA256SUMS", "WITHHELD.txt", "croissant.json", "datapackage.json",
                  "curated", "log", "proofs", "raw", "roots"}


def _stray_in_export(folder: Path) -> list[tuple[str, str]]:
    out = []
    for top, dirs, names in os.walk(folder):
        here = Path(top)
        for name in sorted(dirs + names):
            path = here / name
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                out.append((rel, "a link in the snapshot"))
            elif here == folder and name not in EXPORT_ENTRIES:
                out.append((rel, "not part of a snapshot"))
            elif name.startswith("."):
                out.append((rel, "a hidden entry in the snapshot"))
        dirs[:] = [d for d in dirs if not d.startswith(".") and not (here / d).is_symlink()
                   and (here != folder or d in EXPORT_ENTRIES)]
    return out


def _not_here(report: VerifyReport, rel: str, listed: str | None, doc: RootDoc) -> None:
    """A signed file the snapshot does not hold: withheld when WITHHELD.txt lists it, else missing. A file the rule
    that writes snapshots withholds shows the rule's reason; one of a published table was left out of this copy by
    whoever made or shared it (a subset may be shared), and says so, quoting WITHHELD.txt, never as the rule's."""
    if listed is None:
        report.add(Code.FILE_MISSING, f"signed file missing and not listed in WITHHELD.txt: {rel}", doc.day, rel)
        return
    policy = withheld_reason(rel)
    if policy is not None:
        report.withheld.append(f"{rel} ({policy})")
        return
    report.withheld.append(f"{rel} (a published file left out of this copy; WITHHELD.txt says: {listed[:200]})")
    note = "published files are left out of this copy: a snapshot as `sevenmaps export` writes it holds them all"
    if note not in report.notes:
        report.notes.append(note)


def _read_withheld(report: VerifyReport, folder: Path) -> dict[str, str]:
    path = folder / "WITHHELD.txt"
    if not path.exists() and not path.is_symlink():
        return {}
    try:
        text = read_text_capped(path, MAX_LIST_BYTES)
    except Unreadable as exc:  # then every signed file it would list is missing, and named so
        report.add(Code.WITHHELD_UNREADABLE, f"WITHHELD.txt cannot be read ({exc})", None, "WITHHELD.txt")
        return {}
    out = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            rel, _, reason = line.partition("\t")
            out[rel] = reason or "no reason given"
    return out


def check_export(report: VerifyReport, folder: Path, trust: Trust) -> list[RootDoc]:
    files = _Files(folder)
    sums = _read_sums(report, folder, files)
    docs = read_root_docs(report, folder / "roots", folder)
    if not docs:
        report.add(Code.NO_ROOTS, "the snapshot has no root documents (roots/day=*.json)", None, "roots")
        return docs
    check_chain(report, docs, trust.public, first_previous=None)
    withheld = _read_withheld(report, folder)
    checkpoint_path = folder / "log" / "checkpoint"
    origin = trust.log_name
    if origin is None:
        with contextlib.suppress(Unreadable):  # check_log names an unreadable checkpoint
            note, _ = parse_note(read_capped(checkpoint_path, MAX_NOTE_BYTES + 1))
            cp, _ = parse_checkpoint_text(note.text) if note else (None, None)
            origin = cp.origin if cp else None
    log = verifier_for(origin, trust.public) if origin and trust.public else None
    signed: dict[str, str] = {}  # every signed file of the snapshot's days, and its signed SHA-256
    held: dict[str, str] = {}  # the signed files the snapshot holds, and their signed SHA-256
    for doc in docs:
        for line in doc.lines:
            digest, rel = line[:64], line[66:]
            signed[rel] = digest
            if rel not in sums and not (folder / rel).exists():
                _not_here(report, rel, withheld.get(rel), doc)
                continue
            # one missing from SHA256SUMS is named there, and its bytes still checked against its signed line
            if (sums[rel] if rel in sums else files.digest(rel)) != digest:
                report.add(Code.FILE_CHANGED,
                           f"file differs from its signed line: {rel} (signed sha256 {digest})", doc.day, rel)
                continue
            held[rel] = digest
            report.files_checked += 1
            _check_proof(report, folder, doc, line, log, origin, trust)
    for rel in sums:
        if rel.startswith(("raw/", "curated/")) and rel not in signed:
            report.add(Code.FILE_NOT_SIGNED, f"data file not in any signed root: {rel}", None, rel)
    _withheld_of_nothing(report, withheld, signed, held)
    for rel, why in _stray_in_export(folder) + _beside_signed(folder, held):
        report.add(Code.STRAY, f"{why}: {rel}", None, rel)
    tree, _ = check_log(report, folder / "log", docs, trust.public, trust, complete=False)
    if tree is not None:  # every tile file as the entries give it: a file under log/ that is no tile is named
        tiles_as_entries_give(report, folder / "log", tree)
    docs_read = check_descriptions(report, folder, signed)
    # only the files read as regular ones whose bytes are the signed ones: one SHA256SUMS lists with its signed
    # digest may be a FIFO or a link, named missing above, and is never opened again
    check_package_columns(report, folder, {rel: d for rel, d in held.items() if files.digest(rel) == d}, docs_read)
    return docs


def _withheld_of_nothing(report: VerifyReport, withheld: dict[str, str], signed: dict[str, str],
                         held: dict[str, str]) -> None:
    """A WITHHELD.txt line that withholds nothing (no root of these days signs its file, or the snapshot holds it) is
    read as no line at all, and said so in a note: WITHHELD.txt is not signed, and only a signed file the snapshot
    lacks can be withheld (helper-99: 1.5 million such lines verified OK without a word)."""
    idle = sorted(rel for rel in withheld if rel not in signed or rel in held)
    if idle:
        report.notes.append(f"WITHHELD.txt lists {len(idle):,} file(s) it withholds nothing of (no root of these days "
                            f"signs them, or the snapshot holds them), read as no line: {idle[0][:120]}"
                            + (f" and {len(idle) - 1:,} more" if len(idle) > 1 else ""))


def _check_proof(report: VerifyReport, folder: Path, doc: RootDoc, line: str, log: Verifier | None,
                 origin: str | None, trust: Trust) -> None:
    """The tlog-proof of one signed line's file: present, and (with the log's key) proving exactly that line."""
    rel = line[66:]
    proof_path = folder / "proofs" / (rel + ".tlog-proof")
    if not proof_path.is_file():
        report.add(Code.PROOF_MISSING, f"no proof for {rel} (proofs/{rel}.tlog-proof)", doc.day, rel)
        return
    if log is None or origin is None:
        return
    try:  # never more than a proof can be: verify_proof refuses one byte over
        data = read_capped(proof_path, MAX_PROOF_BYTES + 1)
    except Unreadable as exc:
        report.add(Code.PROOF_INVALID, f"proof of {rel} cannot be read ({exc})", doc.day, f"proofs/{rel}.tlog-proof")
        return
    result, problem = verify_proof(data, log, origin, trust.witnesses, trust.quorum)
    if result is None:
        report.add(Code.PROOF_INVALID, f"proof of {rel}: {problem}", doc.day, f"proofs/{rel}.tlog-proof")
    elif result.line != line:
        report.add(Code.PROOF_INVALID, f"proof of {rel} proves another line ({result.line[:90]})", doc.day,
                   f"proofs/{rel}.tlog-proof")
    else:
        report.proofs_checked += 1


LOG_ENTRIES = {"checkpoint", "vkey", "tile"}


def _beside_signed(folder: Path, held: dict[str, str]) -> list[tuple[str, str]]:
    """What sits in roots/, proofs/ and log/ that a snapshot does not hold there (helper-93: a doctored copy of a
    table under proofs/, pointed at by the descriptions, verified OK). Links and hidden entries: _stray_in_export."""
    # as a lake's roots/ is read (a link there is named by _stray_in_export)
    out = [(rel, why) for rel, why in stray_roots(folder / "roots", folder) if not (folder / rel).is_symlink()]
    proofs = {f"proofs/{rel}.tlog-proof" for rel in held}
    for top, dirs, names in os.walk(folder / "proofs"):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(top, d))]
        for name in names:
            rel = Path(top, name).relative_to(folder).as_posix()
            if not name.startswith(".") and not os.path.islink(os.path.join(top, name)) and rel not in proofs:
                out.append((rel, "not the proof of a signed file this snapshot holds"))
    log = folder / "log"
    for entry in sorted(os.scandir(log), key=lambda e: e.name) if log.is_dir() else []:
        if not entry.name.startswith(".") and not entry.is_symlink() and entry.name not in LOG_ENTRIES:
            out.append((f"log/{entry.name}", "not part of a log (checkpoint, vkey, tile/)"))
    return out


def verify_export(folder: Path, trust: Trust | None = None, state_path: Path | None = None) -> VerifyReport:
    """A researcher's snapshot with no lake present (publishing/export.py writes it)."""
    report = VerifyReport()
    folder = Path(folder)
    if not folder.is_dir():
        report.add(Code.NO_SNAPSHOT, f"no snapshot folder at {folder}")
        return report
    trust = resolve_trust(report, folder / "7maps.json", trust, state_path, SNAPSHOT_KEY)
    if trust is None:
        return report
    if trust.key_file is not None and trust.key_file.resolve().is_relative_to(folder.resolve()):
        report.notes.insert(0, f"the key given ({trust.key_file}) lies in the snapshot: it shows only that the "
                               "snapshot agrees with itself, as a forged one would; give a key obtained apart from it")
    docs = check_export(report, folder, trust)
    new_state = check_state(report, state_path, trust, None, folder / "log") if state_path else None
    finish_report(report, docs)
    if report.ok and state_path and new_state:
        write_bytes_atomic(state_path, (json.dumps(new_state, indent=2) + "\n").encode())
    return report
