"""Behind is not forked (docs/verifying.md, "Behind or forked"): a signer killed with SIGKILL, or out of disk,
between a day's root and the log's checkpoint leaves the log behind its roots. `verify` says BEHIND (exit 4)
naming `sevenmaps log sync`, not FORK; the sync or the next signing (that very day too) completes it; no
partial or temp file survives; and a log or checkpoint that contradicts the roots is still a FORK."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import DAY
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from test_integrity import NOW, build_day

from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.integrity import keys
from sevenmaps_pipeline.integrity.log import LogState, prepare, publish, read_state
from sevenmaps_pipeline.integrity.merkle import HashTree
from sevenmaps_pipeline.integrity.note import COSIGNATURE_V1, verifier_for
from sevenmaps_pipeline.integrity.report import EXIT_BEHIND, EXIT_FORK, EXIT_OK, Code, Kind
from sevenmaps_pipeline.integrity.roots import complete_signing, read_root, sign_through, signed_days
from sevenmaps_pipeline.integrity.stray import sweep_crashed_writes
from sevenmaps_pipeline.integrity.tiles import tile_path
from sevenmaps_pipeline.integrity.verify import check_log_only, verify_lake
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.paths import LakePaths

DAYS = [DAY + dt.timedelta(days=i) for i in range(3)]

# Signs `day` in a fresh interpreter, as the sign job does, optionally asking one witness and with a
# file-size limit (a full disk: SIGXFSZ ignored, so the write that would pass it fails with EFBIG).
SIGNER = """
import datetime as dt, resource, signal, sys
from pathlib import Path
lake, key, day, now, witness_vkey, witness_url, limit = sys.argv[1:]
if int(limit):
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limit), int(limit)))
from sevenmaps_pipeline.integrity.note import parse_vkey
from sevenmaps_pipeline.integrity.roots import sign_through
from sevenmaps_pipeline.integrity.witness import WitnessConfig
from sevenmaps_pipeline.lake.paths import LakePaths
witnesses = [WitnessConfig(parse_vkey(witness_vkey)[0], witness_url)] if witness_url else []
try:
    sign_through(LakePaths.at(lake), dt.date.fromisoformat(day), Path(key), now=dt.datetime.fromisoformat(now),
                 witnesses=witnesses)
except Exception as exc:
    print(f"{type(exc).__name__}: {exc}")
    sys.exit(1)
"""


def _signer(lake: LakePaths, key: Path, day, witness: StallingWitness | None = None, limit: int = 0):
    args = [str(lake.root), str(key), day.isoformat(), NOW.isoformat(), witness.vkey if witness else "",
            witness.url if witness else "", str(limit)]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.Popen([sys.executable, "-c", SIGNER, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)


class StallingWitness:
    """A witness on 127.0.0.1 that takes the signer's request and never finishes answering: a chunked 200,
    then one byte of body every 0.1 s, so the signer's reads never time out. The signer asks its witnesses
    after writing the day's root and before publishing the checkpoint, so it waits exactly there."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.vkey = verifier_for("witness.test/stalling", Ed25519PrivateKey.generate().public_key(),
                                 COSIGNATURE_V1).vkey
        self.asked, self.stop = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            self.asked.set()
            try:
                conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n")
                while not self.stop.wait(0.1):
                    conn.sendall(b"1\r\n \r\n")
            except OSError:  # the signer was killed
                pass

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture(scope="module")
def built_template(tmp_path_factory):
    lake = LakePaths.at(tmp_path_factory.mktemp("built") / "lake")
    for d in DAYS:
        build_day(lake, d)
    return lake


@pytest.fixture
def built(built_template, lake):
    shutil.copytree(built_template.root, lake.root, ignore=shutil.ignore_patterns("*.duckdb", ".warehouse.sha256"))
    return lake


def _temps(lake: LakePaths) -> list[str]:
    return sorted(p.relative_to(lake.root).as_posix() for folder in (lake.roots_dir, lake.log_dir)
                  if folder.is_dir() for p in folder.rglob("*.tmp"))


def _verify(lake: LakePaths, capsys, *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["--lake", str(lake.root), *extra])
    return code, capsys.readouterr().out


def _kill_between_root_and_checkpoint(lake: LakePaths, key: Path, day) -> None:
    witness = StallingWitness()
    proc = _signer(lake, key, day, witness)
    try:
        while not witness.asked.wait(0.5):
            assert proc.poll() is None, f"the signer ended before asking its witness: {proc.communicate()}"
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait() == -signal.SIGKILL
    finally:
        witness.close()


