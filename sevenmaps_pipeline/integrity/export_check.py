"""Checking a researcher's snapshot offline, with no lake: SHA256SUMS, the roots and their chain, the
signatures, the log and a tlog-proof for every included file; what was withheld is listed, never silent."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..lake.parquet_io import write_bytes_atomic
from ..lake.schemas import withheld_reason
from .checkpoint import parse_checkpoint_text
from .manifest import sha256_file
from .note import parse_note, verifier_for
from .proof import verify_proof
from .report import Code, Trust, VerifyReport
from .root_docs import RootDoc, read_root_docs
from .verify import check_chain, finish_report, resolve_trust
from .verify_log import check_log, check_state

SUM_LINE = re.compile(r"^([0-9a-f]{64})  (.+)$")


def _safe(rel: str) -> bool:
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and ".." not in parts and "" not in parts and "\\" not in rel


def _read_sums(report: VerifyReport, folder: Path) -> dict[str, str]:
    path = folder / "SHA256SUMS"
    if not path.is_file():
        report.add(Code.SUMS_MISSING, "no SHA256SUMS in the snapshot", None, "SHA256SUMS")
        return {}
    sums: dict[str, str] = {}
    for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        m = SUM_LINE.match(line)
        if not m or not _safe(m.group(2)):
            report.add(Code.SUMS_MALFORMED,
                       f"SHA256SUMS line {n} is not '<sha256>  <relative path>': {line[:100]!r}", None, "SHA256SUMS")
            continue
        sums[m.group(2)] = m.group(1)
    for rel, digest in sums.items():
        target = folder / rel
        if not target.is_file():
            report.add(Code.FILE_MISSING, f"listed in SHA256SUMS but missing: {rel}", None, rel)
        elif sha256_file(target) != digest:
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


def _read_withheld(folder: Path) -> dict[str, str]:
    path = folder / "WITHHELD.txt"
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text(errors="replace").splitlines():
        if line.strip() and not line.startswith("#"):
            rel, _, reason = line.partition("\t")
            out[rel] = reason or "no reason given"
    return out


def check_export(report: VerifyReport, folder: Path, trust: Trust) -> list[RootDoc]:
    sums = _read_sums(report, folder)
    docs = read_root_docs(report, folder / "roots", folder)
    if not docs:
        report.add(Code.NO_ROOTS, "the snapshot has no root documents (roots/day=*.json)", None, "roots")
        return docs
    check_chain(report, docs, trust.public, first_previous=None)
    withheld = _read_withheld(folder)
    checkpoint_path = folder / "log" / "checkpoint"
    origin = trust.log_name
    if origin is None and checkpoint_path.is_file():
        note, _ = parse_note(checkpoint_path.read_bytes())
        cp, _ = parse_checkpoint_text(note.text) if note else (None, None)
        origin = cp.origin if cp else None
    log = verifier_for(origin, trust.public) if origin and trust.public else None
    signed_paths = set()
    for doc in docs:
        for line in doc.lines:
            digest, rel = line[:64], line[66:]
            signed_paths.add(rel)
            if rel not in sums and not (folder / rel).exists():
                _not_here(report, rel, withheld.get(rel), doc)
                continue
            if sums.get(rel) != digest:
                report.add(Code.FILE_CHANGED,
                           f"file differs from its signed line: {rel} (signed sha256 {digest})", doc.day, rel)
                continue
            report.files_checked += 1
            proof_path = folder / "proofs" / (rel + ".tlog-proof")
            if not proof_path.is_file():
                report.add(Code.PROOF_MISSING, f"no proof for {rel} (proofs/{rel}.tlog-proof)", doc.day, rel)
                continue
            if log is None:
                continue
            result, problem = verify_proof(proof_path.read_bytes(), log, origin, trust.witnesses, trust.quorum)
            if result is None:
                report.add(Code.PROOF_INVALID, f"proof of {rel}: {problem}", doc.day, f"proofs/{rel}.tlog-proof")
            elif result.line != line:
                report.add(Code.PROOF_INVALID, f"proof of {rel} proves another line ({result.line[:90]})", doc.day,
                           f"proofs/{rel}.tlog-proof")
            else:
                report.proofs_checked += 1
    for rel in sums:
        if rel.startswith(("raw/", "curated/")) and rel not in signed_paths:
            report.add(Code.FILE_NOT_SIGNED, f"data file not in any signed root: {rel}", None, rel)
    for rel, why in _stray_in_export(folder):
        report.add(Code.STRAY, f"{why}: {rel}", None, rel)
    check_log(report, folder / "log", docs, trust.public, trust, complete=False)
    return docs


def verify_export(folder: Path, trust: Trust | None = None, state_path: Path | None = None) -> VerifyReport:
    """A researcher's snapshot with no lake present (publishing/export.py writes it)."""
    report = VerifyReport()
    folder = Path(folder)
    if not folder.is_dir():
        report.add(Code.NO_SNAPSHOT, f"no snapshot folder at {folder}")
        return report
    trust = resolve_trust(report, folder / "7maps.json", trust, state_path)
    if trust is None:
        return report
    docs = check_export(report, folder, trust)
    new_state = check_state(report, state_path, trust, None, folder / "log") if state_path else None
    finish_report(report, docs)
    if report.ok and state_path and new_state:
        write_bytes_atomic(state_path, (json.dumps(new_state, indent=2) + "\n").encode())
    return report
