"""What verify reads of a lake or a snapshot that someone else made (helper-93): never a FIFO or a device, never
more than such a file can hold, never a file no root signs under a name a reader trusts; each refusal a named
problem, never a hang, a MemoryError or a usage error. And the snapshot's descriptions name only signed files."""

from __future__ import annotations

import datetime as dt
import json
import os
import threading

import pytest
import test_export
import test_integrity
from conftest import DAY

from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.integrity import export_check
from sevenmaps_pipeline.integrity.capped import MAX_KEY_BYTES, MAX_LIST_BYTES
from sevenmaps_pipeline.integrity.export_check import verify_export
from sevenmaps_pipeline.integrity.keys import read_published_key
from sevenmaps_pipeline.integrity.manifest import sha256_file
from sevenmaps_pipeline.integrity.proof import MAX_PROOF_BYTES
from sevenmaps_pipeline.integrity.report import Code, Trust
from sevenmaps_pipeline.integrity.verify import verify_days, verify_lake

# The fixtures of those modules: a snapshot of two signed days, and a lake of three, each copied for each test.
exported, snapshot = test_export.exported, test_export.snapshot
signed_template, signed_lake = test_integrity.signed_template, test_integrity.signed_lake

HUGE = 64 << 30  # sparse: the attack's size, of which nothing may be read


def _finishes(call, *args, **kwargs):
    """call(*args) in a thread: its result, or a failure when it has not returned in a minute (a FIFO opened
    for reading waits for a writer for good; the test must fail, not hang)."""
    out: list = []
    worker = threading.Thread(target=lambda: out.append(call(*args, **kwargs)), daemon=True)
    worker.start()
    worker.join(60)
    assert out, f"{call.__name__} did not return: it waits on something it opened"
    return out[0]


def _sparse(path, size: int) -> None:
    path.unlink(missing_ok=True)
    with open(path, "wb") as fh:
        fh.truncate(size)


def _codes(report) -> dict[Code, list[str]]:
    found: dict[Code, list[str]] = {}
    for p in report.problems:
        found.setdefault(p.code, []).append(p.what)
    return found


def test_a_root_that_is_a_fifo_or_a_link_to_a_device_is_named_never_waited_on(snapshot, signed_lake):
    folder, trusted, *_ = snapshot
    later = folder / "roots" / f"day={DAY + dt.timedelta(days=5)}.json"
    os.mkfifo(later)
    report = _finishes(verify_export, folder, Trust.from_public_key_file(trusted))
    assert f"root file unreadable: roots/{later.name} (not a regular file (a FIFO, a device or a folder))" in \
        _codes(report)[Code.ROOT_UNREADABLE]
    later.unlink()
    later.symlink_to("/dev/zero")  # read whole, it never ends
    report = _finishes(verify_export, folder, Trust.from_public_key_file(trusted))
    assert f"root file unreadable: roots/{later.name} (a link, not a file)" in _codes(report)[Code.ROOT_UNREADABLE]
    # The lake's verify and the Dagster check's verify_days read roots the same way.
    day = DAY + dt.timedelta(days=2)
    root = signed_lake.root_file(day)
    root.unlink()
    os.mkfifo(root)
    report = _finishes(verify_lake, signed_lake)
    assert any("not a regular file" in w for w in _codes(report)[Code.ROOT_UNREADABLE])
    problems = _finishes(verify_days, signed_lake, [day], read_published_key(signed_lake))
    assert [p.what for p in problems if p.code is Code.ROOT_UNREADABLE] == [
        f"root file unreadable: roots/day={day}.json (not a regular file (a FIFO, a device or a folder))"]


