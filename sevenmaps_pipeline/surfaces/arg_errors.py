"""A tool call's bad argument said in one sentence that names the argument and what it allows (docs/agents.md:
"a tool error with one sentence saying what is wrong"), read from the tool's own input schema, never pydantic's
multi-line dump of every error with its links."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

SHOWN_CHARS = 40  # a caller's value is echoed only this far: past it, its length is said instead


def shown(value: Any) -> str:
    """The caller's value as the sentence repeats it: short, on one line (repr escapes newlines)."""
    if isinstance(value, str):
        return repr(value) if len(value) <= SHOWN_CHARS else f"{len(value)} characters"
    try:
        text = json.dumps(value, ensure_ascii=True, default=str)
    except (TypeError, ValueError):
        text = type(value).__name__
    return text if len(text) <= SHOWN_CHARS else f"a {type(value).__name__} of {len(text)} characters"


def _range(low: Any, high: Any) -> str:
    if low is not None and high is not None:
        return f" from {low:,} to {high:,}"
    return f" of at least {low:,}" if low is not None else f" of at most {high:,}" if high is not None else ""


def allowed(schema: dict[str, Any]) -> str:
    """What an argument's JSON schema allows, in words: 'an integer from 1 to 20', 'one of green, yellow, red'."""
    options = [s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
    nullable = len(options) < len(schema.get("anyOf", [schema]))
    words = [_one(s) for s in options]
    text = " or ".join(w for w in words if w) or "a value of the tool's schema"
    # An optional enum is said by its values alone (leaving it out is the way to give none).
    return f"{text}, or null" if nullable and not text.startswith("one of") else text


def _one(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(str(v) for v in schema["enum"])
    if "const" in schema:
        return f"{schema['const']}"
    kind = schema.get("type")
    if kind == "integer":
        return "an integer" + _range(schema.get("minimum"), schema.get("maximum"))
    if kind == "number":
        return "a finite number" + _range(schema.get("minimum"), schema.get("maximum"))
    if kind == "boolean":
        return "true or false"
    if kind == "string" and schema.get("pattern") and schema.get("description"):
        return str(schema["description"])  # a pattern is said as the tool says it to people, never as a regex
    if kind == "string":
        limit = schema.get("maxLength")
        return "a string" + (f" of at most {limit:,} characters" if limit else "")
    return str(kind or "")


def one_sentence(tool: str, parameters: dict[str, Any], exc: ValidationError) -> str:
    """The first error of `exc` (a tool's arguments against `parameters`, its input schema) as one line."""
    errors = exc.errors(include_url=False)
    if not errors:
        return f"{tool}'s arguments do not fit its schema"
    first = errors[0]
    name = str(first["loc"][0]) if first["loc"] else "the arguments"
    schema = parameters.get("properties", {}).get(name)
    if schema is None:
        return f"{name}: {first['msg']}"
    if first["type"] == "missing":
        return f"{name} is missing: {tool} needs it, {allowed(schema)}"
    return f"{name} must be {allowed(schema)} (got {shown(first.get('input'))})"
