"""The README's backfill, followed literally in a real Chromium (tests/browser.py) against `dagster dev` and its
daemon: Catalog → `not group:hourly` in *Search and filter assets* → the box above the list (select all) →
*Materialize selected* → the days typed → *Launch backfill*; over a lake built the way the demo builds it (a
missed day backfilled late, then signing). The signed days come out unchanged, byte for byte, the day not yet
built is built and signed, every signed day shows done, and the plots the docs name are there."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import dagster as dg
import httpx
import pyarrow.parquet as pq
import pytest
from browser import Browser, by_text
from conftest import land_reports, report, unassigned_port, wait_for_ui

from sevenmaps_pipeline.defs.home import DAGSTER_YAML, create_instance_storage
from sevenmaps_pipeline.defs.integrity_assets import days_to_rebuild
from sevenmaps_pipeline.defs.jobs import MAP_ASSET_NAMES
from sevenmaps_pipeline.defs.runner import run_days
from sevenmaps_pipeline.devtools.synth import synthesize
from sevenmaps_pipeline.integrity.verify import verify_lake
from sevenmaps_pipeline.lake.paths import PROJECT_ROOT

# The synthetic days end yesterday: the backfill runs from the first of them through yesterday, so a fixed
# end would make it one day longer for every day the suite is run.
END = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
BACKFILLS = """{ partitionBackfillsOrError(limit: 1) { __typename ... on PartitionBackfills { results { id } } } }"""
STATUS = """query($id: String!) {
  partitionBackfillOrError(backfillId: $id) { __typename ... on PartitionBackfill { status } }
}"""
RUNS = """query($id: String!) {
  partitionBackfillOrError(backfillId: $id) { __typename ... on PartitionBackfill { runs { assetSelection { path } } } }
}"""
STALE = """query($keys: [AssetKeyInput!], $days: [String!]) {
  assetNodes(assetKeys: $keys) { assetKey { path } staleStatusByPartition(partitions: $days)
    staleCausesByPartition(partitions: $days) { reason dependency { path } dependencyPartitionKey } }
}"""
SEARCH = "document.querySelector('textarea[aria-label=\"Search and filter assets\"]')"
LAUNCH = "[...document.querySelectorAll('[role=dialog] button')].find(e => e.innerText.trim() === 'Launch backfill')"
DAILY_ASSETS = 22  # every asset but the hourly group's: the map's, the lookups', signing's and the site


# Every asset of the backfill has the same days (finished days, through yesterday) and a single-run policy, so
# the daemon launches one run of them all on a tick (the map's step, then signing's), and sees it done on a later
# one. Dagster's daemon ticks every 30 s; the one `dagster dev` starts here ticks every TICK_SECONDS
# (tests/daemon_ticks/sitecustomize.py, put first on its PYTHONPATH), so the backfill takes seconds, not minutes;
# the runs are counted, so a backfill that came to need more of them would still be seen.
DAEMON_TICKS = PROJECT_ROOT / "tests" / "daemon_ticks"
TICK_SECONDS = 3
TERMINAL = {"COMPLETED", "COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED", "FAILING"}


def _digests(root: Path) -> dict[str, str]:
    files = [*root.glob("raw/**/*.parquet"), *root.glob("curated/**/*.parquet"), *root.glob("roots/*.json")]
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(files)}


def _failure_message(run):
    (message,) = [e.event_specific_data.error.message for e in run.all_events if e.is_step_failure]
    return message


def _demo_sequence(lake, signing_key, synth, home: Path) -> None:
    """What `make demo` does: each day built as it comes, the missed day built late, then one sign run of
    every finished day but the last (left for the UI backfill to build): refused, naming the days whose windows
    include the late one, until the map job has rebuilt them with their checks."""
    (missed,) = synth.missing_days
    after = missed + dt.timedelta(days=1)
    # The reporting service lands reports on the missed day as on any other (our scan did not run).
    key = pq.read_table(lake.registry_file(after), columns=["server_key"]).column("server_key")[0].as_py()
    land_reports(lake, [report(key, who=f"r{i}", paid=i < 2, day=missed) for i in range(6)], day=missed,
                 batch="late-day")
    last = synth.days[-2]
    with dg.DagsterInstance.local_temp(str(home)) as instance:
        for day in synth.days[:-1]:
            if day != missed:
                assert run_days("daily_map_job", day, day, instance, lake.root, signing_key).success
        assert run_days("daily_map_job", missed, missed, instance, lake.root, signing_key).success
        before = lake.curated_file("rating_aggregates", after).read_bytes()
        refused = run_days("sign_day_job", last, last, instance, lake.root, signing_key, raise_on_error=False)
        assert not refused.success and not lake.root_file(synth.days[0]).exists()
        message = _failure_message(refused)
        assert all(f"{d}: " in message for d in synth.days[:-1] if d > missed) and "daily_map_job" in message
        assert days_to_rebuild(lake, last, instance) == (after, last)
        assert run_days("daily_map_job", after, last, instance, lake.root, signing_key).success
        sign = run_days("sign_day_job", last, last, instance, lake.root, signing_key)
    assert sign.success
    # The days after the late one were rebuilt (by the map job) before they were signed, and their ratings now
    # read the reports that landed on the missed day.
    assert lake.curated_file("rating_aggregates", after).read_bytes() != before


def _wait_for_backfill(url: str, backfill_id: str) -> tuple[str, list[str]]:
    """Poll the backfill's status until it ends (five minutes at most); its last status and every one seen."""
    deadline = time.monotonic() + 300
    status, seen = "REQUESTED", []
    while status not in TERMINAL:
        assert time.monotonic() < deadline, f"backfill still {status}"
        time.sleep(2)
        reply = httpx.post(url, json={"query": STATUS, "variables": {"id": backfill_id}},
                           timeout=30).json()
        status = reply["data"]["partitionBackfillOrError"]["status"]
        seen.append(status)
    return status, seen