@pytest.mark.parametrize("killed", [0, 1], ids=["first-day", "later-day"])
@pytest.mark.parametrize("repair", ["log-sync", "sign-again"])
def test_a_signer_killed_between_root_and_checkpoint_leaves_the_log_behind_not_forked(built, signing_key, capsys,
                                                                                       killed, repair):
    lake = built
    if killed:
        sign_through(lake, DAYS[0], signing_key, now=NOW)
    before = (lake.log_dir / "checkpoint").read_bytes() if killed else None
    _kill_between_root_and_checkpoint(lake, signing_key, DAYS[killed])
    assert lake.root_file(DAYS[killed]).is_file()  # the root was written, the checkpoint was not
    # Killed before it made the day's files read-only, too (helper-89): the repair makes them so.
    signed_files = [lake.root / line[66:] for line in read_root(lake, DAYS[killed])["lines"]]
    for path in signed_files:
        path.chmod(0o644)
    checkpoint = lake.log_dir / "checkpoint"
    assert (checkpoint.read_bytes() if checkpoint.is_file() else None) == before

    code, out = _verify(lake, capsys, "verify")
    assert code == EXIT_BEHIND == 4, out
    first = out.splitlines()[0]
    assert first.startswith("BEHIND: ") and "`sevenmaps log sync`" in first and str(DAYS[killed]) in first
    assert "FORK" not in out and "also:" not in out
    assert _verify(lake, capsys, "log", "check")[0] == EXIT_BEHIND

    # What a killed writer leaves: hidden temps in roots/ and log/. They never count and never fail verify.
    planted = [lake.roots_dir / f".day={DAYS[2]}.json.{uuid.uuid4().hex}.tmp",
               lake.log_dir / f".checkpoint.{uuid.uuid4().hex}.tmp",
               lake.log_dir / "tile" / "0" / f".000.{uuid.uuid4().hex}.tmp"]
    for path in planted:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b'{"day": "half a file')
    assert signed_days(lake) == DAYS[:killed + 1]
    assert verify_lake(lake).kind is Kind.BEHIND

    if repair == "log-sync":
        code, out = _verify(lake, capsys, "log", "sync", "--signing-key", str(signing_key))
        assert code == 0 and f"appended 1 signed day(s) it lacked ({DAYS[killed]})" in out
    else:  # the interrupted day asked again: it has its root, so signing completes its log
        assert sign_through(lake, DAYS[killed], signing_key, now=NOW) == []
    assert _temps(lake) == []
    assert {path.stat().st_mode & 0o777 for path in signed_files} == {0o444}
    code, out = _verify(lake, capsys, "verify")
    assert code == EXIT_OK and out.startswith(f"OK: {killed + 1} signed days verified"), out
    # The repaired checkpoint is the very one the root recorded (Ed25519 is deterministic), and a second
    # repair changes nothing.
    recorded = read_root(lake, DAYS[killed])["log"]["checkpoint"]
    assert checkpoint.read_text() == recorded
    assert _verify(lake, capsys, "log", "sync", "--signing-key", str(signing_key))[1].count("nothing to append") == 1
    assert checkpoint.read_text() == recorded
    # And signing goes on with the following days.
    assert [s.day for s in sign_through(lake, DAYS[2], signing_key, now=NOW)] == DAYS[killed + 1:]
    assert verify_lake(lake).ok


def _sizes_of_the_next_signing(lake: LakePaths, key: Path, day, tmp_path: Path) -> tuple[int, int]:
    """The bytes of `day`'s root and of its largest new log file, from signing an identical copy (the same
    files and time give the same bytes)."""
    copy = LakePaths.at(tmp_path / "copy")
    shutil.copytree(lake.root, copy.root)
    old = {p for p in copy.log_dir.rglob("*") if p.is_file()}
    sign_through(copy, day, key, now=NOW)
    new = [p for p in copy.log_dir.rglob("*") if p.is_file() and p not in old]
    return copy.root_file(day).stat().st_size, max(p.stat().st_size for p in new)


