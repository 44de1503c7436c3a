"""Researchers' snapshots: written from a signed lake, checked offline in a folder with no lake, with
standard tools (sha256sum) and the Frictionless Data Package v2 reference implementation; withheld files
are named, never silent; internal-only tables are in no export and no public view."""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import shutil
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import DAY
from frictionless import Package, Resource
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_integrity import NOW, build_day

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.integrity.export_check import verify_export
from sevenmaps_pipeline.integrity.keys import generate_key
from sevenmaps_pipeline.integrity.manifest import sha256_file
from sevenmaps_pipeline.integrity.report import LISTED_PER_CODE, Code, Trust, VerifyReport
from sevenmaps_pipeline.integrity.roots import read_root, sign_through
from sevenmaps_pipeline.integrity.verify import verify_lake
from sevenmaps_pipeline.lake.parquet_io import STALE_SECONDS
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.lake.schemas import WITHHELD_TABLES, table_of
from sevenmaps_pipeline.lake.warehouse import publish_warehouse
from sevenmaps_pipeline.publishing.export import (
    COMPLETENESS_CHECK,
    ExportError,
    export_snapshot,
    sweep_crashed_exports,
)

DAYS = [DAY + dt.timedelta(days=i) for i in range(3)]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Days 2..3 of a signed lake exported, built once for the module; the lake itself deleted."""
    root = tmp_path_factory.mktemp("exported")
    lake = LakePaths.at(root / "lake")
    signing_key = generate_key(root / "keys" / "signing.pem")
    for d in DAYS:
        build_day(lake, d)
    sign_through(lake, DAYS[-1], signing_key, now=NOW)
    trusted = root / "trusted-7maps.json"
    shutil.copyfile(lake.well_known, trusted)
    result = export_snapshot(lake, DAYS[1], DAYS[2])
    assert result.created and result.folder == lake.root / "exports" / f"{DAYS[1]}_{DAYS[2]}"
    signed = [line[66:] for d in DAYS[1:] for line in read_root(lake, d)["lines"]]
    template = root / "template" / result.folder.name
    shutil.copytree(result.folder, template)
    shutil.rmtree(lake.root)
    return template, trusted, signed, result


@pytest.fixture
def snapshot(exported, tmp_path):
    """The exported days copied far from any lake, fresh for each test (tests change its bytes)."""
    template, trusted, signed, result = exported
    elsewhere = tmp_path / "researcher" / template.name
    shutil.copytree(template, elsewhere)
    mine = tmp_path / "trusted-7maps.json"
    shutil.copyfile(trusted, mine)
    return elsewhere, mine, signed, result


def test_a_snapshot_verifies_offline_with_no_lake(snapshot):
    folder, trusted, signed, result = snapshot
    report = verify_export(folder, Trust.from_public_key_file(trusted))
    assert report.ok, report.summary()
    assert report.days_verified == DAYS[1:]
    assert report.files_checked == report.proofs_checked == result.files
    withheld = {w.split(" (")[0] for w in report.withheld}
    assert withheld == {p for p in signed if p.split("/")[1] in WITHHELD_TABLES}
    assert len(withheld) == result.withheld == 2 * len(WITHHELD_TABLES)
    included = {p.relative_to(folder).as_posix() for p in folder.rglob("*.parquet")}
    assert included == set(signed) - withheld  # every published file of those days, nothing else
    assert not any("internal_findings" in p or "quarantine" in p for p in included)
    withheld_txt = (folder / "WITHHELD.txt").read_text()
    assert "internal-only findings" in withheld_txt and "quarantine" in withheld_txt
    # The files are byte-identical to the signed ones: their hashes are the roots' lines.
    for d in DAYS[1:]:
        for line in json.loads((folder / "roots" / f"day={d}.json").read_text())["lines"]:
            if line[66:] in included:
                assert sha256_file(folder / line[66:]) == line[:64]
    assert main(["verify", "--export", str(folder), "--public-key", str(trusted)]) == 0
    vkey = (folder / "log" / "vkey").read_text().strip()
    assert main(["verify", "--export", str(folder), "--vkey", vkey]) == 0


def test_standard_tools_check_the_snapshot(snapshot):
    folder, *_ = snapshot
    done = subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=folder, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    listed = {line.split("  ", 1)[1] for line in (folder / "SHA256SUMS").read_text().splitlines()}
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {"SHA256SUMS"}
    assert listed == present


def test_the_datapackage_is_a_valid_frictionless_v2_package_that_describes_the_files(snapshot):
    folder, *_ = snapshot
    report = Package.validate_descriptor(str(folder / "datapackage.json"))
    assert report.valid, [e.message for e in report.errors]
    package = json.loads((folder / "datapackage.json").read_text())
    assert package["$schema"] == "https://datapackage.org/profiles/2.0/datapackage.json"
    assert package["licenses"][0]["name"] == "CC-BY-4.0"
    resources = package["resources"]
    assert {r["path"] for r in resources} == {p.relative_to(folder).as_posix() for p in folder.rglob("*.parquet")}
    assert len({r["name"] for r in resources}) == len(resources)
    # Lists and maps are `any` (Frictionless reads them as numpy arrays, which its `array` refuses).
    kinds = {"string": "string", "int32": "integer", "int64": "integer", "double": "number", "bool": "boolean",
             "date32[day]": "date", "timestamp[us, tz=UTC]": "datetime"}
    for r in resources:
        path = folder / r["path"]
        assert r["hash"] == "sha256:" + sha256_file(path) and r["mediatype"] == "application/vnd.apache.parquet"
        assert "bytes" not in r  # Frictionless 5 counts no Parquet bytes: any count fails (croissant.json has it)
        arrow = pq.read_schema(path)
        fields = r["schema"]["fields"]
        assert [f["name"] for f in fields] == arrow.names
        for f in fields:
            actual = arrow.field(f["name"])
            expected = kinds.get(str(actual.type), "object" if str(actual.type).startswith("struct") else "any")
            assert f["type"] == expected, (r["path"], f["name"], actual)
            assert f["description"]
            assert f.get("constraints", {}).get("required", False) is not actual.nullable
    readme = (folder / "README.md").read_text()
    assert "sha256sum -c SHA256SUMS" in readme
    # Each table by the name the lake's warehouse gives it too (a newcomer found the two names apart).
    assert "| `daily_status` | `daily_status` | `curated/daily_status/` |" in readme


def frictionless_cli_validate(folder) -> dict:
    """`frictionless validate datapackage.json` as a researcher runs it: the CLI installed beside this
    Python, in the snapshot's folder; its JSON report."""
    cli = Path(sys.executable).parent / "frictionless"
    done = subprocess.run([str(cli), "validate", "--json", "datapackage.json"], cwd=folder, capture_output=True,
                          text=True)
    report = json.loads(done.stdout)
    assert (done.returncode == 0) == report["valid"], done.stderr
    return report


