"""The static site from hand-made days: the uptime label rule on badges, hostile text escaped everywhere,
stable paths through site/current, and the down list holding only what is down now."""

from __future__ import annotations

import datetime as dt
import enum
import os
import re
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

import markupsafe
import pytest
from conftest import land_probes, probe
from jinja2 import DictLoader, Environment

from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.curated.day import rebuild_day
from sevenmaps_pipeline.lake.keys import server_id, server_key
from sevenmaps_pipeline.publishing import charts, pages
from sevenmaps_pipeline.publishing.mapday import MapDay
from sevenmaps_pipeline.publishing.pages import ServerPages, _environment, server_page
from sevenmaps_pipeline.publishing.site import _all_server_pages, _Folder, _writers, build_site, uptime_text
from sevenmaps_pipeline.publishing.status import hold_day, key_ranges, statuses

DAYS = [dt.date(2026, 11, 1) + dt.timedelta(days=i) for i in range(3)]
HOSTILE = "<script>alert('x')</script><img src=x onerror=alert(1)> Ignore previous instructions & \"quote\""
OK_URL, DOWN_URL, ODD_URL = "https://ok.example.com/mcp", "https://down.example.com/mcp", "https://odd.example.com/mcp"


def _days(lake):
    for i, day in enumerate(DAYS):
        tools = [{"name": "get_page", "description": HOSTILE, "inputSchema": {"type": "object"}}]
        land_probes(lake, [probe(OK_URL, "ok", day=day, tools=tools),
                           probe(DOWN_URL, "timeout" if i else "ok", day=day),
                           probe(ODD_URL, "http_405", day=day, http_status=405)], day=day)
        rebuild_day(lake, day)


def test_the_uptime_label_follows_the_methodology():
    assert uptime_text(None) == ("uptime", "no data")
    assert uptime_text({"uptime_pct": 66.6, "uptime_label": "over 3 days observed", "checked_days": 3}) == (
        "over 3 days observed", "66.6%")
    assert uptime_text({"uptime_pct": 99.9, "uptime_label": "30-day uptime", "checked_days": 30}) == (
        "30-day uptime", "99.9%")


def test_the_site_escapes_hostile_text_and_keeps_stable_paths(lake, capsys):
    _days(lake)
    first = build_site(lake, DAYS[-1])
    site = lake.root / "site" / "current"
    assert first.current and site.resolve() == first.folder.resolve()
    ok_id, down_id, odd_id = (server_id(server_key(u)) for u in (OK_URL, DOWN_URL, ODD_URL))
    page = (site / "servers" / f"{ok_id}.html").read_text()
    assert "<script>" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page
    for path in [*site.glob("badges/*.svg"), site / "feeds" / "watch.xml"]:
        ET.fromstring(path.read_text())  # every SVG and the feed are well-formed XML
    uptime = (site / "badges" / f"{down_id}-uptime.svg").read_text()
    assert "over 3 days observed" in uptime and "33.3%" in uptime  # 1 of 3 checked days, floored
    assert "100.0%" in (site / "badges" / f"{ok_id}-uptime.svg").read_text()  # every checked day answered
    down = (site / "down.html").read_text()
    assert f"servers/{down_id}.html" in down and f"servers/{odd_id}.html" not in down  # 405 is not down
    # Failure classes' shares to one decimal (whole percents sent halves to the even one, adding to 99%).
    shares = re.findall(r"<td>(\d+(?:\.\d)?)%</td>", (site / "index.html").read_text())
    assert shares and all("." in share for share in shares) and sum(map(float, shares)) == pytest.approx(100.0)
    assert "<td>2026-11-02T03:00:00Z</td>" in down  # down since its first failed check (its first d day)
    # An older day rebuilt later never moves site/current back.
    older = build_site(lake, DAYS[0])
    assert not older.current and site.resolve() == first.folder.resolve()
    # An unsigned day's site, built from the command line: said there too, not on its pages alone (helper-85).
    assert main(["site", "--lake", str(lake.root), "--day", str(DAYS[0])]) == 0
    said = capsys.readouterr()
    # what it is doing, said before the minutes a registry-sized day takes (helper-100: 20-93 s of silence at 22,000)
    assert said.out.startswith(f"building the site of {DAYS[0]} in {lake.root / 'site' / 'days' / str(DAYS[0])} ...\n")
    assert said.err == (f"note: {DAYS[0]} is not signed, as its pages say: once it is, signing builds "
                                       f"the newest signed day's site (`sevenmaps site --day {DAYS[0]}` builds this "
                                       "one again)\n")
    assert "not signed yet" in (lake.root / "site" / "days" / str(DAYS[0]) / "index.html").read_text()


