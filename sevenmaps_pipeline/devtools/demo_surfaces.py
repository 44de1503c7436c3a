"""What the demo prints of the surfaces (docs/agents.md): two route answers with their set-asides, and
where the site is."""

from __future__ import annotations

import os

from ..lake.paths import LakePaths
from ..publishing.mapday import MapDay, NoMapError
from ..surfaces.route import route

DEMO_TASKS = ("search my notes", "delete records")


def surfaces_summary(lake: LakePaths) -> list[str]:
    lines = ["", "For agents and people (docs/agents.md; `sevenmaps serve` serves both):"]
    try:
        mapday = MapDay.open(lake)
    except NoMapError as exc:
        return lines + [f"  {exc}"]
    with mapday:
        for task in DEMO_TASKS:
            answer = route(mapday, task)
            lines.append(f"  route {task!r} ({answer['task_risk']}: {answer['task_risk_source']}), map of "
                         f"{answer['map_day']}{', signed' if answer['signed'] else ''}:")
            for r in answer["tools"][:3]:
                chance = r["success_chance"] or 0
                lines.append(f"    {r['rank']}. {r['server_name']} {r['tool']} ({r['risk']}; relevance "
                             f"{r['relevance']:.2f}, success chance {chance:.2f}, score {r['score']:.3f})")
            if not answer["tools"]:
                lines.append("    no tool: every match was set aside")
            for e in answer["set_aside"][:4]:
                more = f", +{len(e['tools']) - 3} more" if len(e["tools"]) > 3 else ""
                lines.append(f"    set aside {e['server_name']} ({', '.join(e['tools'][:3])}{more}): {e['reasons'][0]}")
            if answer["set_aside_total"] > 4:
                lines.append(f"    ... and {answer['set_aside_total'] - 4} more set aside, each named in the answer")
    site = lake.root / "site" / "current"
    if site.exists():
        pages = len(list((site / "servers").glob("*.html")))
        lines.append(f"  site of {os.readlink(site).split('/')[-1]}: {os.path.relpath(site / 'index.html')} "
                     f"({pages} server pages, badges at badges/<server_id>.svg, down.html, feeds/watch.xml)")
    return lines