@pytest.mark.parametrize("fails_at", ["checkpoint", "root"])
def test_a_full_disk_leaves_no_partial_file_and_at_most_a_log_behind(built, signing_key, tmp_path, capsys, fails_at):
    lake = built
    sign_through(lake, DAYS[0], signing_key, now=NOW)
    before = (lake.log_dir / "checkpoint").read_bytes()
    root_size, log_file_size = _sizes_of_the_next_signing(lake, signing_key, DAYS[1], tmp_path)
    assert root_size < log_file_size  # the day's entry bundle holds both days' lines, its root one day's
    limit = root_size if fails_at == "checkpoint" else root_size - 1
    proc = _signer(lake, signing_key, DAYS[1], limit=limit)
    out, err = proc.communicate()
    assert proc.returncode == 1, (out, err)
    assert b"File too large" in out and b"Traceback" not in err
    assert (lake.log_dir / "checkpoint").read_bytes() == before
    assert _temps(lake) == []  # neither the root's temp nor a tile's is left behind
    if fails_at == "root":
        assert not lake.root_file(DAYS[1]).exists() and verify_lake(lake).ok
    else:
        assert out.startswith(b"SigningError: day 2026-11-11 is signed") and b"`sevenmaps log sync`" in out
        code, text = _verify(lake, capsys, "verify")
        assert code == EXIT_BEHIND and text.startswith("BEHIND: "), text
        # The tiles written before the disk filled are what the roots say: `log check` finds nothing else.
        report, _ = check_log_only(lake)
        assert report.kind is Kind.BEHIND and len(report.problems) == 1, report.summary()
    # With space again, the next signing completes the log and signs on.
    assert [s.day for s in sign_through(lake, DAYS[2], signing_key, now=NOW)] == (
        DAYS[2:] if fails_at == "checkpoint" else DAYS[1:])
    assert verify_lake(lake).ok and _temps(lake) == []


def _other_checkpoint(lake: LakePaths, key: Path, size: int) -> str:
    """A checkpoint of `size` entries signed by the lake's own key over lines that are not the roots'."""
    private = keys.load_private_key(key, lake)
    lines = [f"{i:064x}  curated/x/day={DAYS[0]}/p{i}" for i in range(size)]
    return prepare(LogState("sevenmaps.invalid/log", [], HashTree(), None), lines, private).note_text


def test_behind_never_masks_a_fork(built, signing_key, tmp_path, capsys):
    lake = built
    sign_through(lake, DAYS[0], signing_key, now=NOW)
    day0 = (lake.log_dir / "checkpoint").read_bytes()
    sign_through(lake, DAYS[1], signing_key, now=NOW)
    state = tmp_path / "user-state.json"
    assert _verify(lake, capsys, "verify", "--state", str(state))[0] == EXIT_OK  # remembers both days
    (lake.log_dir / "checkpoint").write_bytes(day0)  # as a signer that died after the root of DAYS[1] leaves it
    assert _verify(lake, capsys, "verify")[0] == EXIT_BEHIND
    pristine = tmp_path / "behind"
    shutil.copytree(lake.root, pristine)

    # A checkpoint inconsistent with one you verified: you saw the log at two days, now it shows one.
    code, out = _verify(lake, capsys, "verify", "--state", str(state))
    assert code == EXIT_FORK and out.startswith("FORK: the log went back from size"), out
    (lake.log_dir / "checkpoint").unlink()
    code, out = _verify(lake, capsys, "verify", "--state", str(state))
    assert code == EXIT_FORK and "to no checkpoint at all" in out, out
    assert _verify(lake, capsys, "verify")[0] == EXIT_BEHIND  # without the memory it is the empty log, behind

    # The day behind records a checkpoint that is not the tree of the roots' lines: the key signed another
    # history (its root, signature and statement are all still valid).
    shutil.rmtree(lake.root)
    shutil.copytree(pristine, lake.root)
    doc = json.loads(lake.root_file(DAYS[1]).read_text())
    doc["log"]["checkpoint"] = _other_checkpoint(lake, signing_key, doc["log"]["tree_size"])
    lake.root_file(DAYS[1]).write_text(json.dumps(doc, indent=2) + "\n")
    report = verify_lake(lake)
    assert report.exit_code == EXIT_FORK and report.fork, report.summary()
    assert "is not the tree of the signed lines" in next(p for p in report.problems if p.fork).what
    assert Code.OTHER_HISTORY in report.codes

    # A log entry changed and the log re-signed with the same key: its entries contradict the roots.
    shutil.rmtree(lake.root)
    shutil.copytree(pristine, lake.root)
    lines = read_root(lake, DAYS[0])["lines"]
    lines[0] = "0" * 64 + lines[0][64:]
    shutil.rmtree(lake.log_dir / "tile")
    (lake.log_dir / "checkpoint").unlink()
    private = keys.load_private_key(signing_key, lake)
    publish(lake, prepare(read_state(lake), lines, private))
    report = verify_lake(lake)
    assert report.exit_code == EXIT_FORK, report.summary()
    assert any(p.kind is Kind.PROBLEM and "are not the day's signed lines" in p.what for p in report.problems)
    assert Code.ENTRIES_NOT_LINES in report.codes

    # A changed byte in a logged entry (not re-signed) is a plain problem, never behind.
    shutil.rmtree(lake.root)
    shutil.copytree(pristine, lake.root)
    bundle = lake.log_dir / tile_path("entries", 0, read_state(lake).size)
    data = bytearray(bundle.read_bytes())
    data[10] ^= 1
    bundle.write_bytes(bytes(data))
    assert _verify(lake, capsys, "verify")[0] == 1


