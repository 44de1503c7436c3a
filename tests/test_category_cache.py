"""Category verdicts kept per tool list and method (curated/categories.py): the same server_categories with
them as without, a list scored once, and another method or an unreadable file scoring every list again."""

from __future__ import annotations

import hashlib

import pyarrow.parquet as pq
from conftest import DAY

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.curated.categories import cache_file, known_lists, method_digest
from sevenmaps_pipeline.curated.day import build_day
from sevenmaps_pipeline.devtools.synth import synthesize
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.rules.methods import CATEGORY_PARAMS


def _digests(lake: LakePaths) -> list[str]:
    return sorted(p.name for p in (lake.root / "cache").glob("list_categories-*.parquet"))


def test_kept_verdicts_give_the_same_table_as_scoring_every_list(tmp_path):
    lake = LakePaths.at(tmp_path / "lake")
    days = synthesize(lake, 80, 4, seed=21, end_day=DAY, missing_days=0).days
    stats = []
    for day in days:
        report = build_day(lake, day)
        assert report.ok
        stats.append(report.built["server_categories"].stats)
    assert stats[0]["lists_known"] == 0 and stats[0]["lists_scored"] > 0
    assert all(s["lists_known"] > 0 for s in stats[1:])  # later days read the lists already scored
    assert curated.build_server_categories(lake, days[-1]).stats["lists_scored"] == 0  # built again
    (name,) = _digests(lake)
    warm = {d: lake.curated_file("server_categories", d).read_bytes() for d in days}
    for path in (lake.root / "cache").glob("list_categories-*.parquet"):
        path.unlink()
    for day in days:
        cold = curated.build_server_categories(lake, day)
        assert cold.stats["lists_known"] == 0
        assert lake.curated_file("server_categories", day).read_bytes() == warm[day], day
        (lake.root / "cache" / name).unlink()
    assert {r["placed_by"] for d in days for r in pq.read_table(lake.curated_file("server_categories", d))
            .to_pylist()} >= {"words", "none"}


def test_another_method_or_an_unreadable_file_scores_every_list_again(tmp_path):
    lake = LakePaths.at(tmp_path / "lake")
    (day,) = synthesize(lake, 40, 1, seed=22, end_day=DAY, missing_days=0).days
    assert build_day(lake, day).ok
    document = curated.tool_tables.CATEGORIES.read_bytes()
    digest = method_digest(document, CATEGORY_PARAMS)
    assert known_lists(lake, digest).num_rows > 0
    assert method_digest(document, {**CATEGORY_PARAMS, "words_min_score": 3}) != digest
    assert method_digest(document + b" ", CATEGORY_PARAMS) != digest
    expected = lake.curated_file("server_categories", day).read_bytes()
    cache_file(lake, digest).write_bytes(b"not parquet")
    assert known_lists(lake, digest).num_rows == 0
    again = curated.build_server_categories(lake, day)
    assert again.stats["lists_known"] == 0 and again.stats["lists_scored"] > 0
    assert lake.curated_file("server_categories", day).read_bytes() == expected
    assert hashlib.sha256(cache_file(lake, digest).read_bytes()).hexdigest()  # written anew, readable
    assert known_lists(lake, digest).num_rows == again.stats["lists_scored"]
