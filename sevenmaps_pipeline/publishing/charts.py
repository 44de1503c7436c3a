"""Inline SVG pictures for the site and the badges (no JavaScript, no external files): every text that
comes from data is escaped, every shape is sized from the figures it draws (docs/agents.md "Pages").
"""

from __future__ import annotations

import datetime as dt
import functools
from xml.sax.saxutils import escape, quoteattr

from ..rules.rounding import percent

CODE_COLOURS = {"o": "#2e7d32", "a": "#1565c0", "p": "#6a1b9a", "d": "#c62828", "n": "#bdbdbd"}
CODE_WORDS = {"o": "answered, its tool list read", "a": "asked for sign-in", "p": "asked for payment",
              "d": "not answering", "n": "no data (no daily check)"}
SHOWN_ORDER = ("answers with tools", "answers, lists no tools", "answers, asks for sign-in",
               "answers, asks for payment", "answers, but not as a standard MCP endpoint", "down", "no data")
SHOWN_COLOURS = dict(zip(SHOWN_ORDER, ("#2e7d32", "#00838f", "#1565c0", "#6a1b9a", "#ef6c00", "#c62828", "#bdbdbd"),
                         strict=True))
RISK_COLOURS = {"green": "#2e7d32", "yellow": "#f9a825", "red": "#c62828"}
FONT = "font-family='Verdana,DejaVu Sans,sans-serif'"


def observed_days(days: int) -> str:
    """'N days observed' of an uptime's label, one day in the singular: as sql/server_history.sql words it since
    history-1.3, for the five-minute uptime's label and a page's own (site-1.5, live-pages-1.5)."""
    return f"{days} day{'' if days == 1 else 's'} observed"


def _svg(width: float, height: float, body: str, title: str) -> str:
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:g}' height='{height:g}' "
            f"viewBox='0 0 {width:g} {height:g}' role='img' aria-label={quoteattr(title)}>"
            f"<title>{escape(title)}</title>{body}</svg>")


