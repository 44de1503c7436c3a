"""The log and the one verifier on a real lake: every signed line logged, proofs, log check, the
rewrite-with-a-new-key attack, malformed documents, forks against a remembered state, two racing signers,
witnesses, and our own day roots as a known answer."""

from __future__ import annotations

import base64
import datetime as dt
import json
import multiprocessing
import shutil
from pathlib import Path

import pytest
from conftest import DAY
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_integrity import NOW, _fake_day, build_day

from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.integrity import keys, tiles
from sevenmaps_pipeline.integrity.checkpoint import open_checkpoint
from sevenmaps_pipeline.integrity.log import LogConflict, prepare, publish, read_state
from sevenmaps_pipeline.integrity.manifest import compute_root, day_lines
from sevenmaps_pipeline.integrity.note import COSIGNATURE_V1, parse_vkey, verifier_for
from sevenmaps_pipeline.integrity.proof import verify_proof
from sevenmaps_pipeline.integrity.report import EXIT_BEHIND, EXIT_FORK, Code, Trust
from sevenmaps_pipeline.integrity.roots import AlreadySignedError, read_root, sign_through
from sevenmaps_pipeline.integrity.verify import check_log_only, verify_lake
from sevenmaps_pipeline.integrity.witness import Witness, WitnessConfig, serve
from sevenmaps_pipeline.lake.paths import LakePaths

VECTORS = Path(__file__).parent / "vectors"
DAYS = [DAY + dt.timedelta(days=i) for i in range(3)]


@pytest.fixture(scope="module")
def signed_template(tmp_path_factory):
    """The days built and signed once for the module (each test gets its own copy: many tamper with it)."""
    root = tmp_path_factory.mktemp("signed")
    lake = LakePaths.at(root / "lake")
    key = keys.generate_key(root / "keys" / "signing.pem")
    for d in DAYS:
        build_day(lake, d)
    sign_through(lake, DAYS[-1], key, now=NOW)
    return lake, key


@pytest.fixture
def signed_lake(signed_template, lake, signing_key):
    """The signed days in this test's own lake, signed by this test's key (copies of the module's; file
    times kept, warehouses left out since their views name the template's paths)."""
    template, key = signed_template
    shutil.copytree(template.root, lake.root, ignore=shutil.ignore_patterns("*.duckdb", ".warehouse.sha256"))
    signing_key.write_bytes(key.read_bytes())
    return lake


@pytest.fixture
def trusted(signed_lake, tmp_path) -> Path:
    """The public key as a user would have saved it from a source they trust."""
    path = tmp_path / "trusted-7maps.json"
    shutil.copyfile(signed_lake.well_known, path)
    return path


def _vkey(lake: LakePaths) -> str:
    return (lake.root / "log" / "vkey").read_text().strip()


def test_every_signed_line_is_one_log_entry_in_chain_order(signed_lake):
    state = read_state(signed_lake)
    lines = [line for d in DAYS for line in read_root(signed_lake, d)["lines"]]
    assert [e.decode() for e in state.entries] == lines
    verifier, problem = parse_vkey(_vkey(signed_lake))
    assert problem is None and verifier.name == "sevenmaps.invalid/log"
    opened, problem = open_checkpoint((signed_lake.root / "log" / "checkpoint").read_bytes(), verifier, verifier.name)
    assert problem is None and opened[0].size == len(lines) and opened[0].root == state.tree.root()
    # Each root records the checkpoint that includes its day, and where its lines start.
    at = 0
    for d in DAYS:
        record = read_root(signed_lake, d)["log"]
        assert record["first_index"] == at
        at += len(read_root(signed_lake, d)["lines"])
        assert record["tree_size"] == at
        cp, _ = open_checkpoint(record["checkpoint"], verifier, verifier.name)[0]
        assert cp.size == at and cp.root == state.tree.root(at)
    well_known = json.loads(signed_lake.well_known.read_text())["integrity"]
    assert well_known["log_vkey"] == _vkey(signed_lake) and well_known["log_origin"] == verifier.name
    # The tiles are C2SP paths: one partial level-0 tile and bundle for this size, and the earlier sizes'.
    tiles = sorted(p.relative_to(signed_lake.root / "log").as_posix()
                   for p in (signed_lake.root / "log" / "tile").rglob("*") if p.is_file())
    sizes = [read_root(signed_lake, d)["log"]["tree_size"] for d in DAYS]
    assert tiles == sorted([f"tile/0/000.p/{n}" for n in sizes] + [f"tile/entries/000.p/{n}" for n in sizes])