def test_files_larger_than_any_such_file_are_named_never_read_whole(snapshot):
    folder, trusted, *_ = snapshot
    sums = folder / "SHA256SUMS"
    lines = sums.read_text().splitlines()
    proof = next(line[66:] for line in lines if line[66:].startswith("proofs/"))
    sums.write_text("".join(f"{line}\n" for line in lines if line[66:] not in (proof, "7maps.json", "WITHHELD.txt")))
    _sparse(folder / proof, HUGE)
    _sparse(folder / "7maps.json", HUGE)
    _sparse(folder / "WITHHELD.txt", HUGE)
    tiles = folder / "log" / "tile" / "0"
    partial = next(tiles.glob("000.p/*"))
    partial.unlink()
    _sparse(tiles / "000", HUGE)  # a "full tile" to take the prefix of
    report = verify_export(folder, Trust.from_public_key_file(trusted))
    found = _codes(report)
    assert found[Code.PROOF_INVALID] == [f"proof of {proof[7:-11]} cannot be read (larger than "
                                         f"{MAX_PROOF_BYTES + 1:,} bytes)"]
    assert found[Code.WITHHELD_UNREADABLE] == [f"WITHHELD.txt cannot be read (larger than {MAX_LIST_BYTES:,} bytes)"]
    assert f"tile log/tile/0/000.p/{partial.name} is missing" in found[Code.TILE_MISSING]
    assert [n for n in report.notes if n.startswith("the snapshot's copy of the key cannot be read (") and
            f"larger than {MAX_KEY_BYTES:,} bytes" in n]
    unpinned = verify_export(folder)  # its own 7maps.json the only key
    assert [p.code for p in unpinned.problems] == [Code.KEY_UNREADABLE]
    _sparse(sums, HUGE)
    assert _codes(verify_export(folder, Trust.from_public_key_file(trusted)))[Code.SUMS_MISSING] == [
        f"SHA256SUMS cannot be read (larger than {MAX_LIST_BYTES:,} bytes)"]


def test_a_name_too_long_for_the_system_is_a_malformed_line_not_a_usage_error(snapshot, capsys):
    folder, trusted, *_ = snapshot
    with open(folder / "SHA256SUMS", "a") as fh:
        fh.write(f"{'0' * 64}  curated/{'x' * 300}.parquet\n")
    report = verify_export(folder, Trust.from_public_key_file(trusted))
    assert [w for w in _codes(report)[Code.SUMS_MALFORMED] if "cannot be a file here" in w]
    assert main(["verify", "--export", str(folder), "--public-key", str(trusted)]) == 1  # a verdict, not exit 2


def test_files_beside_the_signed_ones_and_descriptions_naming_them_are_named(snapshot):
    """helper-93's doctored copy: a changed table under proofs/, the descriptions pointed at it, SHA256SUMS
    rewritten; every signed file untouched. And what else a reader of roots/ or log/ might take."""
    folder, trusted, *_ = snapshot
    table = next(folder.glob("curated/daily_status/day=*/part-0.parquet"))
    rel = table.relative_to(folder).as_posix()
    doctored = f"proofs/{rel}"
    (folder / doctored).write_bytes(table.read_bytes() + b"\0")
    package = json.loads((folder / "datapackage.json").read_text())
    (resource,) = [r for r in package["resources"] if r["path"] == rel]
    resource["path"] = doctored
    package["resources"].append({"name": "inline", "data": [{"code": "o"}]})
    (folder / "datapackage.json").write_text(json.dumps(package))
    croissant = json.loads((folder / "croissant.json").read_text())
    for item in croissant["distribution"]:
        if item.get("contentUrl") == rel:
            item["contentUrl"] = doctored
    (folder / "croissant.json").write_text(json.dumps(croissant))
    (folder / "roots" / f"day={DAY + dt.timedelta(days=1)}.v2.json").write_text("{}")
    (folder / "log" / "ds.parquet").write_bytes(b"PAR1")
    (folder / "log" / "tile" / "9").mkdir()
    (folder / "log" / "tile" / "9" / "x").write_bytes(b"")
    _rewrite_sums(folder)
    report = verify_export(folder, Trust.from_public_key_file(trusted))
    found = _codes(report)
    assert set(found[Code.STRAY]) == {f"not the proof of a signed file this snapshot holds: {doctored}",
                                      f"not a root document in roots/: roots/day={DAY + dt.timedelta(days=1)}.v2.json",
                                      "not part of a log (checkpoint, vkey, tile/): log/ds.parquet"}
    assert found[Code.NOT_A_TILE] == ["log/tile/9/x is not a tile path"]
    assert sorted(found[Code.DESCRIPTION_WRONG]) == sorted([
        f"datapackage.json: resource {resource['name']!r} names {doctored!r}, which is no file the snapshot's roots "
        "sign",
        f"datapackage.json: resource {resource['name']!r} is named for another file than {doctored}",
        f"croissant.json: distribution {rel!r} is named for another file than {doctored}",
        f"datapackage.json: resources[{len(package['resources']) - 1}] (no resource of a file) names no file of the "
        "snapshot",
        f"croissant.json: distribution {rel!r} names {doctored!r}, which is no file the snapshot's roots sign"])
    assert "README.md, datapackage.json and croissant.json are not signed" in report.notes[-1]


