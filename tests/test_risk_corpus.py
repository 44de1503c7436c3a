"""The words-only risk estimate on real tool definitions (tests/data/risk_corpus.json: 311 tools from 11
public MCP servers, sources in the file and in tests/data/README.md), against the servers' own annotations."""

from __future__ import annotations

import json

from sevenmaps_pipeline.devtools.risk_corpus import CORPUS, measure, report


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
