"""RFC 6962 Merkle trees (SHA-256): leaf and node hashes, a tree that computes proofs, and the two
verifiers (inclusion, consistency) that answer with a reason instead of raising (docs/verifying.md).

The verifiers follow RFC 9162 section 2.1.3.2 and 2.1.4.2 in the decomposed form transparency-dev/merkle
uses; they are checked against that project's test vectors (tests/vectors/merkle/)."""

from __future__ import annotations

import hashlib

HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _largest_power_of_two_below(n: int) -> int:
    """k with k < n <= 2k (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)


class HashTree:
    """Every perfect subtree hash of an append-only tree: levels[h][i] is the hash of leaves
    [i * 2**h, (i + 1) * 2**h). Any RFC 6962 subtree of any earlier size is computed from them in O(log^2 n)."""

    def __init__(self, leaf_hashes: list[bytes] | None = None) -> None:
        self.levels: list[list[bytes]] = [[]]
        for h in leaf_hashes or []:
            self.append(h)

    @property
    def size(self) -> int:
        return len(self.levels[0])

    def copy(self) -> HashTree:
        twin = HashTree()
        twin.levels = [list(level) for level in self.levels]
        return twin

    def append(self, leaf: bytes) -> None:
        self.levels[0].append(leaf)
        level = 0
        while len(self.levels[level]) % 2 == 0:
            below = self.levels[level]
            parent = node_hash(below[-2], below[-1])
            if level + 1 == len(self.levels):
                self.levels.append([])
            self.levels[level + 1].append(parent)
            level += 1

    def perfect(self, height: int, index: int) -> bytes:
        return self.levels[height][index]

    def subtree(self, start: int, end: int) -> bytes:
        """MTH(D[start:end]) for a range the RFC's recursion produces (start a multiple of the largest power
        of two below end - start, or of end - start itself when that is a power of two)."""
        n = end - start
        if n == 0:
            return EMPTY_ROOT
        if n & (n - 1) == 0:
            return self.levels[n.bit_length() - 1][start >> (n.bit_length() - 1)]
        k = _largest_power_of_two_below(n)
        return node_hash(self.levels[k.bit_length() - 1][start >> (k.bit_length() - 1)], self.subtree(start + k, end))

    def root(self, size: int | None = None) -> bytes:
        size = self.size if size is None else size
        if not 0 <= size <= self.size:
            raise ValueError(f"tree size {size} is beyond the {self.size} leaves held")
        return self.subtree(0, size)

    def inclusion_proof(self, index: int, size: int) -> list[bytes]:
        """RFC 6962 PATH(index, D[0:size]), from the leaf's sibling up to the root's child."""
        if not 0 <= index < size <= self.size:
            raise ValueError(f"no inclusion proof for index {index} in a tree of size {size}")
        path: list[bytes] = []

        def walk(m: int, start: int, n: int) -> None:
            if n == 1:
                return
            k = _largest_power_of_two_below(n)
            if m < k:
                walk(m, start, k)
                path.append(self.subtree(start + k, start + n))
            else:
                walk(m - k, start + k, n - k)
                path.append(self.subtree(start, start + k))

        walk(index, 0, size)
        return path

    def consistency_proof(self, old_size: int, new_size: int) -> list[bytes]:
        """RFC 6962 PROOF(old_size, D[0:new_size])."""
        if not 0 <= old_size <= new_size <= self.size:
            raise ValueError(f"no consistency proof from size {old_size} to {new_size}")
        if old_size in (0, new_size):
            return []
        proof: list[bytes] = []

        def sub(m: int, start: int, n: int, whole: bool) -> None:
            if m == n:
                if not whole:
                    proof.append(self.subtree(start, start + n))
                return
            k = _largest_power_of_two_below(n)
            if m <= k:
                sub(m, start, k, whole)
                proof.append(self.subtree(start + k, start + n))
            else:
                sub(m - k, start + k, n - k, False)
                proof.append(self.subtree(start, start + k))

        sub(old_size, 0, new_size, True)
        return proof


# --- verification: a reason string when it fails, None when it holds --------------------------------------


def _inner_and_border(index: int, size: int) -> tuple[int, int]:
    inner = (index ^ (size - 1)).bit_length()
    return inner, bin(index >> inner).count("1")


def _chain_inner(seed: bytes, proof: list[bytes], index: int) -> bytes:
    for i, h in enumerate(proof):
        seed = node_hash(seed, h) if (index >> i) & 1 == 0 else node_hash(h, seed)
    return seed


def _chain_inner_right(seed: bytes, proof: list[bytes], index: int) -> bytes:
    for i, h in enumerate(proof):
        if (index >> i) & 1 == 1:
            seed = node_hash(h, seed)
    return seed


def _chain_border_right(seed: bytes, proof: list[bytes]) -> bytes:
    for h in proof:
        seed = node_hash(h, seed)
    return seed


def _bad_hashes(named: dict[str, bytes], proof: list[bytes]) -> str | None:
    for name, value in named.items():
        if not isinstance(value, bytes) or len(value) != HASH_SIZE:
            return f"{name} is not a {HASH_SIZE}-byte hash"
    for i, h in enumerate(proof):
        if not isinstance(h, bytes) or len(h) != HASH_SIZE:
            return f"proof hash {i} is not a {HASH_SIZE}-byte hash"
    return None


def root_from_inclusion(index: int, size: int, leaf: bytes, proof: list[bytes]) -> tuple[bytes | None, str | None]:
    if not (isinstance(index, int) and isinstance(size, int)) or index < 0 or size < 0:
        return None, "index and size must be non-negative integers"
    if index >= size:
        return None, f"index {index} is beyond the tree size {size}"
    bad = _bad_hashes({"leaf hash": leaf}, proof)
    if bad:
        return None, bad
    inner, border = _inner_and_border(index, size)
    if len(proof) != inner + border:
        return None, f"wrong proof length {len(proof)} for index {index} in size {size} (expected {inner + border})"
    return _chain_border_right(_chain_inner(leaf, proof[:inner], index), proof[inner:]), None


def verify_inclusion(index: int, size: int, leaf: bytes, proof: list[bytes], root: bytes) -> str | None:
    """None when `proof` shows the leaf hash at `index` in the tree of `size` with `root`, else why not."""
    bad = _bad_hashes({"root": root}, [])
    if bad:
        return bad
    computed, problem = root_from_inclusion(index, size, leaf, proof)
    if problem:
        return problem
    if computed != root:
        return "the inclusion proof does not lead to the root"
    return None


def verify_consistency(old_size: int, new_size: int, proof: list[bytes], old_root: bytes,
                       new_root: bytes) -> str | None:
    """None when `proof` shows the tree of `old_size` is a prefix of the tree of `new_size`, else why not."""
    if not (isinstance(old_size, int) and isinstance(new_size, int)) or old_size < 0 or new_size < 0:
        return "sizes must be non-negative integers"
    if new_size < old_size:
        return f"the new size {new_size} is smaller than the old size {old_size}"
    if old_size == 0:
        return "a consistency proof from the empty tree is meaningless"
    if old_size == new_size:
        if proof:
            return "the sizes are equal but the proof is not empty"
        return None if old_root == new_root else "same size, different roots"
    if not proof:
        return "the consistency proof is empty"
    bad = _bad_hashes({"old root": old_root, "new root": new_root}, proof)
    if bad:
        return bad
    inner, border = _inner_and_border(old_size - 1, new_size)
    shift = (old_size & -old_size).bit_length() - 1
    inner -= shift
    seed, start = proof[0], 1
    if old_size == 1 << shift:
        seed, start = old_root, 0
    if len(proof) != start + inner + border:
        return (f"wrong proof length {len(proof)} from size {old_size} to {new_size} "
                f"(expected {start + inner + border})")
    rest = proof[start:]
    mask = (old_size - 1) >> shift
    if _chain_border_right(_chain_inner_right(seed, rest[:inner], mask), rest[inner:]) != old_root:
        return "the consistency proof does not lead to the old root"
    if _chain_border_right(_chain_inner(seed, rest[:inner], mask), rest[inner:]) != new_root:
        return "the consistency proof does not lead to the new root"
    return None