def _rewrite_sums(folder) -> None:
    """SHA256SUMS over every file, as whoever doctored the copy would write it."""
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                   if p.is_file() and p.name != "SHA256SUMS")
    (folder / "SHA256SUMS").write_text("".join(f"{sha256_file(folder / f)}  {f}\n" for f in files))


def test_a_signed_file_left_out_of_sha256sums_is_named_so_not_as_changed(snapshot):
    folder, trusted, *_ = snapshot
    sums = folder / "SHA256SUMS"
    lines = sums.read_text().splitlines()
    left = next(line for line in lines if line[66:].startswith("curated/"))
    sums.write_text("".join(f"{line}\n" for line in lines if line != left))
    found = _codes(verify_export(folder, Trust.from_public_key_file(trusted)))
    assert found == {Code.FILE_NOT_LISTED: [f"file not listed in SHA256SUMS: {left[66:]}"]}


def test_the_key_given_from_inside_the_snapshot_is_said_to_prove_nothing(snapshot, capsys):
    folder, trusted, *_ = snapshot
    own = folder / "7maps.json"
    report = verify_export(folder, Trust.from_public_key_file(own))
    assert report.ok and report.notes[0] == (
        f"the key given ({own}) lies in the snapshot: it shows only that the snapshot agrees with itself, as a "
        "forged one would; give a key obtained apart from it")
    assert not [n for n in verify_export(folder, Trust.from_public_key_file(trusted)).notes if "lies in" in n]
    assert main(["verify", "--export", str(folder), "--public-key", str(own)]) == 0
    assert "lies in the snapshot" in capsys.readouterr().out
    vkey = (folder / "log" / "vkey").read_text().strip()
    assert main(["verify", "--export", str(folder), "--vkey", str(folder / "log" / "vkey")]) == 0
    assert f"the key given ({folder / 'log' / 'vkey'}) lies in the snapshot" in capsys.readouterr().out
    assert main(["verify", "--export", str(folder), "--vkey", vkey]) == 0  # the key itself: no file to place
    assert "lies in" not in capsys.readouterr().out


def test_a_vkey_file_that_is_no_key_is_one_line_never_a_hang(tmp_path, snapshot, capsys):
    folder, *_ = snapshot
    fifo, huge = tmp_path / "vkey-fifo", tmp_path / "vkey-huge"
    os.mkfifo(fifo)
    _sparse(huge, HUGE)
    for given in (fifo, huge, "x" * 5000):
        assert _finishes(main, ["verify", "--export", str(folder), "--vkey", str(given)]) == 2
        said = capsys.readouterr()
        assert len((said.out + said.err).strip().splitlines()) == 1, said