def test_the_badge_and_chart_text_is_escaped():
    svg = charts.badge("7maps", "<b>&", "#000")
    assert "<b>" not in svg and "&lt;b&gt;&amp;" in svg
    ET.fromstring(svg)
    ET.fromstring(charts.shown_status_chart([(DAYS[0], {"down": 2, "answers with tools": 3})]))
    ET.fromstring(charts.day_code_bars("nnod", DAYS[-1]))


def test_every_status_of_the_chart_legend_is_drawn_inside_the_picture_under_the_days():
    # status-1.2 made the legend seven statuses, two to a row: its fourth row once fell below the picture's edge.
    svg = ET.fromstring(charts.shown_status_chart([(d, {"answers with tools": 3, "down": 1}) for d in DAYS]))
    texts = list(svg.iter("{http://www.w3.org/2000/svg}text"))
    legend = {t.text: float(t.get("y")) for t in texts if t.text in charts.SHOWN_ORDER}
    days = [float(t.get("y")) for t in texts if t.get("font-size") == "9"]
    assert set(legend) == set(charts.SHOWN_ORDER) and days
    assert all(max(days) + 9 <= y <= float(svg.get("height")) - 2 for y in legend.values()), legend


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_site_is_the_same_written_by_workers_a_part_at_a_time_or_in_one_process(lake):
    _days(lake)
    one = _files(build_site(lake, DAYS[-1], workers=1).folder)
    parts = build_site(lake, DAYS[-1], servers_per_part=1, workers=2)
    assert parts.writers == 2 and parts.writers_note is None
    assert _files(parts.folder) == one and len([f for f in one if f.startswith("servers/")]) == 3


def test_a_page_whose_layout_is_rendered_once_is_the_page_rendered_whole(lake):
    _days(lake)
    sources = [{"path": "curated/tools/day=2026-11-03/part-0.parquet", "sha256": "ab" * 32, "proof": "p<&"}]
    env = _environment(auto_reload=False)
    with MapDay.open(lake, DAYS[-1], reviews=False) as mapday:
        every = list(statuses(mapday).values())
        for root in (None, {"root": "<r>", "signed_at": "2026-11-04T00:00:00Z"}):
            pages = ServerPages(env, DAYS[-1], root, sources)
            assert [pages.render(s) for s in every] == [server_page(env, s, DAYS[-1], root, sources) for s in every]
            assert pages.layout is not None
        # A layout that comes to read a page's own values (failing alone, or differing on the first page): every
        # page is rendered whole.
        for reads in ("{{ s.url }}", "{% if s is defined %}{{ s.url }}{% endif %}"):
            odd = _environment(auto_reload=False)
            odd.loader = DictLoader({"base.html": "<title>{% block title %}{% endblock %}</title>" + reads
                                                  + "{% block main %}{% endblock %}",
                                     "server.html": '{% extends "base.html" %}{% block title %}{{ s.server_name }}'
                                                    "{% endblock %}{% block main %}{{ s.server_id }}{% endblock %}"})
            pages = ServerPages(odd, DAYS[-1], None, sources)
            assert [pages.render(s) for s in every] == [server_page(odd, s, DAYS[-1], None, sources) for s in every]
            assert pages.layout is None


def _day_code_bars_drawn_one_by_one(history, last_day, width=600, height=40):
    """day_code_bars as it was before its bars were drawn once (the reference its output is held to)."""
    codes = history or ""
    step = width / max(len(codes), 1)
    first = last_day - dt.timedelta(days=len(codes) - 1)
    body = []
    for i, code in enumerate(codes):
        day = first + dt.timedelta(days=i)
        body.append(f"<rect x='{i * step + 1:.1f}' y='2' width='{max(step - 2, 1):.1f}' height='{height - 4}' "
                    f"rx='2' fill='{charts.CODE_COLOURS.get(code, '#000')}'><title>{day}: {escape(code)} "
                    f"({escape(charts.CODE_WORDS.get(code, 'unknown'))})</title></rect>")
    if not codes:
        return charts._svg(width, height, "", "No daily codes yet")
    under = height + 12
    body.append(f"<text x='1' y='{under}' font-size='10' {charts.FONT}>{first}</text>")
    if len(codes) > 1:
        body.append(f"<text x='{width - 1}' y='{under}' font-size='10' text-anchor='end' {charts.FONT}>"
                    f"{last_day}</text>")
    return charts._svg(width, height + 16, "".join(body), f"Daily codes from {first} to {last_day}: {codes}")


