"""The readiness rubric (docs/methodology.md, "Readiness"): every line with its points, scored from what a
probe saw. A line the probe could not see counts for nothing on either side of the slash, so a score is
earned / possible over the lines seen (61/85, say), and every line keeps whether it was seen, whether it
passed, its points and its evidence.

Plain, exact code with no I/O: the readiness probe and the skill reader gather the facts, this module turns
them into lines. The points and thresholds are the rubric's own, in READINESS_PARAMS; changing any of them
is a new rubric version (READINESS_MCP_METHOD, READINESS_SKILL_METHOD).
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..packaged import shipped
from .methods import READINESS_MCP_METHOD, READINESS_PARAMS, READINESS_SKILL_METHOD, TOKENIZER_METHOD


@dataclass(frozen=True)
class Line:
    """One line of a rubric: its section, a stable key, what it checks and what it is worth."""

    section: str
    key: str
    label: str
    points: float


MCP_LINES: tuple[Line, ...] = (
    Line("Reachable", "answers", "answers at all: discovery, initialize or a well-formed 401", 10),
    Line("Reachable", "https_no_redirects", "https, with no redirect chain", 5),
    Line("Reachable", "p50_fast", "p50 under 500 ms", 5),
    Line("Speaks the protocol", "discover_or_initialize", "`server/discover` answers (15), or `initialize` "
         "answers (8)", 15),
    Line("Speaks the protocol", "revision_2026_07_28", "revision 2026-07-28", 5),
    Line("Speaks the protocol", "deterministic_order", "deterministic tool order across two `tools/list` calls", 5),
    Line("Cheap to hold", "definition_tokens", "definition tokens under 5,000 (12, sliding to 0 at 25,000)", 12),
    Line("Cheap to hold", "cache_hints", "`ttlMs` and `cacheScope` present on the result", 8),
    Line("Honest", "annotation_coverage", "annotation coverage at least 90%", 10),
    Line("Honest", "output_schema_coverage", "`outputSchema` coverage at least 50%", 5),
    Line("Honest", "auth_metadata", "a 401 carrying RFC 9728 metadata, or no auth needed", 5),
    Line("Trustworthy", "namespace_proven", "namespace proven: a verified claim, or an import from the registry", 5),
    Line("Trustworthy", "repository_fresh", "repository public and pushed within 12 months", 5),
    Line("Trustworthy", "injection_clean", "injection scan clean", 5),
)

SKILL_LINES: tuple[Line, ...] = (
    Line("Reachable", "skill_md_fetched", "SKILL.md fetched", 15),
    Line("Reachable", "repository_public", "repository public", 5),
    Line("Speaks the format", "frontmatter_portable", "frontmatter valid, with only portable keys", 15),
    Line("Speaks the format", "name_matches_folder", "name matches the folder", 5),
    Line("Speaks the format", "description_short", "description under 1,024 characters", 5),
    Line("Cheap to hold", "body_tokens", "body under 5,000 tokens (12, sliding to 0 at 15,000)", 12),
    Line("Cheap to hold", "description_tokens", "description under 100 tokens", 8),
    Line("Honest", "says_when_to_use", "says when to use it", 10),
    Line("Honest", "licence_declared", "licence declared", 5),
    Line("Honest", "allowed_tools_declared", "allowed tools declared", 5),
    Line("Trustworthy", "pushed_recently", "pushed within 12 months", 5),
    Line("Trustworthy", "not_archived", "not archived", 5),
    Line("Trustworthy", "injection_clean", "injection scan clean", 5),
)

RUBRICS = {READINESS_MCP_METHOD: MCP_LINES, READINESS_SKILL_METHOD: SKILL_LINES}


@dataclass(frozen=True)
class LineResult:
    key: str
    seen: bool
    passed: bool
    points: float  # earned; 0 when unseen
    evidence: str


def unseen(key: str, why: str) -> LineResult:
    return LineResult(key, False, False, 0.0, why)


def judged(key: str, passed: bool, points: float, evidence: str) -> LineResult:
    return LineResult(key, True, passed, round(points, 2) if passed else 0.0, evidence)


def sliding_points(value: float, full_below: float, zero_at: float, points: float) -> float:
    """All the points below `full_below`, none from `zero_at`, a straight line between (rounded to 0.01)."""
    if value < full_below:
        return float(points)
    if value >= zero_at:
        return 0.0
    return round(points * (zero_at - value) / (zero_at - full_below), 2)


@dataclass
class Score:
    """A listing's score under one rubric version: every line, each section and the total over seen lines."""

    version: str
    lines: list[tuple[Line, LineResult]] = field(default_factory=list)

    @property
    def earned(self) -> float:
        return round(sum(r.points for _, r in self.lines), 2)

    @property
    def possible(self) -> float:
        return float(sum(line.points for line, r in self.lines if r.seen))

    def sections(self) -> dict[str, tuple[float, float]]:
        out: dict[str, tuple[float, float]] = {}
        for line, result in self.lines:
            earned, possible = out.get(line.section, (0.0, 0.0))
            out[line.section] = (round(earned + result.points, 2), possible + (line.points if result.seen else 0))
        return out

    def label(self) -> str:
        return f"{self.earned:g}/{self.possible:g}"