def _backfill_runs(url: str, backfill_id: str) -> list[list[str]]:
    """The assets of each run of the backfill, the newest run first."""
    reply = httpx.post(url, json={"query": RUNS, "variables": {"id": backfill_id}}, timeout=30).json()
    return [sorted("/".join(a["path"]) for a in run["assetSelection"] or [])
            for run in reply["data"]["partitionBackfillOrError"]["runs"]]


def _row_status(browser: Browser, asset: str) -> str:
    """The Catalog's row of `asset` as shown, once its partition counts arrived ('All' in it when every
    partition is done)."""
    return browser.wait_for(
        f"(() => {{ const box = document.querySelector('[data-testid=checkbox-{asset}]'); if (!box) return null;"
        " let row = box; while (row && !(row.innerText || '').includes('partitions')) row = row.parentElement;"
        " return row && /\\d+ partitions/.test(row.innerText) ? row.innerText : null; })()",
        f"the Catalog row of {asset} with its partition counts")


def _skip_welcome(browser: Browser) -> None:
    """Dagster's first-visit dialog ("Join the Dagster community") opens a moment after a page: skipped."""
    time.sleep(2)
    if "Join the Dagster community" in browser.text():
        browser.click(by_text("button", "Skip"), "the dialog's Skip")
        browser.wait_for("!document.body.innerText.includes('Join the Dagster community')", "the dialog gone")


def _launch_from_the_catalog(browser: Browser, base: str, days: list[dt.date]) -> None:
    """The README's steps, as a person takes them."""
    browser.goto(f"{base}/assets")
    browser.wait_for("!!document.querySelector('[data-testid=checkbox-probe_slice]')", "the Catalog's asset list")
    _skip_welcome(browser)
    browser.click(SEARCH, "Search and filter assets")
    browser.type_text("not group:hourly")
    browser.press("Enter", "Enter", 13)
    browser.wait_for("!document.querySelector('[data-testid=checkbox-probe_slice]') && "
                     "!document.querySelector('[data-testid=checkbox-open_day]') && "
                     "!!document.querySelector('[data-testid=checkbox-raw_probes]')", "the hourly group left out")
    browser.click("[...document.querySelectorAll('input[type=checkbox]')].find(e => !e.dataset.testid)"
                  ".closest('label')", "the box above the list (select all)")
    materialize = ("[...document.querySelectorAll('button')].find(e => "
                   "e.innerText.trim().startsWith('Materialize selected ('))")
    label = browser.wait_for(f"(() => {{ const b = {materialize}; return b && b.innerText; }})()",
                             "Materialize selected (N)")
    assert label.startswith(f"Materialize selected ({DAILY_ASSETS})"), label  # none of the hourly group
    _skip_welcome(browser)
    browser.click(materialize, "Materialize selected")
    browser.wait_for("document.body.innerText.includes('Partition selection') || "
                     "document.body.innerText.includes('Are you sure?')", "the launch dialog")
    if "Are you sure?" in browser.text():
        # A synthetic lake lands its probes without slices, so Dagster warns that probe_slice (upstream, not
        # selected) was never materialised; the demo's lake has its replayed slices and gets no such warning.
        assert "probe_slice" in browser.text()
        browser.click(by_text("button", "Confirm"), "Confirm")
    dialog = browser.wait_for("(() => { const d = document.querySelector('[role=dialog]'); return d && "
                              "d.innerText.includes('Partition selection') && d.innerText; })()", "Partition selection")
    assert f"Launch runs to materialize {DAILY_ASSETS} assets" in dialog and "hourly" not in dialog.lower(), dialog
    assert browser.js(f"{LAUNCH}.disabled"), "Launch backfill enabled before any day was picked"
    field = "document.querySelector('[role=dialog] input[type=text]')"
    browser.click(field, "the Partition selection's text field")
    browser.type_text(f"[{days[0]}...{days[-1]}]")
    browser.press("Enter", "Enter", 13)
    browser.wait_for(f"!{LAUNCH}.disabled", "Launch backfill enabled once the days are typed")
    browser.click(LAUNCH, "Launch backfill")
    browser.wait_for("!document.querySelector('[role=dialog]')", "the dialog closed after the launch")


