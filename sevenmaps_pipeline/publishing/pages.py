"""The pages of the day's site and `sevenmaps serve`'s live pages are rendered with (publishing/site.py,
publishing/live.py): the templates, an endpoint's page and its two badges, and what they say of uptime.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import markupsafe
from jinja2 import Environment, PackageLoader, Template, TemplateError, select_autoescape
from markupsafe import Markup

from ..rules.rounding import percent
from . import charts
from .shown import FILTERS


def uptime_text(history: dict[str, Any] | None) -> tuple[str, str]:
    """(label, value) as the methodology words it: '30-day uptime' only from 14 checked days, else
    'over N days observed'; the figure is floored, so 100% only when every checked day answered."""
    if not history or history.get("uptime_pct") is None:
        return "uptime", "no data"
    label = history["uptime_label"] or f"over {charts.observed_days(history['checked_days'])}"
    return label, f"{history['uptime_pct']:.1f}%"


def uptime_colour(pct: float | None) -> str:
    if pct is None:
        return "#757575"
    return "#2e7d32" if pct >= 99 else "#9e9d24" if pct >= 95 else "#ef6c00" if pct >= 80 else "#c62828"


def status_colour(shown: str | None) -> str:
    return charts.SHOWN_COLOURS.get(shown or "no data", "#757575")


_DICT_ATTRIBUTES = frozenset(dir(dict))


class _Environment(Environment):
    """Jinja's environment, reading `a.b` of a dict as its key first. Jinja tries the attribute first and
    takes the key after the AttributeError; the pages read every figure of a status dict that way, and the
    raised errors were about half of the template's own time (docs/scaling.md). A name that is also an attribute of dict
    (`items`, `keys`, ...) still reads as Jinja reads it, so every page renders the same."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


# markupsafe's own C escaping of a str (markupsafe.escape is that, wrapped in Markup's Python constructor).
_ESCAPE_STR = getattr(markupsafe, "_escape_inner", None)
_NEW_STR = str.__new__


def escape(value: Any) -> Markup:
    """markupsafe.escape, the same Markup for every value, made without Markup's Python constructor for a str
    or an int: a day's site escapes about 120 values a page, 100,000 pages, and the constructor was about a
    sixth of rendering one (docs/scaling.md, "The site in a fifth less CPU")."""
    kind = type(value)
    if kind is str and _ESCAPE_STR is not None:
        return _NEW_STR(Markup, _ESCAPE_STR(value))
    if kind is int:  # digits and a sign: nothing to escape
        return _NEW_STR(Markup, int.__repr__(value))
    return markupsafe.escape(value)


class _Template(Template):
    """A template whose `{{ value }}` escapes with escape() above: Jinja's compiled module imports markupsafe's
    escape as a global of its own, which every block and macro of the template reads."""

    @classmethod
    def from_code(cls, environment: Environment, code: Any, globals: Any, uptodate: Any = None) -> Template:
        template = super().from_code(environment, code, globals, uptodate)
        template.root_render_func.__globals__["escape"] = escape
        return template


def _environment(auto_reload: bool = True) -> Environment:
    """The templates. A day's site is built from them as they were when it began (`auto_reload` off): Jinja
    would otherwise look at the files of a page and of its base again for each of 100,000 pages."""
    env = _Environment(loader=PackageLoader("sevenmaps_pipeline.publishing", "templates"),
                       autoescape=select_autoescape(["html", "xml"]), trim_blocks=True, lstrip_blocks=True,
                       auto_reload=auto_reload)
    env.template_class = _Template
    env.filters["percent"] = percent  # a half away from zero, as DuckDB rounds (rules/rounding.py)
    env.filters["moment"] = moment_text
    env.filters.update(FILTERS)  # a server's words as people see them (publishing/shown.py)
    return env


def moment_text(value: Any) -> str:
    """A check's time as every line shown to people writes one, "down since" among them (publishing/status.py
    DOWN_SINCE): UTC to the second, `2026-12-06T03:37:13Z` (helper-100: one line gave
    `2026-12-06T03:37:13.457684+00:00` beside it). Agents read the full value in the MCP answers."""
    moment = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
    if not isinstance(moment, dt.datetime):
        return str(value)
    moment = moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def five_minute_text(five: dict[str, Any] | None) -> tuple[str, str] | None:
    """(label, value) of an owner-verified endpoint's five-minute uptime, labelled as the seed labels uptime
    (publishing/status.py labelled_five_minute_uptime); None for an endpoint without five-minute checks."""
    if not five or five.get("uptime_30d_pct") is None:
        return None
    return five["label_30d"], f"{five['uptime_30d_pct']:.1f}%"