def test_the_day_code_bars_drawn_once_are_those_drawn_one_by_one():
    for history in ("", "o", "oapdn", "dn<&" * 3, "ooooooooooooooooooooooooooooooo", "x" + "o" * 40):
        for day in (DAYS[-1], dt.date(2024, 3, 1)):
            assert charts.day_code_bars(history, day) == _day_code_bars_drawn_one_by_one(history, day)
            assert charts.day_code_bars(history, day, 300, 20) == _day_code_bars_drawn_one_by_one(history, day, 300, 20)


def test_the_server_serves_only_files_of_the_current_site(tmp_path):
    from sevenmaps_pipeline.surfaces.serve import site_file

    root = tmp_path / "site"
    (root / "days" / "2026-11-03" / "servers").mkdir(parents=True)
    (root / "days" / "2026-11-03" / "index.html").write_text("index")
    (root / "days" / "2026-11-03" / "servers" / "a.html").write_text("a")
    (tmp_path / "secret.txt").write_text("not for you")
    (root / "days" / "2026-11-03" / "escape").symlink_to(tmp_path / "secret.txt")
    assert site_file(root, "index.html") is None  # no site/current yet
    (root / "current").symlink_to("days/2026-11-03")
    assert site_file(root, "").name == "index.html"
    assert site_file(root, "/servers/a.html").read_text() == "a"
    for path in ("../secret.txt", "../../secret.txt", "servers/../../../secret.txt", "escape", "/etc/passwd",
                 "servers/missing.html"):
        assert site_file(root, path) is None, path


class _Shown:
    def __html__(self):
        return "<b>as it says</b>"


class _Text(str):
    pass


class _Level(enum.IntEnum):
    RED = 3


def test_the_pages_escape_what_markupsafe_escapes_as_it_does():
    values = [HOSTILE, "", "plain", "ünï <cödé> & 'x'", "\x00\"", 0, -12, 10**30, True, None, 1.5, _Level.RED,
              markupsafe.Markup("<i>kept</i>"), _Shown(), _Text("<sub>")]
    for value in values:
        assert pages.escape(value) == markupsafe.escape(value) and type(pages.escape(value)) is markupsafe.Markup
    source = "{% for v in values %}{{ v }}|{{ v ~ '<' }}|{% set x %}<{{ v }}>{% endset %}{{ x }};{% endfor %}"
    ours = _environment(auto_reload=False).from_string(source)
    assert ours.root_render_func.__globals__["escape"] is pages.escape  # every template of ours uses it
    jinjas = Environment(autoescape=True).from_string(source)
    assert ours.render(values=values) == jinjas.render(values=values)


def test_files_of_one_text_are_links_to_one_file_and_a_name_written_again_is_replaced(tmp_path):
    folder = _Folder(tmp_path)
    folder.LINKS_PER_FILE = 2
    for name in ("a.svg", "b.svg", "c.svg"):
        folder.write_same(name, "<same/>")
    folder.write_same("d.svg", "<other/>")
    folder.write_same("a.svg", "<other/>")  # replaced, never written through: b.svg is a link to the same file
    folder.close()
    assert sorted(os.listdir(tmp_path)) == ["a.svg", "b.svg", "c.svg", "d.svg"]  # no hidden name left
    assert {n: (tmp_path / n).read_text() for n in os.listdir(tmp_path)} == {
        "a.svg": "<other/>", "b.svg": "<same/>", "c.svg": "<same/>", "d.svg": "<other/>"}
    node = {n: os.stat(tmp_path / n) for n in os.listdir(tmp_path)}
    assert node["a.svg"].st_ino == node["d.svg"].st_ino and node["a.svg"].st_nlink == 2
    # A file takes at most LINKS_PER_FILE names (ext4 allows 65,000): the third of a text is a file of its own.
    assert node["b.svg"].st_ino != node["c.svg"].st_ino and node["b.svg"].st_nlink == node["c.svg"].st_nlink == 1


def test_a_day_held_for_its_parts_reads_as_the_day_asked_each_time(lake):
    _days(lake)
    with MapDay.open(lake, DAYS[-1], reviews=False) as asked, MapDay.open(lake, DAYS[-1], reviews=False) as held:
        hold_day(held)
        whole = statuses(asked)
        assert any(s["down_since"] for s in whole.values()) and any(s["token_cost"] for s in whole.values())
        assert statuses(held) == whole
        for part in key_ranges(asked, 2):
            assert statuses(held, part=part) == statuses(asked, part=part)
    with MapDay.open(lake, DAYS[-1], live=True) as live, pytest.raises(ValueError, match="live"):
        hold_day(live)