def frictionless_validate(folder) -> dict:
    """The report the CLI gives (frictionless_cli_validate), from the validation the CLI runs, in this process:
    a CLI run costs 3 s of CPU, nearly all imports (docs/development.md, "The suite's time"); the first
    test below holds that the two reports are the same. The CLI, run in the folder, names a file there by
    its relative path."""
    report = Resource(str(folder / "datapackage.json")).validate().to_json()
    return json.loads(report.replace(f"{folder}/", ""))


def _without_times(report):
    if isinstance(report, dict):
        return {k: _without_times(v) for k, v in report.items() if k not in ("time", "seconds")}
    return [_without_times(v) for v in report] if isinstance(report, list) else report


def test_frictionless_validate_passes_on_the_snapshot_with_no_error(snapshot):
    folder, *_ = snapshot
    report = frictionless_cli_validate(folder)
    errors = [(t["name"], e["type"], e["message"]) for t in report["tasks"] for e in t["errors"]]
    assert report["valid"] and errors == [] and report["stats"]["errors"] == 0, errors[:10]
    parquet = {p.relative_to(folder).as_posix() for p in folder.rglob("*.parquet")}
    assert {t["place"] for t in report["tasks"]} == parquet and all(t["valid"] for t in report["tasks"])
    # It read every row of every file: nullable integers, lists and structs among them.
    assert sum(t["stats"].get("rows", 0) for t in report["tasks"]) == sum(pq.read_metadata(folder / p).num_rows
                                                                 for p in parquet)
    # The same report, from the same validation, in this process (what the other tests ask).
    assert _without_times(frictionless_validate(folder)) == _without_times(report)


def _declare(folder, change) -> None:
    package = json.loads((folder / "datapackage.json").read_text())
    change(package["resources"])
    (folder / "datapackage.json").write_text(json.dumps(package))


def _field(resources, table: str, column: str) -> dict:
    resource = next(r for r in resources if f"/{table}/" in r["path"])
    return next(f for f in resource["schema"]["fields"] if f["name"] == column)


@pytest.mark.parametrize(("change", "error"), [
    (lambda rs: _field(rs, "daily_status", "server_key").update(type="integer"), "type-error"),
    (lambda rs: _field(rs, "daily_status", "server_key").update(name="endpoint"), "incorrect-label"),
    (lambda rs: _field(rs, "domain_ages", "age_days").pop("missingValues"), "type-error"),
    (lambda rs: rs[0].update(path=rs[0]["path"].replace("part-0", "part-9")), "source-error"),
])
def test_frictionless_validate_reports_a_wrong_declaration(snapshot, change, error):
    folder, *_ = snapshot
    _declare(folder, change)
    report = frictionless_validate(folder)
    assert not report["valid"]
    assert error in {e["type"] for t in report["tasks"] for e in t["errors"]} | {e["type"] for e in report["errors"]}
    if error == "source-error":  # a file the descriptor names that is not there: the CLI's report too
        assert _without_times(frictionless_cli_validate(folder)) == _without_times(report)