def shown_status_chart(days: list[tuple[dt.date, dict[str, int]]], width: int = 720, height: int = 240) -> str:
    """Stacked bars: endpoints by shown status on each of the days, oldest left, with a legend (two statuses to
    a row, under the days: the bottom margin grows with its rows, so every status is inside the picture)."""
    rows = -(-len(SHOWN_ORDER) // 2)
    top, bottom, left = 10, 28 + 14 * rows, 40
    plot_h = height - top - bottom
    most = max((sum(c.values()) for _, c in days), default=0) or 1
    step = (width - left - 10) / max(len(days), 1)
    body = [f"<line x1='{left}' y1='{top + plot_h}' x2='{width - 10}' y2='{top + plot_h}' stroke='#555'/>",
            f"<text x='{left - 4}' y='{top + 8}' font-size='10' text-anchor='end' {FONT}>{most}</text>",
            f"<text x='{left - 4}' y='{top + plot_h}' font-size='10' text-anchor='end' {FONT}>0</text>"]
    for i, (day, counts) in enumerate(days):
        y: float = top + plot_h
        for status in SHOWN_ORDER:
            n = counts.get(status, 0)
            if not n:
                continue
            h = plot_h * n / most
            y -= h
            body.append(f"<rect x='{left + i * step + 1:.1f}' y='{y:.1f}' width='{max(step - 2, 1):.1f}' "
                        f"height='{h:.1f}' fill='{SHOWN_COLOURS[status]}'><title>{day}: {n} "
                        f"{escape(status)}</title></rect>")
        last = len(days) - 1
        if i in (0, last) or (i % 7 == 0 and last - i >= 4):
            body.append(f"<text x='{left + (i + 0.5) * step:.1f}' y='{top + plot_h + 14}' font-size='9' "
                        f"text-anchor='middle' {FONT}>{day:%m-%d}</text>")
    for j, status in enumerate(SHOWN_ORDER):
        x, y = left + (j % 2) * 330, height + 4 - 14 * (rows - j // 2)
        body.append(f"<rect x='{x}' y='{y - 9}' width='10' height='10' fill='{SHOWN_COLOURS[status]}'/>"
                    f"<text x='{x + 14}' y='{y}' font-size='10' {FONT}>{escape(status)}</text>")
    return _svg(width, height, "".join(body), f"Endpoints by shown status over the last {len(days)} days")


# The pictures drawn on every page of a day's site are kept by what they draw: 100,000 pages share a few
# thousand histories and badges (docs/scaling.md, "The site in a fifth less CPU"). Only pictures of strings,
# dates and integers: a float's cache would take -0.0 for 0.0, which it writes differently.
@functools.lru_cache(maxsize=4096)
def day_code_bars(history: str, last_day: dt.date, width: int = 600, height: int = 40) -> str:
    """The endpoint's daily codes as coloured bars, oldest left; each bar says its day and code (its title, on
    hover), and the first and last days are written under the bars, so the picture dates itself."""
    codes = history or ""
    first = last_day - dt.timedelta(days=len(codes) - 1)
    bars = _code_bars(len(codes), last_day, width, height)
    body = [bars[i].get(code) or _code_bar(i, code, len(codes), last_day, width, height)
            for i, code in enumerate(codes)]
    if not codes:
        return _svg(width, height, "", "No daily codes yet")
    under = height + 12
    body.append(f"<text x='1' y='{under}' font-size='10' {FONT}>{first}</text>")
    if len(codes) > 1:
        body.append(f"<text x='{width - 1}' y='{under}' font-size='10' text-anchor='end' {FONT}>{last_day}</text>")
    return _svg(width, height + 16, "".join(body), f"Daily codes from {first} to {last_day}: {codes}")


def _code_bar(i: int, code: str, days: int, last_day: dt.date, width: int, height: int) -> str:
    """The bar of day i of `days` ending on `last_day`."""
    step = width / max(days, 1)
    day = last_day - dt.timedelta(days=days - 1) + dt.timedelta(days=i)
    return (f"<rect x='{i * step + 1:.1f}' y='2' width='{max(step - 2, 1):.1f}' height='{height - 4}' "
            f"rx='2' fill='{CODE_COLOURS.get(code, '#000')}'><title>{day}: {escape(code)} "
            f"({escape(CODE_WORDS.get(code, 'unknown'))})</title></rect>")


@functools.lru_cache(maxsize=64)
def _code_bars(days: int, last_day: dt.date, width: int, height: int) -> list[dict[str, str]]:
    """Each day's bar for each known code, drawn once: the day's site draws 30 bars on each of 100,000 pages
    from the same few (docs/scaling.md)."""
    return [{code: _code_bar(i, code, days, last_day, width, height) for code in CODE_COLOURS} for i in range(days)]


def horizontal_bars(rows: list[tuple[str, float, str]], width: int = 520, bar: int = 18,
                    title: str = "") -> str:
    """One labelled bar per (label, value, colour), scaled to the largest value."""
    most = max((v for _, v, _ in rows), default=0) or 1
    label_w = 240
    body = []
    for i, (label, value, colour) in enumerate(rows):
        y = i * (bar + 6)
        w = (width - label_w - 50) * value / most
        body.append(f"<text x='{label_w - 6}' y='{y + bar - 5}' font-size='11' text-anchor='end' {FONT}>"
                    f"{escape(label)}</text><rect x='{label_w}' y='{y}' width='{w:.1f}' height='{bar}' "
                    f"fill='{colour}'/><text x='{label_w + w + 4:.1f}' y='{y + bar - 5}' font-size='11' {FONT}>"
                    f"{value:g}</text>")
    return _svg(width, max(len(rows), 1) * (bar + 6), "".join(body), title)


def risk_mix_bar(mix: dict[str, int], width: int = 300, height: int = 18) -> str:
    return _risk_mix_bar(tuple(mix.items()), width, height)


@functools.lru_cache(maxsize=1024)
def _risk_mix_bar(items: tuple[tuple[str, int], ...], width: int, height: int) -> str:
    mix = dict(items)
    total = sum(mix.values())
    if not total:
        return _svg(width, height, f"<rect width='{width}' height='{height}' fill='#eee'/>", "no tools listed")
    x, body = 0.0, []
    for level in ("green", "yellow", "red"):
        w = width * mix.get(level, 0) / total
        if w:
            body.append(f"<rect x='{x:.1f}' y='0' width='{w:.1f}' height='{height}' fill='{RISK_COLOURS[level]}'>"
                        f"<title>{mix[level]} {level}</title></rect>")
        x += w
    words = ", ".join(f"{mix.get(level, 0)} {level}" for level in ("green", "yellow", "red"))
    return _svg(width, height, "".join(body), f"Tool risk mix: {words}")


def interval_chart(value: float | None, low: float | None, high: float | None, width: int = 300,
                   height: int = 34, what: str = "success chance") -> str:
    """A 0-100% axis with the estimate and its interval."""
    if value is None:
        return _svg(width, height, f"<text x='0' y='20' font-size='11' {FONT}>not estimated yet</text>",
                    f"{what}: not estimated")
    pad = 10
    span = width - 2 * pad

    def at(v: float) -> float:
        return pad + span * max(0.0, min(1.0, v))

    lo, hi = low if low is not None else value, high if high is not None else value
    body = (f"<line x1='{pad}' y1='20' x2='{width - pad}' y2='20' stroke='#999'/>"
            f"<line x1='{at(lo):.1f}' y1='20' x2='{at(hi):.1f}' y2='20' stroke='#1565c0' stroke-width='6'/>"
            f"<circle cx='{at(value):.1f}' cy='20' r='5' fill='#0d47a1'/>"
            f"<text x='{pad}' y='33' font-size='9' {FONT}>0%</text>"
            f"<text x='{width - pad}' y='33' font-size='9' text-anchor='end' {FONT}>100%</text>"
            f"<text x='{at(value):.1f}' y='10' font-size='10' text-anchor='middle' {FONT}>{percent(value)}</text>")
    return _svg(width, height, body,
                f"{what} {percent(value, 1)} (90% interval {percent(lo, 1)} to {percent(hi, 1)})")


def position_chart(value: float | None, median: float | None, p90: float | None, percentile: float | None,
                   width: int = 300, height: int = 34) -> str:
    """Where a figure (definition tokens) stands against the day's distribution: median and p90 marked."""
    if value is None:
        return _svg(width, height, f"<text x='0' y='20' font-size='11' {FONT}>no tool list</text>", "no tool list")
    most = max(v for v in (value, median or 0, p90 or 0, 1) if v is not None)
    pad, span = 10, width - 20

    def at(v: float) -> float:
        return pad + span * v / most

    body = [f"<line x1='{pad}' y1='20' x2='{width - pad}' y2='20' stroke='#999'/>"]
    for mark, label in ((median, "median"), (p90, "p90")):
        if mark is not None:
            body.append(f"<line x1='{at(mark):.1f}' y1='12' x2='{at(mark):.1f}' y2='28' stroke='#777'/>"
                        f"<text x='{at(mark):.1f}' y='10' font-size='9' text-anchor='middle' {FONT}>{label}</text>")
    body.append(f"<circle cx='{at(value):.1f}' cy='20' r='5' fill='#ef6c00'/>")
    # As docs/analyst.md's round(100 * definition_tokens_percentile): a half away from zero (helper-94 F11).
    share = f", dearer than {percent(percentile)} of the day's endpoints" if percentile is not None else ""
    return _svg(width, height, "".join(body), f"{value:g} definition tokens{share}")


@functools.lru_cache(maxsize=1024)
def badge(label: str, value: str, colour: str) -> str:
    """A flat badge: label on grey, value on its colour (widths from the text's length)."""
    lw, vw = 6 * len(label) + 12, 6 * len(value) + 12
    body = (f"<rect width='{lw}' height='20' fill='#555'/><rect x='{lw}' width='{vw}' height='20' "
            f"fill='{colour}'/><g fill='#fff' font-size='11' {FONT}>"
            f"<text x='{lw / 2:.1f}' y='14' text-anchor='middle'>{escape(label)}</text>"
            f"<text x='{lw + vw / 2:.1f}' y='14' text-anchor='middle'>{escape(value)}</text></g>")
    return _svg(lw + vw, 20, body, f"{label}: {value}")