def test_verify_with_a_pinned_key_and_log_check(signed_lake, trusted, capsys):
    report = verify_lake(signed_lake, Trust.from_public_key_file(trusted))
    assert report.ok and report.days_verified == DAYS and report.checkpoint.size == read_state(signed_lake).size
    assert not report.notes  # pinned: no warning about trusting the lake's own key
    unpinned = verify_lake(signed_lake)
    assert unpinned.ok and "the lake's own public key" in unpinned.notes[0]
    report, compared = check_log_only(signed_lake, Trust.from_vkey(_vkey(signed_lake)))
    assert report.ok and compared == 6
    assert main(["--lake", str(signed_lake.root), "log", "check", "--vkey", _vkey(signed_lake)]) == 0
    assert "6 tile and entry files re-derived from" in capsys.readouterr().out


def test_log_check_names_a_changed_tile_and_entries(signed_lake):
    size = read_state(signed_lake).size
    tile = signed_lake.root / "log" / "tile" / "0" / f"000.p/{size}"
    data = bytearray(tile.read_bytes())
    data[5] ^= 1
    tile.write_bytes(bytes(data))
    report, _ = check_log_only(signed_lake, Trust.from_vkey(_vkey(signed_lake)))
    assert not report.ok
    assert any(p.file == f"log/tile/0/000.p/{size}" for p in report.problems), report.summary()
    tile.write_bytes(bytes(data[:5] + bytes([data[5] ^ 1]) + data[6:]))
    # the first day's bundle: the smallest partial entry bundle (its size is that day's entry count)
    old = min((signed_lake.root / "log" / "tile" / "entries" / "000.p").iterdir(), key=lambda p: int(p.name))
    old.write_bytes(old.read_bytes()[:-1] + b"X")
    report, _ = check_log_only(signed_lake, Trust.from_vkey(_vkey(signed_lake)))
    assert [p.file for p in report.problems] == [f"log/tile/entries/000.p/{old.name}"]