def assemble(version: str, results: Iterable[LineResult]) -> Score:
    """Put each line's result in rubric order; a line with no result is unseen (never silently dropped)."""
    by_key = {r.key: r for r in results}
    lines = RUBRICS[version]
    unknown = set(by_key) - {line.key for line in lines}
    if unknown:
        raise ValueError(f"not lines of {version}: {', '.join(sorted(unknown))}")
    score = Score(version)
    for line in lines:
        result = by_key.get(line.key) or unseen(line.key, "not observed")
        if result.points > line.points:
            raise ValueError(f"{line.key}: {result.points} points, more than the line's {line.points}")
        score.lines.append((line, result))
    return score


# --- The injection line ---------------------------------------------------------------------------------

@functools.cache
def injection_phrases() -> tuple[str, tuple[str, ...]]:
    """The rubric's own published phrase list and its method version (assets/readiness_injection_phrases.json);
    7Maps' internal pattern checks are never used here (docs/methodology.md, "Readiness")."""
    data = json.loads(shipped("assets", "readiness_injection_phrases.json").read_text())
    return str(data["method"]), tuple(" ".join(str(p).lower().split()) for p in data["phrases"])


def injection_hits(texts: Iterable[Any]) -> list[str]:
    """The phrases found in any of the texts (non-strings are skipped), each once, in list order."""
    _, phrases = injection_phrases()
    joined = "\n".join(" ".join(t.lower().split()) for t in texts if isinstance(t, str))
    return [p for p in phrases if p in joined]


# --- MCP servers ----------------------------------------------------------------------------------------

@dataclass
class McpFacts:
    """What the readiness probe saw of one listing; None everywhere means "not seen"."""

    answered_via: str | None = None  # "discover" | "initialize" | "401" | "none" (tried, no answer) | None
    outcome: str | None = None  # the check's outcome (probes.outcome): what "none" was, e.g. redirect, needs_auth
    outcome_detail: str | None = None
    http_status: int | None = None  # of the decisive answer; None when no HTTP answer came
    url_scheme: str | None = None
    redirects_followed: int | None = None
    later_redirect: str | None = None  # a redirect not followed on a request after the first tools/list
    p50_ms: float | None = None
    revision: str | None = None
    tool_orders: Sequence[Sequence[str]] | None = None  # the tool names of two tools/list calls, in order
    definition_tokens: int | None = None
    ttl_ms: Any = None
    cache_scope: Any = None
    tools_result_seen: bool = False
    tools: Sequence[dict] | None = None
    tool_list_whole: bool = True  # False: tools/list was not read to its end (the page limit, a page that failed)
    needs_auth: bool | None = None  # a 401 (or 403) before any tool was listed
    resource_metadata_url: str | None = None  # the 401 named an RFC 9728 resource_metadata URL
    resource_metadata_refused: str | None = None  # it named one that is not an https URL with a host: why
    resource_metadata_ok: bool | None = None  # that document answered and names the resource (None: not read)
    namespace_proof: str | None = None  # "github", "dns", "http", "import", "none" (known unproven), None
    namespace_evidence: str | None = None  # how it was proven, and what that does and does not prove
    repository: dict | None = None  # {"private": bool, "pushed_at": "...Z"} from the code host
    injection_hits: Sequence[str] | None = None
    today: dt.date | None = None


