"""One rounding rule on every surface (rules/rounding.py; helper-94 F11): the share of d days Dagster's metadata
plots is `map_days.share_d_pct` to the digit, and a page's "dearer than N%" is docs/analyst.md's
`round(100 * definition_tokens_percentile)`, ties included (Python's `round` and `.0%` sent a half to the even
digit: 1 d of 32 was 3.12 in Dagster and 3.13 in the warehouse, 1 of 8 cheaper "12%" on the page and 13 in SQL)."""

from __future__ import annotations

import datetime as dt

import duckdb

from sevenmaps_pipeline.curated.profile import DayProfile
from sevenmaps_pipeline.defs.metadata import day_metadata
from sevenmaps_pipeline.lake.warehouse import analyst_view_statements
from sevenmaps_pipeline.publishing.charts import interval_chart, position_chart
from sevenmaps_pipeline.publishing.pages import _environment
from sevenmaps_pipeline.rules.rounding import percent, round_half_away

# Every share of n endpoints up to 200 with k of them: the ties (1/8, 1/32, 1/160, 5/8, ...) among them.
FRACTIONS = [(k, n) for n in range(1, 201) for k in range(n + 1)]


def test_share_d_in_dagsters_metadata_is_map_days_share_d_pct_for_every_share():
    con = duckdb.connect()
    con.execute("CREATE TABLE f AS SELECT * FROM (VALUES " + ", ".join(f"({k}, {n})" for k, n in FRACTIONS)
                + ") AS t(k, n)")
    warehouse = dict(((k, n), v) for k, n, v in con.execute("SELECT k, n, round(100.0 * k / n, 2) FROM f").fetchall())
    # map_days' own expression, from the statement that makes it (lake/warehouse.py).
    (map_days,) = [s for s in analyst_view_statements() if s.startswith("CREATE VIEW map_days")]
    assert "round(100.0 * count(*) FILTER (WHERE code = 'd') / count(*), 2) AS share_d_pct" in map_days
    for (k, n), expected in warehouse.items():
        profile = DayProfile("daily_status", dt.date(2026, 12, 1), n, counts={"code": {"d": k, "o": n - k}})
        assert profile.share("code", "d") == expected, (k, n)
    profile = DayProfile("daily_status", dt.date(2026, 12, 1), 32, counts={"code": {"d": 1, "o": 31}})
    assert day_metadata(profile)["share d %"].value == 3.13  # helper-94's case: Python's round said 3.12


def test_a_pages_percent_is_the_analyst_querys_round_for_every_share():
    con = duckdb.connect()
    con.execute("CREATE TABLE f AS SELECT * FROM (VALUES " + ", ".join(f"({k}, {n})" for k, n in FRACTIONS)
                + ") AS t(k, n)")
    rows = con.execute("SELECT k, n, round(100 * (k / n)::DOUBLE), round(100 * (k / n)::DOUBLE, 1) FROM f").fetchall()
    for k, n, whole, tenth in rows:
        assert percent(k / n) == f"{whole:.0f}%", (k, n)
        assert percent(k / n, 1) == f"{tenth:.1f}%", (k, n)
    assert round_half_away(-2.5) == -3.0 and round_half_away(0.49999999999999994) == 0.0


def test_the_pages_say_dearer_than_the_analysts_percent():
    assert "dearer than 13% of the day's endpoints" in position_chart(900, 500, 1000, 1 / 8)  # was 12%
    assert "dearer than 63% of the day's endpoints" in position_chart(900, 500, 1000, 5 / 8)  # was 62%
    chart = interval_chart(0.125, 0.0625, 0.5)
    assert ">13%</text>" in chart and "12.5% (90% interval 6.3% to 50.0%)" in chart  # was 12% and 6.2%
    env = _environment()
    assert env.from_string("{{ s|percent(1) }}").render(s=1 / 16) == "6.3%"  # the index's failure shares
