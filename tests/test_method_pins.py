"""A method version names one behaviour (docs/changelog.md): what a versioned rule publishes is pinned per version
in tests/data/method_pins.json, so a change to what it publishes under an unchanged version fails here.

- **risk**: the level, rule, evidence and contradiction `classify` gives every tool of the real corpora
  (tests/data: the split corpus and the holdout), with annotations read and ignored: a change to the vocabulary or
  to rules/risk.py that moves any of them is a new risk method; a refactor that moves none is not.
- **parameters**: each `*_PARAMS` of rules/methods.py (thresholds, windows, weights) and the categories' word lists
  (assets/categories.json), under the method they belong to: a parameter changed is a new version. The readiness
  rubrics' lines (their sections, labels and points) are pinned with the readiness parameters, and the words route
  reads from every corpus tool (surfaces/route.py `terms`: its stop words and stemmer) with route's.

A new version adds its pin beside its changelog entry; the failure prints the line to add.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from sevenmaps_pipeline.devtools.tool_corpus import load_holdout, load_servers
from sevenmaps_pipeline.packaged import shipped
from sevenmaps_pipeline.rules import methods
from sevenmaps_pipeline.rules.readiness import MCP_LINES, SKILL_LINES
from sevenmaps_pipeline.rules.risk import classify, default_vocabulary
from sevenmaps_pipeline.surfaces.route import tool_terms

PINS = Path(__file__).parent / "data" / "method_pins.json"


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


@functools.cache
def corpus_tools() -> list[dict[str, Any]]:
    return [tool for server in load_servers() + load_holdout() for tool in server.tools if isinstance(tool, dict)]


def risk_outputs_digest() -> tuple[str, int]:
    """The SHA-256 of what `classify` publishes for every corpus tool, annotations read and ignored; the tools."""
    vocab = default_vocabulary()
    digest, tools = hashlib.sha256(), 0
    for tool in corpus_tools():
        tools += 1
        for ignore in (False, True):
            r = classify(tool, vocab, ignore_annotations=ignore)
            digest.update(json.dumps([r.risk, r.rule, r.evidence, r.contradiction], ensure_ascii=False).encode())
            digest.update(b"\n")
    return digest.hexdigest(), tools


def route_terms() -> list[list[str]]:
    """The words route indexes of every corpus tool (its name, title and description)."""
    def text(value: Any) -> str | None:
        return None if value is None else str(value)

    return [tool_terms(text(t.get("name")) or "", text(t.get("title")), text(t.get("description")))
            for t in corpus_tools()]


def rubric_lines() -> list[list[Any]]:
    return [[line.section, line.key, line.label, line.points] for line in MCP_LINES + SKILL_LINES]


def parameter_pins() -> dict[str, str]:
    """Each versioned parameter set: (the method it belongs to) -> its digest."""
    categories = json.loads(shipped("assets", "categories.json").read_text())
    return {
        methods.STATUS_METHOD: _digest(methods.STATUS_PARAMS),
        methods.OVERLOAD_METHOD: _digest(methods.OVERLOAD_PARAMS),
        methods.HISTORY_METHOD: _digest(methods.HISTORY_PARAMS),
        methods.FINDINGS_METHOD: _digest(methods.FINDINGS_PARAMS),
        categories["method"]: _digest([categories, methods.CATEGORY_PARAMS]),
        methods.CHANGES_METHOD: _digest(methods.CHANGES_PARAMS),
        methods.RANKINGS_METHOD: _digest(methods.RANKINGS_PARAMS),
        methods.REPORTS_METHOD: _digest(methods.REPORTS_PARAMS),
        methods.RATINGS_METHOD: _digest(methods.RATINGS_PARAMS),
        methods.INCIDENTS_METHOD: _digest(methods.INCIDENTS_PARAMS),
        f"{methods.READINESS_MCP_METHOD}+{methods.READINESS_SKILL_METHOD}": _digest([methods.READINESS_PARAMS,
                                                                                    rubric_lines()]),
        methods.SUBMISSION_METHOD: _digest(methods.SUBMISSION_PARAMS),
        methods.DOMAIN_AGE_METHOD: _digest(methods.DOMAIN_AGE_PARAMS),
        methods.ROUTE_METHOD: _digest([methods.ROUTE_PARAMS, route_terms()]),
    }


@pytest.fixture(scope="module")
def pins() -> dict[str, dict[str, str]]:
    return json.loads(PINS.read_text())


def _unpinned(kind: str, version: str, digest: str) -> str:
    return (f"{kind} {version} has no pin: if it is a new version with its changelog entry, add "
            f'"{version}": "{digest}" under "{kind}" in {PINS.name}')


def test_the_risk_rules_publish_what_their_method_version_pinned(pins):
    digest, tools = risk_outputs_digest()
    version = default_vocabulary().method
    assert tools > 30_000  # the corpora are there: a pin over nothing would hold anything
    assert version in pins["risk"], _unpinned("risk", version, digest)
    assert pins["risk"][version] == digest, (
        f"the risk rules publish other levels, rules, evidence or contradictions for the corpus tools under the "
        f"unchanged method {version}: a new risk method (assets/risk_vocabulary.json, docs/changelog.md with the "
        f"count of corpus tools that moved), then its pin {digest}")


def test_every_parameter_set_is_what_its_method_version_pinned(pins):
    for version, digest in parameter_pins().items():
        assert version in pins["parameters"], _unpinned("parameters", version, digest)
        assert pins["parameters"][version] == digest, (
            f"the parameters of {version} changed under an unchanged version: a new version of that method "
            f"(rules/methods.py or assets/categories.json, docs/changelog.md), then its pin {digest}")


def test_a_pin_is_made_of_what_it_pins():
    # The digests move when what they stand for moves (and only then): a changed threshold is another pin.
    changed = dict(methods.FINDINGS_PARAMS, slow_ms=methods.FINDINGS_PARAMS["slow_ms"] + 1)
    assert _digest(changed) != _digest(methods.FINDINGS_PARAMS)
    assert _digest(dict(reversed(list(methods.FINDINGS_PARAMS.items())))) == _digest(methods.FINDINGS_PARAMS)
