"""The readiness rubric's lines at and around every threshold, the unseen lines left out on both sides of
the slash, and the version with every score (rules/readiness.py; issue 12's scoring, before its probe)."""

from __future__ import annotations

import datetime as dt

import pytest

from sevenmaps_pipeline.rules.methods import READINESS_MCP_METHOD, READINESS_SKILL_METHOD
from sevenmaps_pipeline.rules.readiness import (
    MCP_LINES,
    SKILL_LINES,
    McpFacts,
    SkillFacts,
    assemble,
    judged,
    score_mcp,
    score_skill,
    sliding_points,
)

TODAY = dt.date(2026, 11, 30)


def _tools(n: int, annotated: int = 0, with_output: int = 0) -> list[dict]:
    return [{"name": f"t{i}", **({"annotations": {"readOnlyHint": True}} if i < annotated else {}),
             **({"outputSchema": {"type": "object"}} if i < with_output else {})} for i in range(n)]


def _modern(**changes) -> McpFacts:
    facts = McpFacts(answered_via="discover", url_scheme="https", redirects_followed=0, p50_ms=120.0,
                     revision="2026-07-28", tool_orders=[["a", "b"], ["a", "b"]], definition_tokens=1_200,
                     ttl_ms=60_000, cache_scope="public", tools_result_seen=True, tools=_tools(10, 10, 10),
                     needs_auth=False, namespace_proof="github",
                     repository={"private": False, "archived": False, "pushed_at": "2026-10-01T12:00:00Z"},
                     injection_hits=[], today=TODAY)
    for key, value in changes.items():
        setattr(facts, key, value)
    return facts


def _line(score, key):
    return next(result for line, result in score.lines if line.key == key)


def test_the_rubrics_add_up_to_100_in_five_sections_and_carry_their_versions():
    for lines in (MCP_LINES, SKILL_LINES):
        assert sum(line.points for line in lines) == 100
        sections = {}
        for line in lines:
            sections[line.section] = sections.get(line.section, 0) + line.points
        assert list(sections.values()) == [20, 25, 20, 20, 15]
    assert score_mcp(_modern()).version == READINESS_MCP_METHOD == "mcp-2026-09-11.5"
    assert score_skill(SkillFacts()).version == READINESS_SKILL_METHOD == "skill-2026-09-11.2"


def test_a_modern_server_that_passes_every_line_scores_100_of_100():
    score = score_mcp(_modern())
    assert (score.earned, score.possible, score.label()) == (100, 100, "100/100")
    assert all(r.seen and r.passed for _, r in score.lines)


@pytest.mark.parametrize(("tokens", "points"), [
    (4_999, 12.0), (5_000, 12.0), (5_001, 12.0), (15_000, 6.0), (20_000, 3.0), (24_999, 0.0), (25_000, 0.0),
    (90_000, 0.0)])
def test_definition_tokens_slide_from_12_at_5000_to_0_at_25000(tokens, points):
    assert sliding_points(tokens, 5_000, 25_000, 12) == points
    assert _line(score_mcp(_modern(definition_tokens=tokens)), "definition_tokens").points == points


@pytest.mark.parametrize(("annotated", "passed"), [(89, False), (90, True), (100, True)])
def test_annotation_coverage_passes_at_90_percent(annotated, passed):
    result = _line(score_mcp(_modern(tools=_tools(100, annotated))), "annotation_coverage")
    assert (result.passed, result.points) == (passed, 10 if passed else 0)


@pytest.mark.parametrize(("with_output", "passed"), [(4, False), (5, True)])
def test_output_schema_coverage_passes_at_50_percent(with_output, passed):
    assert _line(score_mcp(_modern(tools=_tools(10, 10, with_output))), "output_schema_coverage").passed is passed


def test_initialize_earns_8_discover_15_and_only_2026_07_28_earns_the_revision():
    legacy = score_mcp(_modern(answered_via="initialize", revision="2025-06-18", ttl_ms=None, cache_scope=None))
    assert _line(legacy, "discover_or_initialize").points == 8
    assert _line(legacy, "revision_2026_07_28").points == 0 and _line(legacy, "cache_hints").points == 0
    assert legacy.label() == "80/100"  # 100 - 7 (initialize, not discover) - 5 (revision) - 8 (cache hints)


def test_a_401_with_and_without_rfc_9728_metadata():
    common = {"answered_via": "401", "needs_auth": True, "revision": None, "tool_orders": None,
              "definition_tokens": None, "tools_result_seen": False, "tools": None, "injection_hits": None}
    metadata = "https://mcp.example.com/.well-known/oauth-protected-resource"
    with_metadata = score_mcp(_modern(resource_metadata_url=metadata, resource_metadata_ok=True, **common))
    without = score_mcp(_modern(resource_metadata_ok=None, **common))
    broken = score_mcp(_modern(resource_metadata_url=metadata, resource_metadata_ok=False, **common))
    not_read = score_mcp(_modern(resource_metadata_url=metadata, resource_metadata_ok=None, **common))
    assert _line(with_metadata, "auth_metadata").points == 5 and _line(without, "auth_metadata").points == 0
    assert _line(without, "auth_metadata").seen and not _line(broken, "auth_metadata").passed
    assert not _line(not_read, "auth_metadata").seen  # robots.txt or no answer kept the document from us
    assert _line(with_metadata, "answers").points == 10
    # What a 401 hides (the tool list, its order, its tokens, the revision) is unseen: off both sides.
    unseen = {line.key for line, r in with_metadata.lines if not r.seen}
    assert unseen == {"discover_or_initialize", "revision_2026_07_28", "deterministic_order", "definition_tokens",
                      "cache_hints", "annotation_coverage", "output_schema_coverage", "injection_clean"}
    assert with_metadata.possible == 100 - sum(line.points for line in MCP_LINES if line.key in unseen) == 35
    assert with_metadata.label() == "35/35"  # answers 10, https 5, p50 5, auth 5, namespace 5, repository 5
    assert without.label() == "30/35"


