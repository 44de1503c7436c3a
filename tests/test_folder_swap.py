"""A built folder put in place of another in one step, and a killed build's working folders swept
(lake/folder_swap.py, lake/parquet_io.py remove_stale_temps): the day's site was missing between two renames when
a build was killed there."""

from __future__ import annotations

import os
import time

from sevenmaps_pipeline.lake import folder_swap
from sevenmaps_pipeline.lake.folder_swap import replace_folder
from sevenmaps_pipeline.lake.parquet_io import remove_stale_temps


def _folder(path, text):
    path.mkdir()
    (path / "index.html").write_text(text)
    return path


def test_two_folders_swap_names_at_once_here(tmp_path):
    a, b = _folder(tmp_path / "a", "new"), _folder(tmp_path / "b", "old")
    assert folder_swap._exchange(a, b)  # this Linux swaps them in one step (renameat2, RENAME_EXCHANGE)
    assert ((a / "index.html").read_text(), (b / "index.html").read_text()) == ("old", "new")


def test_the_built_folder_replaces_the_old_and_nothing_is_left_beside_them(tmp_path):
    days = tmp_path / "site" / "days"
    days.mkdir(parents=True)
    final = _folder(days / "2026-11-10", "old")
    built = _folder(tmp_path / "site" / ".day-2026-11-10-abcd1234", "new")
    replace_folder(built, final, tmp_path / "site" / ".old-2026-11-10-abcd1234")
    assert (final / "index.html").read_text() == "new"
    assert sorted(p.name for p in (tmp_path / "site").iterdir()) == ["days"]
    fresh = _folder(tmp_path / "site" / ".day-2026-11-11-abcd1234", "first")
    replace_folder(fresh, days / "2026-11-11", tmp_path / "site" / ".old-2026-11-11-abcd1234")  # nothing to replace
    assert (days / "2026-11-11" / "index.html").read_text() == "first"


def test_a_killed_builds_working_folders_are_swept_once_an_hour_old(tmp_path):
    stale = _folder(tmp_path / ".day-2026-11-10-abcd1234", "half a site")
    aside = _folder(tmp_path / ".old-2026-11-09-abcd1234", "the site before")
    young = _folder(tmp_path / ".day-2026-11-11-abcd1234", "a build running now")
    other = _folder(tmp_path / ".hidden-by-someone", "not ours")
    for path in (stale, aside, other):
        os.utime(path, (time.time() - 7200, time.time() - 7200))
    assert remove_stale_temps(tmp_path, (".day-*", ".old-*")) == [stale.name, aside.name]
    assert young.exists() and other.exists()