def _ui_backfill(browser: Browser, url: str, days: list[dt.date], log: IO[str], log_path: Path) -> str:
    """The backfill launched in the browser, seen to complete; its id."""
    base = url.removesuffix("/graphql")
    _launch_from_the_catalog(browser, base, days)
    found = httpx.post(url, json={"query": BACKFILLS}, timeout=30).json()["data"]["partitionBackfillsOrError"]
    backfill_id = found["results"][0]["id"]
    status, seen = _wait_for_backfill(url, backfill_id)
    if status not in ("COMPLETED", "COMPLETED_SUCCESS"):
        log.flush()
        lines = log_path.read_text().splitlines()
        interesting = [ln for ln in lines if any(w in ln for w in ("ERROR", "Failure", "Error:", "failed"))]
        pytest.fail(f"backfill ended {status} (statuses seen: {seen})\n" + "\n".join(interesting[-40:]))
    # One run: every day of the map, then signing.
    (assets,) = _backfill_runs(url, backfill_id)
    assert len(assets) == DAILY_ASSETS and {"raw_probes", "daily_status", "daily_root"} <= set(assets), assets
    assert _unsynced(url, assets, days) == {}
    return backfill_id


def _unsynced(url: str, assets: list[str], days: list[dt.date]) -> dict[str, list[str]]:
    """The backfilled days the UI marks "Unsynced", by asset, with each one's first causes: none, since each day's
    own materialisation carries the range result's data version and provenance (defs/per_day.py)."""
    keys = [{"path": asset.split("/")} for asset in assets]
    reply = httpx.post(url, json={"query": STALE, "variables": {"keys": keys, "days": [d.isoformat() for d in days]}},
                       timeout=60).json()
    assert reply.get("data"), reply
    found = {}
    for node in reply["data"]["assetNodes"]:
        statuses, causes = node["staleStatusByPartition"], node["staleCausesByPartition"]
        for day, status, why in zip(days, statuses, causes, strict=True):
            if status != "FRESH":
                found[f"{'/'.join(node['assetKey']['path'])} {day}"] = [
                    f"{status}: {c['reason']} {c['dependency'] and c['dependency']['path']} "
                    f"{c['dependencyPartitionKey']}" for c in why[:2]] or [status]
    return found


def _as_the_ui_shows_it(browser: Browser, base: str, backfill_id: str, days: list[dt.date]) -> None:
    """The backfill's page, the signing assets' partitions and the plots docs/operations.md names."""
    browser.goto(f"{base}/runs/b/{backfill_id}")
    page = browser.wait_for("document.body.innerText.includes('Succeeded') && document.body.innerText",
                            "the backfill page says Succeeded")
    assert f"Partition selection\n{days[0]}...{days[-1]}" in page and "Status\nSucceeded" in page, page[:1500]
    # (the page's asset list is virtualised: the rows on the screen, every one of them complete)
    assert page.count("% completed") == page.count("100% completed") >= 20, page
    # Every signed day is done for signing's assets: a day whose site was superseded by a later one's is
    # recorded as such (docs/operations.md), never "missing".
    browser.goto(f"{base}/assets")
    for asset in ("daily_root", "day_snapshot", "day_site"):
        status = _row_status(browser, asset)
        assert "\nAll\n" in status, (asset, status)
    # The plots: the asset's Overview tab, its Metadata section's Plots button, one chart per number.
    browser.goto(f"{base}/assets/daily_status")
    _skip_welcome(browser)
    browser.wait_for(f"!!{by_text('button', 'Plots')}", "the Metadata section's Table and Plots")
    assert browser.js("document.querySelectorAll('canvas').length") == 0  # the Table view first
    browser.click(by_text("button", "Plots"), "the Metadata section's Plots button")
    browser.wait_for("document.querySelectorAll('canvas').length >= 2 && [...document.querySelectorAll("
                     "'span')].some(e => e.innerText.trim() === 'code d')", "a chart of code d")