def _coverage(tools: Sequence[dict], has) -> tuple[int, int]:
    return sum(1 for t in tools if isinstance(t, dict) and has(t)), len(tools)


def _pushed_within(pushed_at: str, today: dt.date) -> bool | None:
    """True when pushed on or after the same day N months before `today` (N = pushed_within_months; the
    day clamped to the month's length); None when the timestamp is unreadable."""
    try:
        pushed = dt.datetime.fromisoformat(pushed_at.replace("Z", "+00:00")).date()
    except (AttributeError, ValueError):
        return None
    total = today.year * 12 + (today.month - 1) - int(READINESS_PARAMS["pushed_within_months"])
    year, month = divmod(total, 12)
    boundary = dt.date(year, month + 1, min(today.day, calendar.monthrange(year, month + 1)[1]))
    return pushed >= boundary


def score_mcp(facts: McpFacts) -> Score:
    return assemble(READINESS_MCP_METHOD,
                    _answer_lines(facts) + _tool_list_lines(facts) + _trust_lines(facts))


def _answer_lines(facts: McpFacts) -> list[LineResult]:
    """How it answers: at all, over HTTPS without redirects, fast, to discover or initialize, at which
    revision."""
    p = READINESS_PARAMS
    r: list[LineResult] = []
    if facts.answered_via is None:
        r.append(unseen("answers", "not probed"))
    else:
        ok = facts.answered_via in ("discover", "initialize", "401")
        r.append(judged("answers", ok, 10, f"answered via {facts.answered_via}" if ok else _no_answer(facts)))
    r.append(_redirect_line(facts))
    if facts.p50_ms is None:
        r.append(unseen("p50_fast", "no timed answer in the window"))
    else:
        r.append(judged("p50_fast", facts.p50_ms < p["p50_under_ms"], 5, f"p50 {facts.p50_ms:.0f} ms"))
    if facts.answered_via in ("discover", "initialize"):
        points = 15 if facts.answered_via == "discover" else float(p["initialize_points"])
        r.append(judged("discover_or_initialize", True, points, f"{facts.answered_via} answered"))
    elif facts.answered_via in (None, "401"):  # behind a 401 neither can be seen
        r.append(unseen("discover_or_initialize", "asks for a token first" if facts.answered_via else "not probed"))
    else:
        r.append(judged("discover_or_initialize", False, 0, f"neither answered: {_no_answer(facts)}"))
    if facts.revision is None:
        r.append(unseen("revision_2026_07_28", "no protocol revision read"))
    else:
        r.append(judged("revision_2026_07_28", facts.revision == p["revision"], 5, f"revision {facts.revision}"))
    return r


def _no_answer(facts: McpFacts) -> str:
    """What came instead of an answer, in words: the HTTP status when there was one (a 403 says it was a
    403: refused, not a 401 asking for a token), else the outcome (docs/methodology.md, "Readiness")."""
    if facts.outcome == "redirect":
        return f"no answer: a redirect not followed ({(facts.outcome_detail or '')[:300]})"
    if facts.http_status == 403:
        return "no answer: HTTP 403 (forbidden; refused, not a 401 asking for a token)"
    if facts.http_status is not None:
        return f"no answer: HTTP {facts.http_status} ({facts.outcome})"
    return f"no answer ({facts.outcome})" if facts.outcome else "no answer"


