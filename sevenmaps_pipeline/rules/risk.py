"""Tool risk: green (read-only), yellow (changes data), red (deletes, pays, grants, deploys or runs code).

Seed 000 `tool_risk` and DESIGN §4: a server's annotations count first (an unset hint is not false);
without a decisive annotation the tool's name and description decide, from the vocabulary in
`assets/risk_vocabulary.json`. Method 1.2: a tool whose name starts with a reading verb is green when
nothing in its description suggests a change. Annotations that contradict the words are reported as a
contradiction (a finding), never silently overridden either way.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from ..lake.paths import PROJECT_ROOT

VOCABULARY = PROJECT_ROOT / "assets" / "risk_vocabulary.json"
LEVELS = ("green", "yellow", "red")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class Vocabulary:
    method: str
    red: frozenset[str]
    yellow: frozenset[str]
    read: frozenset[str]
    red_phrases: tuple[str, ...]
    description_red: frozenset[str]
    description_change: frozenset[str]

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Vocabulary:
        return cls(doc["method"], frozenset(doc["red_verbs"]), frozenset(doc["yellow_verbs"]),
                   frozenset(doc["read_verbs"]), tuple(p.lower() for p in doc["red_phrases"]),
                   frozenset(doc["description_red_verbs"]), frozenset(doc["description_change_verbs"]))


@functools.cache
def default_vocabulary() -> Vocabulary:
    return Vocabulary.from_dict(json.loads(VOCABULARY.read_text()))


@dataclass
class RiskResult:
    name: str
    risk: str
    rule: str
    evidence: list[str] = field(default_factory=list)
    contradiction: str | None = None
    method: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def name_words(name: str) -> list[str]:
    return [w.lower() for part in _SPLIT.split(name or "") for w in _CAMEL.split(part) if w]


def _present_forms(word: str) -> set[str]:
    """A reading verb as an instruction or in the present tense ("list", "lists", "queries")."""
    return {word, word + "s", word + "es", word[:-1] + "ies" if word.endswith("y") else word + "s"}


def _description_verbs(description: str, verbs: frozenset[str]) -> list[str]:
    """Unambiguous verb forms the description uses ("deletes"; never "deleted", an adjective in "lists
    deleted files")."""
    return sorted(set(re.findall(r"[a-z]+", description.lower())) & verbs)


def words_level(name: str, description: str, vocab: Vocabulary) -> tuple[str, str, list[str]]:
    """(level, rule, evidence) from the name's leading verb and the description."""
    tokens = name_words(name)
    desc = (description or "").lower()
    phrases = [p for p in vocab.red_phrases if p in desc]
    lead = tokens[0] if tokens else ""
    red_in_desc = _description_verbs(desc, vocab.description_red)
    change_in_desc = _description_verbs(desc, vocab.description_change)
    if lead in vocab.red:
        return "red", "name starts with a high-risk verb", [f"name:{lead}"]
    if phrases:
        return "red", "description says it does something high-risk", [f"description:{p}" for p in phrases]
    if lead in vocab.yellow:
        if red_in_desc:
            return "red", "description names a high-risk action", [f"name:{lead}"] + [f"description:{v}" for v in
                                                                                     red_in_desc]
        return "yellow", "name starts with a verb that changes data", [f"name:{lead}"]
    if lead in vocab.read:
        if red_in_desc:
            return "red", "reading name, but the description names a high-risk action", \
                [f"name:{lead}"] + [f"description:{v}" for v in red_in_desc]
        if change_in_desc:
            return "yellow", "reading name, but the description names a change", \
                [f"name:{lead}"] + [f"description:{v}" for v in change_in_desc]
        return "green", "reading verb and nothing suggests a change (method 1.2)", [f"name:{lead}"]
    if red_in_desc:
        return "red", "description names a high-risk action", [f"description:{v}" for v in red_in_desc]
    if change_in_desc:
        return "yellow", "description names a change", [f"description:{v}" for v in change_in_desc]
    lead_desc = re.match(r"\s*([a-z]+)", desc)
    if lead_desc and any(lead_desc.group(1) in _present_forms(v) for v in vocab.read):
        return "green", "description starts with a reading verb and nothing suggests a change (method 1.2)", \
            [f"description:{lead_desc.group(1)}"]
    return "yellow", "no reading verb found: assumed to change data", []


def classify(tool: dict[str, Any], vocab: Vocabulary | None = None, ignore_annotations: bool = False) -> RiskResult:
    vocab = vocab or default_vocabulary()
    name = str(tool.get("name") or "")
    description = str(tool.get("description") or "")
    words, words_rule, words_evidence = words_level(name, description, vocab)
    annotations = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    read_only = annotations.get("readOnlyHint") if not ignore_annotations else None
    destructive = annotations.get("destructiveHint") if not ignore_annotations else None
    result = RiskResult(name=name, risk=words, rule=f"words: {words_rule}", evidence=words_evidence,
                        method=vocab.method)
    if read_only is True:
        result.risk, result.rule, result.evidence = "green", "annotations: readOnlyHint=true", ["readOnlyHint=true"]
        if words != "green" and words_evidence:
            result.contradiction = (f"readOnlyHint=true, but the words say {words} "
                                    f"({', '.join(words_evidence)})")
    elif read_only is False and destructive is True:
        result.risk, result.rule = "red", "annotations: readOnlyHint=false, destructiveHint=true"
        result.evidence = ["readOnlyHint=false", "destructiveHint=true"]
    elif read_only is False and destructive is False:
        result.risk, result.rule = "yellow", "annotations: readOnlyHint=false, destructiveHint=false"
        result.evidence = ["readOnlyHint=false", "destructiveHint=false"]
        if words == "red":
            result.contradiction = f"destructiveHint=false, but the words say red ({', '.join(words_evidence)})"
    elif read_only is False:  # changes data; the words say how much (never below yellow)
        result.risk = "red" if words == "red" else "yellow"
        result.rule = f"annotations: readOnlyHint=false; words: {words_rule}"
        result.evidence = ["readOnlyHint=false"] + words_evidence
    elif destructive is True:  # readOnlyHint unset: a destructive hint still counts
        result.risk, result.rule, result.evidence = "red", "annotations: destructiveHint=true", ["destructiveHint=true"]
    return result
