"""The words-only risk estimate on real tool definitions (tests/data/risk_corpus.json: 311 tools from 11
public MCP servers, sources in the file and in tests/data/README.md), against the servers' own annotations."""

from __future__ import annotations

import json

import pytest

from sevenmaps_pipeline.devtools.risk_corpus import CORPUS, measure, measure_sides, report, sides_report
from sevenmaps_pipeline.devtools.tool_corpus import DEVELOPMENT, EVALUATION, HOLDOUT


def test_the_corpus_is_real_and_large_enough():
    doc = json.loads(CORPUS.read_text())
    servers = {t["server"] for t in doc["tools"]}
    assert len(doc["tools"]) >= 300 and len(servers) >= 6
    assert servers <= set(doc["sources"])  # every tool says where it came from


def test_words_alone_agree_with_the_servers_own_annotations():
    m = measure()
    print("\n" + report(m))
    assert m.binary_share >= 0.92, report(m)               # read-only versus changing
    assert m.changing_as_read_only_share <= 0.015, report(m)  # a changing tool called read-only
    assert m.level_share >= 0.75, report(m)                # the three levels


@pytest.fixture(scope="module")
def sides():
    """Every side measured once for the module (the corpora are about 10 MB of gzipped JSON)."""
    return measure_sides()


def test_both_sides_of_the_tool_corpus_hold_what_was_measured(sides):
    """The split corpus (devtools/tool_corpus.py): guards at the figures measured at risk-1.7, with the third
    gathering (corpus_fresh.json.gz, 336 servers) in it, so a change that makes either side worse fails here (the
    goals, read-only vs changing at least 93% and changing called read-only at most 1.0% on the evaluation side,
    are not met: docs/methodology.md)."""
    print("\n" + sides_report(sides))
    dev, ev = sides[DEVELOPMENT], sides[EVALUATION]
    assert dev.tools >= 2000 and ev.tools >= 1500
    assert dev.binary_share >= 0.921 and dev.changing_as_read_only_share <= 0.013 and dev.level_share >= 0.820
    assert ev.binary_share >= 0.911 and ev.changing_as_read_only_share <= 0.037 and ev.level_share >= 0.806


def test_the_holdout_holds_what_it_measured_once(sides):
    """The holdout (corpus_holdout.json.gz: 708 servers gathered blind after the evaluation side had been read tool
    by tool), measured once at risk-1.7 and never tuned on: guards at that measurement, far from issue 37's goals
    (docs/methodology.md)."""
    holdout = sides[HOLDOUT]
    print("\n" + report(holdout, "tools of the corpus's holdout"))
    assert holdout.tools >= 17000
    assert holdout.binary_share >= 0.835 and holdout.changing_as_read_only_share <= 0.069
    assert holdout.level_share >= 0.735
