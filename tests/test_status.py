"""`sevenmaps status`: what ran, what is late and what waits to be signed, and why, from the lake alone."""

from __future__ import annotations

import datetime as dt

import pyarrow.parquet as pq
from conftest import DAY, land_probes, land_registry, probe
from test_integrity import build_day

from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.integrity.roots import sign_through
from sevenmaps_pipeline.integrity.served import served_root
from sevenmaps_pipeline.integrity.status import lake_status, status_text
from sevenmaps_pipeline.lake.keys import server_key
from sevenmaps_pipeline.probe.slices import slot_hour

D1, D2, D3 = DAY, DAY + dt.timedelta(days=1), DAY + dt.timedelta(days=2)


def _at(day: dt.date, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hour, minute), dt.UTC)


def _days_late(status) -> list[str]:
    """What is late about whole days (the open day's slices aside)."""
    return [item for item in status.late if "did not land by" not in item]


def test_a_new_lake_says_nothing_has_landed(lake, capsys):
    """A new lake (an operator's first opt-out made its control/) with nothing landed; a folder with nothing
    in it is no lake at all (tests/test_cli.py)."""
    lake.root.mkdir(parents=True)
    assert main(["--lake", str(lake.root), "status"]) == 2
    assert main(["--lake", str(lake.root), "opt-out", "add", "mcp.example.com"]) == 0
    status = lake_status(lake, _at(D1, 12))
    assert status.ok and "nothing has landed yet" in status_text(lake, status)
    assert main(["--lake", str(lake.root), "status"]) == 0


def test_a_day_waiting_to_be_signed_is_late_after_the_signing_deadline(lake, signing_key):
    build_day(lake, D1)
    build_day(lake, D2)
    sign_through(lake, D1, signing_key, now=_at(D2, 1))
    early = lake_status(lake, _at(D3, 1, 30))
    assert not _days_late(early) and early.signed == [D1] and early.waiting == [D2]
    assert early.waiting_reason == (f"{D2} is ready to sign: the sign job signs it and every later built day (its "
                                    f"schedule at 00:30 UTC), or now: `sevenmaps backfill --from {D2} --to {D2}`")
    late = lake_status(lake, _at(D3, 2, 30))
    assert _days_late(late) == [f"{D2}: not signed by 02:00 UTC"]


def test_a_day_never_built_is_late_and_holds_back_the_days_after_it(lake, signing_key):
    build_day(lake, D1)
    (lake.raw_dir("probes", D2)).mkdir(parents=True)  # a scan folder with nothing landed: the day was missed
    build_day(lake, D3)
    now = _at(D3 + dt.timedelta(days=1), 12)
    status = lake_status(lake, now)
    assert status.scanned == [D1, D3] and status.not_scanned == [D2]
    assert status.built == [D1, D3] and status.waiting == [D1, D2, D3]
    assert status.late[0].startswith(f"{D2}: its map was never built")
    sign_through(lake, D1, signing_key, now=now)
    status = lake_status(lake, now)
    assert status.waiting == [D2, D3]
    assert status.waiting_reason.startswith(f"{D2} cannot be signed:") and "holds back 1 later day" in \
        status.waiting_reason
    text = status_text(lake, status)
    assert f"no scan on {D2}" in text and len(_days_late(status)) == 2
    assert main(["--lake", str(lake.root), "status"]) == 1  # something is late: an operator's script can tell


def test_an_hour_whose_slice_did_not_land_is_late_after_its_deadline(lake, signing_key):
    build_day(lake, D1)
    sign_through(lake, D1, signing_key, now=_at(D2, 1))
    urls = [f"https://mcp{i}.example.com/mcp" for i in range(60)]
    land_registry(lake, urls, day=D2)
    slot = {u: slot_hour(server_key(u), D2) for u in urls}
    missed = slot[urls[0]]
    # Every slice up to 20:00 landed its endpoints at their hour, except `missed`'s.
    land_probes(lake, [probe(u, "ok", day=D2, hour=h) for u, h in slot.items() if h != missed and h <= 20], day=D2)
    before = lake_status(lake, _at(D2, missed, 50))
    assert missed not in before.slices_missing  # its deadline is :55
    status = lake_status(lake, _at(D2, 21, 0))
    assert status.slices_missing == [missed]
    assert missed not in status.slices_landed and set(status.slices_landed) == {h for h in slot.values()
                                                                                if h != missed and h <= 20}
    assert status.late == [f"{D2} {missed:02d}:00: the slice did not land by {missed:02d}:55 UTC (its endpoints "
                           "are n today; a slice is never made up)"]
    assert f"missing {missed:02d}" in status_text(lake, status)
    # At 21:55 the 21:00 slice is due too, if it has endpoints.
    later = lake_status(lake, _at(D2, 21, 56))
    assert 21 in slot.values() and later.slices_missing == [missed, 21]  # several missing slices: one line
    assert later.late == [f"{D2}: 2 slices did not land by their deadlines (:55 past each hour), at "
                          f"{missed:02d}, 21 UTC (their endpoints are n today; a slice is never made up)"]


def test_the_newest_signed_day_is_checked_against_its_root_as_the_surfaces_check_it(lake, signing_key):
    """helper-94 F8: a signed file written again (the same rows, other bytes) left `sevenmaps status` saying
    "signed" of the day every surface showed unsigned. It now checks the newest signed day's files as they do
    (integrity/served.py), says so in their words, and fails."""
    build_day(lake, D1)
    sign_through(lake, D1, signing_key, now=_at(D2, 1))
    now = _at(D2, 0, 30)  # nothing late: no slice of D2 due yet, D1 built and signed
    clean = lake_status(lake, now)
    assert clean.ok and clean.signed == [D1] and clean.newest_signed_problem is None
    assert f"{D1}'s files are those its root signed" in status_text(lake, clean)
    path = lake.curated_file("daily_status", D1)
    pq.write_table(pq.read_table(path), path, compression="gzip")
    status = lake_status(lake, now)
    assert not status.ok and not status.late and status.signed == [D1]
    assert status.newest_signed_problem == served_root(lake, D1).problem  # the surfaces' very words
    assert status.newest_signed_problem.startswith(f"the files of {D1} are not those its root signed (curated/")
    assert f"signed      1 day(s), {D1} .. {D1} (root documents); but {D1} is shown unsigned: the files" in \
        status_text(lake, status)
