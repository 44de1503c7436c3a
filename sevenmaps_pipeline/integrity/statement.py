"""The signed statement in each root document (method 7maps-roots-1.1): the methodology's signature covers only
the root, so a C2SP signed note by the same key binds what the root document says around it, its day,
method, signing time, chain link and log position (docs/verifying.md)."""

from __future__ import annotations

from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from .note import Note, Verifier, open_note, sign

HEADER = "7maps-root/v1"
FIELDS = ("day", "method", "previous_day", "previous_root", "root", "signed_at", "log_origin", "first_index",
          "tree_size")


def statement_values(doc: dict[str, Any]) -> dict[str, str]:
    raw = doc.get("log")
    log: dict[str, Any] = raw if isinstance(raw, dict) else {}
    values = {"day": doc.get("day"), "method": doc.get("method"), "previous_day": doc.get("previous_day") or "-",
              "previous_root": doc.get("previous_root") or "-", "root": doc.get("root"),
              "signed_at": doc.get("signed_at"), "log_origin": log.get("origin"),
              "first_index": log.get("first_index"), "tree_size": log.get("tree_size")}
    return {k: str(v) for k, v in values.items()}


def statement_text(doc: dict[str, Any]) -> str:
    values = statement_values(doc)
    return HEADER + "\n" + "".join(f"{name} {values[name]}\n" for name in FIELDS)


def sign_statement(doc: dict[str, Any], name: str, key: Ed25519PrivateKey) -> str:
    text = statement_text(doc)
    return Note(text, [sign(text, name, key)]).render()


def check_statement(doc: dict[str, Any], verifier: Verifier) -> str | None:
    """None when the document's statement is signed by `verifier` and says what the document says."""
    statement = doc.get("statement")
    if not isinstance(statement, str):
        return "no signed statement (root documents of method 7maps-roots-1.1 carry one)"
    opened, problem = open_note(statement, [verifier])
    if opened is None:
        return f"statement: {problem}"
    if opened.text != statement_text(doc):
        said = dict(line.split(" ", 1) for line in opened.text.splitlines()[1:] if " " in line)
        differs = [k for k, v in statement_values(doc).items() if said.get(k) != v]
        return f"the document differs from its signed statement in {', '.join(differs) or 'its form'}"
    return None