def _redirect_line(facts: McpFacts) -> LineResult:
    """"https, with no redirect chain": any redirect the probe did not follow (another domain, plain http, a
    second hop, a bad Location), on the handshake or a later request, fails, and so does one it followed,
    whatever the next hop then did; it is unseen only when no HTTP answer came at all (docs/methodology.md,
    "Readiness")."""
    if facts.outcome == "redirect" and facts.answered_via is not None:
        return judged("https_no_redirects", False, 5,
                      f"a redirect, not followed: {(facts.outcome_detail or 'redirect')[:300]}")
    if facts.later_redirect and facts.answered_via is not None:
        return judged("https_no_redirects", False, 5, f"a redirect on a later request, not followed: "
                      f"{facts.later_redirect[:300]}")
    if facts.redirects_followed and facts.answered_via is not None:  # the hop came before any failure after it
        return judged("https_no_redirects", False, 5, f"{facts.url_scheme}, {facts.redirects_followed} redirect(s)")
    if facts.url_scheme is None or facts.redirects_followed is None or facts.answered_via is None or (
            facts.answered_via == "none" and facts.http_status is None):
        return unseen("https_no_redirects", "no HTTP answer, so no redirect chain to see")
    ok = facts.url_scheme == "https" and facts.redirects_followed == 0
    return judged("https_no_redirects", ok, 5, f"{facts.url_scheme}, {facts.redirects_followed} redirect(s)")


# What a line over the whole list says when only part of it was read: a part cannot show the whole list's tokens
# or shares, and a line the probe could not see counts on neither side (docs/methodology.md, "Readiness").
PART_OF_A_LIST = "its tokens and shares are unseen"


def _tool_list_lines(facts: McpFacts) -> list[LineResult]:
    """Its tool list: the same order twice, its token cost, cache hints, annotations and output schemas."""
    p = READINESS_PARAMS
    r: list[LineResult] = []
    why = _why_no_list(facts)
    if facts.tool_orders is None or len(facts.tool_orders) < 2:
        r.append(unseen("deterministic_order", "tools/list not read twice" + why))
    else:
        same = list(facts.tool_orders[0]) == list(facts.tool_orders[1])
        r.append(judged("deterministic_order", same, 5, "same order twice" if same else "the order changed"))
    cut = f"the tool list was not read to its end ({len(facts.tools or [])} tools read): {PART_OF_A_LIST}"
    if facts.definition_tokens is None:
        r.append(unseen("definition_tokens", "no tool list" + why))
    elif not facts.tool_list_whole:
        r.append(unseen("definition_tokens", cut))
    else:
        points = sliding_points(facts.definition_tokens, p["tokens_full_below"], p["tokens_zero_at"], 12)
        r.append(judged("definition_tokens", points > 0, points,
                        f"{facts.definition_tokens:,} o200k_base tokens ({TOKENIZER_METHOD})"))
    if not facts.tools_result_seen:
        r.append(unseen("cache_hints", "no tools/list result" + why))
    else:
        present = isinstance(facts.ttl_ms, int) and not isinstance(facts.ttl_ms, bool) and isinstance(
            facts.cache_scope, str)
        r.append(judged("cache_hints", present, 8, f"ttlMs {facts.ttl_ms!r}, cacheScope {facts.cache_scope!r}"))
    if not facts.tools:
        r.append(unseen("annotation_coverage", "no tools listed" + why))
        r.append(unseen("output_schema_coverage", "no tools listed" + why))
    elif not facts.tool_list_whole:
        r.append(unseen("annotation_coverage", cut))
        r.append(unseen("output_schema_coverage", cut))
    else:
        with_ann, n = _coverage(facts.tools, lambda t: isinstance(t.get("annotations"), dict) and t["annotations"])
        share = with_ann / n
        r.append(judged("annotation_coverage", share >= p["annotation_coverage_min"], 10,
                        f"{with_ann}/{n} tools annotated"))
        with_out, n = _coverage(facts.tools, lambda t: isinstance(t.get("outputSchema"), dict))
        r.append(judged("output_schema_coverage", with_out / n >= p["output_schema_coverage_min"], 5,
                        f"{with_out}/{n} tools with outputSchema"))
    return r