def test_the_sign_job_asked_again_for_the_interrupted_day_completes_the_log(built, signing_key):
    import dagster as dg

    from sevenmaps_pipeline.defs.runner import run_days

    lake = built
    sign_through(lake, DAYS[0], signing_key, now=NOW)
    _kill_between_root_and_checkpoint(lake, signing_key, DAYS[1])
    assert verify_lake(lake).kind is Kind.BEHIND
    with dg.DagsterInstance.ephemeral() as instance:
        result = run_days("sign_day_job", DAYS[1], DAYS[1], instance, lake.root, signing_key)
    assert result.success
    (materialization,) = result.asset_materializations_for_node("daily_root")
    assert materialization.metadata["already_signed_days"].value == [DAYS[1].isoformat()]
    assert materialization.metadata["log_completed_days"].value == [DAYS[1].isoformat()]
    report = verify_lake(lake)
    assert report.ok and report.days_verified == DAYS[:2], report.summary()


def test_a_killed_builds_leftovers_in_a_signed_day_are_swept_not_left_to_fail_verify(lake, signing_key):
    """helper-89: a build killed while it rebuilt a signed day (or within the hour before signing) left its temp
    file and spill folder beside the signed files; past an hour verify failed on them for good, naming a hidden
    file as if someone had tampered, and every signing run over the day failed with it."""
    build_day(lake, DAY)
    sign_through(lake, DAY, signing_key, now=NOW)
    path = lake.curated_file("daily_status", DAY)
    temp = path.parent / f".part-0.parquet.{'d' * 32}.tmp"
    temp.write_bytes(b"PAR1 a killed rebuild's")
    spill = path.parent / f".part-0.parquet.{'e' * 32}.spill"
    spill.mkdir()
    (spill / "bucket-0.arrow").write_bytes(b"a killed build's")
    two_hours_ago = time.time() - 7200
    for leftover in (spill / "bucket-0.arrow", spill, temp):
        os.utime(leftover, (two_hours_ago, two_hours_ago))
    report = verify_lake(lake, now=time.time() + 7200)
    assert {p.code for p in report.problems} == {Code.STRAY}
    assert all("crashed" in p.what and "log sync" in p.what for p in report.problems), report.problems
    write_parquet(lake, path, pq.read_table(path))  # a rebuild of the signed day that changes nothing sweeps
    assert not temp.exists() and not spill.exists()
    complete_signing(lake, signing_key)  # `sevenmaps log sync`, as every signing run: sweeps those past an hour
    temp.write_bytes(b"PAR1 another")
    spill.mkdir()
    (spill / "bucket-0.arrow").write_bytes(b"read later")
    planted = path.parent / ".notes.tmp"  # no writer's name: verify names it, no sweep removes it (helper-91)
    planted.write_bytes(b"evidence")
    assert sweep_crashed_writes(lake, now=time.time() + 7200) == [
        f"curated/daily_status/day={DAY}/{temp.name}", f"curated/daily_status/day={DAY}/{spill.name}"]
    assert sweep_crashed_writes(lake) == []  # not yet an hour old: a write that may still run
    assert planted.exists()
    assert [p.file for p in verify_lake(lake, now=time.time() + 7200).problems] == [
        f"curated/daily_status/day={DAY}/.notes.tmp"]
