"""curated/memo.py: a relation read once per process while the files it was read from stay the same."""

from __future__ import annotations

import os

import pytest

from sevenmaps_pipeline.curated import memo


@pytest.fixture(autouse=True)
def empty_memo():
    memo.forget()
    yield
    memo.forget()


def counting(value):
    calls = []

    def compute():
        calls.append(1)
        return value(len(calls))
    return compute, calls


def test_unchanged_inputs_are_read_once_and_a_rewritten_one_again(tmp_path):
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    a.write_bytes(b"one")
    compute, calls = counting(lambda n: f"value {n}")
    assert memo.remembered("t", (1,), [a, b], compute) == "value 1"  # b does not exist: that is part of the key
    assert memo.remembered("t", (1,), [a, b], compute) == "value 1"
    assert len(calls) == 1
    # Every write in the lake is a rename: a new inode and time, even for the same bytes.
    tmp = tmp_path / ".a.tmp"
    tmp.write_bytes(b"one")
    os.replace(tmp, a)
    assert memo.remembered("t", (1,), [a, b], compute) == "value 2"
    b.write_bytes(b"now here")
    assert memo.remembered("t", (1,), [a, b], compute) == "value 3"
    # Other parameters are another value; another name is another entry.
    assert memo.remembered("t", (2,), [a, b], compute) == "value 4"
    assert memo.remembered("u", (2,), [a, b], compute) == "value 5"
    assert memo.remembered("t", (2,), [a, b], compute) == "value 4"


def test_an_input_rewritten_while_computing_is_read_again(tmp_path):
    a = tmp_path / "a"
    a.write_bytes(b"before")
    calls = []

    def compute():
        calls.append(1)
        if len(calls) == 1:
            a.write_bytes(b"changed meanwhile")
        return len(calls)

    assert memo.remembered("t", (), [a], compute) == 1
    assert memo.remembered("t", (), [a], compute) == 2  # the first value may mix both versions: computed again
    assert memo.remembered("t", (), [a], compute) == 2


def test_a_file_the_computation_writes_is_part_of_the_key_as_it_left_it(tmp_path):
    source, cache = tmp_path / "source", tmp_path / "cache"
    source.write_bytes(b"rows")

    def compute():
        cache.write_bytes(b"cached")
        return "from the source"

    assert memo.remembered("t", (), [source], compute, writes=[cache]) == "from the source"
    calls = []
    assert memo.remembered("t", (), [source], lambda: calls.append(1) or "again", writes=[cache]) == "from the source"
    cache.unlink()  # a deleted cache is written again: the value is computed again
    assert memo.remembered("t", (), [source], lambda: calls.append(1) or "again", writes=[cache]) == "again"
    assert calls == [1]


def test_one_entry_per_relation_the_latest(tmp_path):
    a = tmp_path / "a"
    a.write_bytes(b"x")
    memo.remembered("t", ("day 1",), [a], lambda: "t of day 1")
    memo.remembered("u", ("day 1",), [a], lambda: "u of day 1")
    memo.remembered("t", ("day 2",), [a], lambda: "t of day 2")
    calls = []
    assert memo.remembered("t", ("day 2",), [a], lambda: calls.append(1) or "again") == "t of day 2"
    assert memo.remembered("u", ("day 1",), [a], lambda: calls.append(1) or "again") == "u of day 1"
    assert memo.remembered("t", ("day 1",), [a], lambda: calls.append(1) or "recomputed") == "recomputed"
    assert calls == [1]
