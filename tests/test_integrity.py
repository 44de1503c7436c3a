"""Signed, chained roots: the DESIGN formula by hand, signing rules, frozen days, verify, atomic writes."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import DAY, land_probes, land_status, probe
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.integrity import keys
from sevenmaps_pipeline.integrity.manifest import compute_root, day_lines, sha256_files
from sevenmaps_pipeline.integrity.report import Code, Kind, Trust
from sevenmaps_pipeline.integrity.roots import (
    REQUIRED_TABLES,
    AlreadySignedError,
    SigningError,
    read_root,
    sign_through,
)
from sevenmaps_pipeline.integrity.verify import verify_lake
from sevenmaps_pipeline.lake.parquet_io import SignedDayError, write_parquet
from sevenmaps_pipeline.lake.paths import LakePaths

NOW = dt.datetime(2026, 11, 20, 12, tzinfo=dt.UTC)


def build_day(lake: LakePaths, day: dt.date, outcome: str = "ok") -> None:
    land_probes(lake, [probe("https://a.example.com/mcp", outcome, day=day)], day=day)
    curated.day.rebuild_day(lake, day)  # every table of the day, in graph order


def _fake_day(lake: LakePaths, day: dt.date, tag: bytes) -> dict[str, bytes]:
    """One hand-written file per table a signed day needs, plus a raw probe file (content need not be
    Parquet for the root). Returns path -> bytes."""
    files = {f"curated/{table}/day={day}/part-0.parquet": tag + table.encode() for table in REQUIRED_TABLES}
    files[f"raw/probes/day={day}/run-1.parquet"] = tag + b"probes"
    for rel, data in files.items():
        (lake.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (lake.root / rel).write_bytes(data)
    return files


def test_root_of_a_tiny_lake_equals_the_design_formula_by_hand(lake, signing_key):
    files = _fake_day(lake, DAY, b"d1-")
    (lake.root / "raw/hourly/day=2026-11-10").mkdir(parents=True)
    (lake.root / "raw/hourly/day=2026-11-10/h.parquet").write_bytes(b"not covered")
    (lake.root / f"raw/probes/day=2026-11-10/.run-2.parquet.{'0' * 32}.tmp").write_bytes(b"in flight")  # a write's temp

    def h(b: bytes) -> str:
        return hashlib.sha256(b).hexdigest()

    # "<sha256 hex>  <path relative to the lake root>", sorted by path; root over "" + "\n" + the lines.
    expected_lines = [f"{h(files[path])}  {path}" for path in sorted(files)]
    assert expected_lines[0].endswith("curated/agent_report_quarantine/day=2026-11-10/part-0.parquet")
    assert expected_lines[-1].endswith("raw/probes/day=2026-11-10/run-1.parquet")
    expected_root = hashlib.sha256(("" + "\n" + "\n".join(expected_lines)).encode()).hexdigest()
    (signed,) = sign_through(lake, DAY, signing_key, now=NOW)
    doc = read_root(lake, DAY)
    assert doc["lines"] == expected_lines
    assert signed.root == doc["root"] == expected_root
    assert doc["previous_root"] == "" and doc["previous_day"] is None
    public = keys.read_published_key(lake)
    public.verify(base64.b64decode(doc["signature"]), bytes.fromhex(expected_root))

    # The next day chains: its root includes this one.
    nxt = DAY + dt.timedelta(days=1)
    files2 = _fake_day(lake, nxt, b"d2-")
    sign_through(lake, nxt, signing_key, now=NOW)
    lines2 = [f"{h(files2[path])}  {path}" for path in sorted(files2)]
    expected_next = hashlib.sha256((expected_root + "\n" + "\n".join(lines2)).encode()).hexdigest()
    assert read_root(lake, nxt)["root"] == expected_next


def test_ed25519_known_answer_rfc8032_test_1():
    # RFC 8032 section 7.1, TEST 1: empty message. sign_root signs the bytes of the hex root ("" -> b"").
    secret = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    expected = bytes.fromhex(
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
    key = Ed25519PrivateKey.from_private_bytes(secret)
    assert base64.b64decode(keys.sign_root(key, "")) == expected


def test_earlier_unsigned_days_are_signed_first_in_chain_order(lake, signing_key):
    days = [DAY + dt.timedelta(days=i) for i in range(3)]
    for d in days:
        build_day(lake, d)
    signed = sign_through(lake, days[2], signing_key, now=NOW)
    assert [s.day for s in signed] == days
    assert read_root(lake, days[1])["previous_root"] == read_root(lake, days[0])["root"]
    assert read_root(lake, days[2])["previous_day"] == days[1].isoformat()
    assert verify_lake(lake).ok


def test_resigning_is_refused(lake, signing_key):
    build_day(lake, DAY)
    sign_through(lake, DAY, signing_key, now=NOW)
    before = lake.root_file(DAY).read_bytes()
    with pytest.raises(AlreadySignedError, match="2026-11-10 is already signed"):
        sign_through(lake, DAY, signing_key, now=NOW)
    assert lake.root_file(DAY).read_bytes() == before


def test_a_day_is_signed_only_after_it_ended(lake, signing_key):
    build_day(lake, DAY)
    with pytest.raises(SigningError, match="has not ended"):
        sign_through(lake, DAY, signing_key, now=dt.datetime(2026, 11, 10, 23, 59, tzinfo=dt.UTC))
    assert not lake.root_file(DAY).exists()


def test_a_day_without_its_tables_is_not_signed_and_nothing_later_is_either(lake, signing_key):
    build_day(lake, DAY)
    later = DAY + dt.timedelta(days=2)
    build_day(lake, later)  # the day between has raw data only
    land_probes(lake, [probe("https://a.example.com/mcp", "ok", day=DAY + dt.timedelta(days=1))],
                day=DAY + dt.timedelta(days=1))
    with pytest.raises(SigningError, match="2026-11-11 cannot be signed: daily_status, tool_lists, tool_facts"):
        sign_through(lake, later, signing_key, now=NOW)
    assert not list(lake.roots_dir.glob("day=*.json"))


def test_writing_into_a_signed_day_is_refused_naming_the_day(lake, signing_key):
    build_day(lake, DAY)
    sign_through(lake, DAY, signing_key, now=NOW)
    table = pa.table({"x": [1]})
    with pytest.raises(SignedDayError, match="day 2026-11-10 is signed"):
        write_parquet(lake, lake.curated_file("daily_status", DAY), table)
    # Recomputing the day from the same inputs gives the same table: a no-op that leaves the bytes alone.
    before = lake.curated_file("daily_status", DAY).read_bytes()
    curated.build_daily_status(lake, DAY)
    assert lake.curated_file("daily_status", DAY).read_bytes() == before
    with pytest.raises(SignedDayError, match="day 2026-11-10 is signed"):
        land_probes(lake, [probe("https://b.example.com/mcp", "ok")], run_id="late-batch")
    with pytest.raises(SignedDayError, match="precedes the last signed day 2026-11-10"):
        write_parquet(lake, lake.curated_file("daily_status", DAY - dt.timedelta(days=3)), table)
    assert verify_lake(lake).ok


def test_signing_key_rules(lake, tmp_path):
    with pytest.raises(keys.SigningKeyError, match="must not live inside the lake"):
        keys.generate_key(lake.root / "k.pem", lake)
    path = keys.generate_key(tmp_path / "k.pem")
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    os.chmod(path, 0o644)
    with pytest.raises(keys.SigningKeyError, match="readable by others"):
        keys.load_private_key(path, lake)
    with pytest.raises(keys.SigningKeyError, match="no signing key"):
        keys.load_private_key(tmp_path / "absent.pem", lake)


def test_another_key_than_the_published_one_is_refused(lake, signing_key, tmp_path):
    build_day(lake, DAY)
    sign_through(lake, DAY, signing_key, now=NOW)
    build_day(lake, DAY + dt.timedelta(days=1))
    other = keys.generate_key(tmp_path / "other.pem")
    with pytest.raises(keys.SigningKeyError, match="does not match the public key published"):
        sign_through(lake, DAY + dt.timedelta(days=1), other, now=NOW)


@pytest.fixture
def signed_lake(signed_template, lake, signing_key):
    """Three signed days in this test's own lake, signed by this test's key: a copy of the module's (file
    times kept, warehouses left out since their views name the template's paths); many tests tamper."""
    template, key = signed_template
    shutil.copytree(template.root, lake.root, ignore=shutil.ignore_patterns("*.duckdb", ".warehouse.sha256"))
    signing_key.write_bytes(key.read_bytes())
    assert verify_lake(lake).ok
    return lake


