"""A tool encoded once (rules/fingerprints.py encode_tool) is the same bytes as the tool encoded whole: its
canonical JSON, its fingerprint and each field's canonical JSON, for any JSON a server may send."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from sevenmaps_pipeline.rules.fingerprints import (
    FINGERPRINT_FIELDS,
    _item_fingerprint,
    canonical_json,
    definition_text,
    definition_text_of,
    encode_tool,
    tool_fingerprint,
)

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=6), inner, max_size=5), max_leaves=24)
_KEYS = st.sampled_from((*FINGERPRINT_FIELDS, "title", "outputSchema", "_meta", "é", 'a"b', "\u2028")) \
    | st.text(max_size=6)
_ITEMS = st.dictionaries(_KEYS, _VALUES, max_size=8) | _VALUES


def _assert_encoded_as_whole(item: object) -> None:
    encoded = encode_tool(item)
    assert encoded.canonical == canonical_json(item) == json.dumps(
        item, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert encoded.item_fingerprint == _item_fingerprint(item)
    assert encoded.fingerprint == tool_fingerprint(item if isinstance(item, dict) else {})
    assert encoded.fields == ({k: canonical_json(v) for k, v in item.items()} if isinstance(item, dict) else {})


@settings(max_examples=400, deadline=None)
@given(_ITEMS)
def test_a_tool_encoded_once_is_the_bytes_of_the_tool_encoded_whole(item):
    _assert_encoded_as_whole(item)


def test_items_that_are_no_tool_and_keys_that_are_no_string():
    for item in (None, 1, "x", [], [{"b": 1, "a": 2}], {}, {1: "a", 2: {"d": 0, "c": None}},
                 {"name": "n", "inputSchema": {"b": [1.5, float("nan")], "a": "é\u2028\"\\"}}):
        _assert_encoded_as_whole(item)
    tools = [{"name": "b", "title": "t"}, 3, {"name": "a", "annotations": {"readOnlyHint": True}}, None]
    assert definition_text_of([encode_tool(t) for t in tools]) == definition_text(tools)
