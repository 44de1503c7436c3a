"""The code-host client against a loopback server serving GitHub's REST shapes (a real uvicorn server on
127.0.0.1): a repository's status, a missing one, odd answers, a token sent only from the environment, and
a spent rate limit respected until its reset."""

from __future__ import annotations

import pytest
from conftest import served_on_loopback, unassigned_port

from sevenmaps_pipeline.defs.resources import ProberResource
from sevenmaps_pipeline.devtools.fleet.codehost_app import CodeHostApp
from sevenmaps_pipeline.lookups.codehost import CodeHostClient, RepoStatus, may_carry_token, parse_repository_url


@pytest.fixture
def codehost():
    fixture = CodeHostApp({"acme/weather-mcp": {"private": False, "archived": False,
                                                "pushed_at": "2026-10-02T08:00:00Z"},
                           "acme/old": {"private": False, "archived": True, "pushed_at": "2025-01-01T00:00:00Z"},
                           "acme/odd": {"private": "no", "archived": False, "pushed_at": None}}, budget=5)
    with served_on_loopback(fixture.app, "the code-host fixture") as url:
        yield fixture, url


@pytest.mark.parametrize(("url", "parsed"), [
    ("https://github.com/acme/weather-mcp", ("acme", "weather-mcp")),
    ("https://github.com/acme/weather-mcp.git", ("acme", "weather-mcp")),
    ("https://github.com/acme/skills/tree/main/skills/pdf", ("acme", "skills")),
    ("https://gitlab.com/acme/x", None), ("http://github.com/acme/x", None), ("https://github.com/acme", None),
    ("https://github.com/../x", None), (None, None), (5, None)])
def test_repository_urls(url, parsed):
    assert parse_repository_url(url) == parsed


def test_a_repository_its_absence_and_an_odd_answer(codehost, monkeypatch):
    fixture, base = codehost
    monkeypatch.delenv("SEVENMAPS_GITHUB_TOKEN", raising=False)
    with CodeHostClient(base) as client:
        status = client.repository("acme", "weather-mcp")
        assert status == RepoStatus("acme", "weather-mcp", False, False, "2026-10-02T08:00:00Z")
        assert client.repository("acme", "old").archived is True
        assert client.repository("acme", "missing") == "no such repository (or not public)"
        assert client.repository("acme", "odd") == "code host answer lacks private, archived or pushed_at"
    assert all("authorization" not in h for h in fixture.requests)
    assert fixture.requests[0]["user-agent"].startswith("7Maps-bot/")


def test_a_token_comes_from_the_environment_only(codehost, monkeypatch):
    fixture, base = codehost
    monkeypatch.setenv("SEVENMAPS_GITHUB_TOKEN", "ghp_test_token")
    with CodeHostClient(base) as client:
        status = client.repository("acme", "weather-mcp")
    assert isinstance(status, RepoStatus) and "ghp_test_token" not in repr(status)
    assert fixture.requests[-1]["authorization"] == "Bearer ghp_test_token"


@pytest.mark.parametrize(("base_url", "may"), [
    ("https://api.github.com", True), ("https://ghe.corp.example/api/v3", True),
    ("http://127.0.0.1:8080", True), ("http://[::1]:8080", True), ("http://localhost:8080", True),
    ("http://[::ffff:127.0.0.1]:8080", True), ("http://LOCALHOST.:8080", True),
    # in clear text across a network: the token stays home (it was sent to any base URL before)
    ("http://api.github.com", False), ("http://10.0.0.5:8080", False), ("http://ghe.corp.example", False),
    ("http://0.0.0.0:8080", False), ("ftp://127.0.0.1", False), ("http://", False), ("not a url", False),
    # names and forms that only a resolver or a lenient parser would call this machine (helper-78)
    ("http://mirror.localhost", False), ("http://127.0.0.1.evil.example", False), ("http://2130706433", False),
    ("http://127.0.0.1@evil.example", False), ("http://xn--localhost", False),
])
def test_the_token_goes_only_over_https_or_to_this_machine(base_url, may):
    assert may_carry_token(base_url) is may
    # ... and a client over that URL decides so (constructing it asks nothing of anyone)
    with CodeHostClient(base_url) as client:
        assert client.sends_token is may


