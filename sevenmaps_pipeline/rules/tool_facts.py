"""What a tool list says, computed once per distinct tools_hash (never per endpoint-day).

One row per tool (fingerprint, the four annotation hints with unset kept apart from false, risk with
its rule and evidence, description tokens) and one summary per list (definition tokens). Every row
carries the method versions that produced it, so a method change recomputes rather than mixes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .fingerprints import canonical_json, definition_text, tool_fingerprint
from .risk import Vocabulary, classify, default_vocabulary
from .tokens import TOKENIZER_METHOD, count_many

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def facts_method(vocab: Vocabulary | None = None) -> str:
    return f"{(vocab or default_vocabulary()).method}+{TOKENIZER_METHOD}"


@dataclass
class ListFacts:
    tools_hash: str
    definition_tokens: int
    tool_rows: list[dict[str, Any]]


def _hint(annotations: Any, key: str) -> bool | None:
    if not isinstance(annotations, dict) or key not in annotations:
        return None  # unset: not the same as false
    value = annotations[key]
    return value if isinstance(value, bool) else None


def _parse(tools_json: str) -> list:
    try:
        tools = json.loads(tools_json)
    except ValueError:
        return []
    return tools if isinstance(tools, list) else []


def _description(tool: Any) -> str:
    return str(tool.get("description") or "") if isinstance(tool, dict) else ""


def facts_of_lists(lists: list[tuple[str, str]], vocab: Vocabulary | None = None) -> list[ListFacts]:
    """Facts of many (tools_hash, tools_json) lists; every text is tokenized in one batch."""
    vocab = vocab or default_vocabulary()
    parsed = [_parse(tools_json) for _, tools_json in lists]
    texts = [definition_text(tools) for tools in parsed]  # the definition tokens' text (rules/tokens.py)
    for tools in parsed:
        texts.extend(_description(t) for t in tools)
    counts = count_many(texts)
    described = iter(counts[len(lists):])
    return [_list_facts(tools_hash, tools, counts[i], [next(described) for _ in tools], vocab)
            for i, ((tools_hash, _), tools) in enumerate(zip(lists, parsed, strict=True))]


def _list_facts(tools_hash: str, tools: list, definition_tokens: int, description_tokens: list[int],
                vocab: Vocabulary) -> ListFacts:
    method = facts_method(vocab)
    rows = []
    for position, (tool, tokens) in enumerate(zip(tools, description_tokens, strict=True)):
        if not isinstance(tool, dict):
            tool = {}
        annotations = tool.get("annotations")
        risk = classify(tool, vocab)
        schema = tool.get("inputSchema")
        rows.append({
            "tools_hash": tools_hash, "position": position, "fingerprint": tool_fingerprint(tool),
            "name": str(tool.get("name")) if tool.get("name") is not None else None,
            "title": tool.get("title") if isinstance(tool.get("title"), str) else None,
            "description": tool.get("description") if isinstance(tool.get("description"), str) else None,
            "input_schema_json": canonical_json(schema) if schema is not None else None,
            "output_schema_json": canonical_json(tool["outputSchema"]) if tool.get("outputSchema") is not None
            else None,
            "annotations_json": canonical_json(annotations) if annotations is not None else None,
            "read_only_hint": _hint(annotations, "readOnlyHint"),
            "destructive_hint": _hint(annotations, "destructiveHint"),
            "idempotent_hint": _hint(annotations, "idempotentHint"),
            "open_world_hint": _hint(annotations, "openWorldHint"),
            "risk": risk.risk, "risk_rule": risk.rule, "risk_evidence": risk.evidence,
            "annotation_contradiction": risk.contradiction, "description_tokens": tokens,
            "method_version": method,
        })
    return ListFacts(tools_hash, definition_tokens, rows)
