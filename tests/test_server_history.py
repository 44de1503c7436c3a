"""server_history on hand-made daily_status partitions, against figures computed by hand."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import land_status
from scipy.stats import beta as beta_dist

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.lake.keys import server_id
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.schemas import TOOL_CHANGES, conform
from sevenmaps_pipeline.publishing.pages import uptime_text

END = dt.date(2026, 11, 30)
DAYS = [END - dt.timedelta(days=29 - i) for i in range(30)]  # oldest first
KEY = "a.example.com/mcp"


def history_for(lake, codes: str, hashes: list[str | None] | None = None, handshakes: list[int] | None = None,
                tool_counts: list[int] | None = None):
    assert len(codes) == 30
    for i, day in enumerate(DAYS):
        if codes[i] == "-":  # no partition at all that day
            continue
        land_status(lake, day, {KEY: codes[i]},
                    hashes={KEY: hashes[i]} if hashes else None,
                    handshake={KEY: handshakes[i]} if handshakes else None,
                    tool_counts={KEY: tool_counts[i]} if tool_counts else None)
    curated.build_server_history(lake, END)
    (row,) = pq.read_table(lake.curated_file("server_history", END)).to_pylist()
    return row


def test_29_of_30_answering_is_never_shown_as_100(lake):
    row = history_for(lake, "o" * 14 + "d" + "o" * 15)
    assert (row["checked_days"], row["answered_days"]) == (30, 29)
    assert row["uptime_pct"] == 96.6  # 96.666... floored, never rounded up
    assert row["uptime_label"] == "30-day uptime"


def test_every_checked_day_answering_is_100_and_a_p_count_as_answering(lake):
    row = history_for(lake, "oaop" * 7 + "nn")
    assert row["uptime_pct"] == 100.0
    assert (row["checked_days"], row["answered_days"], row["ok_days"]) == (28, 28, 14)


def test_tools_days_are_the_o_days_whose_list_had_a_tool(lake):
    # An empty list is an answer, not tools: it counts in ok_days and uptime, never in tools_days.
    codes = "oooo" + "oa" * 3 + "p" + "d" + "o" * 18
    counts = [3, 0, 0, 5] + [0, 0] * 3 + [0, 0] + [0] * 4 + [2] * 14
    row = history_for(lake, codes, tool_counts=counts)
    assert (row["checked_days"], row["answered_days"], row["ok_days"], row["tools_days"]) == (30, 29, 25, 16)
    assert row["uptime_pct"] == 96.6  # unchanged by what the lists held


def test_999_of_1000_style_floor_near_100(lake):
    # 27 of 28 checked: 96.428... -> 96.4 (not 96.5)
    row = history_for(lake, "nn" + "o" * 27 + "d")
    assert row["uptime_pct"] == 96.4


def test_fewer_than_14_checked_days_are_labelled_as_observed(lake):
    row = history_for(lake, "n" * 17 + "o" * 12 + "d")
    assert row["checked_days"] == 13
    assert row["uptime_label"] == "over 13 days observed"
    assert row["uptime_pct"] == 92.3  # 12/13 = 92.307...


def test_one_checked_day_is_one_day_observed(lake):
    """history-1.3: the label said "over 1 days observed" (the site's badge and page, `sevenmaps server`)."""
    row = history_for(lake, "n" * 29 + "o")
    assert (row["checked_days"], row["uptime_label"], row["uptime_pct"]) == (1, "over 1 day observed", 100.0)
    assert uptime_text(row) == ("over 1 day observed", "100.0%")
    assert uptime_text({**row, "uptime_label": None}) == ("over 1 day observed", "100.0%")  # a row without one


def test_exactly_14_checked_days_earn_the_30_day_label(lake):
    row = history_for(lake, "n" * 16 + "o" * 14)
    assert row["uptime_label"] == "30-day uptime"


def test_all_n_window_has_no_uptime_and_a_prior_only_success_chance(lake):
    row = history_for(lake, "n" * 30)
    assert row["history"] == "n" * 30
    assert (row["checked_days"], row["uptime_pct"]) == (0, None)
    assert row["uptime_label"] == "no data"  # history-1.4: as the pages say it (helper-94: "over 0 days observed")
    assert row["success_chance"] == pytest.approx(0.5)
    assert row["success_chance_low"] == pytest.approx(0.05)
    assert row["success_chance_high"] == pytest.approx(0.95)


def test_missing_partitions_count_as_n_and_history_is_oldest_first(lake):
    codes = "d" + "-" * 3 + "o" * 26
    row = history_for(lake, codes)
    assert row["history"] == "dnnn" + "o" * 26
    assert row["checked_days"] == 27


def test_success_chance_is_the_recency_weighted_beta_posterior(lake):
    codes = "o" * 10 + "d" * 5 + "n" * 5 + "oapdo" * 2
    row = history_for(lake, codes)
    alpha, beta = 1.0, 1.0
    for i, c in enumerate(codes):
        w = 0.5 ** ((29 - i) / 7)
        if c in "oap":
            alpha += w
        elif c == "d":
            beta += w
    assert row["success_chance"] == pytest.approx(alpha / (alpha + beta))
    assert row["success_chance_low"] == pytest.approx(beta_dist.ppf(0.05, alpha, beta))
    assert row["success_chance_high"] == pytest.approx(beta_dist.ppf(0.95, alpha, beta))
    assert row["success_chance_low"] < row["success_chance"] < row["success_chance_high"]


def test_recent_days_weigh_more(lake, tmp_path):
    from sevenmaps_pipeline.lake.paths import LakePaths

    recent_down = history_for(lake, "o" * 25 + "d" * 5)
    old_down = history_for(LakePaths.at(tmp_path / "other"), "d" * 5 + "o" * 25)
    assert old_down["uptime_pct"] == recent_down["uptime_pct"]
    assert old_down["success_chance"] > recent_down["success_chance"]


def land_changes(lake, changes: list[tuple[dt.date, str, dt.date]]) -> None:
    """Hand-written tool_changes partitions: (day, kind, previous_day) for KEY."""
    by_day: dict[dt.date, list[dict]] = {day: [] for day in DAYS}  # built days without a change: empty
    for day, kind, previous in changes:
        by_day.setdefault(day, []).append({"day": day, "server_key": KEY, "server_id": server_id(KEY), "kind": kind,
                                           "detail": kind, "previous_day": previous, "method_version": "test"})
    for day, rows in by_day.items():
        write_parquet(lake, lake.curated_file("tool_changes", day),
                      conform(pa.Table.from_pylist(rows, TOOL_CHANGES.schema), TOOL_CHANGES))


def test_stability_counts_the_change_days_of_tool_changes(lake):
    codes = "n" * 24 + "oodooo"
    hashes = [None] * 24 + ["A", "A", None, "B", "B", "A"]  # A->A same, A->B change, B->B same, B->A change
    a_to_b, b_to_a = DAYS[27], DAYS[29]
    land_changes(lake, [
        (a_to_b, "tool_added", DAYS[25]), (a_to_b, "tool_removed", DAYS[25]), (a_to_b, "silent", DAYS[25]),
        (b_to_a, "tool_renamed", DAYS[28]),
        (DAYS[26], "stopped_answering", DAYS[25]),  # a change day, but not a tool-list change
        (DAYS[0], "tool_changed", DAYS[0] - dt.timedelta(days=3)),  # its baseline lies before the window
        (END - dt.timedelta(days=59), "new_payment_address", END - dt.timedelta(days=61)),  # kept 60 days
        (END - dt.timedelta(days=60), "new_payment_address", END - dt.timedelta(days=61)),  # too old
    ])
    row = history_for(lake, codes, hashes=hashes)
    assert (row["tool_list_comparisons"], row["tool_list_change_days"]) == (4, 2)
    assert row["stability"] == pytest.approx(0.5)
    assert row["change_days"] == [END - dt.timedelta(days=59), DAYS[0], DAYS[26], a_to_b, b_to_a]
    assert row["method_version"] == "history-1.4"


def test_days_without_change_records_are_not_counted_as_comparisons(lake):
    # stability reads the change records; a day whose tool_changes were never built cannot say "unchanged"
    row = history_for(lake, "o" * 30, hashes=["A", "B"] * 15)
    assert (row["tool_list_comparisons"], row["tool_list_change_days"], row["stability"]) == (0, 0, None)
    assert row["change_days"] == []
    land_changes(lake, [(d, "tool_changed", d - dt.timedelta(days=1)) for d in DAYS[20:]])
    curated.build_server_history(lake, END)
    (row,) = pq.read_table(lake.curated_file("server_history", END)).to_pylist()
    assert (row["tool_list_comparisons"], row["tool_list_change_days"]) == (29, 10)


def test_stability_is_unknown_without_a_comparison_and_1_when_never_changed(lake, tmp_path):
    from sevenmaps_pipeline.lake.paths import LakePaths

    assert history_for(lake, "a" * 30)["stability"] is None
    other = LakePaths.at(tmp_path / "same")
    land_changes(other, [])
    same = history_for(other, "o" * 30, hashes=["H"] * 30)
    assert same["stability"] == 1.0


def test_median_handshake_uses_ok_days_only(lake):
    handshakes = [100] * 27 + [300, 9000, 50]
    row = history_for(lake, "o" * 27 + "oda", handshakes=handshakes)
    assert row["median_handshake_ms"] == 100
    assert not math.isnan(row["success_chance"])


def test_the_blocking_checks_catch_forged_status_and_history(lake):
    from sevenmaps_pipeline.defs.checks import history_violations, status_violations
    from sevenmaps_pipeline.lake.schemas import DAILY_STATUS, SERVER_HISTORY

    history_for(lake, "o" * 29 + "d")
    assert status_violations(lake, END) == {} and history_violations(lake, END) == {}
    (status,) = pq.read_table(lake.curated_file("daily_status", END)).to_pylist()
    forged = [{**status, "code": "x"}, {**status, "code": "n"}]  # a code that does not exist; the endpoint twice
    write_parquet(lake, lake.curated_file("daily_status", END), conform(pa.Table.from_pylist(forged), DAILY_STATUS))
    assert status_violations(lake, END) == {"bad_codes": 1, "duplicate_endpoints": 1, "n_with_outcome": 1}
    land_status(lake, END, {KEY: "d"})
    (row,) = pq.read_table(lake.curated_file("server_history", END)).to_pylist()
    forged = {**row, "uptime_pct": 100.0, "history": row["history"][:-1] + "x"}
    write_parquet(lake, lake.curated_file("server_history", END),
                  conform(pa.Table.from_pylist([forged]), SERVER_HISTORY))
    assert history_violations(lake, END) == {"bad_chars": 1, "counts_disagree": 1, "last_code_disagrees": 1,
                                             "false_100": 1}


def test_the_beta_quantile_function_gives_scipys_value_row_by_row():
    """The SQL function computes each distinct (alpha, beta) once when a call has one q; every row still gets
    its own pair's quantile, NULLs stay NULL, and calls with varied q are answered row by row."""
    from sevenmaps_pipeline.lake import duck

    rng = np.random.default_rng(7)
    alpha = rng.choice([1.0, 1.5, 2.25, 17.0, 29.999999999999], size=400)
    beta_ = rng.choice([1.0, 0.5, 3.75, 12.0], size=400)
    q = rng.choice([0.05, 0.5, 0.95], size=400)
    rows = pa.table({"a": pa.array(alpha, mask=rng.random(400) < 0.05), "b": beta_, "q": q})
    with duck.session() as con:
        con.register("r", rows)
        one_q = [v for (v,) in con.execute("SELECT beta_quantile(a, b, 0.05) FROM r").fetchall()]
        varied = [v for (v,) in con.execute("SELECT beta_quantile(a, b, q) FROM r").fetchall()]
    nulls = rows.column("a").is_null().to_pylist()
    for i in range(400):
        if nulls[i]:
            assert one_q[i] is None and varied[i] is None
            continue
        assert math.isclose(one_q[i], beta_dist.ppf(0.05, alpha[i], beta_[i]), rel_tol=1e-12)
        assert math.isclose(varied[i], beta_dist.ppf(q[i], alpha[i], beta_[i]), rel_tol=1e-12)