def test_prove_and_verify_proof_with_only_the_vkey(signed_lake, tmp_path, capsys):
    rel = f"curated/daily_status/day={DAYS[1]}/part-0.parquet"
    out = tmp_path / "status.tlog-proof"
    assert main(["--lake", str(signed_lake.root), "prove", rel, "--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("c2sp.org/tlog-proof@v1\nextra ")
    result, problem = verify_proof(text, parse_vkey(_vkey(signed_lake))[0])
    assert problem is None and result.line.endswith("  " + rel)
    # The CLI needs nothing but the proof, the vkey and (optionally) the file itself.
    copy = tmp_path / "alone" / "part-0.parquet"
    copy.parent.mkdir()
    shutil.copyfile(signed_lake.root / rel, copy)
    assert main(["verify-proof", str(out), "--vkey", _vkey(signed_lake), "--data", str(copy)]) == 0
    copy.write_bytes(copy.read_bytes() + b"x")
    assert main(["verify-proof", str(out), "--vkey", _vkey(signed_lake), "--data", str(copy)]) == 1
    stranger = verifier_for("sevenmaps.invalid/log", Ed25519PrivateKey.generate().public_key()).vkey
    assert main(["verify-proof", str(out), "--vkey", stranger]) == 1
    assert "no signature from a trusted key" in capsys.readouterr().out
    assert main(["--lake", str(signed_lake.root), "prove", "curated/daily_status/day=1999-01-01/part-0.parquet"]) == 2
    assert "is in no signed day's lines" in capsys.readouterr().err


def _rewrite_history_with_a_new_key(lake: LakePaths, tmp_path: Path) -> None:
    """An attacker who can write the lake but lacks the key: change one signed file, recompute that day's
    line and every later root, sign all with a new key, rebuild the log with it, publish the new key."""
    victim = lake.curated_file("daily_status", DAYS[1])
    victim.write_bytes(victim.read_bytes() + b"tampered")
    evil = tmp_path / "evil.pem"
    keys.generate_key(evil)
    shutil.rmtree(lake.root / "log")
    for d in DAYS:
        lake.root_file(d).unlink()
    lake.well_known.unlink()
    sign_through(lake, DAYS[-1], evil, now=NOW)


def test_the_rewrite_with_a_new_key_attack_fails_against_a_pinned_key(signed_lake, trusted, tmp_path, capsys):
    vkey = _vkey(signed_lake)
    _rewrite_history_with_a_new_key(signed_lake, tmp_path)
    assert verify_lake(signed_lake).ok  # trusting the lake's own copy is exactly what the attacker wants
    report = verify_lake(signed_lake, Trust.from_public_key_file(trusted))
    assert not report.ok and report.bad_day == DAYS[0]
    assert report.problem == f"bad signature in roots/day={DAYS[0]}.json: not signed by the trusted key"
    assert report.problems[0].code is Code.BAD_SIGNATURE
    report = verify_lake(signed_lake, Trust.from_vkey(vkey))
    assert not report.ok and any("log/checkpoint: no signature from a trusted key" in str(p) for p in report.problems)
    assert main(["--lake", str(signed_lake.root), "verify", "--public-key", str(trusted)]) == 1
    assert "FAILED at 2026-11-10: bad signature" in capsys.readouterr().out


def test_a_remembered_state_turns_a_new_key_into_a_fork(signed_lake, tmp_path, capsys):
    state = tmp_path / "state.json"
    assert main(["--lake", str(signed_lake.root), "verify", "--state", str(state)]) == 0
    remembered = json.loads(state.read_text())
    assert remembered["vkey"] == _vkey(signed_lake) and remembered["size"] == read_state(signed_lake).size
    _rewrite_history_with_a_new_key(signed_lake, tmp_path)
    capsys.readouterr()
    assert main(["--lake", str(signed_lake.root), "verify", "--state", str(state)]) == EXIT_FORK
    out = capsys.readouterr().out
    assert out.startswith("FORK: the log's key changed: you last verified " + remembered["vkey"])
    assert f"last: size {remembered['size']} root {remembered['root']}" in out
    assert json.loads(state.read_text()) == remembered  # a failed run never moves the remembered state


def test_same_key_other_history_is_a_fork_and_growth_is_checked_for_consistency(lake, signing_key, tmp_path, capsys):
    for d in DAYS[:2]:
        build_day(lake, d)
    sign_through(lake, DAYS[1], signing_key, now=NOW)
    state = tmp_path / "state.json"
    assert verify_lake(lake, state_path=state).ok
    build_day(lake, DAYS[2])
    sign_through(lake, DAYS[2], signing_key, now=NOW)
    report = verify_lake(lake, state_path=state)  # grew: consistent with what was verified before
    assert report.ok and report.notes[0].startswith("consistent with the checkpoint you verified before")
    first = json.loads(state.read_text())
    # An insider with the key rewrites day 2 and re-signs it and day 3: same key, same size, other root.
    lake.curated_file("tools", DAYS[1]).write_bytes(b"rewritten")
    shutil.rmtree(lake.root / "log")
    for d in DAYS[1:]:
        lake.root_file(d).unlink()
    sign_through(lake, DAYS[2], signing_key, now=NOW)
    report = verify_lake(lake, state_path=state)
    assert report.fork and report.exit_code == EXIT_FORK
    fork = next(p for p in report.problems if p.fork)
    assert "same size, different root" in fork.what and first["root"] in fork.what
    assert fork.code is Code.SPLIT_VIEW
    assert read_state(lake).size == first["size"]


def test_a_forked_checkpoint_in_a_root_is_flagged(signed_lake, signing_key):
    doc = json.loads(signed_lake.root_file(DAYS[0]).read_text())
    key = keys.load_private_key(signing_key, signed_lake)
    state = read_state(signed_lake)
    # The first day's checkpoint re-signed over other lines: validly signed, but not a prefix of the log.
    from sevenmaps_pipeline.integrity.log import LogState
    from sevenmaps_pipeline.integrity.merkle import HashTree

    other = prepare(LogState(state.origin, [], HashTree(), None), ["0" * 64 + "  curated/x/day=2026-11-10/y"] * 17, key)
    doc["log"]["checkpoint"] = other.note_text
    signed_lake.root_file(DAYS[0]).write_text(json.dumps(doc))
    report = verify_lake(signed_lake)
    assert report.fork and report.bad_day == DAYS[0]
    assert "is not a prefix of the latest" in report.problem
    assert report.problems[0].code is Code.NOT_A_PREFIX


# --- malformed input never raises ---------------------------------------------------------------------


_json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                         max_size=3), max_leaves=8)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(["day", "root", "signature", "lines", "previous_root", "previous_day", "signed_at",
                              "log", "method", None]), value=_json_values, garbage=st.binary(max_size=60))