CROISSANT_TYPES = {"string": "sc:Text", "int32": "sc:Integer", "int64": "sc:Integer", "double": "sc:Float",
                   "bool": "sc:Boolean", "date32[day]": "sc:Date", "timestamp[us, tz=UTC]": "sc:DateTime"}


def croissant_problems(folder) -> list[str]:
    """What is wrong with a snapshot's croissant.json, by the Croissant 1.1 specification's rules: the required
    dataset properties, a FileObject per Parquet file with its relative contentUrl, size and SHA-256, a
    FileSet per table of exactly its files, and every RecordSet field a real column of each of those files,
    typed as its Parquet type. (mlcroissant, the reference loader, is not a dependency: too heavy.)"""
    meta = json.loads((folder / "croissant.json").read_text())
    problems = [f"missing {key}" for key in ("@context", "@type", "conformsTo", "name", "description", "license",
                                             "url", "creator", "datePublished", "citeAs", "distribution",
                                             "recordSet") if not meta.get(key)]
    if meta.get("conformsTo") != "http://mlcommons.org/croissant/1.1" or meta.get("@type") != "sc:Dataset":
        problems.append("not a Croissant 1.1 dataset")
    if {meta["@context"].get(k) for k in ("@vocab", "sc")} != {"https://schema.org/"}:
        problems.append("schema.org not as mlcroissant reads it (https): it refuses the dataset")
    if meta.get("license") != "https://creativecommons.org/licenses/by/4.0/":
        problems.append(f"licence {meta.get('license')}")
    ids = [node["@id"] for node in meta["distribution"] + meta["recordSet"]]
    ids += [f["@id"] for rs in meta["recordSet"] for f in rs["field"]]
    problems += [f"@id {i} twice" for i in set(ids) if ids.count(i) > 1]
    files = {o["contentUrl"]: o for o in meta["distribution"] if o["@type"] == "cr:FileObject"}
    parquet = {p.relative_to(folder).as_posix() for p in folder.rglob("*.parquet")}
    problems += [f"not listed: {rel}" for rel in sorted(parquet - set(files))]
    for rel, o in files.items():
        path = folder / rel
        if rel.startswith("/") or ":" in rel or not path.is_file():
            problems.append(f"no such file: {rel}")
        elif o["sha256"] != sha256_file(path) or o["contentSize"] != f"{path.stat().st_size} B":
            problems.append(f"size or hash differs: {rel}")
    sets = {o["@id"]: o["includes"] for o in meta["distribution"] if o["@type"] == "cr:FileSet"}
    for rs in meta["recordSet"]:
        members = sets.get(f"{rs['@id']}-files", [])
        if sorted(members) != sorted(r for r in parquet if (spec := table_of(r)) and spec.name == rs["@id"]):
            problems.append(f"{rs['@id']}: its file set is not exactly its files")
        schemas = [pq.read_schema(folder / m) for m in members if (folder / m).is_file()]
        for f in rs["field"]:
            column = f["source"]["extract"]["column"]
            if f["source"]["fileSet"]["@id"] != f"{rs['@id']}-files" or not all(column in s.names for s in schemas):
                problems.append(f"{f['@id']}: not a column of every file of {rs['@id']}")
                continue
            arrow = schemas[0].field(column).type
            inner = arrow.value_type if pa.types.is_list(arrow) else arrow
            if f.get("isArray", False) != pa.types.is_list(arrow) or (
                    "dataType" in f and f["dataType"] != CROISSANT_TYPES.get(str(inner))):
                problems.append(f"{f['@id']}: typed {f.get('dataType')}, the column is {arrow}")
    return problems


def test_croissant_describes_every_file_and_every_column_of_the_snapshot(snapshot):
    folder, *_ = snapshot
    assert croissant_problems(folder) == []
    meta = json.loads((folder / "croissant.json").read_text())
    package = json.loads((folder / "datapackage.json").read_text())
    assert {o["contentUrl"] for o in meta["distribution"] if o["@type"] == "cr:FileObject"} == {
        r["path"] for r in package["resources"]}
    tables = {spec.name for r in package["resources"] if (spec := table_of(r["path"]))}
    assert {rs["@id"] for rs in meta["recordSet"]} == tables
    fields = {f["@id"]: f for rs in meta["recordSet"] for f in rs["field"]}
    assert fields["daily_status/day"]["dataType"] == "sc:Date" and fields["daily_status/code"]["dataType"] == "sc:Text"
    assert any(f.get("isArray") and f["dataType"] == "sc:Text" for f in fields.values())  # list<string>
    nested = [f for f in fields.values() if "subField" in f]  # list<struct<value, reports>>
    assert nested and all(f["isArray"] and {s["name"].split("/")[-1] for s in f["subField"]} == {"value", "reports"}
                          for f in nested)


@pytest.mark.parametrize("tamper", ["hash", "column", "file"])
def test_a_wrong_croissant_declaration_is_named(snapshot, tamper):
    folder, *_ = snapshot
    meta = json.loads((folder / "croissant.json").read_text())
    if tamper == "hash":
        meta["distribution"][0]["sha256"] = "0" * 64
    elif tamper == "column":
        meta["recordSet"][0]["field"][0]["source"]["extract"]["column"] = "no_such_column"
    else:
        meta["distribution"] = meta["distribution"][1:]
    (folder / "croissant.json").write_text(json.dumps(meta))
    assert croissant_problems(folder)