def test_a_trusted_key_file_larger_than_a_key_is_one_line(tmp_path, snapshot, capsys):
    folder, *_ = snapshot
    key = tmp_path / "key.pem"
    _sparse(key, HUGE)
    assert main(["verify", "--export", str(folder), "--public-key", str(key)]) == 2
    assert f"larger than {MAX_KEY_BYTES:,} bytes" in capsys.readouterr().err


def test_a_signed_files_place_taken_by_a_fifo_or_a_link_is_named_never_hashed(snapshot, signed_lake):
    """helper-98: a FIFO in a signed file's place, left out of SHA256SUMS, hung the snapshot's verify (hashed to
    compare with its line), and a link to /proc/self/pagemap (a "regular file" of 256 GiB, through the link) hung it
    and the lake's verify and the Dagster check: a link is followed by nothing that hashes."""
    folder, trusted, *_ = snapshot
    sums = folder / "SHA256SUMS"
    lines = sums.read_text().splitlines()
    fifo, linked = [line[66:] for line in lines if line[66:].startswith("curated/")][:2]
    sums.write_text("".join(f"{line}\n" for line in lines if line[66:] != fifo))
    (folder / fifo).unlink()
    os.mkfifo(folder / fifo)
    (folder / linked).unlink()
    (folder / linked).symlink_to("/proc/self/pagemap")
    found = _codes(_finishes(verify_export, folder, Trust.from_public_key_file(trusted)))
    assert any(w.startswith(f"file differs from its signed line: {fifo}") for w in found[Code.FILE_CHANGED])
    assert f"listed in SHA256SUMS but missing: {linked}" in found[Code.FILE_MISSING]
    assert f"a link in the snapshot: {linked}" in found[Code.STRAY]
    day = DAY + dt.timedelta(days=1)
    planted = signed_lake.curated_file("daily_status", day).parent / "part-1.parquet"
    planted.symlink_to("/proc/self/pagemap")
    report = _finishes(verify_lake, signed_lake)
    assert [p.code for p in report.problems] == [Code.STRAY] and planted.name in report.problems[0].what
    problems = _finishes(verify_days, signed_lake, [day], read_published_key(signed_lake))
    assert [p.code for p in problems] == [Code.STRAY]


@pytest.mark.parametrize("doctor, said", [
    (lambda c: {**c, "distribution": c["distribution"][0]}, "its distribution is not a list of files"),
    (lambda c: {**c, "recordSet": [{**c["recordSet"][0], "data": [{"code": "o"}]}, *c["recordSet"][1:]]},
     "a record set carries rows of its own (data)"),
    (lambda c: {**c, "@context": {**c["@context"], "files": "sc:distribution"}}, "its @context names 'distribution' "
     "'files'"),
    (lambda c: {**c, "sc:distribution": c["distribution"]}, "a key spelled as a prefixed name or an IRI "
     "('sc:distribution')"),
    # helper-101 F4: any term renamed, the context given as a list or inside a node (mlcroissant reads a node's own)
    (lambda c: {**c, "@context": {**c["@context"], "column": "cr:fileProperty"}}, "its @context names "
     "'fileProperty' 'column'"),
    (lambda c: {**c, "@context": [c["@context"], {"rows": {"@id": "cr:data", "@type": "@json"}}]},
     "its @context is not one JSON object of its own"),
    (lambda c: {**c, "recordSet": [{**c["recordSet"][0], "@context": {"rows": {"@id": "cr:data", "@type": "@json"}},
                                    "rows": [{"code": "o"}]}, *c["recordSet"][1:]]},
     "a node has a @context of its own"),
])
def test_a_croissant_description_a_loader_reads_past_the_checks_is_named(snapshot, doctor, said):
    """helper-98: a distribution given as one object (not a list) was never looked at, so a FileObject naming
    another file verified OK, and mlcroissant read its rows; so did a record set's inline rows. JSON-LD can also say
    `distribution` by another name: the check reads keys, so renamed or prefixed keys are refused."""
    folder, trusted, *_ = snapshot
    croissant = json.loads((folder / "croissant.json").read_text())
    (folder / "croissant.json").write_text(json.dumps(doctor(croissant)))
    _rewrite_sums(folder)
    found = _codes(verify_export(folder, Trust.from_public_key_file(trusted)))
    assert f"croissant.json: {said}" in found[Code.DESCRIPTION_WRONG]