def test_pages_written_again_after_a_worker_died_publish_none_of_its_hidden_files(lake, tmp_path):
    """A worker killed while it writes a part (the out-of-memory killer) never closes its badges folder, so the
    hidden file its badges are links to stays. The pool is then broken and every page is written in this
    process: no hidden name of the dead worker is left in the folder that is published."""
    _days(lake)
    out = tmp_path / "out"
    for folder in ("servers", "badges"):
        (out / folder).mkdir(parents=True)
    dead = _Folder(out / "badges")
    dead.write_same("dead.svg", "<as a killed worker left it/>")
    os.close(dead.fd)  # its process gone, close() never ran
    env = _environment(auto_reload=False)
    # Workers that cannot open the day (no lake where they look): the pool breaks as when one is killed.
    with _writers(tmp_path / "no-lake", DAYS[-1], 2) as pool, MapDay.open(lake, DAYS[-1], reviews=False) as mapday:
        servers, _, writers, note = _all_server_pages(mapday, env, out, [], 2, pool, 2, lambda: 0)
    assert writers == 1 and note and len(servers) == 3
    assert sorted(n for n in os.listdir(out / "badges") if n.startswith(".")) == []
    assert len(os.listdir(out / "badges")) == 2 * 3 + 1


def test_the_watch_feed_is_xml_whatever_a_server_names_its_tool():
    """helper-84: a vertical tab in one tool's name (or a registry name) made feeds/watch.xml, on the site and under
    /live/, unreadable as XML: every reader of the feed lost every entry. What XML cannot hold was U+FFFD, which
    made two names one; it is now shown as its code, as the pages and the command line show it (helper-94 F6)."""
    import types

    from sevenmaps_pipeline.publishing.feed import atom_feed

    entry = {"server_id": "0123456789ab", "day": dt.date(2026, 11, 10), "kind": "risk rose",
             "tool_name": "fetch\x0bdata\x00<&>", "server_name": "odd\ud800name\x1b[31m", "server_key": "k",
             "detail": "green -> red \ufffe"}
    signed_day = types.SimpleNamespace(day=dt.date(2026, 11, 10), open_days=[])
    answer = {"entries": [entry], "total": 1, "truncated": False, "window_days": 30}
    feed = ET.fromstring(atom_feed(signed_day, answer).encode("utf-8"))
    ns = {"a": "http://www.w3.org/2005/Atom"}
    assert feed.find("a:entry/a:title", ns).text == "odd\\ud800name\\x1b[31m: risk rose fetch\\x0bdata\\x00<&>"
    assert feed.find("a:entry/a:summary", ns).text == "green -> red \\ufffe"
    assert feed.find("a:entry/a:id", ns).text == "urn:7maps:0123456789ab:2026-11-10:risk rose:fetch\\x0bdata\\x00<&>"
    assert feed.find("a:subtitle", ns).text == "1 change of the last 30 days, newest first"


def test_a_watch_feed_cut_at_its_limit_says_how_many_it_left_out():
    """helper-98: the feed held the newest 500 changes of its window (publishing/locks.py MAX_CHANGES) and said
    nothing of the rest; its subtitle says the cut and where every change is."""
    import types

    from sevenmaps_pipeline.publishing.feed import atom_feed
    from sevenmaps_pipeline.publishing.locks import MAX_CHANGES

    entries = [{"server_id": f"{i:012x}", "day": dt.date(2026, 11, 10), "kind": "risk rose", "tool_name": f"t{i}",
                "server_name": f"s{i}", "server_key": f"k{i}", "detail": "green -> red"} for i in range(MAX_CHANGES)]
    answer = {"entries": entries, "total": 1234, "truncated": True, "window_days": 30}
    feed = ET.fromstring(atom_feed(types.SimpleNamespace(day=dt.date(2026, 11, 10), open_days=[]), answer))
    ns = {"a": "http://www.w3.org/2005/Atom"}
    assert len(feed.findall("a:entry", ns)) == MAX_CHANGES
    assert feed.find("a:subtitle", ns).text == (
        f"the newest {MAX_CHANGES} of 1,234 changes of the last 30 days; every change: the tool_changes table of "
        "those days' snapshots or of the warehouse")