def test_a_changed_file_is_named_even_when_sha256sums_is_rewritten_to_match(snapshot):
    folder, trusted, _, _ = snapshot
    rel = f"curated/daily_status/day={DAYS[2]}/part-0.parquet"
    (folder / rel).write_bytes((folder / rel).read_bytes() + b"x")
    report = verify_export(folder, Trust.from_public_key_file(trusted))
    assert not report.ok and any(p.file == rel for p in report.problems)
    sums = (folder / "SHA256SUMS").read_text().splitlines()
    sums = [f"{sha256_file(folder / rel)}  {rel}" if line.endswith("  " + rel) else line for line in sums]
    (folder / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    report = verify_export(folder, Trust.from_public_key_file(trusted))
    assert not report.ok
    assert any(f"file differs from its signed line: {rel}" in p.what for p in report.problems)
    assert Code.FILE_CHANGED in report.codes


def test_a_file_left_out_silently_fails_and_one_declared_withheld_is_listed(snapshot):
    folder, trusted, _, _ = snapshot
    rel = f"curated/tools/day={DAYS[1]}/part-0.parquet"
    (folder / rel).unlink()
    (folder / "proofs" / (rel + ".tlog-proof")).unlink()
    keep = [line for line in (folder / "SHA256SUMS").read_text().splitlines() if rel not in line]
    (folder / "SHA256SUMS").write_text("\n".join(keep) + "\n")
    report = verify_export(folder, Trust.from_public_key_file(trusted))
    assert not report.ok
    assert report.problem == f"signed file missing and not listed in WITHHELD.txt: {rel}"
    assert report.problems[0].code is Code.FILE_MISSING
    with open(folder / "WITHHELD.txt", "a") as fh:
        fh.write(f"{rel}\tleft out by the researcher who shared this copy\n")
    keep = [line for line in keep if not line.endswith("  WITHHELD.txt")]
    keep.append(f"{sha256_file(folder / 'WITHHELD.txt')}  WITHHELD.txt")
    (folder / "SHA256SUMS").write_text("\n".join(keep) + "\n")
    report = verify_export(folder, Trust.from_public_key_file(trusted))
    assert report.ok, report.summary()  # a shared subset verifies, and says what it lacks, in whose words
    assert (f"{rel} (a published file left out of this copy; WITHHELD.txt says: left out by the researcher who "
            "shared this copy)") in report.withheld
    assert any("published files are left out of this copy" in note for note in report.notes)


def test_what_a_snapshot_does_not_hold_is_named(snapshot, tmp_path):
    """A stranger's attack: a linked folder posing as another day (DuckDB's `day=*` glob read it, SHA256SUMS and
    the check walked past it), a data file outside raw/ and curated/, a hidden file: each verified OK."""
    folder, trusted, _, _ = snapshot
    elsewhere = tmp_path / "fake"
    elsewhere.mkdir()
    (elsewhere / "part-0.parquet").write_bytes((folder / f"curated/daily_status/day={DAYS[2]}/part-0.parquet")
                                               .read_bytes())
    (folder / "curated/daily_status/day=2026-12-31").symlink_to(elsewhere, target_is_directory=True)
    (folder / "data").mkdir()
    (folder / "data/x.parquet").write_bytes(b"PAR1")
    (folder / f"curated/daily_status/day={DAYS[2]}/.part-1.parquet").write_bytes(b"PAR1")
    sums = (folder / "SHA256SUMS").read_text() + "".join(
        f"{sha256_file(folder / rel)}  {rel}\n" for rel in ("data/x.parquet", f"curated/daily_status/day={DAYS[2]}/"
                                                          ".part-1.parquet"))
    (folder / "SHA256SUMS").write_text(sums)
    report = verify_export(folder, Trust.from_public_key_file(trusted))
    stray = {p.file for p in report.problems if p.code is Code.STRAY}
    assert stray == {"curated/daily_status/day=2026-12-31", "data",
                     f"curated/daily_status/day={DAYS[2]}/.part-1.parquet"}
    assert not report.ok


def test_a_snapshot_re_signed_with_another_key_fails_against_the_pinned_key(snapshot, tmp_path):
    folder, trusted, _, _ = snapshot
    other = tmp_path / "other.json"
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from sevenmaps_pipeline.integrity.keys import public_pem

    other.write_text(json.dumps({"integrity": {"public_key_pem": public_pem(Ed25519PrivateKey.generate())}}))
    report = verify_export(folder, Trust.from_public_key_file(other))
    assert not report.ok and report.problem.startswith(f"bad signature in roots/day={DAYS[1]}.json")
    assert report.problems[0].code is Code.BAD_SIGNATURE
    unpinned = verify_export(folder)
    assert unpinned.ok and "the snapshot's own public key" in unpinned.notes[0]  # not the lake's (helper-93)


def test_exports_are_immutable_and_only_of_signed_days(lake, signing_key):
    for d in DAYS[:2]:
        build_day(lake, d)
    sign_through(lake, DAYS[0], signing_key, now=NOW)
    first = export_snapshot(lake, DAYS[0])
    before = {p: p.read_bytes() for p in first.folder.rglob("*") if p.is_file()}
    again = export_snapshot(lake, DAYS[0])
    assert not again.created and {p: p.read_bytes() for p in first.folder.rglob("*") if p.is_file()} == before
    with pytest.raises(ExportError, match=f"day {DAYS[1]} is not signed"):
        export_snapshot(lake, DAYS[0], DAYS[1])
    assert main(["--lake", str(lake.root), "export", "--day", DAYS[1].isoformat()]) == 2


def test_a_killed_exports_and_a_killed_publishs_working_files_are_swept_an_hour_on(lake, signing_key):
    """helper-89: a killed `sevenmaps export` left exports/.D.<hex>.tmp/ (a partial copy of signed files) and a killed
    publish `.warehouse.<hex>.duckdb`, for good. Each is swept once nothing in it has changed for an hour; a working
    folder still written deep inside (its top unchanged), and a folder of the user's own, are left."""
    exports = lake.exports_dir
    killed, writing, own = (exports / f".{DAYS[0]}.{'a' * 32}.tmp", exports / f".{DAYS[1]}.{'b' * 32}.tmp",
                            exports / ".mine.tmp")
    for folder in (killed, writing, own):
        (folder / "curated" / "daily_status").mkdir(parents=True)
    time.sleep(1.1)
    (writing / "curated" / "daily_status" / "part-0.parquet").write_bytes(b"PAR1")  # deep inside: the top unchanged
    tops = max(os.lstat(f).st_ctime for f in (killed, writing, killed / "curated", writing / "curated"))
    an_hour_after_the_tops = tops + STALE_SECONDS + 0.5
    assert sweep_crashed_exports(lake, now=time.time()) == []  # nothing an hour old
    assert sweep_crashed_exports(lake, now=an_hour_after_the_tops) == [killed.name]
    assert not killed.exists() and writing.is_dir() and own.is_dir()
    assert sweep_crashed_exports(lake, now=time.time() + STALE_SECONDS + 1) == [writing.name]
    stale, fresh = lake.root / f".warehouse.{'c' * 32}.duckdb", lake.root / f".internal.{'d' * 32}.duckdb.wal"
    backup = lake.root / ".warehouse.before-upgrade.duckdb"  # an operator's, named as no publish names one
    for path in (stale, fresh, backup):
        path.write_bytes(b"half a database")
    for path in (stale, backup):
        os.utime(path, (time.time() - STALE_SECONDS - 60,) * 2)
    publish_warehouse(lake, force=True)
    assert not stale.exists() and fresh.exists() and backup.exists() and lake.warehouse.is_file()


def test_internal_tables_are_only_in_the_internal_warehouse(lake, signing_key):
    build_day(lake, DAYS[0])
    publish_warehouse(lake, force=True)
    with duckdb.connect(str(lake.warehouse), read_only=True) as con:
        public = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    with duckdb.connect(str(lake.internal_warehouse), read_only=True) as con:
        internal = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    assert internal == set(WITHHELD_TABLES)
    assert not public & set(WITHHELD_TABLES) and {"daily_status", "findings", "daily_roots"} <= public


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pick=st.integers(min_value=0), offset=st.integers(min_value=0), flip=st.integers(1, 255))
def test_any_changed_byte_in_any_file_of_a_snapshot_is_named(snapshot, pick, offset, flip):
    folder, trusted, _, _ = snapshot
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.stat().st_size)
    target = files[pick % len(files)]
    original = target.read_bytes()
    data = bytearray(original)
    data[offset % len(data)] ^= flip
    target.write_bytes(bytes(data))
    try:
        report = verify_export(folder, Trust.from_public_key_file(trusted))
        assert not report.ok, target.relative_to(folder)
        assert report.summary()
    finally:
        target.write_bytes(original)


