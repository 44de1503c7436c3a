"""The real tool lists the rules are measured on (tests/data/README.md) and their development/evaluation split,
fixed before any rule was measured on them (sevenmaps_pipeline/devtools/tool_corpus.py): the split the code
computes is the one recorded in tests/data/corpus_split.json, so it cannot move while rules are tuned."""

from __future__ import annotations

import json

from sevenmaps_pipeline.devtools.tool_corpus import (
    DEVELOPMENT,
    EVALUATION,
    SPLIT_FILE,
    load_servers,
    publisher,
    publisher_side,
    split_record,
)


def test_the_corpus_is_real_large_and_sourced():
    servers = load_servers()
    tools = sum(len(s.tools) for s in servers)
    assert tools >= 1500 and len(servers) >= 40 and len({publisher(s.publisher) for s in servers}) >= 40
    assert all(s.tools and s.id and s.publisher for s in servers)
    assert len({s.id for s in servers}) == len(servers)  # each list once


def test_the_split_is_the_one_recorded_before_tuning():
    assert split_record(load_servers()) == json.loads(SPLIT_FILE.read_text())


def test_a_publisher_sits_on_one_side_only():
    record = json.loads(SPLIT_FILE.read_text())["servers"]
    sides: dict[str, set[str]] = {}
    for entry in record.values():
        sides.setdefault(entry["publisher"], set()).add(entry["side"])
    assert all(len(s) == 1 for s in sides.values())
    assert {side for s in sides.values() for side in s} == {DEVELOPMENT, EVALUATION}
    # one publisher under three spellings, and the legacy set's publishers on the development side
    assert publisher("@ModelContextProtocol") == publisher("github:modelcontextprotocol") == "modelcontextprotocol"
    assert publisher_side("@modelcontextprotocol") == publisher_side("github") == DEVELOPMENT