def _short_ticks_took(log_path: Path) -> None:
    """The daemon `dagster dev` started said its backfill ticks are short (else the test would wait minutes, or
    the hook failed: site.py prints "Error in sitecustomize" and goes on)."""
    for _ in range(60):
        lines = log_path.read_text().splitlines()
        if f"tests/daemon_ticks: the daemon's backfill ticks every {TICK_SECONDS} s" in lines:
            return
        time.sleep(0.5)
    pytest.fail("the daemon did not say its ticks are short: " + "\n".join(
        ln for ln in lines if "sitecustomize" in ln or "Error" in ln))


def _stop(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def _shell_backfill_changes_nothing(lake, signing_key, synth, after_ui: dict[str, str]) -> None:
    """A shell backfill of the signed days (the job run in-process, as `sevenmaps` and the demo run it; on an
    in-memory instance: what it must show is in the files) leaves every file as the UI backfill left it; the
    missed day stays all n."""
    with dg.DagsterInstance.ephemeral() as instance:
        assert run_days("daily_map_job", synth.days[0], END, instance, lake.root, signing_key).success
        assert run_days("sign_day_job", synth.days[0], END, instance, lake.root, signing_key).success
    assert _digests(lake.root) == after_ui
    (missed,) = synth.missing_days
    codes = set(pq.read_table(lake.curated_file("daily_status", missed), columns=["code"]).column("code").to_pylist())
    assert codes == {"n"}


def test_the_readmes_backfill_in_a_real_browser_over_the_demo_sequence(lake, signing_key, tmp_path):
    synth = synthesize(lake, 60, 4, seed=21, end_day=END, missing_days=1)
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text(DAGSTER_YAML)
    create_instance_storage(home)  # as `sevenmaps ui` does: the demo's runs below open it beside `dagster dev`
    port = unassigned_port()
    env = {**os.environ, "DAGSTER_HOME": str(home), "SEVENMAPS_LAKE": str(lake.root),
           "SEVENMAPS_SIGNING_KEY": str(signing_key), "SEVENMAPS_FIRST_DAY": synth.days[0].isoformat(),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(DAEMON_TICKS), os.environ.get("PYTHONPATH")])),
           "SEVENMAPS_TEST_DAEMON_TICK_SECONDS": str(TICK_SECONDS)}
    dagster = Path(sys.executable).with_name("dagster")
    with open(tmp_path / "dagster-dev.log", "w") as log:
        proc = subprocess.Popen([str(dagster), "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
                                cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                # Ctrl-C's default, whatever the test runner's process does with SIGINT
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            # The UI comes up while the demo's runs go on beside it, as an operator's does (and the daemon's
            # first tick is not spent waiting after them).
            _demo_sequence(lake, signing_key, synth, home)
            signed_before = {k: v for k, v in _digests(lake.root).items() if END.isoformat() not in k}
            url = wait_for_ui(port, proc, tmp_path / "dagster-dev.log", seconds=120)
            _short_ticks_took(tmp_path / "dagster-dev.log")
            # Every day from the missing one through yesterday: Dagster carries the map's windowed tables on to
            # the later days by itself, but not raw_probes (it reads no earlier day), and signing refuses a day
            # the map job has not built whole (docs/operations.md, "Backfilling missed days").
            yesterday = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
            days = [synth.days[0] + dt.timedelta(days=i) for i in range((yesterday - synth.days[0]).days + 1)]
            with Browser(tmp_path / "chromium") as browser:
                backfill_id = _ui_backfill(browser, url, days, log, tmp_path / "dagster-dev.log")
                _as_the_ui_shows_it(browser, url.removesuffix("/graphql"), backfill_id, days)
        finally:
            _stop(proc)
    # Every signed day came out of the UI backfill unchanged, byte for byte; the last day was built and
    # signed in chain order.
    # Dagster carried the map on to the days downstream of the backfill, through yesterday and never to the
    # open day (the map's partitions are finished days): nothing of it is built or recorded as built.
    today = dt.datetime.now(dt.UTC).date()
    assert not lake.curated_file("daily_status", today).exists()
    with dg.DagsterInstance.local_temp(str(home)) as instance:
        assert not [name for name in MAP_ASSET_NAMES
                    if today.isoformat() in instance.get_materialized_partitions(dg.AssetKey(name))]
    after_ui = _digests(lake.root)
    assert {k: v for k, v in after_ui.items() if k in signed_before} == signed_before
    assert f"roots/day={END.isoformat()}.json" in after_ui
    verified = verify_lake(lake)
    assert verified.ok
    assert verified.days_verified[:len(synth.days)] == synth.days
    _shell_backfill_changes_nothing(lake, signing_key, synth, after_ui)
