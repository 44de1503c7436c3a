"""What a tool list says, computed once per distinct tools_hash (never per endpoint-day).

One row per tool (fingerprint, the four annotation hints with unset kept apart from false, risk with
its rule and evidence, description tokens) and one summary per list (definition tokens). Every row
carries the method versions that produced it, so a method change recomputes rather than mixes.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from .fingerprints import EncodedTool, definition_text_of, encode_tool
from .methods import TOKENIZER_METHOD
from .risk import Vocabulary, classify, default_vocabulary
from .tokens import count_many

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
_JSON_FIELDS = ("inputSchema", "outputSchema", "annotations")
# A tool's fingerprint and the canonical JSON of its _JSON_FIELDS (None where unset or null).
_Columns = tuple[str, str | None, str | None, str | None]


def facts_method(vocab: Vocabulary | None = None) -> str:
    return f"{(vocab or default_vocabulary()).method}+{TOKENIZER_METHOD}"


@dataclass(frozen=True)
class KnownTokens:
    """A list's counts from an earlier method under the same tokenizer: what a method change of the rules
    need not count again. `descriptions` maps a tool's fingerprint (which holds its description) to its
    description tokens."""

    definition: int
    descriptions: dict[str, int]


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


def _json_columns(tool: Any, encoded: EncodedTool) -> _Columns:
    """The columns, from the pieces the tool was encoded in once (rules/fingerprints.py encode_tool)."""
    if not isinstance(tool, dict):
        return encoded.fingerprint, None, None, None
    inputs, outputs, annotations = (encoded.fields[key] if tool.get(key) is not None else None
                                    for key in _JSON_FIELDS)
    return encoded.fingerprint, inputs, outputs, annotations


def facts_of_lists(lists: list[tuple[str, str]], vocab: Vocabulary | None = None,
                   known: dict[str, KnownTokens] | None = None, one_thread: bool = False) -> list[ListFacts]:
    """Facts of many (tools_hash, tools_json) lists; every text not `known` is tokenized in one batch (on
    this thread alone with `one_thread`: rules/tokens.py count_many)."""
    vocab = vocab or default_vocabulary()
    known = known or {}
    parsed = [_parse(tools_json) for _, tools_json in lists]
    texts: list[str] = []
    # Each count's place: an index into the counts to come, or the count itself when known (negative: -1-n).
    definitions, descriptions, columns = [], [], []
    for (tools_hash, _), tools in zip(lists, parsed, strict=True):
        encoded = [encode_tool(t) for t in tools]
        list_columns = [_json_columns(t, e) for t, e in zip(tools, encoded, strict=True)]
        columns.append(list_columns)
        was = known.get(tools_hash)
        if was is None:
            definitions.append(len(texts))
            texts.append(definition_text_of(encoded))  # the definition tokens' text (rules/tokens.py)
        else:
            definitions.append(-1 - was.definition)
        places = []
        for tool, (fingerprint, *_) in zip(tools, list_columns, strict=True):
            kept = was.descriptions.get(fingerprint) if was and isinstance(tool, dict) else None
            if kept is None:
                places.append(len(texts))
                texts.append(_description(tool))
            else:
                places.append(-1 - kept)
        descriptions.append(places)
    counts = count_many(texts, one_thread)

    def count(place: int) -> int:
        return counts[place] if place >= 0 else -1 - place

    return [_list_facts(tools_hash, tools, cols, count(definition), [count(p) for p in places], vocab)
            for (tools_hash, _), tools, cols, definition, places in zip(lists, parsed, columns, definitions,
                                                                        descriptions, strict=True)]


def _list_facts(tools_hash: str, tools: list, columns: list[_Columns], definition_tokens: int,
                description_tokens: list[int], vocab: Vocabulary) -> ListFacts:
    method = facts_method(vocab)
    rows = []
    for position, (tool, (fingerprint, input_schema, output_schema, annotations_json), tokens) in enumerate(
            zip(tools, columns, description_tokens, strict=True)):
        if not isinstance(tool, dict):
            tool = {}
        annotations = tool.get("annotations")
        risk = classify(tool, vocab)
        rows.append({
            "tools_hash": tools_hash, "position": position, "fingerprint": fingerprint,
            "name": str(tool.get("name")) if tool.get("name") is not None else None,
            "title": tool.get("title") if isinstance(tool.get("title"), str) else None,
            "description": tool.get("description") if isinstance(tool.get("description"), str) else None,
            "input_schema_json": input_schema, "output_schema_json": output_schema,
            "annotations_json": annotations_json,
            "read_only_hint": _hint(annotations, "readOnlyHint"),
            "destructive_hint": _hint(annotations, "destructiveHint"),
            "idempotent_hint": _hint(annotations, "idempotentHint"),
            "open_world_hint": _hint(annotations, "openWorldHint"),
            "risk": risk.risk, "risk_rule": risk.rule, "risk_evidence": risk.evidence,
            "annotation_contradiction": risk.contradiction, "description_tokens": tokens,
            "method_version": method,
        })
    return ListFacts(tools_hash, definition_tokens, rows)


def reclassified(day: dt.date, carried: pa.Table, known: dict[str, KnownTokens], schema: pa.Schema,
                 vocab: Vocabulary | None = None) -> tuple[list[dict[str, Any]], pa.Table]:
    """Lists whose rows an earlier method computed with the same tokenizer (`carried`: those rows, in tools_hash
    and position order): their tool_lists rows and their rows with the risk read again under the current rules.
    The rules read a tool's name, description, inputSchema and annotations, all of which a row keeps (the lists
    whose row cannot say them exactly are parsed again: sql/tool_facts_carried.sql), so the levels are those
    parsing gives. The other columns are the tokenizer method's (rules/methods.py TOKENIZER_METHOD) and are kept
    as first computed, from the copy of the list then parsed: a tools_hash holds its tools' four fields in any
    order, and a server serving it in another order or with another title or outputSchema is, as on every day
    after a list's first, the same list (docs/scaling.md, "The rules day carries the rows")."""
    vocab = vocab or default_vocabulary()
    method = facts_method(vocab)
    levels: dict[str, list[Any]] = {"risk": [], "risk_rule": [], "risk_evidence": [], "annotation_contradiction": []}
    for name, description, inputs, hints in zip(*(carried.column(c).to_pylist() for c in (
            "name", "description", "input_schema_json", "annotations_json")), strict=True):
        tool: dict[str, Any] = {"name": name, "description": description}
        if inputs is not None:
            tool["inputSchema"] = json.loads(inputs)
        if hints is not None:
            tool["annotations"] = json.loads(hints)
        risk = classify(tool, vocab)
        for column, value in zip(levels, (risk.risk, risk.rule, risk.evidence, risk.contradiction), strict=True):
            levels[column].append(value)
    rows = carried.num_rows
    columns = {"day": pa.array([day] * rows, schema.field("day").type),
               "method_version": pa.array([method] * rows, schema.field("method_version").type),
               **{column: pa.array(values, schema.field(column).type) for column, values in levels.items()}}
    table = pa.Table.from_arrays([columns[f.name] if f.name in columns else carried.column(f.name).cast(f.type)
                                  for f in schema], schema=schema)
    counts: dict[str, int] = {}
    for tools_hash in carried.column("tools_hash").to_pylist():
        counts[tools_hash] = counts.get(tools_hash, 0) + 1
    summaries = [{"day": day, "tools_hash": tools_hash, "tool_count": count,
                  "definition_tokens": known[tools_hash].definition, "method_version": method}
                 for tools_hash, count in counts.items()]
    return summaries, table


