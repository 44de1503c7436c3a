"""Known answers for the transparency-log parts: RFC 6962 trees and proofs (transparency-dev/merkle's
vectors, mutated proofs included), C2SP signed notes (golang.org/x/mod/sumdb/note's examples and a real
sum.golang.org checkpoint), tiles, cosignatures and tlog-proofs. Sources: tests/vectors/README.md."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from sevenmaps_pipeline.integrity import merkle, note, tiles
from sevenmaps_pipeline.integrity.checkpoint import Checkpoint, open_checkpoint, parse_checkpoint_text
from sevenmaps_pipeline.integrity.proof import ProofFailure, TlogProof, parse_proof, verify_proof

VECTORS = Path(__file__).parent / "vectors"
MERKLE = json.loads((VECTORS / "transparency-dev-merkle.json").read_text())
NOTES = json.loads((VECTORS / "signed-note.json").read_text())


def b64(text: str | None) -> bytes:
    return base64.b64decode(text) if text else b""


# --- RFC 6962 -------------------------------------------------------------------------------------------


def test_roots_of_the_reference_leaves():
    leaves = [bytes.fromhex(x) for x in MERKLE["leaf_inputs_hex"]]
    tree = merkle.HashTree([merkle.leaf_hash(x) for x in leaves])
    assert [tree.root(n).hex() for n in range(len(leaves) + 1)] == MERKLE["root_hashes_hex"]
    assert merkle.EMPTY_ROOT.hex() == MERKLE["root_hashes_hex"][0]


@pytest.mark.parametrize("name", sorted(MERKLE["inclusion"]))
def test_inclusion_vectors(name):
    v = MERKLE["inclusion"][name]
    proof = [b64(h) for h in (v["proof"] or [])]
    problem = merkle.verify_inclusion(v["leafIdx"], v["treeSize"], b64(v["leafHash"]), proof, b64(v["root"]))
    assert (problem is not None) == v["wantErr"], (v["desc"], problem)


@pytest.mark.parametrize("name", sorted(MERKLE["consistency"]))
def test_consistency_vectors(name):
    v = MERKLE["consistency"][name]
    proof = [b64(h) for h in (v["proof"] or [])]
    problem = merkle.verify_consistency(v["size1"], v["size2"], proof, b64(v["root1"]), b64(v["root2"]))
    assert (problem is not None) == v["wantErr"], (v["desc"], problem)


def test_vector_counts_include_mutated_proofs():
    assert sum(v["wantErr"] for v in MERKLE["inclusion"].values()) >= 90
    assert sum(v["wantErr"] for v in MERKLE["consistency"].values()) >= 90


def test_generated_proofs_match_the_vectors_and_verify_for_every_size():
    leaves = [bytes.fromhex(x) for x in MERKLE["leaf_inputs_hex"]]
    tree = merkle.HashTree([merkle.leaf_hash(x) for x in leaves])
    happy = MERKLE["inclusion"]["testdata/inclusion/1/happy-path.json"]
    assert [base64.b64encode(h).decode() for h in tree.inclusion_proof(0, 8)] == happy["proof"]
    happy = MERKLE["consistency"]["testdata/consistency/1/happy-path.json"]
    assert [base64.b64encode(h).decode() for h in tree.consistency_proof(1, 8)] == happy["proof"]

    big = merkle.HashTree([merkle.leaf_hash(i.to_bytes(4, "big")) for i in range(70)])
    for size in range(1, 71):
        root = big.root(size)
        for index in range(size):
            proof = big.inclusion_proof(index, size)
            assert merkle.verify_inclusion(index, size, big.perfect(0, index), proof, root) is None
            if proof:  # a flipped bit or a dropped hash never verifies
                bad = [proof[0][:-1] + bytes([proof[0][-1] ^ 1])] + proof[1:]
                assert merkle.verify_inclusion(index, size, big.perfect(0, index), bad, root) is not None
                assert merkle.verify_inclusion(index, size, big.perfect(0, index), proof[:-1], root) is not None
        for old in range(1, size + 1):  # from size 0 a proof is meaningless (transparency-dev)
            proof = big.consistency_proof(old, size)
            assert merkle.verify_consistency(old, size, proof, big.root(old), root) is None, (old, size)
            if proof and old:
                assert merkle.verify_consistency(old, size, proof, big.root(old), big.root(size - 1)) is not None


def test_verifiers_never_raise_on_nonsense():
    assert merkle.verify_inclusion(-1, 3, b"x" * 32, [], b"y" * 32)
    assert merkle.verify_inclusion(0, 1, b"short", [], b"y" * 32)
    assert merkle.verify_consistency(3, 2, [], b"a" * 32, b"b" * 32)
    assert merkle.verify_consistency(1, 2, [b"z" * 31], b"a" * 32, b"b" * 32)
    assert merkle.verify_consistency(1, 2, ["text"], b"a" * 32, b"b" * 32)  # a str where bytes belong


# --- C2SP signed notes ----------------------------------------------------------------------------------


def go_signer(skey: str) -> tuple[str, Ed25519PrivateKey]:
    # PRIVATE+KEY+<name>+<id>+base64(0x01 || 32-byte seed): golang.org/x/mod/sumdb/note's signer format.
    _, _, name, _, material = skey.split("+", 4)
    raw = base64.b64decode(material)
    assert raw[0] == note.ED25519
    return name, Ed25519PrivateKey.from_private_bytes(raw[1:])


def test_go_sumdb_note_sign_gives_the_exact_signed_note():
    go = NOTES["go_note"]
    name, key = go_signer(go["skey"])
    signature = note.sign(go["text"], name, key)
    assert note.Note(go["text"], [signature]).render() == go["signed"]
    assert note.verifier_for(name, key.public_key()).vkey == go["vkey"]


def test_go_sumdb_note_open():
    go = NOTES["go_note"]
    peter, problem = note.parse_vkey(go["vkey"])
    enoch, _ = note.parse_vkey(go["enoch_vkey"])
    assert problem is None and peter.key_id == 0xC74F20A3
    both = go["text"] + "\n" + go["peter_sig"] + go["enoch_sig"]
    opened, problem = note.open_note(both, [peter])
    assert problem is None and opened.text == go["text"] and opened.verified == [peter]
    assert [s.name for s in opened.unverified] == ["EnochRoot"]
    opened, _ = note.open_note(both, [peter, enoch])
    assert opened.verified == [peter, enoch]
    assert note.open_note(both, [])[1].startswith("no signature from a trusted key")
    # A corrupted signature of a known key rejects the whole note.
    sig = go["peter_sig"]
    corrupt = go["text"] + "\n" + sig[:60] + "ABCD" + sig[60:]
    assert note.open_note(corrupt, [peter]) == (None, "invalid signature for key PeterNeumann+c74f20a3")
    # Too many signatures.
    assert "more than 100" in note.open_note(go["text"] + "\n" + sig * 101, [peter])[1]
    # Malformed notes (TestOpen's badMsgs).
    text = go["text"]
    for bad in (text, text + "\n", text + "\n" + sig[:-1], "\x01" + text + "\n" + sig,
                text + "\n" + sig.replace("PeterNeumann", "Bad Name").rstrip("\n"),
                text + "\n" + sig + "Unexpected line.\n"):
        opened, problem = note.open_note(bad, [peter])
        assert opened is None and problem, repr(bad)
    assert note.open_note(b"\xff" + (text + "\n" + sig).encode(), [peter])[1] == "note is not valid UTF-8"


def test_go_sumdb_vkey_manglings_are_refused():
    go = NOTES["go_note"]
    vkey = go["vkey"]
    assert note.parse_vkey(vkey)[0] is not None
    for i in range(len(vkey)):  # every single-character change (Go's TestNewVerifier)
        mangled = vkey[:i] + chr(ord(vkey[i]) + 1) + vkey[i + 1:]
        assert note.parse_vkey(mangled)[0] is None, mangled
    for i in range(1, len(vkey)):
        assert note.parse_vkey(vkey[:i])[0] is None
    for bad in go["bad_vkeys"]:
        assert note.parse_vkey(bad)[0] is None


def test_a_real_sum_golang_org_checkpoint():
    cp = NOTES["sumdb_checkpoint"]
    verifier, problem = note.parse_vkey(cp["vkey"])
    assert problem is None
    opened, problem = open_checkpoint(cp["note"], verifier, cp["origin"])
    assert problem is None
    checkpoint, _ = opened
    assert (checkpoint.origin, checkpoint.size) == (cp["origin"], cp["size"])
    assert open_checkpoint(cp["note"], verifier, "another origin")[1].startswith("checkpoint origin")
    tampered = cp["note"].replace("6476701", "6476702")
    assert open_checkpoint(tampered, verifier, cp["origin"])[1].startswith("invalid signature")


def test_the_c2sp_signed_note_example():
    ex = NOTES["c2sp_example"]
    verifier, problem = note.parse_vkey(ex["vkey"])
    assert problem is None
    opened, problem = note.open_note(ex["note"], [verifier])
    assert problem is None and opened.text == "This is an example message.\n"
    # A blank line after the signatures is named as that, not as a block that "does not end in a newline".
    assert note.open_note(ex["note"] + "\n", [verifier])[1] == (
        "note ends in a blank line: nothing may follow its signature lines")


def test_cosignature_v1_message_and_key_id():
    key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    text = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
    assert note.cosigned_message(text, 1679315147) == (
        b"cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\n"
        b"CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n")
    sig = note.cosign(text, "witness.example.com/w1", key, 1679315147)
    assert len(sig.signature) == 8 + 64 and note.cosignature_time(sig) == 1679315147
    witness = note.verifier_for("witness.example.com/w1", key.public_key(), note.COSIGNATURE_V1)
    assert sig.key_id == witness.key_id != note.verifier_for("witness.example.com/w1", key.public_key()).key_id
    assert witness.verify(text, sig.signature)
    assert not witness.verify(text.replace("20852163", "20852164"), sig.signature)
    assert witness.vkey.split("+")[2].startswith(base64.b64encode(b"\x04" + key.public_key().public_bytes_raw()
                                                                  )[:4].decode())


def test_cosignature_mldsa44_message_key_id_and_vkey():
    from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey

    key = MLDSA44PrivateKey.generate()
    root = bytes(range(32))
    text = f"example.com/behind-the-sofa\n20852163\n{base64.b64encode(root).decode()}\n"
    # tlog-cosignature's cosigned_message, by hand: label, name<1..255>, u64 timestamp, origin<1..255>,
    # u64 start, u64 end, hash[32].
    expected = (b"subtree/v1\n\x00" + bytes([22]) + b"witness.example.com/w1" + (1679315147).to_bytes(8, "big")
                + bytes([27]) + b"example.com/behind-the-sofa" + (0).to_bytes(8, "big")
                + (20852163).to_bytes(8, "big") + root)
    assert note.subtree_message("witness.example.com/w1", text, 1679315147) == expected
    sig = note.cosign(text, "witness.example.com/w1", key, 1679315147)
    assert len(sig.signature) == 8 + 2420 and note.cosignature_time(sig) == 1679315147
    public = key.public_key().public_bytes_raw()
    assert sig.key_id == note.key_id("witness.example.com/w1", note.COSIGNATURE_MLDSA44, public)
    witness = note.verifier_for("witness.example.com/w1", key.public_key(), note.COSIGNATURE_MLDSA44)
    assert witness.verify(text, sig.signature)
    # Extension lines are not in the ML-DSA-44 message; the size, the root, the time and the name are.
    assert witness.verify(text + "an extension\n", sig.signature)
    assert not witness.verify(text.replace("20852163", "20852164"), sig.signature)
    later = (1679315148).to_bytes(8, "big") + sig.signature[8:]
    assert not witness.verify(text, later)
    renamed = note.verifier_for("witness.example.com/w2", key.public_key(), note.COSIGNATURE_MLDSA44)
    assert not renamed.verify(text, sig.signature)
    parsed, problem = note.parse_vkey(witness.vkey)
    assert problem is None and parsed == witness and len(base64.b64decode(witness.vkey.split("+", 2)[2])) == 1313
    line = sig.line()
    opened, problem = note.open_note(text + "\n" + line, [witness])
    assert problem is None and opened.verified == [witness]


def test_checkpoint_text_rules():
    root = base64.b64encode(b"\x01" * 32).decode()
    assert parse_checkpoint_text(f"o\n5\n{root}\n")[0] == Checkpoint("o", 5, b"\x01" * 32)
    for bad in (f"o\n05\n{root}\n", f"o\n-1\n{root}\n", f"\n5\n{root}\n", "o\n5\nAAAA\n", f"o\n5\n{root}",
                f"o\n0\n{root}\n", f"o\n5\n{root}\n\n"):
        assert parse_checkpoint_text(bad)[0] is None, bad


# --- tiles ----------------------------------------------------------------------------------------------


def test_tile_paths_and_the_specs_example_sizes():
    assert tiles.index_path(1234067) == "x001/x234/067"
    assert tiles.index_path(0) == "000" and tiles.index_path(1000) == "x001/000"
    assert tiles.tile_path(0, 5, 12) == "tile/0/005.p/12"
    assert tiles.tile_path("entries", 1234067) == "tile/entries/x001/x234/067"
    layout = list(tiles.tiles_for_size(70_000))  # the spec's example
    assert sum(1 for level, _, width in layout if level == 0 and width == 256) == 273
    assert [t for t in layout if t[2] != 256] == [(0, 273, 112), (1, 1, 17), (2, 0, 1)]
    assert [t for t in layout if t[0] == 1 and t[2] == 256] == [(1, 0, 256)]
    assert list(tiles.tiles_for_size(256)) == [(0, 0, 256), (1, 0, 1)]
    for level in (0, 3, "entries"):
        for index in (0, 7, 999, 1000, 1234067):
            for width in (1, 100, 256):
                assert tiles.parse_tile_path(tiles.tile_path(level, index, width)) == (level, index, width)
    for bad in ("tile/01/000", "tile/0/5", "tile/0/x1/000", "tile/0/000.p/0", "tile/0/000.p/256", "tiles/0/000"):
        assert tiles.parse_tile_path(bad) is None


def test_tiles_hold_the_rfc6962_subtree_hashes():
    entries = [f"line {i}".encode() for i in range(600)]
    tree = tiles.tree_of(entries)
    files = tiles.expected_files(tree, entries, 600)
    assert set(files) == {"tile/0/000", "tile/0/001", "tile/0/002.p/88", "tile/1/000.p/2",
                          "tile/entries/000", "tile/entries/001", "tile/entries/002.p/88"}
    level1 = files["tile/1/000.p/2"]
    assert level1[:32] == merkle.HashTree([merkle.leaf_hash(e) for e in entries[:256]]).root()
    assert level1[32:] == merkle.HashTree([merkle.leaf_hash(e) for e in entries[256:512]]).root()
    bundle, problem = tiles.parse_bundle(files["tile/entries/002.p/88"])
    assert problem is None and bundle == entries[512:]
    assert tiles.parse_bundle(b"\x00\x05ab")[1] == "entry bundle ends inside an entry"


# --- tlog-proof -----------------------------------------------------------------------------------------


def test_tlog_proof_format_round_trip_and_offline_verification():
    # Shapes as in transparency-dev/formats proof/tlog_proof_test.go TestMarshal.
    h1, h2 = b"\x01" * 32, b"\x02" * 32
    text = TlogProof(5, [h1, h2], b"test checkpoint\n").render()
    assert text == (f"c2sp.org/tlog-proof@v1\nindex 5\n{base64.b64encode(h1).decode()}\n"
                    f"{base64.b64encode(h2).decode()}\n\ntest checkpoint\n")
    assert parse_proof(text)[0] == TlogProof(5, [h1, h2], b"test checkpoint\n")
    with_extra = TlogProof(10, [h1], b"checkpoint data\n", b"extra information").render()
    assert with_extra.split("\n")[1] == "extra " + base64.b64encode(b"extra information").decode()

    key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    lines = [f"{i:064x}  curated/t/day=2026-11-10/part-{i}.parquet" for i in range(9)]
    tree = merkle.HashTree([merkle.leaf_hash(x.encode()) for x in lines])
    cp = Checkpoint("example.org/log", 9, tree.root())
    signed = note.Note(cp.text(), [note.sign(cp.text(), "example.org/log", key)]).render().encode()
    log = note.verifier_for("example.org/log", key.public_key())
    proof = TlogProof(4, tree.inclusion_proof(4, 9), signed, lines[4].encode()).render()
    result, problem = verify_proof(proof, log)
    assert problem is None and result.line == lines[4] and result.index == 4
    wrong_index = proof.replace("index 4", "index 5")
    assert verify_proof(wrong_index, log)[1].kind is ProofFailure.NOT_INCLUDED
    encoded = [base64.b64encode(line.encode()).decode() for line in lines]
    other_line = proof.replace(encoded[4], encoded[3])
    assert verify_proof(other_line, log)[1].kind is ProofFailure.NOT_INCLUDED
    other_key = note.verifier_for("example.org/log", Ed25519PrivateKey.generate().public_key())
    assert verify_proof(proof, other_key)[1].kind is ProofFailure.CHECKPOINT
    assert verify_proof(proof, log, quorum=1)[1].kind is ProofFailure.QUORUM
    assert str(verify_proof(proof, log, quorum=1)[1]).startswith("checkpoint carries 0 valid witness")  # its line
    no_line = TlogProof(4, tree.inclusion_proof(4, 9), signed).render()
    assert verify_proof(no_line, log)[1].kind is ProofFailure.NO_LINE
    not_a_line = TlogProof(4, tree.inclusion_proof(4, 9), signed, b"not a line").render()
    assert verify_proof(not_a_line, log)[1].kind is ProofFailure.LINE_MALFORMED
    for garbage in ("", "c2sp.org/tlog-proof@v1\n", proof.replace("index 4", "index 04"), proof[:40], "\x00" * 50):
        assert verify_proof(garbage, log)[1].kind in (ProofFailure.MALFORMED, ProofFailure.CHECKPOINT)


# --- nothing a file or a request holds can make a parser raise -----------------------------------------


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from sevenmaps_pipeline.integrity.witness import Witness  # noqa: E402

_seed = NOTES["go_note"]["signed"].encode()
_texts = st.one_of(st.binary(max_size=300), st.text(max_size=200).map(str.encode),
                   st.tuples(st.integers(0, len(_seed)), st.binary(max_size=8)).map(
                       lambda cut: _seed[:cut[0]] + cut[1] + _seed[cut[0]:]))


@settings(max_examples=300, deadline=None)
@given(data=_texts)
def test_parsers_answer_with_a_reason_never_an_exception(data):
    assert isinstance(note.parse_note(data), tuple)
    text = data.decode("utf-8", errors="replace")
    assert isinstance(parse_checkpoint_text(text), tuple)
    assert isinstance(note.parse_vkey(text), tuple)
    assert isinstance(parse_proof(data), tuple)
    assert isinstance(tiles.parse_bundle(data), tuple)
    tiles.parse_tile_path(text)
    key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    log = note.verifier_for("example.org/log", key.public_key())
    assert verify_proof(data, log)[0] is None
    assert open_checkpoint(data, log)[0] is None


@settings(max_examples=150, deadline=None)
@given(body=st.one_of(st.binary(max_size=400),
                      st.tuples(st.integers(0, 3), st.lists(st.binary(min_size=32, max_size=32), max_size=3),
                                st.binary(max_size=200)).map(
                          lambda t: f"old {t[0]}\n".encode() + b"".join(base64.b64encode(h) + b"\n" for h in t[1])
                          + b"\n" + t[2])))
def test_the_witness_answers_every_request_with_a_status(body, tmp_path_factory):
    key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    state = tmp_path_factory.mktemp("w") / "state.json"
    witness = Witness("w.test/1", key, [note.verifier_for("example.org/log", key.public_key())], state)
    answer = witness.add_checkpoint(body)
    assert answer.status in (400, 403, 404, 409, 422) and answer.body.endswith(b"\n")
