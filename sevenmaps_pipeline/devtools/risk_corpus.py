"""The words-only risk estimate measured on real tool definitions against their servers' own annotations.

The corpus (tests/data/risk_corpus.json, with its sources) holds tools from public MCP servers with the
annotations their servers publish. With annotations ignored, each tool's estimate is compared with what
its annotations say: read-only (readOnlyHint true) versus changing (readOnlyHint false, or destructiveHint
true), and the three levels where the annotations decide one (readOnlyHint true: green; false with
destructiveHint true: red; false with destructiveHint false: yellow; destructiveHint true alone: red).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..packaged import SOURCE_ROOT
from ..rules.risk import LEVELS, classify, default_vocabulary
from .bench_history import record
from .tool_corpus import DEVELOPMENT, EVALUATION, HOLDOUT, load_holdout, load_servers, side_of

CORPUS = (SOURCE_ROOT or Path.cwd()) / "tests" / "data" / "risk_corpus.json"


def annotated_level(annotations: dict | None) -> tuple[bool | None, str | None]:
    """(read-only?, level) as the server's annotations say; None where they do not say."""
    a = annotations if isinstance(annotations, dict) else {}
    read_only, destructive = a.get("readOnlyHint"), a.get("destructiveHint")
    if read_only is True:
        return True, "green"
    if read_only is False:
        return False, "red" if destructive is True else "yellow" if destructive is False else None
    if destructive is True:
        return False, "red"
    return None, None


class Shares:
    """The three figures the words-only estimate is measured by, from the counts a measure keeps."""

    binary_agree: int
    binary_total: int
    changing_called_read_only: int
    changing_total: int
    level_agree: int
    level_total: int

    @property
    def binary_share(self) -> float:
        return self.binary_agree / self.binary_total if self.binary_total else 0.0

    @property
    def changing_as_read_only_share(self) -> float:
        return self.changing_called_read_only / self.changing_total if self.changing_total else 0.0

    @property
    def level_share(self) -> float:
        return self.level_agree / self.level_total if self.level_total else 0.0

    def figures(self) -> dict[str, Any]:
        """The counts and the three shares, as the benches' history keeps them."""
        return {**vars(self), "binary_share": self.binary_share, "level_share": self.level_share,
                "changing_as_read_only_share": self.changing_as_read_only_share}


@dataclass
class Measure(Shares):
    tools: int = 0
    binary_total: int = 0
    binary_agree: int = 0
    changing_total: int = 0
    changing_called_read_only: int = 0
    level_total: int = 0
    level_agree: int = 0
    matrix: Counter = field(default_factory=Counter)  # (annotated level, estimated level) -> tools
    misses: list[tuple[str, str, str, str]] = field(default_factory=list)  # server, tool, said, estimated


def measure(path: Path = CORPUS) -> Measure:
    doc = json.loads(path.read_text())
    return measure_tools((tool["server"], tool) for tool in doc["tools"])


def measure_tools(tools: Iterable[tuple[str, dict]]) -> Measure:
    """Each (server, tool) with annotations that decide read-only or changing, its words-only estimate
    against them."""
    vocab = default_vocabulary()
    m = Measure()
    for server, tool in tools:
        tool = {**tool, "server": server}
        read_only, level = annotated_level(tool.get("annotations"))
        if read_only is None:
            continue
        m.tools += 1
        estimate = classify(tool, vocab, ignore_annotations=True).risk
        m.binary_total += 1
        m.binary_agree += (estimate == "green") == read_only
        if not read_only:
            m.changing_total += 1
            m.changing_called_read_only += estimate == "green"
        if level is not None:
            m.level_total += 1
            m.level_agree += estimate == level
            m.matrix[(level, estimate)] += 1
            if estimate != level:
                m.misses.append((tool["server"], tool["name"], level, estimate))
        elif (estimate == "green") != read_only:
            m.misses.append((tool["server"], tool["name"], "changing", estimate))
    return m


def report(m: Measure, what: str = "real tools") -> str:
    lines = [f"risk without annotations, on {m.tools} {what} ({default_vocabulary().method}):",
             f"  read-only vs changing agree   {m.binary_share:7.1%}  ({m.binary_agree}/{m.binary_total})",
             f"  changing called read-only     {m.changing_as_read_only_share:7.1%}  "
             f"({m.changing_called_read_only}/{m.changing_total})",
             f"  three levels agree            {m.level_share:7.1%}  ({m.level_agree}/{m.level_total})",
             "  confusion (rows: the server's annotations; columns: the words-only estimate)",
             "               " + "".join(f"{e:>8}" for e in LEVELS)]
    for said in LEVELS:
        lines.append(f"    {said:<10} " + "".join(f"{m.matrix[(said, e)]:>8}" for e in LEVELS))
    return "\n".join(lines)


def measure_sides() -> dict[str, Measure]:
    """The development and evaluation sides of the tool corpus (devtools/tool_corpus.py), and its holdout where
    it is there, each measured."""
    servers = load_servers() + load_holdout()
    sides = {side_of(s) for s in servers}
    return {side: measure_tools((s.id, t) for s in servers if side_of(s) == side for t in s.tools
                                if isinstance(t, dict))
            for side in (DEVELOPMENT, EVALUATION, HOLDOUT) if side in sides}


def sides_report(sides: dict[str, Measure]) -> str:
    return "\n".join(report(m, f"tools of the corpus's {side} side") for side, m in sides.items())


def run_bench() -> None:
    """`sevenmaps bench --only risk`: the whole corpus and each side, printed and kept in the benches' history."""
    whole, sides = measure(), measure_sides()
    print(report(whole))
    print(sides_report(sides))
    record("risk", {name: m.figures() for name, m in {"all": whole, **sides}.items()})


if __name__ == "__main__":
    import sys

    result = measure_sides() if "--sides" in sys.argv else {"all": measure()}
    print(sides_report(result))
    if "--misses" in sys.argv:
        for m in result.values():
            for miss in m.misses:
                print("  miss", *miss)