def test_a_malformed_root_document_is_a_named_problem(signed_lake, trusted, field, value, garbage):
    path = signed_lake.root_file(DAYS[1])
    original = path.read_bytes()
    try:
        if field is None:
            path.write_bytes(garbage)
        else:
            doc = json.loads(original)
            doc[field] = value
            path.write_text(json.dumps(doc))
        report = verify_lake(signed_lake, Trust.from_public_key_file(trusted))
        try:
            unchanged = json.loads(path.read_bytes()) == json.loads(original)
        except ValueError:
            unchanged = False
        if not unchanged:  # any change to what the document says, signed or not, is a named problem
            assert not report.ok
            assert any(p.day == DAYS[1] for p in report.problems) or report.problems[0].file.startswith("log")
            assert report.summary()
        else:
            assert report.ok
    finally:
        path.write_bytes(original)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, 400), junk=st.binary(max_size=40))
def test_a_malformed_checkpoint_is_a_named_problem(signed_lake, trusted, cut, junk):
    path = signed_lake.root / "log" / "checkpoint"
    original = path.read_bytes()
    try:
        path.write_bytes(original[:cut] + junk)
        report = verify_lake(signed_lake, Trust.from_public_key_file(trusted))
        if path.read_bytes() != original:
            assert not report.ok and any((p.file or "").startswith("log/") for p in report.problems)
    finally:
        path.write_bytes(original)


def test_unreadable_public_keys_are_named_not_raised(signed_lake, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"integrity": {"public_key_pem": 5}}')
    assert main(["--lake", str(signed_lake.root), "verify", "--public-key", str(bad)]) == 2
    assert "has no integrity.public_key_pem" in capsys.readouterr().err
    signed_lake.well_known.write_text("[]")
    report = verify_lake(signed_lake)
    assert not report.ok and "has no integrity.public_key_pem" in report.problem
    assert report.problems[0].code is Code.KEY_UNREADABLE
    assert main(["--lake", str(tmp_path / "nowhere"), "verify"]) == 2  # no lake there: an input error


# --- no fork at the source: two signers racing ---------------------------------------------------------


def _sign_in_process(lake_root: str, key: str, day: str, barrier, results) -> None:
    lake = LakePaths.at(lake_root)
    barrier.wait()
    try:
        signed = sign_through(lake, dt.date.fromisoformat(day), Path(key), now=NOW)
        results.put(("signed", [s.day.isoformat() for s in signed]))
    except AlreadySignedError as exc:
        results.put(("refused", str(exc)))


def test_two_racing_signers_publish_one_history(lake, signing_key):
    for d in DAYS:
        build_day(lake, d)
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_sign_in_process, args=(str(lake.root), str(signing_key), DAYS[-1].isoformat(),
                                                       barrier, results)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    outcomes = sorted(results.get(timeout=10) for _ in procs)
    assert outcomes[0][0] == "refused" and "already signed" in outcomes[0][1]
    assert outcomes[1] == ("signed", [d.isoformat() for d in DAYS])
    report = verify_lake(lake)
    assert report.ok and report.checkpoint.size == sum(len(read_root(lake, d)["lines"]) for d in DAYS)