def _why_no_list(facts: McpFacts) -> str:
    """What came of tools/list after a handshake that answered, when it failed: the tool-list lines say it."""
    if facts.answered_via in ("discover", "initialize") and facts.outcome not in (None, "ok"):
        return f" ({(facts.outcome_detail or facts.outcome or '')[:200]})"
    return ""


def _trust_lines(facts: McpFacts) -> list[LineResult]:
    """Whom it answers for: auth metadata, the namespace proven, a fresh public repository, descriptions
    free of injection phrases."""
    r: list[LineResult] = []
    if facts.http_status == 403 and facts.outcome != "ok":
        r.append(unseen("auth_metadata", "a 403, not a 401: refused without saying whether a token would help"))
    elif facts.needs_auth is None or facts.answered_via in (None, "none"):
        r.append(unseen("auth_metadata", "no answer, so no way to tell whether it needs auth"))
    elif not facts.needs_auth:
        r.append(judged("auth_metadata", facts.answered_via in ("discover", "initialize"), 5, "no auth needed"))
    elif not facts.resource_metadata_url:
        r.append(judged("auth_metadata", False, 5, f"a 401 whose {facts.resource_metadata_refused}"
                        if facts.resource_metadata_refused else "a 401 without RFC 9728 resource metadata"))
    elif facts.resource_metadata_ok is None:
        r.append(unseen("auth_metadata", "the 401 names RFC 9728 metadata that could not be asked for"))
    else:
        r.append(judged("auth_metadata", facts.resource_metadata_ok, 5, "a 401 whose RFC 9728 metadata "
                        + ("answers and names the resource" if facts.resource_metadata_ok else "does not hold up")))
    if facts.namespace_proof is None:
        r.append(unseen("namespace_proven", "proof method unknown"))
    else:
        said = f": {facts.namespace_evidence}" if facts.namespace_evidence else ""
        r.append(judged("namespace_proven", facts.namespace_proof != "none", 5, f"proof {facts.namespace_proof}{said}"))
    r.append(_repository_line("repository_fresh", facts.repository, facts.today, need_public=True))
    if facts.injection_hits is None:
        r.append(unseen("injection_clean", "no descriptions read"))
    elif not facts.injection_hits and not facts.tool_list_whole:  # a phrase found in part of it is found
        r.append(unseen("injection_clean", f"none in the {len(facts.tools or [])} tools read, but the tool list "
                        "was not read to its end"))
    else:
        r.append(_injection_line(facts.injection_hits))
    return r


def _injection_line(hits: Sequence[str]) -> LineResult:
    method = injection_phrases()[0]
    return judged("injection_clean", not hits, 5,
                  f"clean ({method})" if not hits else f"matched ({method}): " + ", ".join(hits))


def _repository_line(key: str, repository: dict | None, today: dt.date | None, need_public: bool) -> LineResult:
    if repository is None or today is None:
        return unseen(key, "no code-host answer")
    recent = _pushed_within(str(repository.get("pushed_at") or ""), today)
    if recent is None:
        return unseen(key, "no readable pushed_at")
    public = repository.get("private") is False
    ok = recent and (public or not need_public)
    return judged(key, ok, 5, f"{'public' if public else 'private'}, pushed {repository.get('pushed_at')}")


# --- Agent Skills ---------------------------------------------------------------------------------------

@dataclass
class SkillFacts:
    fetched: bool | None = None  # SKILL.md fetched (None: not tried)
    folder: str | None = None
    frontmatter: dict | None = None  # parsed YAML mapping, None when absent or invalid
    frontmatter_error: str | None = None
    body_tokens: int | None = None
    description_tokens: int | None = None
    repository: dict | None = None  # {"private", "archived", "pushed_at"}
    injection_hits: Sequence[str] | None = None
    today: dt.date | None = None