def _swap(items: list, key: str, one: str, other: str) -> None:
    """Each of the two items whose `key` is `one` or `other` gets the other's."""
    for item in items:
        if item.get(key) in (one, other):
            item[key] = other if item[key] == one else one


def _two(folder, pattern: str) -> tuple[str, str]:
    first, second, *_ = sorted(p.relative_to(folder).as_posix() for p in folder.glob(pattern))
    return first, second


@pytest.mark.parametrize("relabel", [
    "days", "tables", "twice", "record set", "columns", "missing", "later column", "types"])
def test_a_description_that_reads_a_signed_file_under_another_files_name_is_named(snapshot, relabel):
    """Every file named is signed, with its signed SHA-256, yet a loader would read one day's rows as another's (or
    one table's as another's, or a file twice): the names a description gives must be the ones its paths give."""
    folder, trusted, *_ = snapshot
    package = json.loads((folder / "datapackage.json").read_text())
    croissant = json.loads((folder / "croissant.json").read_text())
    resources, distribution = package["resources"], croissant["distribution"]
    one, other = _two(folder, "curated/daily_status/day=*/part-0.parquet")
    if relabel == "tables":
        other = _two(folder, "curated/findings/day=*/part-0.parquet")[0]
    said: list[str] = []
    if relabel in ("days", "tables"):
        hashes = {r["path"]: r["hash"] for r in resources}
        _swap(resources, "path", one, other)
        for r in resources:  # each resource's hash follows its new file: the signed one
            r["hash"] = hashes[r["path"]]
        _swap(distribution, "contentUrl", one, other)
        _swap(distribution, "sha256", *(next(o["sha256"] for o in distribution if o.get("contentUrl") == rel)
                                         for rel in (other, one)))
        said = [f"datapackage.json: resource {_name(resources, rel)!r} is named for another file than {rel}"
                for rel in (one, other)]
        said += [f"croissant.json: distribution {ident!r} is named for another file than {rel}"
                 for ident, rel in ((other, one), (one, other))]
        if relabel == "tables":
            for fileset in ("daily_status-files", "findings-files"):
                members = next(o for o in distribution if o["@id"] == fileset)
                members["includes"] = [{one: other, other: one}.get(rel, rel) for rel in members["includes"]]
                said.append(f"croissant.json: distribution {fileset!r} holds files of another table than its name "
                            "says")
            said += [f"datapackage.json: resource {_name(resources, rel)!r} names other columns than its file's, or "
                     "in another order" for rel in (one, other)]  # each schema is its own table's (helper-101 F1)
    elif relabel == "twice":  # a table's FileSet given twice (a file named twice: the test after this one)
        fileset = next(o for o in distribution if o["@id"] == "daily_status-files")
        distribution.append(dict(fileset))
        said = ["croissant.json: the FileSet 'daily_status-files' is given twice"] + [
            f"croissant.json: distribution 'daily_status-files' names {rel} again (distribution 'daily_status-files' "
            "does): a loader reads its rows twice" for rel in fileset["includes"]]
    elif relabel == "record set":
        record_set = next(rs for rs in croissant["recordSet"] if rs["@id"] == "daily_status")
        record_set["field"][0]["source"] = {"field": "findings/server_key"}
        said = ["croissant.json: record set 'daily_status' reads other than its own table's files"]
    else:
        said = _relabel_columns(relabel, resources, croissant, one)
    (folder / "datapackage.json").write_text(json.dumps(package))
    (folder / "croissant.json").write_text(json.dumps(croissant))
    _rewrite_sums(folder)
    found = _codes(verify_export(folder, Trust.from_public_key_file(trusted)))
    assert sorted(found.pop(Code.DESCRIPTION_WRONG, [])) == sorted(said) and not found