def _append_in_process(lake_root: str, key: str, line: str, barrier, results) -> None:
    lake = LakePaths.at(lake_root)
    private = keys.load_private_key(Path(key), lake)
    state = read_state(lake)
    prepared = prepare(state, [line], private)
    barrier.wait()
    try:
        publish(lake, prepared)
        results.put(("published", line))
    except LogConflict as exc:
        results.put(("conflict", str(exc)))


def test_publishing_a_checkpoint_is_a_compare_and_swap(signed_lake, signing_key):
    """Two processes built a next checkpoint on the same one: exactly one can publish it."""
    size = read_state(signed_lake).size
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    lines = [f"{c * 64}  curated/x/day=2026-11-13/part-0.parquet" for c in "ab"]
    procs = [ctx.Process(target=_append_in_process, args=(str(signed_lake.root), str(signing_key), line, barrier,
                                                         results)) for line in lines]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    outcomes = sorted(results.get(timeout=10) for _ in procs)
    assert [o[0] for o in outcomes] == ["conflict", "published"]
    assert f"expected size {size}, now sevenmaps.invalid/log size {size + 1}" in outcomes[0][1]
    state = read_state(signed_lake)
    assert state.size == size + 1 and state.entries[-1].decode() == outcomes[1][1]


def test_a_crash_between_root_and_checkpoint_is_repaired_by_the_next_signing(lake, signing_key):
    for d in DAYS:
        build_day(lake, d)
    sign_through(lake, DAYS[0], signing_key, now=NOW)
    before = (lake.root / "log" / "checkpoint").read_bytes()
    sign_through(lake, DAYS[1], signing_key, now=NOW)
    (lake.root / "log" / "checkpoint").write_bytes(before)  # as if the signer died after writing the root
    report = verify_lake(lake)
    assert report.behind and report.exit_code == EXIT_BEHIND and "behind its roots" in report.problem
    assert report.problems[0].code is Code.LOG_BEHIND
    sign_through(lake, DAYS[2], signing_key, now=NOW)
    report = verify_lake(lake)
    assert report.ok, report.summary()
    # The repaired checkpoint for day 2 is the very one its root recorded (Ed25519 is deterministic).
    recorded = read_root(lake, DAYS[1])["log"]["checkpoint"]
    assert read_state(lake).tree.root(read_root(lake, DAYS[1])["log"]["tree_size"]) == base64.b64decode(
        recorded.split("\n")[2])


# --- witnesses ----------------------------------------------------------------------------------------


@pytest.fixture(params=["mldsa44", "ed25519"])
def witness(request, tmp_path, signing_key, lake):
    from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey

    key = MLDSA44PrivateKey.generate() if request.param == "mldsa44" else Ed25519PrivateKey.generate()
    log_vkey = verifier_for("sevenmaps.invalid/log", keys.load_private_key(signing_key, lake).public_key())
    w = Witness("witness.test/w1", key, [log_vkey], tmp_path / "witness-state.json")
    server = serve(w)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    yield w, WitnessConfig(w.verifier, url)
    server.shutdown()


def test_a_witness_cosigns_each_day_and_the_verifier_requires_the_quorum(lake, signing_key, witness, capsys):
    w, config = witness
    for d in DAYS:
        build_day(lake, d)
    signed = sign_through(lake, DAYS[-1], signing_key, now=NOW, witnesses=[config])
    assert [s.cosignatures for s in signed] == [1, 1, 1] and not any(s.problems for s in signed)
    checkpoint = (lake.root / "log" / "checkpoint").read_text()
    assert checkpoint.count("\u2014 ") == 2 and "\u2014 witness.test/w1 " in checkpoint
    trust = Trust.from_vkey(_vkey(lake))
    trust.witnesses, trust.quorum = [w.verifier], 1
    report = verify_lake(lake, trust)
    assert report.ok and report.cosigned_by == ["witness.test/w1"]
    other = verifier_for("witness.test/w2", Ed25519PrivateKey.generate().public_key(), COSIGNATURE_V1)
    trust.witnesses, trust.quorum = [w.verifier, other], 2
    report = verify_lake(lake, trust)
    assert not report.ok and "carries 1 valid witness cosignature(s); the quorum is 2" in report.problem
    assert report.problems[0].code is Code.QUORUM_UNMET
    assert main(["--lake", str(lake.root), "verify", "--vkey", _vkey(lake), "--witness", w.verifier.vkey]) == 0
    assert "cosigned by witness.test/w1" in capsys.readouterr().out
    # Monitors read the witness's latest cosigned checkpoint at GET /<sha256(origin) hex>/checkpoint.
    import hashlib

    import httpx

    origin_hash = hashlib.sha256(b"sevenmaps.invalid/log").hexdigest()
    served = httpx.get(f"{config.url}/{origin_hash}/checkpoint", trust_env=False)
    assert served.status_code == 200
    log = parse_vkey(_vkey(lake))[0]
    opened, problem = open_checkpoint(served.content, log, log.name, [w.verifier])
    assert problem is None and opened[1].verified == [log, w.verifier] and opened[0].size == read_state(lake).size
    assert httpx.get(f"{config.url}/{64 * '0'}/checkpoint", trust_env=False).status_code == 404