def test_editing_a_snapshot_in_place_leaves_the_signed_lake_as_it_was(lake, signing_key, tmp_path):
    """A snapshot shares no inode with the lake (they were hard links): a researcher who edits an exported
    file in place with open(..., 'r+b') changes their copy only, and the lake still verifies."""
    build_day(lake, DAYS[0])
    sign_through(lake, DAYS[0], signing_key, now=NOW)
    trusted = tmp_path / "trusted-7maps.json"
    shutil.copyfile(lake.well_known, trusted)
    result = export_snapshot(lake, DAYS[0])
    exported = sorted(p for p in result.folder.rglob("*") if p.is_file())
    for path in (p for p in exported if p.suffix == ".parquet"):
        with open(path, "r+b") as fh:
            fh.seek(4)
            fh.write(b"edited")
    assert not verify_export(result.folder, Trust.from_public_key_file(trusted)).ok  # the copy changed
    report = verify_lake(lake, Trust.from_public_key_file(trusted))
    assert report.ok, report.summary()
    for path in exported:
        source = lake.root / path.relative_to(result.folder)
        if source.is_file():
            assert path.stat().st_ino != source.stat().st_ino, path


def test_signing_makes_the_days_files_and_its_root_read_only(lake, signing_key):
    build_day(lake, DAYS[0])
    sign_through(lake, DAYS[0], signing_key, now=NOW)
    covered = [lake.root / line[66:] for line in read_root(lake, DAYS[0])["lines"]]
    assert covered and {oct(p.stat().st_mode & 0o777) for p in covered + [lake.root_file(DAYS[0])]} == {"0o444"}
    # Writers replace by rename, so a rebuild of the signed day that changes nothing still passes.
    curated.day.rebuild_day(lake, DAYS[0])
    assert verify_lake(lake).ok