def _relabel_columns(relabel: str, resources: list[dict], croissant: dict, one: str) -> list[str]:
    """helper-101 F1: a description that reads a signed file's columns under other names, or its values as nulls;
    and one that describes a file as a snapshot before 2026-12-04 did (its table's later schema), which is none."""
    said: list[str] = []
    if relabel == "columns":  # helper-101 F1: each row's reason read as its shown_status, and back
        for r in resources:
            if r["path"] == one:
                _swap(r["schema"]["fields"], "name", "reason", "shown_status")
        record_set = next(rs for rs in croissant["recordSet"] if rs["@id"] == "daily_status")
        _swap([f["source"]["extract"] for f in record_set["field"]], "column", "reason", "shown_status")
        said = [f"datapackage.json: resource {_name(resources, one)!r} names other columns than its file's, or in "
                "another order",
                "croissant.json: record set 'daily_status': field 'daily_status/shown_status' reads another column "
                "than its name gives, or reads it otherwise than as it is"]
    elif relabel == "types":  # helper-101 F3: mlcroissant read handshake_ms 250 as True
        record_set = next(rs for rs in croissant["recordSet"] if rs["@id"] == "daily_status")
        next(f for f in record_set["field"] if f["name"] == "handshake_ms")["dataType"] = "sc:Boolean"
        said = ["croissant.json: record set 'daily_status': field 'daily_status/handshake_ms' is typed otherwise than "
                "its column (a loader would read its values converted)"]
    elif relabel == "later column":  # as a snapshot before 2026-12-04 described a file: its table's schema of then
        for r in resources:
            if r["path"] == one:
                r["schema"]["fields"].append({"name": "added_later", "type": "string"})
    else:  # a value of the file read as a null
        for r in resources:
            if r["path"] == one:
                next(f for f in r["schema"]["fields"] if f["name"] == "shown_status")["missingValues"] = ["down"]
        said = [f"datapackage.json: resource {_name(resources, one)!r} calls a value of its file missing"]
    return said


def _name(resources: list[dict], path: str) -> str:
    return next(r["name"] for r in resources if r["path"] == path)


def test_a_sha256sums_line_naming_a_file_through_a_dot_segment_is_malformed(snapshot):
    """helper-99: `./curated/...` named a signed file under a key of its own, so the line verified OK (no root signs
    the name, and it does not start with curated/), and a list of a million such names hashed the file a million
    times. A snapshot's SHA256SUMS names each file by its own path; a `.` segment is no such path."""
    folder, trusted, *_ = snapshot
    lines = (folder / "SHA256SUMS").read_text().splitlines()
    digest, rel = next((line[:64], line[66:]) for line in lines if line[66:].startswith("curated/"))
    dotted = [f"./{rel}", rel.replace("/", "/./", 1), f"{rel.rsplit('/', 1)[0]}/./{rel.rsplit('/', 1)[1]}"]
    (folder / "SHA256SUMS").write_text("".join(f"{line}\n" for line in lines + [f"{digest}  {d}" for d in dotted]))
    found = _codes(verify_export(folder, Trust.from_public_key_file(trusted)))
    assert found[Code.SUMS_MALFORMED] == [f"SHA256SUMS line {len(lines) + 1 + i} is not '<sha256>  <relative path>': "
                                          f"{f'{digest}  {d}'[:100]!r}" for i, d in enumerate(dotted)]
    assert Code.FILE_NOT_SIGNED not in found  # nothing more is said of a line that names no file