def test_a_witness_refuses_a_fork_and_the_verifier_flags_it(lake, signing_key, witness):
    w, config = witness
    for d in DAYS[:2]:
        build_day(lake, d)
    sign_through(lake, DAYS[1], signing_key, now=NOW, witnesses=[config])
    cosigned = json.loads(w.state_path.read_text())["sevenmaps.invalid/log"]
    # The same key, another history of the same size and a longer one: the witness refuses both.
    key = keys.load_private_key(signing_key, lake)
    from sevenmaps_pipeline.integrity.log import LogState
    from sevenmaps_pipeline.integrity.merkle import HashTree
    from sevenmaps_pipeline.integrity.witness import ask_witness

    lines = [f"{i:064x}  curated/x/day=2026-11-10/p{i}" for i in range(cosigned["size"] + 3)]
    fork = prepare(LogState("sevenmaps.invalid/log", [], HashTree(), None), lines, key)
    line, problem = ask_witness(config, fork.note_text, fork.checkpoint, fork.tree, cosigned["size"])
    assert line is None and problem.startswith("witness witness.test/w1 answered 422: not consistent")
    assert json.loads(w.state_path.read_text())["sevenmaps.invalid/log"]["size"] == cosigned["size"]
    assert "refused" in w.state_path.with_suffix(".refused").read_text()
    # A stale old size gets 409 with the size it holds; the client retries from there.
    body = b"old 0\n\n" + (lake.root / "log" / "checkpoint").read_bytes()
    answer = w.add_checkpoint(body)
    assert (answer.status, answer.body, answer.content_type) == (409, f"{cosigned['size']}\n".encode(),
                                                                 "text/x.tlog.size")
    assert w.add_checkpoint(b"old 0\n\nnot a note").status == 400
    unknown = verifier_for("other.log", Ed25519PrivateKey.generate().public_key())
    assert w.add_checkpoint(b"old 0\n\n" + (lake.root / "log" / "checkpoint").read_bytes().replace(
        b"sevenmaps.invalid/log\n", b"other.log\n", 1)).status == 404
    del unknown
    # If the log published the fork anyway, a verifier that remembered the witnessed checkpoint flags it.
    state = lake.root.parent / "user-state.json"
    assert verify_lake(lake, Trust.from_vkey(_vkey(lake)), state_path=state).ok
    lake.curated_file("tools", DAYS[1]).write_bytes(b"rewritten")
    shutil.rmtree(lake.root / "log")
    lake.root_file(DAYS[1]).unlink()
    signed = sign_through(lake, DAYS[1], signing_key, now=NOW, witnesses=[config])
    assert signed[-1].cosignatures == 0 and "422" in signed[-1].problems[-1]
    trust = Trust.from_vkey(_vkey(lake))
    trust.witnesses, trust.quorum = [w.verifier], 1
    report = verify_lake(lake, trust, state_path=state)
    assert report.fork and not report.ok
    assert any("quorum is 1" in p.what for p in report.problems)
    assert Code.QUORUM_UNMET in report.codes


# --- our own day roots, a known answer ------------------------------------------------------------------