def test_an_order_that_changes_between_two_calls_fails_and_one_call_is_unseen():
    assert _line(score_mcp(_modern(tool_orders=[["a", "b"], ["b", "a"]])), "deterministic_order").passed is False
    assert _line(score_mcp(_modern(tool_orders=[["a", "b"]])), "deterministic_order").seen is False


@pytest.mark.parametrize(("pushed_at", "fresh"), [
    ("2025-11-30T00:00:00Z", True),  # exactly 12 months
    ("2025-11-29T23:59:59Z", False),
    ("2025-10-30T00:00:00Z", False),  # 13 months
    ("2026-01-15T00:00:00Z", True)])
def test_pushed_within_12_months(pushed_at, fresh):
    repo = {"private": False, "archived": False, "pushed_at": pushed_at}
    assert _line(score_mcp(_modern(repository=repo)), "repository_fresh").passed is fresh


def test_a_private_repository_or_no_code_host_answer():
    private = {"private": True, "archived": False, "pushed_at": "2026-11-01T00:00:00Z"}
    assert _line(score_mcp(_modern(repository=private)), "repository_fresh").passed is False
    assert _line(score_mcp(_modern(repository=None)), "repository_fresh").seen is False
    assert _line(score_mcp(_modern(repository={"private": False, "pushed_at": 5})), "repository_fresh").seen is False


def test_a_server_that_never_answered_scores_0_of_what_was_seen():
    silent = McpFacts(answered_via="none", url_scheme="https", redirects_followed=0, needs_auth=False,
                      namespace_proof="none", today=TODAY)
    score = score_mcp(silent)
    # Seen: that it did not answer, that neither handshake answered, that its namespace is not proven. With no
    # answer there is no redirect chain and no auth requirement to see: those lines are unseen.
    assert (score.earned, score.possible) == (0, 10 + 15 + 5)
    assert not _line(score, "https_no_redirects").seen and not _line(score, "auth_metadata").seen
    assert score.sections()["Reachable"] == (0.0, 10.0)


def test_assemble_refuses_unknown_lines_and_points_beyond_a_line():
    with pytest.raises(ValueError, match="not lines of mcp-2026-09-11.5: nonsense"):
        assemble(READINESS_MCP_METHOD, [judged("nonsense", True, 1, "")])
    with pytest.raises(ValueError, match="more than the line's 5"):
        assemble(READINESS_MCP_METHOD, [judged("p50_fast", True, 6, "")])


# --- Agent Skills ---------------------------------------------------------------------------------------

def _skill(**changes) -> SkillFacts:
    front = {"name": "pdf-tools", "description": "Fill and merge PDF forms. Use when the user asks to edit a PDF.",
             "license": "Apache-2.0", "allowed-tools": "Read Write"}
    facts = SkillFacts(fetched=True, folder="pdf-tools", frontmatter=front, body_tokens=2_000,
                       description_tokens=16, injection_hits=[], today=TODAY,
                       repository={"private": False, "archived": False, "pushed_at": "2026-09-01T00:00:00Z"})
    for key, value in changes.items():
        setattr(facts, key, value)
    return facts


def test_a_skill_that_passes_every_line_scores_100():
    assert score_skill(_skill()).label() == "100/100"


@pytest.mark.parametrize(("chars", "passed"), [(1_023, True), (1_024, False)])
def test_the_description_must_be_under_1024_characters(chars, passed):
    front = {"name": "pdf-tools", "description": "Use when " + "x" * (chars - 9), "license": "MIT",
             "allowed-tools": "Read"}
    assert _line(score_skill(_skill(frontmatter=front)), "description_short").passed is passed


@pytest.mark.parametrize(("tokens", "points"), [(4_999, 12.0), (10_000, 6.0), (15_000, 0.0)])
def test_the_body_slides_from_12_at_5000_to_0_at_15000(tokens, points):
    assert _line(score_skill(_skill(body_tokens=tokens)), "body_tokens").points == points


def test_non_portable_keys_a_wrong_name_and_an_archived_repository_fail_their_lines():
    front = {"name": "pdf", "description": "Merges PDFs.", "model": "some-model"}
    score = score_skill(_skill(frontmatter=front, repository={"private": False, "archived": True,
                                                               "pushed_at": "2026-09-01T00:00:00Z"}))
    failed = {line.key for line, r in score.lines if r.seen and not r.passed}
    assert failed == {"frontmatter_portable", "name_matches_folder", "says_when_to_use", "licence_declared",
                      "allowed_tools_declared", "not_archived"}
    assert "non-portable keys: model" in _line(score, "frontmatter_portable").evidence


def test_a_missing_skill_md_leaves_its_lines_unseen_but_counts_the_fetch():
    score = score_skill(_skill(fetched=False, frontmatter=None, body_tokens=None, description_tokens=None,
                               injection_hits=None))
    seen = {line.key for line, r in score.lines if r.seen}
    assert seen == {"skill_md_fetched", "repository_public", "pushed_recently", "not_archived"}
    assert score.label() == "15/30"  # 0 of 15 for the fetch, 15 of 15 for the repository lines
