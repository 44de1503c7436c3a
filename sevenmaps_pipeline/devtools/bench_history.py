"""The benches' history and its guard (issue 38, goal 6; docs/scaling.md, "The history and --compare").

Every bench part appends one JSON line to `.bench/history.jsonl` ($SEVENMAPS_BENCH_HISTORY, or `sevenmaps bench
--history FILE`): its figures, each marked lower or higher is better; the outcomes that must not drift (an ok
flag, a count of files, of misclassified endpoints); the sizes it ran at; the commit, the UTC time, the load
average at its start and end, and the machine. `sevenmaps bench --compare` reads it back: for the latest run of
each part at each size, every figure more than 20% worse than the median of that part's three runs before, and
every outcome that differs from the run before. Nothing here runs a bench or asserts a time.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..lake.paths import PROJECT_ROOT

# $SEVENMAPS_BENCH_DIR: somewhere else than the checkout's .bench/ (the benches' smoke test uses its own).
BENCH_DIR = Path(os.environ.get("SEVENMAPS_BENCH_DIR") or PROJECT_ROOT / ".bench")
HISTORY_ENV = "SEVENMAPS_BENCH_HISTORY"
LOWER, HIGHER = "lower", "higher"
WORSE_BY = 0.20  # a figure this much worse than the median of the runs before is named
RUNS_COMPARED = 3

_started: dict[str, Any] = {}  # what begin() saw as the part started; the history file --history named


def history_path() -> Path:
    given = _started.get("history") or os.environ.get(HISTORY_ENV)
    return Path(given) if given else BENCH_DIR / "history.jsonl"


def begin(history: str | Path | None = None) -> None:
    """Called as a part starts (cli/dev.py cmd_bench): the load average then, and the history file to write."""
    _started.clear()
    _started.update(load=_load(), history=str(history) if history else None)


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _commit() -> dict[str, Any]:
    """The checkout's short commit and whether its tracked files differ from it; "unknown" outside one."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(PROJECT_ROOT), *args], capture_output=True, text=True,
                                  timeout=30, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "--short", "HEAD")
    if not commit:
        return {"commit": "unknown", "dirty": None}
    return {"commit": commit, "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


def machine() -> dict[str, Any]:
    """Cores, CPU model and memory, from /proc where there is one (None where not)."""
    def first(path: str, key: str) -> str | None:
        try:
            for line in Path(path).read_text().splitlines():
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
        except OSError:
            pass
        return None

    memory = first("/proc/meminfo", "MemTotal")
    return {"cores": os.cpu_count(), "cpu_model": first("/proc/cpuinfo", "model name"),
            "memory_mb": int(memory.split()[0]) // 1024 if memory else None}


@dataclass(frozen=True)
class Marks:
    """What a part's results hold, by dotted name into them ("one_day.wall_seconds"; "*" stands for every key
    at its level): `lower` and `higher` are figures (numbers; lower or higher is better), `outcomes` must not
    drift from run to run, `setup` are the sizes a run is only compared at, `context` is kept, never judged (a
    floor's own seconds: a slower floor is the machine, not us). A list of numbers is recorded as its median."""
    lower: tuple[str, ...] = ()
    higher: tuple[str, ...] = ()
    outcomes: tuple[str, ...] = ()
    setup: tuple[str, ...] = ()
    context: tuple[str, ...] = ()


MARKS: dict[str, Marks] = {
    "risk": Marks(higher=("*.binary_share", "*.level_share"), lower=("*.changing_as_read_only_share",),
                  outcomes=("*.tools", "*.binary_agree", "*.level_agree", "*.changing_called_read_only")),
    "risk-reach": Marks(higher=("*.within_1pct.binary_share", "*.honest_within_1pct.binary_share",
                                "variants.*.model.within_1pct.binary_share",
                                "variants.*.model.honest_within_1pct.binary_share"),
                        lower=("*.at_goal_agreement.changing_as_read_only_share",
                               "variants.*.model.at_goal_agreement.changing_as_read_only_share"),
                        outcomes=("corpus.*", "rules.binary_agree", "rules.changing_called_read_only",
                                  "variants.*.corpus.*")),
    "categories": Marks(outcomes=("*.servers", "*.changed", "*.kept_two_words", "*.decision", "*.method")),
    "lake": Marks(
        setup=("endpoints", "days"),
        lower=("one_day.wall_seconds", "one_day.in_run_seconds", "one_day.site_seconds", "one_day.peak_rss_mb",
               "backfill_30_days.wall_seconds", "backfill_30_days.peak_rss_mb", "lake_figures.lake_day_to_floor",
               "lake_figures.lake_map_to_floor", "lake_figures.lake_cold_day_wall_seconds",
               "lake_figures.lake_cold_day_peak_rss_mb", "lake_figures.lake_rules_day_wall_seconds",
               "lake_figures.lake_rules_day_peak_rss_mb", "verify.verify_seconds", "verify.verify_to_openssl",
               "verify.log_check_seconds"),
        outcomes=("probe_rows", "lake_figures.lake_distinct_lists", "verify.verify_ok", "verify.log_check_ok",
                  "verify.files", "verify.days", "verify.log_size"),
        context=("lake_figures.lake_floor_seconds", "lake_figures.lake_floor_site_seconds", "verify.openssl_seconds",
                 "verify.sha256sum_seconds", "verify.bytes", "synth_seconds", "shape")),
    "export": Marks(setup=("endpoints", "signed_days"), lower=("export_seconds", "link_seconds", "copy_seconds"),
                    outcomes=("files", "withheld", "day_files"), context=("bytes", "day_bytes", "how")),
    "tools": Marks(setup=("endpoints", "mean_tools"), lower=("days.*.steps.*.seconds", "days.*.steps.*.peak_rss_mb"),
                   higher=("days.*.steps.tool_facts.tokenizer.tokens_per_second",),
                   outcomes=("probe_rows", "days.*.steps.*.rows", "days.*.steps.tool_changes.stats.kinds")),
    "probe": Marks(setup=("endpoints", "concurrency", "shards", "median_latency_ms", "rounds", "busy_processes"),
                   lower=("quiet_wall_seconds", "quiet_ratio", "quiet_cpu_ms_per_request", "loaded_wall_seconds",
                          "loaded_ratio", "loaded_cpu_ms_per_request", "sharded_wall_seconds", "sharded_ratio",
                          "wall_vs_sdk", "cpu_vs_sdk", "quiet_cpu_vs_fleet", "loaded_cpu_vs_fleet",
                          "cpu_per_request_vs_sdk_uvloop"),
                   outcomes=("quiet_ok", "loaded_ok", "sharded_ok", "requests_per_endpoint",
                             "quiet_max_in_flight_per_host", "loaded_max_in_flight_per_host", "sdk_failed"),
                   context=("quiet_latency_bound_seconds", "quiet_cpu_bound_seconds", "registry_requests",
                            "sdk_wall_seconds", "sdk_cpu_ms_per_request", "sdk_requests_per_endpoint",
                            "sdk_uvloop_cpu_ms_per_request", "quiet_fleet_cpu_seconds")),
    "registry": Marks(setup=("endpoints", "concurrency", "cpu_hog", "seed"),
                      lower=("wall_seconds", "ratio", "prober_cpu_seconds", "hour.scan_seconds",
                             "hour.readiness_seconds", "hour.lookups_seconds", "hour.total_seconds"),
                      # Outcomes under load may move by the overload rule (n, never d): the truth is what must
                      # not drift, the counts are context.
                      outcomes=("truth.misclassified", "hour.truth.misclassified", "max_in_flight_per_host"),
                      context=("outcomes", "truth.overload_rule_n", "ideal_seconds", "requests",
                               "fleet_start_seconds", "lost_to_timeouts_seconds")),
    "serve": Marks(setup=("endpoints", "calls"),
                   lower=("first_call_seconds", "one_call_seconds", "flood.wall", "pages.quiet.p95", "pages.flood.p95"),
                   outcomes=("page_failure_count",), context=("flood.outcomes", "cores")),
}


def _names(results: Any, pattern: str) -> list[str]:
    """The dotted names in `results` that `pattern` matches ("*" a key at its level); none if it matches none."""
    head, _, rest = pattern.partition(".")
    if not isinstance(results, dict):
        return []
    keys = sorted(results) if head == "*" else [head] if head in results else []
    if not rest:
        return keys
    return [f"{key}.{name}" for key in keys for name in _names(results[key], rest)]


def _at(results: dict, name: str) -> Any:
    value: Any = results
    for part in name.split("."):
        value = value[part]
    if isinstance(value, list) and value and all(_number(v) for v in value):
        return statistics.median(value)
    return value


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def record(part: str, results: dict) -> dict:
    """Append one line for a run of `part` to the history, its figures picked and marked by MARKS[part], and
    return it. A marked name the results do not hold (or a figure that is not a number) is listed as absent,
    not guessed."""
    marks = MARKS[part]
    line: dict[str, Any] = {"part": part, "setup": {}, "figures": {}, "outcomes": {}, "context": {}, "absent": []}
    for better, patterns in ((LOWER, marks.lower), (HIGHER, marks.higher)):
        for pattern in patterns:
            names = _names(results, pattern)
            line["absent"] += [] if names else [pattern]
            for name in names:
                value = _at(results, name)
                if _number(value):
                    line["figures"][name] = {"value": value, "better": better}
                else:
                    line["absent"].append(name)
    for kind, patterns in (("outcomes", marks.outcomes), ("setup", marks.setup), ("context", marks.context)):
        for pattern in patterns:
            names = _names(results, pattern)
            line["absent"] += [] if names else [pattern]
            line[kind].update((name, _at(results, name)) for name in names)
    line.update(_commit(), utc=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                load={"start": _started.get("load"), "end": _load()}, machine=machine())
    path = history_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line, sort_keys=True, default=str) + "\n")
    # On stderr: the part's figures are its output; where they were kept is a note.
    print(f"[bench] {part}: {len(line['figures'])} figures and {len(line['outcomes'])} outcomes appended to "
          f"{path}", file=sys.stderr, flush=True)
    return line


