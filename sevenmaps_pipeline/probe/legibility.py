"""Step 5 of the readiness rubric (docs/methodology.md, "Readiness"): whether the answer to a deliberately bad
tool call tells the caller what went wrong."""

from __future__ import annotations

from typing import Any

from .messages import quoted

# Messages that say an error happened but not what was wrong with the call (JSON-RPC's stock texts among them).
_GENERIC_ERRORS = {"error", "internal error", "internal server error", "bad request", "invalid params",
                   "an error occurred", "unknown error", "server error", "method not found", "parse error",
                   "invalid request"}


def error_legibility(status: int, kind: str | None, error: Any, result: Any) -> tuple[bool, str]:
    """Whether the answer to a bad call tells the caller what went wrong: a JSON-RPC error, or a result
    with isError true, whose message says more than a generic word (at least 8 characters)."""
    text = None
    if kind == "error" and isinstance(error, dict) and isinstance(error.get("message"), str):
        text = error["message"]
    elif kind == "result" and isinstance(result, dict) and result.get("isError") is True:
        content = result.get("content")
        parts = [str(c["text"]) for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)] \
            if isinstance(content, list) else []
        text = " ".join(parts)
    elif kind == "result":
        return False, "the call succeeded with arguments no schema allows"
    if text is None:
        return False, f"HTTP {status}, no error message"
    # Judged on what is shown (docs/methodology.md, "The bad call"): the text quoted as every server text is, so
    # escapes or invisible characters alone never pass for a message.
    said = quoted(text, 200)
    legible = len(said) >= 8 and said.lower().strip(" .!") not in _GENERIC_ERRORS
    return legible, repr(said)