def test_a_file_signed_beside_a_tables_files_that_is_none_of_them_is_listed_withheld(lake, signing_key):
    # A day signed before reports-1.2 could hold one (helper-81: `notes.txt` among the report batches), and every
    # snapshot of it failed on reading it as Parquet; a file landing between the build and the signing still can.
    build_day(lake, DAYS[0])
    junk = lake.raw_dir("agent_reports", DAYS[0]) / "notes.txt"
    junk.parent.mkdir(parents=True, exist_ok=True)
    junk.write_text("not a batch")
    sign_through(lake, DAYS[0], signing_key, now=NOW)
    assert any(line.endswith("/notes.txt") for line in read_root(lake, DAYS[0])["lines"])
    result = export_snapshot(lake, DAYS[0])
    assert not (result.folder / junk.relative_to(lake.root)).exists()
    assert (f"raw/agent_reports/day={DAYS[0]}/notes.txt\tsigned, but no Parquet file of its table"
            in (result.folder / "WITHHELD.txt").read_text())
    assert verify_export(result.folder, Trust.from_public_key_file(lake.well_known)).ok


def test_an_existing_folder_is_left_as_it_is_only_when_it_is_a_snapshot_of_exactly_the_days_asked(
        lake, signing_key, tmp_path, capsys):
    """helper-93: a folder holding a snapshot of other days, an empty SHA256SUMS alone, or a link to a snapshot of
    other days was 'already exists (snapshots are immutable); left as it is', exit 0, for the range asked."""
    for d in DAYS[:2]:
        build_day(lake, d)
    sign_through(lake, DAYS[1], signing_key, now=NOW)
    one = export_snapshot(lake, DAYS[0], out=tmp_path / "one").folder
    assert not export_snapshot(lake, DAYS[0], out=tmp_path / "one").created
    with pytest.raises(ExportError, match=f"is a snapshot of {DAYS[0]}, not a snapshot of {DAYS[0]} .. {DAYS[1]}"):
        export_snapshot(lake, DAYS[0], DAYS[1], out=one)
    (tmp_path / "sums").mkdir()
    (tmp_path / "sums" / "SHA256SUMS").touch()
    with pytest.raises(ExportError, match=r"is a folder holding SHA256SUMS \(no root document of any day\), not a "):
        export_snapshot(lake, DAYS[0], out=tmp_path / "sums")
    (tmp_path / "sums" / "roots").mkdir()  # helper-98: empty files by the right names passed for the snapshot
    (tmp_path / "sums" / "roots" / f"day={DAYS[0]}.json").touch()
    with pytest.raises(ExportError, match=r"is a folder holding SHA256SUMS, roots \(no root document of any day\)"):
        export_snapshot(lake, DAYS[0], out=tmp_path / "sums")
    (tmp_path / "link").symlink_to(one, target_is_directory=True)
    assert not export_snapshot(lake, DAYS[0], out=tmp_path / "link").created
    with pytest.raises(ExportError, match=f"link is a snapshot of {DAYS[0]}, not a snapshot of {DAYS[1]}"):
        export_snapshot(lake, DAYS[1], out=tmp_path / "link")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(ExportError, match="is a link to .*nowhere, which is not there"):
        export_snapshot(lake, DAYS[0], out=tmp_path / "dangling")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary left behind
    capsys.readouterr()
    assert main(["--lake", str(lake.root), "export", "--day", str(DAYS[0]), "--out", str(one)]) == 0
    assert capsys.readouterr().out == (f"{one} is already a snapshot of these days (snapshots are immutable); "
                                       "left as it is\n")
    assert main(["--lake", str(lake.root), "export", "--day", str(DAYS[0]), "--to", str(DAYS[1]),
                 "--out", str(one)]) == 2
    assert main(["--lake", str(lake.root), "export", "--day", str(DAYS[1]), "--out", ""]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"error: {one} is a snapshot of {DAYS[0]}, not a snapshot of {DAYS[0]} .. {DAYS[1]} (2 days); "
                   "choose another --out",
                   "error: --out is empty: name the folder to create, or leave --out out for <lake>/exports/"]
    assert not lake.exports_dir.exists()  # the empty --out did not fall back to the default folder