@dataclass
class Comparison:
    lines: list[str] = field(default_factory=list)
    worse: int = 0
    drifted: int = 0
    compared: int = 0
    skipped: int = 0

    @property
    def exit_code(self) -> int:
        return 1 if self.worse or self.drifted else 0


def read_history(path: Path, out: Comparison) -> list[dict]:
    """The runs the file holds, in the order written; a line that is not one (corrupt, cut short by a
    killed run) is named by its number and skipped."""
    runs = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, text in enumerate(fh, 1):
            if not text.strip():
                continue
            problem = None
            try:
                run = json.loads(text)
            except json.JSONDecodeError as exc:
                problem = f"not JSON ({exc.msg})"
            else:
                problem = _malformed(run)
            if problem:
                out.skipped += 1
                out.lines.append(f"skipped  {path}:{number}: {problem}")
                continue
            runs.append(run)
    return runs


def _malformed(run: Any) -> str | None:
    if not isinstance(run, dict) or not isinstance(run.get("part"), str):
        return "not a bench run (no part)"
    if not isinstance(run.get("figures"), dict) or not isinstance(run.get("outcomes"), dict):
        return f"the {run['part']} run has no figures or outcomes"
    for name, figure in run["figures"].items():
        if not (isinstance(figure, dict) and _number(figure.get("value")) and figure.get("better") in (LOWER, HIGHER)):
            return f"the {run['part']} run's figure {name} is not a number marked lower or higher is better"
    if not isinstance(run.get("setup", {}), dict):
        return f"the {run['part']} run's setup is not an object"
    return None