def facts_batch(day: dt.date, lists: list[tuple[str, str]], known: dict[str, KnownTokens], schema: pa.Schema,
                one_thread: bool = False, carried: pa.Table | None = None) -> tuple[list[dict[str, Any]], pa.Table]:
    """One batch of a day's lists: their tool_lists rows, and their tools' rows as a table of `schema` (the
    lake's tool_facts schema, passed in so that a worker process imports this module and not the lake's
    builders: docs/scaling.md, "The day's peak memory"), in tools_hash and position order. `lists` are parsed;
    the lists whose rows are `carried` from an earlier method have their risk read again (reclassified)."""
    method = facts_method()
    summaries, tools = [], []
    for facts in facts_of_lists(lists, known=known, one_thread=one_thread):
        summaries.append({"day": day, "tools_hash": facts.tools_hash, "tool_count": len(facts.tool_rows),
                          "definition_tokens": facts.definition_tokens, "method_version": method})
        tools += [{"day": day, **row} for row in facts.tool_rows]
    table = pa.Table.from_pylist(tools, schema)
    if carried is None or carried.num_rows == 0:
        return summaries, table
    carried_summaries, carried_table = reclassified(day, carried, known, schema)
    if not summaries:
        return carried_summaries, carried_table
    return (sorted(summaries + carried_summaries, key=lambda row: row["tools_hash"]),
            pa.concat_tables([table, carried_table]).sort_by([("tools_hash", "ascending"),
                                                              ("position", "ascending")]))


def facts_batch_in_worker(day: dt.date, lists: list[tuple[str, str]], known: dict[str, KnownTokens],
                          schema: pa.Schema, carried: pa.Table | None = None) -> tuple[list[dict[str, Any]], pa.Table]:
    """facts_batch in a pool worker (started by lake/memory.py collector_off_in_worker): counted on its one
    thread (there is a worker per core), then collected."""
    rows = facts_batch(day, lists, known, schema, one_thread=True, carried=carried)
    gc.collect()
    return rows
