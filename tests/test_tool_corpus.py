"""The real tool lists the rules are measured on (tests/data/README.md) and their development/evaluation split,
fixed before any rule was measured on them (sevenmaps_pipeline/devtools/tool_corpus.py): the split the code
computes is the one recorded in tests/data/corpus_split.json, so it cannot move while rules are tuned."""

from __future__ import annotations

import json

from sevenmaps_pipeline.devtools.tool_corpus import (
    DEVELOPMENT,
    EVALUATION,
    HOLDOUT,
    SPLIT_FILE,
    load_holdout,
    load_servers,
    publisher,
    publisher_side,
    side_of,
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


def _packages(servers) -> set[str]:
    return {s.id.split(":", 1)[1].rsplit("@", 1)[0].lower() for s in servers if s.id.startswith(("npm:", "pypi:"))}


def test_the_holdout_is_apart_from_both_sides():
    """The holdout (tests/data/README.md) was gathered after the evaluation side had been read tool by tool: none of
    its publishers or packages is in the split, each server names its source and version, and it is a side of its
    own, outside the recorded split."""
    holdout, split = load_holdout(), load_servers()
    annotated = [t for s in holdout for t in s.tools
                 if isinstance((t.get("annotations") or {}).get("readOnlyHint"), bool)]
    assert len(holdout) >= 40 and len(annotated) >= 1500
    assert not {publisher(s.publisher) for s in holdout} & {publisher(s.publisher) for s in split}
    assert not _packages(holdout) & _packages(split)
    assert len({s.id for s in holdout}) == len(holdout)
    assert all(s.id.rsplit("@", 1)[1] for s in holdout)  # each at the version it was read at
    assert {side_of(s) for s in holdout} == {HOLDOUT}
    assert not {s.id for s in holdout} & set(json.loads(SPLIT_FILE.read_text())["servers"])