def compare(path: Path) -> Comparison:
    """The latest run of each part against the runs of it before at the same sizes (setup): its figures
    against the median of the last three, its outcomes against the last one."""
    out = Comparison()
    if not path.is_file():
        out.lines.append(f"no history yet: {path} does not exist")
        return out
    runs = read_history(path, out)
    parts: dict[str, list[dict]] = {}
    for run in runs:
        parts.setdefault(run["part"], []).append(run)
    if not parts:
        out.lines.append(f"no history yet: no run in {path}")
    for part, group in parts.items():
        latest, setup = group[-1], group[-1].get("setup", {})
        sized = [r for r in group[:-1] if r.get("setup", {}) == setup]
        # A figure of another machine says what that machine does: the history is kept in the repository
        # (docs/scaling.md), so it holds runs of every machine that ran the benches.
        same = [r for r in sized if _machine_of(r) == _machine_of(latest)]
        key = part + "".join(f", {k}={v}" for k, v in sorted(setup.items()))
        _compare_part(key, latest, same[-RUNS_COMPARED:], out)
        if len(sized) < len(group) - 1:
            out.lines.append(f"  {key}: {len(group) - 1 - len(sized)} earlier run(s) at other sizes not compared")
        if len(same) < len(sized):
            out.lines.append(f"  {key}: {len(sized) - len(same)} earlier run(s) on another machine not compared "
                             f"(this one: {_machine_words(latest)})")
    return out