def test_our_day_roots_known_answer(tmp_path, monkeypatch):
    """Two days of fixed bytes signed with the RFC 8032 TEST 1 key: lines, roots, signatures, log entries
    and checkpoints must equal tests/vectors/day-roots.json byte for byte."""
    monkeypatch.delenv("SEVENMAPS_LOG_ORIGIN", raising=False)
    lake = LakePaths.at(tmp_path / "lake")
    secret = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    key_path = tmp_path / "keys" / "rfc8032.pem"
    key_path.parent.mkdir()
    key_path.write_bytes(Ed25519PrivateKey.from_private_bytes(secret).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    key_path.chmod(0o600)
    for d, tag in zip(DAYS[:2], (b"d1-", b"d2-"), strict=True):
        _fake_day(lake, d, tag)
    sign_through(lake, DAYS[1], key_path, now=NOW)
    got = {"vkey": _vkey(lake), "checkpoint": (lake.root / "log" / "checkpoint").read_text(),
           "roots": {d.isoformat(): json.loads(lake.root_file(d).read_text()) for d in DAYS[:2]}}
    expected = json.loads((VECTORS / "day-roots.json").read_text())
    assert got == expected["answer"]
    # And the formula by hand for the second root.
    second = got["roots"][DAYS[1].isoformat()]
    assert compute_root(got["roots"][DAYS[0].isoformat()]["root"], second["lines"]) == second["root"]
    assert second["lines"] == day_lines(lake, DAYS[1])


def test_a_lake_signed_before_the_log_existed_gets_its_log_at_the_next_signing(lake, signing_key):
    """Roots of method 7maps-roots-1.0 (no log, no statement), as the pipeline wrote them before."""
    for d in DAYS:
        build_day(lake, d)
    sign_through(lake, DAYS[1], signing_key, now=NOW)
    shutil.rmtree(lake.root / "log")
    for d in DAYS[:2]:
        doc = json.loads(lake.root_file(d).read_text())
        legacy = {k: doc[k] for k in ("day", "method", "previous_day", "previous_root", "root", "signature",
                                      "signed_at", "lines")}
        legacy["method"] = "7maps-roots-1.0"
        lake.root_file(d).write_text(json.dumps(legacy, indent=2) + "\n")
    report = verify_lake(lake)
    assert not report.ok and report.problem.startswith("no log/checkpoint")
    assert report.problems[0].code in (Code.NO_CHECKPOINT, Code.LOG_BEHIND)
    assert main(["--lake", str(lake.root), "log", "sync", "--signing-key", str(signing_key)]) == 0
    assert verify_lake(lake).ok and read_state(lake).size == sum(len(read_root(lake, d)["lines"]) for d in DAYS[:2])
    assert (lake.root / "log" / "vkey").is_file()
    sign_through(lake, DAYS[2], signing_key, now=NOW)
    report = verify_lake(lake)
    assert report.ok, report.summary()
    assert report.legacy_days == DAYS[:2]
    assert "2 root(s) of method 7maps-roots-1.0" in report.summary()
    assert read_root(lake, DAYS[2])["log"]["first_index"] == sum(len(read_root(lake, d)["lines"]) for d in DAYS[:2])


def test_verify_checks_every_tile_file_as_log_check_does(signed_lake):
    """A stranger's attack: an entry appended to an entry bundle, and a tile past the log's size, passed verify
    (only `log check` named them)."""
    bundles = sorted((signed_lake.log_dir / "tile" / "entries").rglob("*"), key=lambda p: p.as_posix())
    bundle = [b for b in bundles if b.is_file()][-1]
    bundle.write_bytes(bundle.read_bytes() + b"\x00\x03abc")
    beyond = signed_lake.log_dir / "tile" / "0" / "x999" / "999.p" / "2"
    beyond.parent.mkdir(parents=True)
    beyond.write_bytes(b"x" * 64)
    report = verify_lake(signed_lake)
    assert {Code.TILE_WRONG, Code.TILE_BEYOND_LOG} <= set(report.codes), report.summary()
    # A bundle padded with megabytes of zeros (empty entries) is read no further than a bundle can hold and
    # parsed no further than a tile's width (300 MB took 2 minutes and 1.6 GB: a stranger's review).
    with open(bundle, "ab") as fh:
        fh.write(bytes(20 << 20))
    _, index, width = tiles.parse_tile_path(bundle.relative_to(signed_lake.log_dir).as_posix())
    assert len(tiles.read_tile(signed_lake.log_dir, "entries", index, width)) <= width * (2 + 0xFFFF) + 1
    assert tiles.parse_bundle(bytes(1 << 20)) == (None, "entry bundle holds more than 256 entries")
    assert not verify_lake(signed_lake).ok


def _checkpoint_of_the_day_before(doc: dict, lake: LakePaths) -> str:
    doc["log"]["checkpoint"] = json.loads(lake.root_file(DAYS[0]).read_text())["log"]["checkpoint"]
    return json.dumps(doc)


@pytest.mark.parametrize(("tamper", "code"), [
    (lambda doc, lake: json.dumps(doc)[:-1] + f', "signed_at": "{doc["signed_at"]}"}}', Code.ROOT_UNREADABLE),
    (lambda doc, lake: json.dumps({**doc, "log": {**doc["log"], "first_index": str(doc["log"]["first_index"])}}),
     Code.ROOT_UNREADABLE),
    (lambda doc, lake: json.dumps({**doc, "log": {k: v for k, v in doc["log"].items() if k != "checkpoint"}}),
     Code.BAD_STATEMENT),
    (_checkpoint_of_the_day_before, Code.ROOT_CHECKPOINT_INVALID),
    (lambda doc, lake: json.dumps(doc).encode("utf-16"), Code.ROOT_UNREADABLE),  # jq reads UTF-8 only
])
def test_a_root_documents_unsigned_fields_must_agree_with_its_signed_ones(signed_lake, tamper, code):
    """A stranger's attack: a key twice, a log index as a string (the statement signs its text), the recorded
    checkpoint deleted or replaced by the day before's: each passed verify."""
    path = signed_lake.root_file(DAYS[1])
    tampered = tamper(json.loads(path.read_text()), signed_lake)
    path.write_bytes(tampered if isinstance(tampered, bytes) else tampered.encode())
    report = verify_lake(signed_lake)
    assert not report.ok and code in report.codes, report.summary()


def test_a_root_cannot_go_back_to_1_0(signed_lake):
    """A stranger's attack: a root rewritten as 7maps-roots-1.0 (its statement, which binds the time it was signed
    and its place in the log, deleted, signed_at moved) passed as a legacy root."""
    day = DAYS[1]
    doc = json.loads(signed_lake.root_file(day).read_text())
    doc["method"], doc["signed_at"] = "7maps-roots-1.0", "2026-11-13T00:00:01+00:00"
    del doc["statement"]
    signed_lake.root_file(day).write_text(json.dumps(doc, indent=2) + "\n")
    report = verify_lake(signed_lake)
    assert not report.ok and report.codes == [Code.BAD_STATEMENT] and report.bad_day == day
    assert "does not go back to 1.0" in report.problem and not report.legacy_days


def test_the_witness_command_serves_cosigns_and_stops_on_sigterm(signed_lake, signing_key, tmp_path):
    import re
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "sevenmaps_pipeline.cli", "witness", "--name", "witness.test/cli",
                             "--key", str(tmp_path / "w.pem"), "--log", str(signed_lake.root / "log" / "vkey"),
                             "--state", str(tmp_path / "w-state.json"), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(4)]
        url = re.search(r"on (http://127\.0\.0\.1:\d+)", "".join(lines)).group(1)
        vkey = re.search(r"vkey: (\S+)", "".join(lines)).group(1)
        config = WitnessConfig.parse(f"{vkey} {url}")
        state = read_state(signed_lake)
        key = keys.load_private_key(signing_key, signed_lake)
        prepared = prepare(state, [f"{'c' * 64}  curated/x/day=2026-11-13/part-0.parquet"], key)
        from sevenmaps_pipeline.integrity.witness import ask_witness

        line, problem = ask_witness(config, prepared.note_text, prepared.checkpoint, prepared.tree, state.size)
        assert problem is None and line.startswith("\u2014 witness.test/cli ")
        assert json.loads((tmp_path / "w-state.json").read_text())["sevenmaps.invalid/log"]["size"] == state.size + 1
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
