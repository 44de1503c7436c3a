"""C2SP tlog-tiles: the log as static files. `tile/<L>/<N>[.p/<W>]` holds 256 (or W) consecutive hashes of
subtrees of 256**L leaves; `tile/entries/<N>[.p/<W>]` the entries, each as a big-endian uint16 length and
its bytes. Full tiles are immutable; a partial tile is written for every size a checkpoint names."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from .merkle import HASH_SIZE, HashTree, leaf_hash

WIDTH = 256
HEIGHT = 8  # a tile is a subtree of height 8
MAX_ENTRY = 0xFFFF


def index_path(index: int) -> str:
    """1234067 -> x001/x234/067: zero-padded 3-digit elements, all but the last prefixed with x."""
    if index < 0:
        raise ValueError("a tile index is non-negative")
    digits = f"{index:03d}"
    digits = digits.rjust(((len(digits) + 2) // 3) * 3, "0")
    groups = [digits[i:i + 3] for i in range(0, len(digits), 3)]
    return "/".join([f"x{g}" for g in groups[:-1]] + [groups[-1]])


def tile_path(level: int | str, index: int, width: int = WIDTH) -> str:
    """Relative path of a hash tile (level an int) or an entry bundle (level "entries")."""
    suffix = "" if width == WIDTH else f".p/{width}"
    return f"tile/{level}/{index_path(index)}{suffix}"


def tiles_for_size(size: int) -> Iterator[tuple[int, int, int]]:
    """(level, index, width) of every tile a tree of `size` consists of: full tiles and the partial ones."""
    level = 0
    while (count := size // WIDTH ** level) > 0:  # hashes at this level
        for index in range(count // WIDTH):
            yield level, index, WIDTH
        if count % WIDTH:
            yield level, count // WIDTH, count % WIDTH
        level += 1


def tile_bytes(tree: HashTree, level: int, index: int, width: int) -> bytes:
    height = HEIGHT * level
    first = index * WIDTH
    return b"".join(tree.perfect(height, first + i) for i in range(width))


def bundle_bytes(entries: list[bytes], index: int, width: int) -> bytes:
    out = bytearray()
    for entry in entries[index * WIDTH: index * WIDTH + width]:
        out += len(entry).to_bytes(2, "big") + entry
    return bytes(out)


def parse_bundle(data: bytes) -> tuple[list[bytes] | None, str | None]:
    entries: list[bytes] = []
    at = 0
    while at < len(data):
        if len(entries) == WIDTH:  # a bundle holds a tile's width of entries at most
            return None, f"entry bundle holds more than {WIDTH} entries"
        if at + 2 > len(data):
            return None, "entry bundle ends inside a length prefix"
        n = int.from_bytes(data[at:at + 2], "big")
        if at + 2 + n > len(data):
            return None, "entry bundle ends inside an entry"
        entries.append(data[at + 2:at + 2 + n])
        at += 2 + n
    return entries, None


def read_tile(log_dir: Path, level: int | str, index: int, width: int) -> bytes | None:
    """The tile of that width, or the full tile (whose first `width` hashes are the same) if the partial is
    gone; None when neither exists."""
    for w in (width, WIDTH) if width != WIDTH else (WIDTH,):
        path = log_dir / tile_path(level, index, w)
        if path.is_file():
            # Never more than such a tile can hold, and one byte to show it is longer (a bundle padded with
            # gigabytes is read as far as its parser needs to refuse it, no further).
            most = w * (2 + MAX_ENTRY) + 1 if level == "entries" else width * HASH_SIZE
            with open(path, "rb") as fh:
                data = fh.read(most)
            return data if level == "entries" else data[:width * HASH_SIZE]
    return None


def load_entries(log_dir: Path, size: int) -> tuple[list[bytes] | None, str | None]:
    entries: list[bytes] = []
    for level, index, width in tiles_for_size(size):
        if level != 0:
            continue
        data = read_tile(log_dir, "entries", index, width)
        if data is None:
            return None, f"entry bundle {tile_path('entries', index, width)} is missing"
        bundle, problem = parse_bundle(data)
        if bundle is None:
            return None, f"{tile_path('entries', index, width)}: {problem}"
        if len(bundle) < width:
            return None, f"{tile_path('entries', index, width)} holds {len(bundle)} entries, expected {width}"
        entries += bundle[:width]
    return entries, None


def expected_files(tree: HashTree, entries: list[bytes], size: int) -> dict[str, bytes]:
    """Every tile and entry bundle a checkpoint of `size` needs, by relative path."""
    files = {}
    for level, index, width in tiles_for_size(size):
        files[tile_path(level, index, width)] = tile_bytes(tree, level, index, width)
        if level == 0:
            files[tile_path("entries", index, width)] = bundle_bytes(entries, index, width)
    return files


def tree_of(entries: list[bytes]) -> HashTree:
    return HashTree([leaf_hash(e) for e in entries])


def parse_tile_path(rel: str) -> tuple[int | str, int, int] | None:
    """'tile/0/x001/234.p/5' -> (0, 1234, 5); 'tile/entries/007' -> ("entries", 7, 256); None if not a tile."""
    parts = rel.split("/")
    if len(parts) < 3 or parts[0] != "tile":
        return None
    level_text, rest = parts[1], parts[2:]
    width = WIDTH
    if len(rest) >= 2 and rest[-2].endswith(".p"):
        if not rest[-1].isdigit() or rest[-1].startswith("0") or not 1 <= int(rest[-1]) < WIDTH:
            return None
        width = int(rest[-1])
        rest = rest[:-2] + [rest[-2][:-2]]
    if not all(len(p) == 4 and p[0] == "x" and p[1:].isdigit() for p in rest[:-1]):
        return None
    if len(rest[-1]) != 3 or not rest[-1].isdigit():
        return None
    index = int("".join(p[-3:] for p in rest))
    if level_text == "entries":
        return "entries", index, width
    if not level_text.isdigit() or (level_text != "0" and level_text.startswith("0")) or int(level_text) > 63:
        return None
    return int(level_text), index, width