def test_a_snapshot_is_written_under_the_lakes_exports_or_outside_the_lake_never_elsewhere_in_it(
        lake, signing_key, tmp_path):
    """helper-93: `--out <lake>/curated/snap` made the lake's verify fail, and `--out` an unsigned day's folder put
    the snapshot's files into a day that signing walks and the warehouse reads."""
    build_day(lake, DAYS[0])
    sign_through(lake, DAYS[0], signing_key, now=NOW)
    (tmp_path / "via").symlink_to(lake.root / "curated", target_is_directory=True)
    for out in (lake.root / "curated" / "snap", lake.root / f"curated/daily_status/day={DAYS[1]}",
                tmp_path / "via" / "snap", lake.exports_dir, lake.root / "exports-not"):
        with pytest.raises(ExportError, match=f"is inside the lake {lake.root.resolve()}, where signing"):
            export_snapshot(lake, DAYS[0], out=out)
        assert not out.exists()
    written = export_snapshot(lake, DAYS[0], out=lake.exports_dir / "mine").folder
    outside = export_snapshot(lake, DAYS[0], out=tmp_path / "outside").folder
    for out in (written / "sub", outside / "curated" / "sub"):
        with pytest.raises(ExportError, match="is inside the snapshot .*, which it would change"):
            export_snapshot(lake, DAYS[0], out=out)
    assert verify_lake(lake, Trust.from_public_key_file(lake.well_known)).ok
    assert verify_export(written, Trust.from_public_key_file(lake.well_known)).ok


def test_a_lake_whose_roots_have_a_gap_or_disagree_with_the_log_is_never_exported(lake, signing_key, tmp_path):
    """helper-93: with a middle root moved aside, the days after it were exported with every proof wrong (their
    log positions recounted from the roots left, not taken from each root's own record), and a snapshot stays."""
    for d in DAYS:
        build_day(lake, d)
    sign_through(lake, DAYS[-1], signing_key, now=NOW)
    aside = tmp_path / "aside.json"
    lake.root_file(DAYS[1]).rename(aside)
    with pytest.raises(ExportError, match=f"the signed roots have a gap: roots/day={DAYS[2]}.json chains to "
                                          f"{DAYS[1]}, whose root is not in the lake"):
        export_snapshot(lake, DAYS[2], out=tmp_path / "gap")
    assert main(["--lake", str(lake.root), "export", "--day", str(DAYS[2]), "--out", str(tmp_path / "gap")]) == 2
    assert not (tmp_path / "gap").exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    aside.rename(lake.root_file(DAYS[1]))
    path = lake.root_file(DAYS[2])
    doc = json.loads(path.read_text())
    for first in (doc["log"]["first_index"] - 1, doc["log"]["first_index"] + 1):  # a record the chain disagrees with
        path.chmod(0o644)
        path.write_text(json.dumps(doc | {"log": doc["log"] | {"first_index": first}}))
        with pytest.raises(ExportError, match=f"roots/day={DAYS[2]}.json records its lines from log entry {first}"):
            export_snapshot(lake, DAYS[2], out=tmp_path / "record")
    path.write_text(json.dumps(doc))
    written = export_snapshot(lake, DAYS[2], out=tmp_path / "record")
    assert verify_export(written.folder, Trust.from_public_key_file(lake.well_known)).ok


def _completeness_lines(folder: Path) -> list[str]:
    """The completeness lines of the snapshot's own README.md, as a researcher copies them; held to be the ones
    docs/verifying.md section 6 gives."""
    readme = (folder / "README.md").read_text().splitlines()
    start = readme.index("    " + COMPLETENESS_CHECK[0])
    lines = [line[4:] for line in readme[start:start + len(COMPLETENESS_CHECK)]]
    docs = (Path(__file__).resolve().parents[1] / "docs" / "verifying.md").read_text()
    section = docs[docs.index("## 6. With standard tools only"):docs.index("## Known answers")]
    assert lines == list(COMPLETENESS_CHECK) and "```sh\n" + "\n".join(lines) + "\n```" in section
    return lines


def test_the_readme_verifies_against_a_key_from_elsewhere_never_the_folders_own(snapshot):
    """helper-93 re-signed a doctored lake with a key of their own, and the README's command, which trusted the
    7maps.json (or log/vkey) inside the folder, printed OK."""
    folder, *_ = snapshot
    readme = (folder / "README.md").read_text()
    assert "--public-key 7maps.json" not in readme and "cat log/vkey" not in readme
    assert ("sevenmaps verify --export . --public-key <the 7maps.json you trust, obtained apart from this folder>"
            in readme)
    assert "own `7maps.json` and `log/vkey` prove nothing by themselves" in readme


