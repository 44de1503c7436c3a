"""The demo's open day follows the clock (devtools/demo_operations.py `open_day`, docs/development.md "The
fleet"): a user ran the demo at 04:47 UTC and found today's hourly checks stamped 01:00-05:00 and its five-minute
checks 06:00, later than the clock. Every moment the demo plans is one the clock has reached; a day too young for
all of it gets fewer checks, the plan's last ones."""

from __future__ import annotations

import datetime as dt

import pytest

from sevenmaps_pipeline.devtools.demo_operations import HOURLY_PLAN, open_day, replayed_at

DAY = dt.date(2026, 11, 10)


def _at(hour: int, minute: int, second: int = 0, day: dt.date = DAY) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hour, minute, second), dt.UTC)


def _moments(plan) -> list[dt.datetime]:
    """Every moment a run or a control of the plan is stamped from."""
    return ([_at(hour, 0) for hour, _ in plan.hourly] + list(plan.five_minute)
            + [plan.claim_at, plan.submissions_at])


@pytest.mark.parametrize("now", [_at(0, 0, 20), _at(0, 3), _at(0, 7), _at(1, 20), _at(4, 47), _at(5, 59, 59),
                                 _at(6, 2), _at(15, 2), _at(23, 59, 59)])
def test_nothing_is_planned_after_the_clock(now):
    plan = open_day(DAY, now)
    moments = _moments(plan)
    assert max(moments) <= now and min(moments) >= _at(0, 0)
    assert [state for _, state in plan.hourly] == list(HOURLY_PLAN[-len(plan.hourly):])
    assert plan.claim_at <= min(plan.five_minute)  # the owner is verified before its endpoint's first check


def test_the_users_04_47_gets_the_whole_plan_in_the_hours_begun():
    plan = open_day(DAY, _at(4, 47, 12))
    assert plan.hourly == tuple(zip(range(5), HOURLY_PLAN, strict=True))
    assert plan.five_minute == (_at(4, 40), _at(4, 45)) and plan.submissions_at == _at(4, 0)
    assert [replayed_at(m) for m in plan.five_minute] == ["2026-11-10T04:40", "2026-11-10T04:45"]
    later = open_day(DAY, _at(15, 2))
    assert [hour for hour, _ in later.hourly] == [11, 12, 13, 14, 15]
    assert later.five_minute == (_at(14, 55), _at(15, 0))


def test_a_young_day_gets_fewer_checks_ending_as_the_whole_plan_ends():
    """Two hours: the last two states (two failures in a row, so the server is shown down as after the whole
    plan); the first hour: one failed check (never shown); the first five minutes: one five-minute run."""
    two = open_day(DAY, _at(1, 20))
    assert two.hourly == ((0, "http_500"), (1, "http_500")) and two.five_minute == (_at(1, 15), _at(1, 20))
    first = open_day(DAY, _at(0, 3))
    assert first.hourly == ((0, "http_500"),) and first.five_minute == (_at(0, 0),) and first.claim_at == _at(0, 0)


def test_a_demo_that_ran_past_midnight_plans_within_its_day():
    plan = open_day(DAY, _at(0, 10, day=DAY + dt.timedelta(days=1)))
    assert [hour for hour, _ in plan.hourly] == [19, 20, 21, 22, 23]
    assert plan.five_minute == (_at(23, 50), _at(23, 55)) and plan.submissions_at == _at(23, 0)
    with pytest.raises(ValueError, match="before the open day"):
        open_day(DAY, _at(23, 0, day=DAY - dt.timedelta(days=1)))