def test_a_file_under_many_names_is_read_once(snapshot, monkeypatch):
    """helper-99: hard links cost no disk, and each one SHA256SUMS listed was hashed in full (300 links to a signed
    8.9 MB file: 2.7 GB read; ext4 allows 65,000 a file). Each file's bytes are read once, whatever its names; each
    name is still judged by its own line."""
    folder, trusted, *_ = snapshot
    lines = (folder / "SHA256SUMS").read_text().splitlines()
    digest, rel = next((line[:64], line[66:]) for line in lines if line[66:].startswith("curated/daily_status/"))
    links = [rel.replace("part-0", f"part-{i}") for i in range(1, 21)]
    for name in links:
        os.link(folder / rel, folder / name)
    (folder / "SHA256SUMS").write_text("".join(f"{line}\n" for line in lines + [f"{digest}  {n}" for n in links]))
    read: list[str] = []
    hashed = export_check.sha256_file
    monkeypatch.setattr(export_check, "sha256_file", lambda path: read.append(str(path)) or hashed(path))
    found = _codes(verify_export(folder, Trust.from_public_key_file(trusted)))
    assert [p for p in read if os.path.samefile(p, folder / rel)] == [str(folder / rel)]
    assert sorted(found[Code.FILE_NOT_SIGNED]) == sorted(f"data file not in any signed root: {n}" for n in links)
    assert set(found) == {Code.FILE_NOT_SIGNED}


def test_a_description_naming_a_file_twice_or_a_key_twice_is_named(snapshot):
    """helper-99: a datapackage.json whose 154 resources were repeated to 90,000 (each a signed file with its signed
    SHA-256) verified OK, and a loader reading it reads each table's rows hundreds of times; so did a datapackage.json
    giving `resources` twice, the first naming ../../etc/passwd, which Python's json drops and a reader taking the
    first key reads."""
    folder, trusted, *_ = snapshot
    package = json.loads((folder / "datapackage.json").read_text())
    first = package["resources"][0]
    package["resources"].append({**first, "name": "again"})
    croissant = json.loads((folder / "croissant.json").read_text())
    files = [d for d in croissant["distribution"] if d["@type"] == "cr:FileObject"]
    fileset = next(d for d in croissant["distribution"] if d["@type"] == "cr:FileSet")
    croissant["distribution"] += [{**files[0], "@id": "again"}, {**fileset, "@id": "again-set"},
                                  {**fileset, "@id": "twice-in-one", "includes": [fileset["includes"][0]] * 2}]
    (folder / "croissant.json").write_text(json.dumps(croissant))
    evil = json.dumps([{"name": "x", "path": "../../etc/passwd", "format": "parquet"}])
    (folder / "datapackage.json").write_text('{"resources": ' + evil + ", " + json.dumps(package)[1:])
    _rewrite_sums(folder)
    found = _codes(verify_export(folder, Trust.from_public_key_file(trusted)))
    assert found[Code.DESCRIPTION_WRONG][0] == ("datapackage.json cannot be read (the key 'resources' is given twice "
                                                "in one object: readers differ on which one they take)")
    (folder / "datapackage.json").write_text(json.dumps(package))
    _rewrite_sums(folder)
    found = _codes(verify_export(folder, Trust.from_public_key_file(trusted)))
    assert sorted(found[Code.DESCRIPTION_WRONG]) == sorted([
        f"datapackage.json: resource 'again' names {first['path']} again (resource {first['name']!r} does): a loader "
        "reads its rows twice",
        f"croissant.json: distribution 'again' names {files[0]['contentUrl']} again (distribution "
        f"{files[0]['@id']!r} does): a loader reads its rows twice"] + [
        f"croissant.json: distribution 'again-set' names {rel} again (distribution {fileset['@id']!r} does): a "
        "loader reads its rows twice" for rel in fileset["includes"]] + [
        f"croissant.json: distribution 'twice-in-one' names {fileset['includes'][0]} again (distribution "
        f"{fileset['@id']!r} does): a loader reads its rows twice"] * 2 + [
        # and each copy under a name its path does not give (test_a_description_that_reads_a_signed_file_under...)
        f"datapackage.json: resource 'again' is named for another file than {first['path']}",
        f"croissant.json: distribution 'again' is named for another file than {files[0]['contentUrl']}",
        "croissant.json: distribution 'again-set' holds files of another table than its name says",
        "croissant.json: distribution 'twice-in-one' holds files of another table than its name says"])


