"""The category rule measured on real servers (issue 37 point 4; docs/methodology.md, "Categories on real tool lists").

Each corpus server (devtools/tool_corpus.py: its registry name or package, its registry or package description,
and its tools as its server listed them) becomes one endpoint of one day, and the map's own rule places it:
curated/categories.place, the same SQL over DuckDB that builds `server_categories`. Nothing here decides a
category. The rule before categories-1.2 (registry text first, the tools only when it names no topic) is the same
two verdicts read in the old order, so the two figures differ by the order alone.

There is no category label in the corpus and none is made up: the figures say how many servers moved and show
both verdicts with their words, for a reader to judge. Run: `python -m sevenmaps_pipeline.devtools.category_corpus`
or `sevenmaps bench --only categories`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ..curated.categories import LIST_CATEGORIES_SCHEMA, LISTING_TEXT_SQL, place
from ..curated.tool_tables import CATEGORIES
from ..lake import duck
from .bench_history import record
from .tool_corpus import DEVELOPMENT, EVALUATION, LEGACY, CorpusServer, load_servers, side_of

DAY = dt.date(2026, 12, 1)  # any day: the rule reads no date


@dataclass(frozen=True)
class Placement:
    server: CorpusServer
    side: str
    row: dict[str, Any]  # sql/server_categories.sql's row

    @property
    def before(self) -> tuple[str, str]:
        """(category, placed by) under categories-1.1: the registry text's verdict first, then the tools'."""
        r = self.row
        if r["registry_category"] is not None:
            return r["registry_category"], "registry"
        if r["tools_category"] is not None:
            return r["tools_category"], "tools"
        return "other", "none"

    @property
    def after(self) -> tuple[str, str]:
        placed = {"name_and_summary": "registry", "none": "none"}.get(self.row["placed_by"], "tools")
        return self.row["category"], placed


def registry_text(server: CorpusServer) -> tuple[str, str]:
    """(name, description) as a registry entry would carry them. risk_corpus.json's descriptions say where
    its tools were read, not what the server is: its servers keep their name only."""
    return server.name, "" if server.source == LEGACY.name else server.description


def _inputs(servers: list[CorpusServer]) -> tuple[pa.Table, pa.Table, pa.Table]:
    status, texts, listing = [], {}, []
    for s in servers:
        tools = [(str(t.get("name") or ""), t.get("description")) for t in s.tools if isinstance(t, dict)]
        tools_hash = hashlib.sha256(json.dumps(tools).encode()).hexdigest()
        texts[tools_hash] = tools
        status.append({"day": DAY, "server_key": s.id, "server_id": hashlib.sha256(s.id.encode()).hexdigest()[:12],
                       "tools_hash": tools_hash, "tool_count": len(tools)})
        listing.append({"server_key": s.id, "name": registry_text(s)[0], "description": registry_text(s)[1]})
    list_texts = pa.Table.from_pylist([{"tools_hash": h, "name": n, "description": d}
                                       for h, tools in texts.items() for n, d in tools],
                                      pa.schema([("tools_hash", pa.string()), ("name", pa.string()),
                                                 ("description", pa.string())]))
    return pa.Table.from_pylist(status), list_texts, pa.Table.from_pylist(listing)


def measure(servers: list[CorpusServer] | None = None) -> list[Placement]:
    """Every corpus server with tools, placed by the map's rule (the figures are of servers with tools; the corpus
    holds no empty list, which the map places by its registry text alone)."""
    servers = [s for s in (servers if servers is not None else load_servers()) if s.tools]
    doc = json.loads(CATEGORIES.read_bytes())
    status, list_texts, listing = _inputs(servers)
    with duck.session() as con:
        con.register("daily_status", status)
        con.register("listing", listing)
        # The registry text as the map builds it (curated/categories.py LISTING_TEXT_SQL); no title here.
        text = LISTING_TEXT_SQL.format(name="name", title="NULL", description="description")
        listing_text = con.sql(f"SELECT server_key, {text} AS text FROM listing").to_arrow_table()
        hashes = pa.array(sorted(set(status.column("tools_hash").to_pylist())), pa.string())
        con.register("list_texts", list_texts)
        placed = place(con, DAY, doc, LIST_CATEGORIES_SCHEMA.empty_table(), hashes, listing_text)
    rows = {r["server_key"]: r for r in placed.rows.to_pylist()}
    return [Placement(s, side_of(s), rows[s.id]) for s in servers]


def counts(placements: list[Placement]) -> dict[str, Any]:
    return {
        "servers": len(placements),
        "before": dict(Counter(p.before[1] for p in placements)),
        "after": dict(Counter(p.after[1] for p in placements)),
        "decision": dict(Counter(p.row["decision"] for p in placements)),
        "changed": sum(p.before[0] != p.after[0] for p in placements),
        "kept_two_words": sum(p.row["decision"] == "registry_two_words" for p in placements),
        "method": sorted({p.row["method_version"] for p in placements}),
    }


def describe(p: Placement) -> str:
    r = p.row
    registry = (f"{r['registry_category']} {r['registry_evidence']}" if r["registry_category"] else "none")
    tools = (f"{r['tools_category']} ({r['tools_rule']}) {r['tools_evidence']}" if r["tools_category"] else "none")
    return (f"  [{p.side[:3]}] {p.server.name}: {p.before[0]} -> {p.after[0]} ({r['decision']}); "
            f"registry text: {registry}; tools ({r['tool_count']}): {tools}")


def _sides(placements: list[Placement]) -> list[tuple[str, list[Placement]]]:
    return [("all", placements),
            *((side, [p for p in placements if p.side == side]) for side in (DEVELOPMENT, EVALUATION))]


def report(placements: list[Placement]) -> str:
    lines = []
    for label, group in _sides(placements):
        c = counts(group)
        lines.append(f"categories on real tool lists, {label}: {c['servers']} servers with tools, method "
                     f"{', '.join(c['method'])}")
        for when in ("before", "after"):
            by = c[when]
            lines.append(f"  {when:6}  by registry text {by.get('registry', 0)}, by tools {by.get('tools', 0)}, "
                         f"none {by.get('none', 0)}")
        lines.append(f"  changed category {c['changed']}; registry kept with two words {c['kept_two_words']}; "
                     f"decisions {dict(sorted(c['decision'].items()))}")
    return "\n".join(lines)


def run_bench() -> None:
    """`sevenmaps bench --only categories`: printed and kept in the benches' history."""
    placements = measure()
    print(report(placements))
    record("categories", {label: counts(group) for label, group in _sides(placements)})


def examples(placements: list[Placement], n: int, side: str | None = None) -> str:
    """The first n servers (in corpus order, not chosen) of each disagreement, with both verdicts."""
    lines = []
    for decision in ("tools_win", "registry_two_words"):
        picked = [p for p in placements if p.row["decision"] == decision and side in (None, p.side)][:n]
        lines.append(f"{decision} (first {len(picked)} in corpus order{f', {side}' if side else ''}):")
        lines += [describe(p) for p in picked]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--examples", type=int, default=0, help="show this many servers per disagreement kind")
    parser.add_argument("--side", choices=(DEVELOPMENT, EVALUATION), help="examples of one side only")
    args = parser.parse_args(argv)
    placements = measure()
    print(report(placements))
    if args.examples:
        print(examples(placements, args.examples, args.side))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