def says_when_to_use(description: str) -> bool:
    """The description tells an agent when to reach for the skill ("Use when ...", "when the user ...")."""
    text = " ".join(description.lower().split())
    return any(cue in text for cue in READINESS_PARAMS["when_to_use_cues"])


def score_skill(facts: SkillFacts) -> Score:
    p = READINESS_PARAMS
    r: list[LineResult] = []
    if facts.fetched is None:
        r.append(unseen("skill_md_fetched", "not tried"))
    else:
        r.append(judged("skill_md_fetched", facts.fetched, 15, "fetched" if facts.fetched else "not found"))
    repo = facts.repository
    if repo is None:
        for key in ("repository_public", "pushed_recently", "not_archived"):
            r.append(unseen(key, "no code-host answer"))
    else:
        r.append(judged("repository_public", repo.get("private") is False, 5,
                        "public" if repo.get("private") is False else "private"))
        r.append(_repository_line("pushed_recently", repo, facts.today, need_public=False))
        r.append(judged("not_archived", repo.get("archived") is False, 5,
                        "archived" if repo.get("archived") else "not archived"))
    front = facts.frontmatter
    if not facts.fetched:
        keys = ("frontmatter_portable", "name_matches_folder", "description_short", "description_tokens",
                "says_when_to_use", "licence_declared", "allowed_tools_declared")
        r += [unseen(k, "no SKILL.md") for k in keys]
    elif front is None:
        r.append(judged("frontmatter_portable", False, 15, facts.frontmatter_error or "no frontmatter"))
        r += [judged(k, False, line_points, "no frontmatter") for k, line_points in
              (("name_matches_folder", 5), ("description_short", 5), ("description_tokens", 8),
               ("says_when_to_use", 10), ("licence_declared", 5), ("allowed_tools_declared", 5))]
    else:
        extra = sorted(set(map(str, front)) - set(p["portable_keys"]))
        required = all(isinstance(front.get(k), str) and front.get(k) for k in ("name", "description"))
        r.append(judged("frontmatter_portable", required and not extra, 15,
                        "portable keys only" if required and not extra else
                        (f"non-portable keys: {', '.join(extra)}" if extra else "name or description missing")))
        name, description = front.get("name"), front.get("description")
        if facts.folder is None:
            r.append(unseen("name_matches_folder", "folder unknown"))
        else:
            r.append(judged("name_matches_folder", name == facts.folder, 5, f"name {name!r}, folder {facts.folder!r}"))
        text = description if isinstance(description, str) else ""
        r.append(judged("description_short", 0 < len(text) < p["description_max_chars"], 5,
                        f"{len(text):,} characters"))
        if facts.description_tokens is None:
            r.append(unseen("description_tokens", "not counted"))
        else:
            r.append(judged("description_tokens", 0 < facts.description_tokens < p["description_max_tokens"], 8,
                            f"{facts.description_tokens} o200k_base tokens ({TOKENIZER_METHOD})"))
        r.append(judged("says_when_to_use", says_when_to_use(text), 10,
                        "says when" if says_when_to_use(text) else "no 'use when'"))
        licence = front.get("license")
        r.append(judged("licence_declared", isinstance(licence, str) and bool(licence.strip()), 5,
                        f"license {licence!r}"))
        tools = front.get("allowed-tools")
        declared = (isinstance(tools, str) and bool(tools.strip())) or (isinstance(tools, list) and bool(tools))
        r.append(judged("allowed_tools_declared", declared, 5, f"allowed-tools {tools!r}"))
    if facts.body_tokens is None:
        r.append(unseen("body_tokens", "no SKILL.md body"))
    else:
        points = sliding_points(facts.body_tokens, p["skill_body_full_below"], p["skill_body_zero_at"], 12)
        r.append(judged("body_tokens", points > 0, points,
                        f"{facts.body_tokens:,} o200k_base tokens ({TOKENIZER_METHOD})"))
    if facts.injection_hits is None:
        r.append(unseen("injection_clean", "nothing read"))
    else:
        r.append(_injection_line(facts.injection_hits))
    return assemble(READINESS_SKILL_METHOD, r)