def test_a_file_named_through_a_linked_folder_is_never_read(snapshot, tmp_path, monkeypatch):
    """helper-99: helper-98 stopped a link in a file's own place, but a SHA256SUMS line naming a file through a linked
    folder above it (curated/evil -> /proc/self, `curated/evil/pagemap`) was followed, and verify read pagemap, 23.7
    GB in two minutes, never ending. A snapshot's files are reached through no link; the link itself is stray."""
    folder, trusted, *_ = snapshot
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.parquet").write_bytes(b"PAR1")
    (folder / "curated" / "elsewhere").symlink_to(outside, target_is_directory=True)
    (folder / "curated" / "evil").symlink_to("/proc/self", target_is_directory=True)
    listed = {"curated/elsewhere/x.parquet": sha256_file(outside / "x.parquet"), "curated/evil/pagemap": "0" * 64}
    with open(folder / "SHA256SUMS", "a") as fh:
        fh.write("".join(f"{digest}  {rel}\n" for rel, digest in listed.items()))
    read: list[str] = []
    hashed = export_check.sha256_file
    monkeypatch.setattr(export_check, "sha256_file", lambda path: read.append(str(path)) or hashed(path))
    found = _codes(_finishes(verify_export, folder, Trust.from_public_key_file(trusted)))
    assert not [p for p in read if "elsewhere" in p or "evil" in p]
    assert sorted(found[Code.FILE_MISSING]) == [f"listed in SHA256SUMS but missing: {rel}" for rel in sorted(listed)]
    assert sorted(found[Code.STRAY]) == [f"a link in the snapshot: curated/{name}" for name in ("elsewhere", "evil")]


def test_a_signed_file_turned_fifo_under_its_signed_line_is_never_opened_for_its_columns(snapshot):
    """The column checks (helper-101 F1) read each held file's footer: a signed file replaced by a FIFO, or by a link
    to one, that SHA256SUMS still lists with its signed digest must be named missing, and never opened again."""
    folder, trusted, *_ = snapshot
    rel = next(folder.glob("curated/daily_status/day=*/part-0.parquet")).relative_to(folder).as_posix()
    (folder / rel).unlink()
    os.mkfifo(folder / rel)
    report = _finishes(verify_export, folder, Trust.from_public_key_file(trusted))
    assert f"listed in SHA256SUMS but missing: {rel}" in _codes(report)[Code.FILE_MISSING]


def test_withheld_lines_that_withhold_nothing_are_said_to_be_read_as_no_line(snapshot):
    """helper-99: WITHHELD.txt lines naming files no root signs, or files the snapshot holds, verified OK without a
    word. They change nothing verify checks (only a signed file the snapshot lacks can be withheld), and a note
    says so, since WITHHELD.txt is not signed."""
    folder, trusted, *_ = snapshot
    held = next(folder.glob("curated/daily_status/day=*/part-0.parquet")).relative_to(folder).as_posix()
    invented = [f"curated/daily_status/day=2026-01-0{i}/part-0.parquet" for i in range(1, 4)]
    with open(folder / "WITHHELD.txt", "a") as fh:
        fh.write("".join(f"{rel}\tsaid withheld\n" for rel in [*invented, held]))
    _rewrite_sums(folder)
    report = verify_export(folder, Trust.from_public_key_file(trusted))
    assert report.ok
    (note,) = [n for n in report.notes if n.startswith("WITHHELD.txt lists")]
    assert note == ("WITHHELD.txt lists 4 file(s) it withholds nothing of (no root of these days signs them, or the "
                    f"snapshot holds them), read as no line: {sorted([*invented, held])[0]} and 3 more")