def status_badge(s: dict[str, Any]) -> str:
    return charts.badge("7maps", s["shown_status"] or "no data", status_colour(s["shown_status"]))


def uptime_badge(s: dict[str, Any], five_minute: bool = False) -> str:
    """The uptime badge: the daily uptime with its label; with `five_minute`, an owner-verified endpoint's
    five-minute uptime instead where it has one (the live badge: docs/agents.md)."""
    five = five_minute_text(s["five_minute_uptime"]) if five_minute else None
    if five is not None:
        return charts.badge(*five, uptime_colour(s["five_minute_uptime"]["uptime_30d_pct"]))
    label, value = uptime_text(s["history"])
    return charts.badge(label, value, uptime_colour((s["history"] or {}).get("uptime_pct")))


def server_page(env: Environment, s: dict[str, Any], day: dt.date, root: dict[str, Any] | None,
                sources: list[dict[str, Any]], live: dict[str, Any] | None = None) -> str:
    """One endpoint's page from its server_status (the day's site, and `sevenmaps serve`'s live pages, which
    pass `live`: what the status shown now rests on)."""
    return env.get_template("server.html").render(_server_values(s, day, root, sources, live))


def _server_values(s: dict[str, Any], day: dt.date, root: dict[str, Any] | None, sources: list[dict[str, Any]],
                   live: dict[str, Any] | None) -> dict[str, Any]:
    """What server.html is rendered with."""
    label, value = uptime_text(s["history"])
    history = (s["history"] or {}).get("history") or ""
    chance = s["history"] or {}
    tokens = s["token_cost"] or {}
    five = five_minute_text(s["five_minute_uptime"])
    return dict(
        day=day.isoformat(), root=root, base="../", s=s, uptime_text=f"{label}: {value}", sources=sources,
        live=live, five_minute_text=f"{five[0]}: {five[1]}" if five else None,
        bars=Markup(charts.day_code_bars(history, day)),
        interval=Markup(charts.interval_chart(chance.get("success_chance"), chance.get("success_chance_low"),
                                              chance.get("success_chance_high"))),
        risk_mix=Markup(charts.risk_mix_bar(s["risk_mix"])),
        tokens=Markup(charts.position_chart(tokens.get("definition_tokens"),
                                            tokens.get("day_median_definition_tokens"),
                                            tokens.get("day_p90_definition_tokens"),
                                            tokens.get("definition_tokens_percentile"))))


class ServerPages:
    """The day's server pages, each as server_page renders it, with the layout around them rendered once.
    server.html fills two blocks of base.html (title and main); the rest of base.html (the header, and the
    footer with the signed root and the nine source files) reads only the day, the root and the sources,
    the same on every page of the day, and was a fifth of rendering each page (docs/scaling.md). It is
    rendered once, cut where the two blocks go, and each page renders only its own blocks into it. The
    first page is also rendered whole and compared: should base.html come to read a page's own values
    (the layout then fails to render alone, or differs), every page is rendered whole again."""

    _CUT = "\x00"  # where a block goes in the rendered layout: no template or value of it holds one
    _LAYOUT = ('{% extends "base.html" %}{% block title %}' + _CUT + '{% endblock %}{% block main %}' + _CUT
               + '{% endblock %}')  # server.html's layout, each of its blocks a cut
    _PIECES = 3  # before the title, between the title and the main block, after it

    def __init__(self, env: Environment, day: dt.date, root: dict[str, Any] | None,
                 sources: list[dict[str, Any]]) -> None:
        self.env, self.day, self.root, self.sources = env, day, root, sources
        self.template = env.get_template("server.html")
        try:
            cut = env.from_string(self._LAYOUT).render(day=day.isoformat(), root=root, base="../", sources=sources,
                                                       live=None).split(self._CUT)
        except TemplateError:  # a layout that reads more than these: rendered whole with each page
            cut = []
        self.layout: tuple[str, str, str] | None = (cut[0], cut[1], cut[2]) if len(cut) == self._PIECES else None
        self.checked = False

    def render(self, s: dict[str, Any]) -> str:
        if self.layout is None:
            return server_page(self.env, s, self.day, self.root, self.sources)
        context = self.template.new_context(_server_values(s, self.day, self.root, self.sources, None))
        head, middle, tail = self.layout
        page = "".join((head, *self.template.blocks["title"](context), middle,
                        *self.template.blocks["main"](context), tail))
        if not self.checked:
            self.checked = True
            whole = server_page(self.env, s, self.day, self.root, self.sources)
            if page != whole:
                self.layout = None
                return whole
        return page
