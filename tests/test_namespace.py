"""A listing's namespace proof, named by method, with what it does and does not prove."""

from __future__ import annotations

import pytest

from sevenmaps_pipeline.rules.namespace import namespace_domain, namespace_proof
from sevenmaps_pipeline.rules.readiness import McpFacts, score_mcp


@pytest.mark.parametrize(("name", "http", "method"), [
    ("io.github.alice/weather", None, "github"),
    ("com.example/server", True, "http"),
    ("com.example/server", False, "dns"),
    ("com.example.mcp/server", None, "dns or http"),
    ("io.github./x", None, "none"),
    ("localhost/x", None, "none"),
    ("not a name", None, "none"),
    (None, None, "none")])
def test_the_method_follows_from_the_name_and_the_http_file(name, http, method):
    proof = namespace_proof(name, from_registry=True, http_file_answers=http)
    assert proof.method == method
    if method != "none":
        assert "not that the product named in it endorses it" in proof.evidence


def test_outside_the_registry_only_a_verified_claim_proves_it():
    assert namespace_proof("com.example/server", from_registry=False).method == "none"
    assert namespace_proof("com.example/server", from_registry=False, verified_claim=True).method == "claim"


def test_namespace_domains_and_the_rubric_line():
    assert namespace_domain("com.example.mcp") == "mcp.example.com"
    assert namespace_domain("io.github.alice") is None and namespace_domain("com..x") is None
    passed = score_mcp(McpFacts(namespace_proof="github"))
    failed = score_mcp(McpFacts(namespace_proof="none"))
    assert (passed.label(), failed.label()) == ("5/5", "0/5")