def _machine_of(run: dict) -> tuple[Any, ...]:
    """What makes two runs' figures comparable: the same cores, CPU model and memory (None where unrecorded)."""
    found = run.get("machine")
    return tuple(found.get(k) if isinstance(found, dict) else None for k in ("cores", "cpu_model", "memory_mb"))


def _machine_words(run: dict) -> str:
    cores, model, memory = _machine_of(run)
    return f"{cores} cores, {model or 'CPU unknown'}, {memory} MB"


def _compare_part(key: str, latest: dict, before: list[dict], out: Comparison) -> None:
    load = (latest.get("load") or {}).get("start")
    out.lines.append(f"{key}: latest run {latest.get('commit', 'unknown')}"
                     f"{' (dirty)' if latest.get('dirty') else ''} at {latest.get('utc', '?')}, load at start "
                     f"{'/'.join(str(x) for x in load) if load else 'unknown'}")
    if not before:
        out.lines.append(f"  {key}: no history yet (this is its first run)")
        return
    if len(before) < RUNS_COMPARED:
        out.lines.append(f"  {key}: only {len(before)} run(s) before this one; compared with "
                         f"{'that' if len(before) == 1 else 'the median of those'}")
    for name, figure in sorted(latest["figures"].items()):
        earlier = [r["figures"][name]["value"] for r in before if name in r["figures"]]
        if not earlier:
            out.lines.append(f"  new      {key}: {name} = {figure['value']:.4g}, no run before it to compare")
            continue
        out.compared += 1
        median, value = statistics.median(earlier), figure["value"]
        if figure["better"] == LOWER:
            worse = value > median * (1 + WORSE_BY) and value > median
        else:
            worse = value < median * (1 - WORSE_BY)
        if worse:
            out.worse += 1
            change = f"{value / median - 1:+.0%}" if median else "from 0"
            out.lines.append(f"  worse    {key}: {name} {value:.4g} against a median of {median:.4g} "
                             f"over {len(earlier)} run(s) ({change}; {figure['better']} is better)")
    previous = before[-1]["outcomes"]
    for name, value in sorted(latest["outcomes"].items()):
        if name not in previous:
            out.lines.append(f"  new      {key}: outcome {name} = {json.dumps(value)}, not in the run before")
        elif previous[name] != value:
            out.drifted += 1
            out.lines.append(f"  drifted  {key}: {name} was {json.dumps(previous[name])}, now {json.dumps(value)}")
    for name in sorted(set(previous) - set(latest["outcomes"])):
        out.lines.append(f"  gone     {key}: outcome {name} was in the run before, not in this one")


def compare_command(path: Path | None = None) -> int:
    """`sevenmaps bench --compare`: a line per finding, a summary line; 1 when a figure is worse or an
    outcome drifted, else 0."""
    path = path or history_path()
    result = compare(path)
    for line in result.lines:
        print(line)
    skipped = f"; {result.skipped} line(s) skipped" if result.skipped else ""
    verdict = "WORSE or DRIFTED" if result.exit_code else "no figure worse, no outcome drifted"
    print(f"bench --compare: {verdict}: {result.worse} figure(s) more than {WORSE_BY:.0%} worse, "
          f"{result.drifted} outcome(s) drifted, {result.compared} figure(s) compared ({path}{skipped})")
    return result.exit_code