@pytest.fixture(scope="module")
def signed_template(tmp_path_factory):
    root = tmp_path_factory.mktemp("signed")
    lake = LakePaths.at(root / "lake")
    key = keys.generate_key(root / "keys" / "signing.pem")
    for i in range(3):
        build_day(lake, DAY + dt.timedelta(days=i))
    sign_through(lake, DAY + dt.timedelta(days=2), key, now=NOW)
    return lake, key


def test_verify_catches_a_flipped_byte(signed_lake):
    path = signed_lake.curated_file("daily_status", DAY + dt.timedelta(days=1))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    report = verify_lake(signed_lake)
    assert not report.ok
    assert report.bad_day == DAY + dt.timedelta(days=1)
    assert report.problem.startswith("file changed: curated/daily_status/day=2026-11-11/part-0.parquet")
    assert report.problems[0].code is Code.FILE_CHANGED


def test_verify_catches_a_deleted_file(signed_lake):
    (signed_lake.raw_dir("probes", DAY) / "run-1.parquet").unlink()
    report = verify_lake(signed_lake)
    assert (report.ok, report.bad_day) == (False, DAY)
    assert report.problem == "file missing: raw/probes/day=2026-11-10/run-1.parquet"
    assert report.problems[0].code is Code.FILE_MISSING