def test_a_withheld_token_is_not_sent_and_a_spent_budget_says_why(codehost, monkeypatch):
    fixture, base = codehost
    monkeypatch.setenv("SEVENMAPS_GITHUB_TOKEN", "ghp_test_token")
    with CodeHostClient(base) as client:
        # as for a plain-http URL elsewhere (the test above): tests reach 127.0.0.1 only
        client.sends_token = False
        for _ in range(5):
            assert isinstance(client.repository("acme", "weather-mcp"), RepoStatus)
        spent = client.repository("acme", "weather-mcp")
        assert spent.startswith("rate limited until ") and spent.endswith(
            "(SEVENMAPS_GITHUB_TOKEN not sent: the code host's URL is not https)")
        assert client.repository("acme", "old") == spent
    assert fixture.requests and all("authorization" not in h for h in fixture.requests)


def test_a_spent_rate_limit_is_respected_until_its_reset(codehost):
    fixture, base = codehost
    with CodeHostClient(base) as client:
        for _ in range(5):
            assert isinstance(client.repository("acme", "weather-mcp"), RepoStatus)
        asked = len(fixture.requests)
        first = client.repository("acme", "weather-mcp")
        assert first.startswith("rate limited until ")
        assert client.repository("acme", "old") == first  # not asked again before the reset
    assert len(fixture.requests) == asked + 1


def test_an_unreachable_code_host_is_a_reason():
    with CodeHostClient(f"http://127.0.0.1:{unassigned_port()}", timeout=2) as client:
        assert client.repository("acme", "x") == "code host: no answer (ConnectError)"


def test_readiness_skill_reads_the_repository_lines_from_the_code_host(codehost, tmp_path, monkeypatch, capsys):
    import json

    from sevenmaps_pipeline.cli import main

    _, base = codehost
    monkeypatch.setenv("SEVENMAPS_CODEHOST_URL", base)
    folder = tmp_path / "weather"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: weather\ndescription: Forecasts. Use when the user asks about "
                                     "the weather.\nlicense: MIT\nallowed-tools: Read\n---\nBody.\n")
    assert main(["readiness-skill", str(folder), "--json", "--repository", "https://github.com/acme/old"]) == 0
    lines = {ln["line"]: ln for ln in json.loads(capsys.readouterr().out)["lines"]}
    assert lines["repository_public"]["passed"] and not lines["not_archived"]["passed"]
    assert lines["pushed_recently"]["seen"] and not lines["pushed_recently"]["passed"]  # 2025-01-01
    assert main(["readiness-skill", str(folder), "--json", "--repository", "https://github.com/acme/missing"]) == 0
    captured = capsys.readouterr()
    assert "no such repository" in captured.err
    assert not {ln["line"]: ln for ln in json.loads(captured.out)["lines"]}["repository_public"]["seen"]
    assert main(["readiness-skill", str(folder), "--repository", "https://example.com/x"]) == 2


def test_the_answer_time_is_the_prober_resources_and_above_zero():
    """test_lanes holds a readiness run on a code host answering for as long as it is told to; a time of 0 or
    less is refused naming the setting (the readiness run then fails saying so), never sent to the client."""
    with ProberResource(codehost_timeout_seconds=600).codehost() as held, ProberResource().codehost() as default:
        assert (held.timeout, default.timeout) == (600, 10)
    for bad in (0, -1):
        with pytest.raises(ValueError, match=f"codehost_timeout_seconds={bad}"):
            ProberResource(codehost_timeout_seconds=bad).codehost()