def test_standard_tools_name_a_file_no_root_signs_and_a_signed_file_left_out_silently(snapshot, tmp_path):
    """helper-93: `sha256sum -c SHA256SUMS` and every step of docs/verifying.md section 6 passed a snapshot with an
    added day no root covers (which the README's DuckDB glob then read) and a deleted file WITHHELD.txt does not
    list, SHA256SUMS rewritten. The README's (and section 6's) completeness lines print both; nothing when whole."""
    folder, *_ = snapshot
    script = "\n".join(_completeness_lines(folder))
    run = partial(subprocess.run, ["sh", "-c", script], cwd=folder, capture_output=True, text=True)
    before = sorted(folder.rglob("*"))
    done = run()
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert sorted(folder.rglob("*")) == before  # the list of signed files was kept outside the folder
    added = f"curated/daily_status/day={DAYS[2] + dt.timedelta(days=1)}/part-0.parquet"
    (folder / added).parent.mkdir()
    shutil.copyfile(folder / f"curated/daily_status/day={DAYS[2]}/part-0.parquet", folder / added)
    deleted = f"curated/tools/day={DAYS[1]}/part-0.parquet"
    (folder / deleted).unlink()
    (tmp_path / "elsewhere").mkdir()
    linked = "curated/daily_status/day=2026-12-31"
    (folder / linked).symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    (folder / "SHA256SUMS").write_text("".join(f"{sha256_file(folder / f)}  {f}\n" for f in files
                                               if f != "SHA256SUMS"))
    sums = subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=folder, capture_output=True, text=True)
    assert sums.returncode == 0, sums.stdout  # what the snapshot's README said checks every file
    done = run()
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.splitlines() == [added, linked, deleted]


def test_a_snapshot_on_a_full_disk_is_one_line_naming_where_it_was_written(lake, signing_key, tmp_path, monkeypatch,
                                                                            capsys):
    """helper-99: on a full 40 MB tmpfs, `export` said "No space left on device: <the lake's file>", the copy's
    source, as if the lake's disk were full. shutil's copy names both ends (filename and filename2): so does the line.
    Nothing of the half-written snapshot is left."""
    build_day(lake, DAYS[0])
    sign_through(lake, DAYS[0], signing_key, now=NOW)
    out = tmp_path / "full" / "snap"

    def full(source, target):
        raise OSError(errno.ENOSPC, "No space left on device", str(source), None, str(target))

    monkeypatch.setattr("sevenmaps_pipeline.publishing.export.shutil.copyfile", full)
    assert main(["export", "--lake", str(lake.root), "--day", DAYS[0].isoformat(), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: No space left on device: {lake.root}/") and f" -> {out.parent}/.snap." in err, err
    assert len(err.splitlines()) == 1 and list(out.parent.iterdir()) == []
    # A write that fails names no file (on the tmpfs: "error: [Errno 28] No space left on device"): the line names
    # the snapshot being written.
    monkeypatch.undo()

    def full_write(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("sevenmaps_pipeline.publishing.export._add_documents", full_write)
    assert main(["export", "--lake", str(lake.root), "--day", DAYS[0].isoformat(), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == (f"error: No space left on device while writing the snapshot {out}; "
                                               "nothing of it is left")
    assert list(out.parent.iterdir()) == []


def test_a_million_problems_are_counted_and_only_a_thousand_of_a_kind_kept(snapshot):
    """helper-99 (stop 72): a SHA256SUMS naming 1.9 million missing files held every problem, 1.6 GB. Each code
    keeps LISTED_PER_CODE problems; the rest are counted, with their days, so the report and its first bad day are
    what they would be with all of them (integrity/report.py)."""
    folder, trusted, _, _ = snapshot
    named = [f"{'0' * 64}  curated/tools/day={DAYS[2]}/part-{i}.parquet" for i in range(LISTED_PER_CODE + 1500)]
    with open(folder / "SHA256SUMS", "a") as sums:
        sums.write("\n".join(named) + "\n")
    report = verify_export(folder, Trust.from_public_key_file(trusted))
    assert not report.ok
    kinds = {code for code, _ in report.found}
    assert all(report.listed[code] <= LISTED_PER_CODE for code in report.listed) and len(report.problems) == sum(
        report.listed.values())
    counted = sum(report.listed.values()) + sum(report.unlisted.values())
    assert counted >= len(named) and sum(report.unlisted.values()) >= 1500, (kinds, report.listed, report.unlisted)
    assert f"... and {counted - 21:,} more problems" in report.summary()
    assert report.bad_day is not None and report.bad_day <= DAYS[2]


def test_a_problem_counted_past_the_cap_still_names_the_first_bad_day():
    report = VerifyReport()
    for i in range(LISTED_PER_CODE):
        report.add(Code.FILE_MISSING, f"signed file missing: f{i}", DAYS[2], f"f{i}")
    report.add(Code.FILE_MISSING, "signed file missing: early", DAYS[0], "early")  # counted, not kept
    assert len(report.problems) == LISTED_PER_CODE and report.unlisted == {Code.FILE_MISSING: 1}
    assert report.bad_day == DAYS[0] and report.found_on(DAYS[0]) and report.found_on(DAYS[0], Code.FILE_MISSING)
    assert not report.found_on(DAYS[1]) and not report.found_on(DAYS[0], Code.STRAY)
    assert report.summary().endswith(f"... and {LISTED_PER_CODE - 20:,} more problems")
