"""The commands that prove the map: verify a lake or a snapshot, prove a file is in the log and check such a
proof, check or sync the log, export signed days, run a witness, make a signing key."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

from ..integrity.capped import MAX_KEY_BYTES, Unreadable, read_capped
from ..integrity.export_check import verify_export
from ..integrity.keys import SigningKeyError, default_key_path, generate_key, generate_witness_key, load_witness_key
from ..integrity.log import read_state
from ..integrity.manifest import sha256_file
from ..integrity.note import COSIGNATURE_TYPES, parse_vkey, verifier_for
from ..integrity.proof import TlogProof, parse_proof, verify_proof
from ..integrity.report import Trust
from ..integrity.roots import complete_signing, read_root, signed_days
from ..integrity.verify import check_log_only, trust_from_state, verify_lake
from ..integrity.witness import Witness, serve
from ..lake.paths import parse_day
from ..publishing.export import export_snapshot
from .common import _existing_lake, _lake


def _trust(args: argparse.Namespace) -> Trust | None:
    """The key the user trusts (--public-key or --vkey; else remembered in --state; else the lake's own,
    which the report then says) and the witnesses with their quorum."""
    trust = None
    if getattr(args, "public_key", None) and getattr(args, "vkey", None):
        raise ValueError("give --public-key or --vkey, not both")
    if getattr(args, "public_key", None):
        trust = Trust.from_public_key_file(Path(args.public_key))
    elif getattr(args, "vkey", None):
        trust = Trust.from_vkey(_read_maybe_file(args.vkey))
        trust.key_file = Path(args.vkey) if _names_a_file(args.vkey) else None  # one inside a snapshot is noted
    witnesses = []
    for text in getattr(args, "witness", None) or []:
        verifier, problem = parse_vkey(_read_maybe_file(text))
        if verifier is None or verifier.sig_type not in COSIGNATURE_TYPES:
            raise ValueError(f"--witness {text[:80]!r}: {problem or 'not a cosignature/v1 (0x04 or 0x06) vkey'}")
        witnesses.append(verifier)
    quorum = getattr(args, "quorum", None)
    if quorum is not None and quorum > len(witnesses):
        raise ValueError(f"--quorum {quorum} needs at least {quorum} --witness keys")
    if witnesses:
        if trust is None:
            trust = trust_from_state(Path(args.state)) if getattr(args, "state", None) else None
        if trust is None:
            raise ValueError("--witness needs the log's key too: --public-key FILE or --vkey KEY")
        trust.witnesses, trust.quorum = witnesses, quorum if quorum is not None else len(witnesses)
    return trust


def _names_a_file(text: str) -> bool:
    try:
        return "+" not in text and Path(text).is_file()
    except OSError:  # a name too long for the system: no file, so not a key's either
        return False


def _read_maybe_file(text: str) -> str:
    """A vkey given as the string itself or as a file holding it (a key's size at most: never a FIFO or a device,
    never a file read whole whatever its size)."""
    if not _names_a_file(text):
        return text.strip()
    try:
        return read_capped(Path(text), MAX_KEY_BYTES, follow_links=True).decode("utf-8").strip()
    except (Unreadable, UnicodeDecodeError) as exc:
        raise ValueError(f"{text[:120]} cannot be read as a key ({str(exc)[:120]})") from None


def cmd_verify(args: argparse.Namespace) -> int:
    trust = _trust(args)
    state = Path(args.state) if args.state else None
    started = time.perf_counter()
    if args.export:
        if not Path(args.export).is_dir():  # an input that is not there: a usage error, as a missing lake is
            print(f"error: no snapshot folder at {args.export} (pass the folder `sevenmaps export` wrote)",
                  file=sys.stderr)
            return 2
        report = verify_export(Path(args.export), trust, state)
        what = f"snapshot {args.export}"
    else:
        lake = _existing_lake(args)
        report = verify_lake(lake, trust, state)
        what = f"lake {lake.root}"
    try:
        print(report.summary(), flush=True)
    except BrokenPipeError:  # `verify | head`: the reader left, and the verdict is still the exit code
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return report.exit_code
    print(f"({what}: {report.files_checked:,} files"
          + (f", {report.proofs_checked:,} proofs" if report.proofs_checked else "")
          + f" checked in {time.perf_counter() - started:.1f}s"
          + (f"; trusted key: {report.trusted}" if report.trusted else "") + ")", file=sys.stderr)
    return report.exit_code


def cmd_prove(args: argparse.Namespace) -> int:
    lake = _existing_lake(args)
    wanted = args.path.removeprefix("./")
    at = 0
    for day in signed_days(lake):
        lines = read_root(lake, day)["lines"]
        for i, line in enumerate(lines):
            if line[66:] == wanted:
                state = read_state(lake)
                if at + i >= state.size or state.checkpoint_bytes is None:
                    print(f"error: {wanted} is signed ({day}) but not yet in the log (size {state.size})",
                          file=sys.stderr)
                    return 1
                proof = TlogProof(at + i, state.tree.inclusion_proof(at + i, state.size), state.checkpoint_bytes,
                                  line.encode()).render()
                if args.out:
                    Path(args.out).write_text(proof)
                    print(f"wrote {args.out}: entry {at + i} of {state.origin}, tree size {state.size}")
                else:
                    sys.stdout.write(proof)
                return 0
        at += len(lines)
    print(f"error: {wanted} is in no signed day's lines (give the path as the roots write it, relative to the "
          "lake root, e.g. curated/daily_status/day=2026-11-30/part-0.parquet)", file=sys.stderr)
    return 2  # an input error (docs/operations.md, exit codes)


def cmd_verify_proof(args: argparse.Namespace) -> int:
    trust = _trust(args)
    if trust is None or trust.public is None:
        print("error: verify-proof needs the log's key: --vkey KEY (or --public-key FILE)", file=sys.stderr)
        return 2
    try:
        data = Path(args.file).read_bytes()
    except OSError as exc:
        print(f"error: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    name = trust.log_name
    if name is None:  # a PEM key: the log's name is the checkpoint's origin
        proof, _ = parse_proof(data)
        name = proof.checkpoint.split(b"\n", 1)[0].decode(errors="replace") if proof else "?"
    result, problem = verify_proof(data, verifier_for(name, trust.public), name, trust.witnesses, trust.quorum)
    if result is None:
        print(f"FAILED: {args.file}: {problem}")
        return 1
    digest, path = result.line[:64], result.line[66:]
    print(f"OK: {path} (sha256 {digest}) is entry {result.index} of {result.checkpoint.describe()}"
          + (f", cosigned by {', '.join(result.witnesses)}" if result.witnesses else ""))
    if args.data:
        actual = sha256_file(Path(args.data), follow_links=True)  # the user's own path
        if actual != digest:
            print(f"FAILED: {args.data} has sha256 {actual}, the logged line says {digest}")
            return 1
        print(f"OK: {args.data} matches the logged line")
    return 0


def cmd_log_check(args: argparse.Namespace) -> int:
    if args.action == "sync":
        return _log_sync(args)

    started = time.perf_counter()
    lake = _existing_lake(args)
    trust = _trust(args)
    report, compared = check_log_only(lake, trust)
    if report.ok and report.checkpoint:
        print(f"OK: log {report.checkpoint.describe()}: the checkpoint's signature, {compared} tile and entry files "
              f"re-derived from {report.checkpoint.size} entries, every entry a signed line "
              f"({time.perf_counter() - started:.1f}s)")
        for note in report.notes:
            print(f"note: {note}")
        return 0
    print(report.summary())
    return report.exit_code


def _log_sync(args: argparse.Namespace) -> int:
    lake = _existing_lake(args)
    before = (lake.log_dir / "checkpoint").is_file()
    synced = complete_signing(lake, Path(args.signing_key) if args.signing_key else default_key_path())
    for problem in synced.problems:
        print(f"warning: {problem}", file=sys.stderr)
    span = "" if not synced.days else str(synced.days[0]) if len(synced.days) == 1 else (
        f"{synced.days[0]} .. {synced.days[-1]}")
    added = f"; appended {len(synced.days)} signed day(s) it lacked ({span})" if synced.days else "; nothing to append"
    print(f"log {synced.state.origin} at size {synced.state.size}: every signed day's lines are in it"
          + added + ("" if before else " (created)"))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    first = parse_day(args.day)
    last = parse_day(args.to) if args.to else first
    if args.out is not None and not args.out.strip():  # Path('') is '.', and a bare `if args.out` the default
        raise ValueError("--out is empty: name the folder to create, or leave --out out for <lake>/exports/")
    result = export_snapshot(_existing_lake(args), first, last, Path(args.out) if args.out else None,
                             progress=lambda msg: print(f"  {msg}", flush=True))
    if not result.created:
        print(f"{result.folder} is already a snapshot of these days (snapshots are immutable); left as it is")
        return 0
    print(f"wrote {result.folder}: {result.files} files ({result.bytes / 1e6:.1f} MB) of {len(result.days)} days, "
          f"{result.withheld} withheld (WITHHELD.txt). Check it with:\n"
          f"  sevenmaps verify --export {result.folder} --public-key <the 7maps.json you trust>\n"
          f"  (cd {result.folder} && sha256sum -c --quiet SHA256SUMS)   # only the files it lists; its README.md's "
          "Verify checks the rest")
    return 0


def cmd_witness(args: argparse.Namespace) -> int:
    logs = []
    for text in args.log:
        verifier, problem = parse_vkey(_read_maybe_file(text))
        if verifier is None:
            print(f"error: --log {text[:80]!r}: {problem}", file=sys.stderr)
            return 2
        logs.append(verifier)
    key_path = Path(args.key)
    if not key_path.exists():
        generate_witness_key(key_path, ed25519=args.ed25519)
        print(f"created {'Ed25519' if args.ed25519 else 'ML-DSA-44'} witness key {key_path} (mode 0600)")
    witness = Witness(args.name, load_witness_key(key_path), logs, Path(args.state))
    server = serve(witness, args.host, args.port)
    host, port = server.server_address[:2]
    host = host.decode() if isinstance(host, bytes) else host
    print(f"witness {args.name} on http://{host}:{port} (POST /add-checkpoint)", flush=True)
    print(f"its cosignature vkey: {witness.verifier.vkey}", flush=True)
    print(f"logs it witnesses: {', '.join(v.name for v in logs)}; state {args.state}", flush=True)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    try:
        while not stop["now"]:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    server.shutdown()
    return 0


def cmd_keygen(args: argparse.Namespace) -> int:
    try:
        path = generate_key(Path(args.out), _lake(args))
    except SigningKeyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote Ed25519 signing key {path} (mode 0600). Keep it out of the lake and out of git.")
    return 0