def test_verify_catches_an_added_file(signed_lake):
    extra = signed_lake.raw_dir("probes", DAY + dt.timedelta(days=2)) / "sneaky.parquet"
    extra.write_bytes(b"PAR1")
    report = verify_lake(signed_lake)
    assert (report.ok, report.bad_day) == (False, DAY + dt.timedelta(days=2))
    assert report.problem == "file added after signing: raw/probes/day=2026-11-12/sneaky.parquet"
    assert report.problems[0].code is Code.FILE_ADDED


def test_verify_hashing_many_files_at_once_finds_every_tampering_and_reports_as_one_at_a_time(signed_lake):
    """verify hashes the files of all days on a pool of threads: with more files than workers, a flipped byte,
    a deleted and an added file are each still found, and the report (problems in the same order, the
    summary word for word) is the one a single worker gives."""
    changed = signed_lake.curated_file("daily_status", DAY + dt.timedelta(days=1))
    data = bytearray(changed.read_bytes())
    data[len(data) // 2] ^= 0x01
    changed.write_bytes(bytes(data))
    (signed_lake.raw_dir("probes", DAY + dt.timedelta(days=2)) / "run-1.parquet").unlink()
    (signed_lake.raw_dir("probes", DAY) / "sneaky.parquet").write_bytes(b"PAR1")
    one, several = verify_lake(signed_lake, workers=1), verify_lake(signed_lake, workers=3)
    assert several.files_checked > 3 * 10
    assert [(p.code, p.day) for p in several.problems] == [
        (Code.FILE_ADDED, DAY), (Code.FILE_CHANGED, DAY + dt.timedelta(days=1)),
        (Code.FILE_MISSING, DAY + dt.timedelta(days=2))]
    assert several == one and several.summary() == one.summary()


def test_hashing_files_at_once_keeps_their_order_and_names_the_first_unreadable_one(tmp_path):
    """The digests come back in the order given, though the largest files are hashed first; a file that cannot
    be read fails as it would one at a time: the first such in the order given."""
    paths = []
    for i, size in enumerate([10, 3 << 20, 0, 1 << 20, 5, 2 << 20, 7]):
        paths.append(tmp_path / f"f{i}")
        paths[-1].write_bytes(bytes([i]) * size)
    expected = [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]
    assert sha256_files(paths, workers=4) == expected == sha256_files(paths, workers=1)
    gone = [tmp_path / "gone-1", tmp_path / "gone-2"]
    with pytest.raises(FileNotFoundError) as caught:
        sha256_files([paths[0], gone[0], paths[1], gone[1]], workers=4)
    assert caught.value.filename == str(gone[0])


def test_verify_catches_swapped_signatures(signed_lake):
    a, b = signed_lake.root_file(DAY), signed_lake.root_file(DAY + dt.timedelta(days=1))
    da, db = json.loads(a.read_text()), json.loads(b.read_text())
    da["signature"], db["signature"] = db["signature"], da["signature"]
    a.write_text(json.dumps(da))
    b.write_text(json.dumps(db))
    report = verify_lake(signed_lake)
    assert (report.ok, report.bad_day) == (False, DAY)
    assert report.problem == "bad signature in roots/day=2026-11-10.json: not signed by the trusted key"
    assert report.problems[0].code is Code.BAD_SIGNATURE


def test_verify_catches_a_rewritten_root_and_a_broken_chain(signed_lake, tmp_path):
    # Recompute day 2 honestly over changed files with a forged signature: the chain still holds the old root.
    path = signed_lake.root_file(DAY + dt.timedelta(days=1))
    doc = json.loads(path.read_text())
    doc["lines"][0] = "0" * 64 + doc["lines"][0][64:]
    doc["root"] = compute_root(doc["previous_root"], doc["lines"])
    path.write_text(json.dumps(doc))
    report = verify_lake(signed_lake)
    assert report.bad_day == DAY + dt.timedelta(days=1) and report.problem.startswith("file changed")
    assert report.problems[0].code is Code.FILE_CHANGED and Code.BAD_SIGNATURE in report.codes
    # Its lines edited and the root left: the root does not match them, and no file is blamed for it (a trailing
    # space in a line was reported as one file missing and one added: a stranger's review).
    doc["lines"][0] = doc["lines"][0] + " "
    path.write_text(json.dumps(doc))
    report = verify_lake(signed_lake)
    assert report.codes[0] is Code.ROOT_NOT_ITS_LINES and Code.FILE_ADDED not in report.codes

    signed_lake.root_file(DAY + dt.timedelta(days=1)).unlink()
    report = verify_lake(signed_lake)
    assert report.bad_day == DAY + dt.timedelta(days=2)
    assert report.problem == "broken chain: no root for 2026-11-11 (roots/day=2026-11-11.json missing)"
    assert report.problems[0].code is Code.CHAIN_BROKEN
    signed_lake.root_file(DAY + dt.timedelta(days=1)).write_bytes(b"\xff not a root")
    report = verify_lake(signed_lake)
    assert report.codes[:2] == [Code.ROOT_UNREADABLE, Code.CHAIN_BROKEN]
    assert report.problems[1].what == ("broken chain: no root for 2026-11-11 (roots/day=2026-11-11.json cannot be "
                                       "read: above)")


def _stray_folder_before_signing(lake: LakePaths) -> None:
    status = lake.curated_file("daily_status", DAY)
    before = status.parent.parent / f"day={DAY - dt.timedelta(days=9)}"
    before.mkdir()
    shutil.copy(status, before / "part-0.parquet")


def _stray_backup_folder(lake: LakePaths) -> None:
    status = lake.curated_file("daily_status", DAY)
    backup = status.parent.parent / f"day={DAY}.bak"
    backup.mkdir()
    shutil.copy(status, backup / "part-0.parquet")


def _stray_hidden_part(lake: LakePaths) -> None:
    status = lake.curated_file("daily_status", DAY)
    shutil.copy(status, status.parent / ".part-1.parquet")


def _stray_linked_folder(lake: LakePaths) -> None:
    status = lake.curated_file("daily_status", DAY)
    (status.parent / "more").symlink_to(lake.curated_file("tools", DAY).parent, target_is_directory=True)


def _stray_folder_of_no_date(lake: LakePaths) -> None:
    status = lake.curated_file("daily_status", DAY)
    nodate = status.parent.parent / "day=2026-13-40"
    nodate.mkdir()
    shutil.copy(status, nodate / "part-0.parquet")
    assert lake.latest_built_day() == DAY + dt.timedelta(days=2)  # a reader skips it, never stops at it


def _stray_file_beside_the_days(lake: LakePaths) -> None:
    status = lake.curated_file("daily_status", DAY)
    shutil.copy(status, status.parent.parent / "extra.parquet")


@pytest.mark.parametrize(("tamper", "stray"), [
    (_stray_folder_before_signing, f"curated/daily_status/day={DAY - dt.timedelta(days=9)}"),
    (_stray_backup_folder, f"curated/daily_status/day={DAY}.bak"),
    (_stray_hidden_part, f"curated/daily_status/day={DAY}/.part-1.parquet"),
    (_stray_linked_folder, f"curated/daily_status/day={DAY}/more"),
    (_stray_folder_of_no_date, "curated/daily_status/day=2026-13-40"),
    (_stray_file_beside_the_days, "curated/daily_status/extra.parquet"),
])
def test_verify_names_what_sits_beside_the_signed_files(signed_lake, tamper, stray):
    """A stranger's attack: each of these passed verify, while DuckDB's `day=*` globs (the warehouse's views)
    read its rows as the signed day's."""
    tamper(signed_lake)
    report = verify_lake(signed_lake)
    assert not report.ok and [p.code for p in report.problems] == [Code.STRAY]
    assert report.problems[0].file == stray and stray in report.problem


@pytest.mark.parametrize("link", ["file", "folder", "raw kind", "curated table"])
def test_a_link_in_a_days_folders_stops_signing_and_never_touches_what_it_names(lake, signing_key, tmp_path, link):
    """helper-83: a link in a raw folder to the signing key was signed, and signing's chmod followed it: the key
    became world-readable (0444), and verify passed; a raw day folder that was itself a link signed, and verify then
    failed at once. helper-86: so did a link in place of `raw/origins` or of a curated table's folder. Each now stops
    signing, naming the link; what it names is never touched."""
    day = DAY + dt.timedelta(days=5)
    _fake_day(lake, day, b"x-")
    secret = tmp_path / "elsewhere" / "key.pem"
    secret.parent.mkdir()
    secret.write_bytes(b"not the lake's")
    secret.chmod(0o600)
    raw = lake.raw_dir("origins", day)
    if link == "file":
        raw.mkdir(parents=True)
        (raw / "run-1-0.parquet").symlink_to(secret)
        named = f"raw/origins/day={day}/run-1-0.parquet"
    elif link == "folder":
        raw.parent.mkdir(parents=True, exist_ok=True)
        raw.symlink_to(secret.parent, target_is_directory=True)
        named = f"raw/origins/day={day}"
    else:  # a table's folder, elsewhere, holding the day
        (secret.parent / f"day={day}").mkdir()
        secret.rename(secret.parent / f"day={day}" / "key.parquet")
        secret = secret.parent / f"day={day}" / "key.parquet"
        table = lake.root / ("raw/origins" if link == "raw kind" else "curated/zz_evil")
        table.parent.mkdir(parents=True, exist_ok=True)
        table.symlink_to(secret.parent.parent, target_is_directory=True)
        named = table.relative_to(lake.root).as_posix()
    with pytest.raises(SigningError, match=f"cannot be signed: .*a link.*: {re.escape(named)}"):
        sign_through(lake, day, signing_key, now=NOW)
    assert secret.stat().st_mode & 0o777 == 0o600 and not lake.root_file(day).exists()


def test_a_second_root_of_a_day_under_another_name_is_named(signed_lake):
    """A stranger's review: `roots/day=D.v2.json` passed verify while the warehouse's `day=*.json` read it as a
    second root of D (map_days then counted every endpoint twice)."""
    shutil.copy(signed_lake.root_file(DAY), signed_lake.roots_dir / f"day={DAY}.v2.json")
    report = verify_lake(signed_lake)
    assert report.codes == [Code.STRAY] and report.problems[0].file == f"roots/day={DAY}.v2.json"
    from sevenmaps_pipeline.lake.warehouse import publish_warehouse

    publish_warehouse(signed_lake, force=True)
    with duckdb.connect(str(signed_lake.warehouse), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM daily_roots WHERE day = $d", {"d": DAY}).fetchone() == (1,)


def test_a_write_in_flight_is_no_stray_but_a_hidden_file_stops_signing(lake, signing_key):
    day = DAY + dt.timedelta(days=5)
    _fake_day(lake, day, b"x-")
    folder = lake.curated_file("daily_status", day).parent
    (folder / f".part-0.parquet.{'a' * 32}.tmp").write_bytes(b"a write still running")
    crashed = folder / f".part-9.parquet.{'b' * 32}.tmp"
    crashed.write_bytes(b"a crashed write's")
    os.utime(crashed, (time.time() - 7200, time.time() - 7200))
    (folder / ".part-1.parquet").write_bytes(b"no write of ours")
    with pytest.raises(SigningError, match=r"cannot be signed: .*\.part-1\.parquet"):
        sign_through(lake, day, signing_key, now=NOW)
    assert not crashed.exists()  # swept by signing, as a writer sweeps one
    (folder / ".part-1.parquet").unlink()
    sign_through(lake, day, signing_key, now=NOW)
    assert verify_lake(lake).ok  # the temp of a write in flight is neither covered nor a stray
    # One that has sat there past the time a write may take is a stray: a glob of every name would read it.
    stale = folder / f".part-0.parquet.{'c' * 32}.tmp"
    stale.write_bytes(b"PAR1 rows no root covers")
    assert verify_lake(lake).ok
    report = verify_lake(lake, now=time.time() + 2 * 3600)  # two hours later, both temps still there
    assert {p.code for p in report.problems} == {Code.STRAY}
    assert {p.file.rsplit("/", 1)[-1] for p in report.problems} == {stale.name, f".part-0.parquet.{'a' * 32}.tmp"}


def test_json_nested_past_any_parser_is_a_named_problem_not_a_crash(signed_lake, tmp_path):
    """A stranger's attack: a root document, the lake's 7maps.json or a --state file nested 100,000 deep made
    verify stop with "an error in sevenmaps itself" (a RecursionError), not a named problem."""
    deep = "[" * 100_000 + "]" * 100_000
    trust = Trust(keys.read_published_key(signed_lake), "the test's key", pinned=True)
    signed_lake.root_file(DAY).write_text(deep)
    report = verify_lake(signed_lake, trust=trust)
    assert report.problems[0].code is Code.ROOT_UNREADABLE and "nested too deeply" in report.problem
    state = tmp_path / "state.json"
    state.write_text(deep)
    assert Code.STATE_UNREADABLE in verify_lake(signed_lake, trust=trust, state_path=state).codes
    signed_lake.well_known.write_text(deep)
    report = verify_lake(signed_lake)  # no key given: the lake's own, which cannot be read
    assert Code.KEY_UNREADABLE in report.codes
    assert "RecursionError" in next(p.what for p in report.problems if p.code is Code.KEY_UNREADABLE)


def test_a_published_key_that_is_not_the_trusted_one_is_noted(signed_lake):
    trust = Trust(keys.read_published_key(signed_lake), "the test's key", pinned=True)
    assert not verify_lake(signed_lake, trust=trust).notes
    signed_lake.well_known.unlink()
    keys.publish_public_key(signed_lake, Ed25519PrivateKey.generate())
    report = verify_lake(signed_lake, trust=trust)
    assert report.ok and any("is not the key you trust" in n for n in report.notes)
    signed_lake.well_known.write_text("junk")
    report = verify_lake(signed_lake, trust=trust)
    assert report.ok and any("published key cannot be read" in n for n in report.notes)


def test_verify_catches_a_day_signed_before_it_ended(signed_lake):
    path = signed_lake.root_file(DAY)
    doc = json.loads(path.read_text())
    doc["signed_at"] = "2026-11-10T23:00:00+00:00"
    path.write_text(json.dumps(doc))
    report = verify_lake(signed_lake)
    assert (report.ok, report.bad_day) == (False, DAY)
    assert report.problem == "signed at 2026-11-10T23:00:00+00:00, before the day ended"
    assert report.problems[0].code is Code.SIGNED_TOO_EARLY


def test_verify_cli_exit_codes(signed_lake):
    from sevenmaps_pipeline.cli import main

    assert main(["--lake", str(signed_lake.root), "verify"]) == 0
    (signed_lake.raw_dir("probes", DAY) / "run-1.parquet").unlink()
    assert main(["--lake", str(signed_lake.root), "verify"]) == 1
    # A reader that leaves before the verdict is printed (`verify | head`) does not turn it into 0; a file named
    # with a line break prints no line of its own.
    (signed_lake.curated_file("daily_status", DAY).parent / "x\nOK: 3 signed days verified").write_bytes(b"x")
    verify = subprocess.Popen([sys.executable, "-m", "sevenmaps_pipeline.cli", "--lake", str(signed_lake.root),
                               "verify"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    verify.stdout.close()
    assert verify.wait(timeout=120) == 1
    shown = subprocess.run([sys.executable, "-m", "sevenmaps_pipeline.cli", "--lake", str(signed_lake.root), "verify"],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 1 and not any(line.startswith("OK") for line in shown.stdout.splitlines())
    assert "x\\nOK: 3 signed days verified" in shown.stdout


def test_a_failed_write_leaves_no_file_and_no_temp(lake, monkeypatch):
    target = lake.curated_file("daily_status", DAY)

    def explode(table, where, **kwargs):
        with open(where, "wb") as fh:
            fh.write(b"PAR1 half a file")
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", explode)
    with pytest.raises(OSError, match="disk full"):
        write_parquet(lake, target, pa.table({"x": [1, 2, 3]}))
    assert not target.exists()
    assert list(target.parent.iterdir()) == []


def test_a_killed_writer_leaves_no_visible_partial_file(lake):
    target = lake.curated_file("daily_status", DAY)
    write_parquet(lake, target, pa.table({"x": [1]}))
    old = target.read_bytes()
    script = textwrap.dedent(f"""
        import os, pyarrow as pa, pyarrow.parquet as pq
        from sevenmaps_pipeline.lake.parquet_io import write_parquet
        from sevenmaps_pipeline.lake.paths import LakePaths
        real = pq.write_table
        def dying(table, where, **kw):
            real(table, where, **kw)
            os._exit(9)  # killed after the temp file is written, before the rename
        pq.write_table = dying
        write_parquet(LakePaths.at({str(lake.root)!r}), __import__("pathlib").Path({str(target)!r}),
                      pa.table({{"x": list(range(100000))}}))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert proc.returncode == 9
    assert target.read_bytes() == old  # the old partition is whole and untouched
    leftovers = [p.name for p in target.parent.iterdir() if p.name != "part-0.parquet"]
    assert len(leftovers) == 1 and leftovers[0].startswith(".") and leftovers[0].endswith(".tmp")
    expected = f"{hashlib.sha256(old).hexdigest()}  curated/daily_status/day=2026-11-10/part-0.parquet"
    assert day_lines(lake, DAY) == [expected]


def test_compute_root_formula():
    assert compute_root("", []) == hashlib.sha256(b"\n").hexdigest()
    assert compute_root("ab", ["x  y"]) == hashlib.sha256(b"ab\nx  y").hexdigest()


def test_build_status_refuses_before_touching_a_signed_day(lake, signing_key):
    build_day(lake, DAY)
    sign_through(lake, DAY, signing_key, now=NOW)
    land_status_path = lake.curated_file("daily_status", DAY)
    before = land_status_path.read_bytes()
    with pytest.raises(SignedDayError):
        land_status(lake, DAY, {"x": "o"})
    assert land_status_path.read_bytes() == before


def test_every_problem_kind_has_one_meaning():
    # The verifier's problems are named kinds; what a kind means for the exit code is fixed here, so a new
    # kind cannot silently become a fork (exit 3) or a mere lag of the log (exit 4).
    forks = {c for c in Code if c.kind is Kind.FORK}
    assert forks == {Code.OTHER_HISTORY, Code.NOT_A_PREFIX, Code.KEY_CHANGED, Code.ORIGIN_CHANGED,
                     Code.LOG_ROLLED_BACK, Code.SPLIT_VIEW, Code.INCONSISTENT}
    assert [c for c in Code if c.kind is Kind.BEHIND] == [Code.LOG_BEHIND]
    assert len({c.value for c in Code}) == len(Code)
