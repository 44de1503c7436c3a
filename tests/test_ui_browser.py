"""The README's backfill, followed literally in a real Chromium against `dagster dev` (tests/browser.py): Catalog
→ `not group:hourly` → the box above the list → Materialize selected → the days → Launch backfill; the backfill
completes, and the signed days show done (the sign run's caught-up days' sites superseded, never missing)."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import httpx
from browser import Browser, by_text
from conftest import unassigned_port, wait_for_ui

from sevenmaps_pipeline.defs.home import DAGSTER_YAML
from sevenmaps_pipeline.defs.runner import run_days
from sevenmaps_pipeline.devtools.synth import synthesize
from sevenmaps_pipeline.lake.paths import PROJECT_ROOT

BACKFILLS = """{ partitionBackfillsOrError(limit: 5) { __typename ... on PartitionBackfills {
  results { id status partitionNames } } } }"""
DONE = {"COMPLETED", "COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED", "FAILING"}
SEARCH = "document.querySelector('textarea[aria-label=\"Search and filter assets\"]')"


def _row_status(browser: Browser, asset: str) -> str:
    """The catalog row as shown, once its partition counts arrived ('All' in its status when every partition is
    done, else the counts done, missing, failed, in progress)."""
    return browser.wait_for(
        f"(() => {{ const box = document.querySelector('[data-testid=checkbox-{asset}]'); if (!box) return null;"
        " let row = box; while (row && !(row.innerText || '').includes('partitions')) row = row.parentElement;"
        " return row && /\\d+ partitions/.test(row.innerText) ? row.innerText : null; })()",
        f"the catalog row of {asset} with its partition counts")


def _skip_welcome(browser: Browser) -> None:
    """Dagster's first-visit dialog ("Join the Dagster community") opens a moment after the page: skipped."""
    time.sleep(2)
    if "Join the Dagster community" in browser.text():
        browser.click(by_text("button", "Skip"), "the dialog's Skip")
        browser.wait_for("!document.body.innerText.includes('Join the Dagster community')", "the dialog gone")


def _backfill_from_the_catalog(browser: Browser, base: str, days: list[dt.date]) -> None:
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
    label = browser.wait_for("(() => { const b = [...document.querySelectorAll('button')].find(e => "
                             "e.innerText.trim().startsWith('Materialize selected (')); return b && b.innerText; })()",
                             "Materialize selected (N)")
    _skip_welcome(browser)
    browser.click("[...document.querySelectorAll('button')].find(e => e.innerText.trim().startsWith("
                  "'Materialize selected ('))", "Materialize selected")
    assert label.startswith("Materialize selected (22)"), label  # every daily asset, none of the hourly group
    browser.wait_for("document.body.innerText.includes('Partition selection') || "
                     "document.body.innerText.includes('Are you sure?')", "the launch dialog")
    if "Are you sure?" in browser.text():
        # A synthetic lake lands its probes without slices, so Dagster warns that probe_slice (upstream, not
        # selected) was never materialised; the demo's lake has its replayed slices and gets no such warning.
        assert "probe_slice" in browser.text()
        browser.click(by_text("button", "Confirm"), "Confirm")
    dialog = browser.wait_for("(() => { const d = document.querySelector('[role=dialog]'); return d && "
                              "d.innerText.includes('Partition selection') && d.innerText; })()", "Partition selection")
    assert "Launch runs to materialize 22 assets" in dialog and "hourly" not in dialog.lower(), dialog
    browser.click("document.querySelector('[role=dialog] input[placeholder]')", "the partitions' text field")
    browser.type_text(f"[{days[0]}...{days[-1]}]")
    browser.press("Enter", "Enter", 13)
    browser.wait_for(f"document.querySelector('[role=dialog]').innerText.includes('{len(days)} partitions')",
                     f"{len(days)} partitions picked")
    browser.click(by_text("button", "Launch backfill"), "Launch backfill")
    browser.wait_for("!document.querySelector('[role=dialog]')", "the dialog closed after the launch")


def _wait_for_backfill(url: str) -> dict:
    deadline = time.monotonic() + 420
    while True:
        results = httpx.post(url, json={"query": BACKFILLS}, timeout=30).json()["data"]["partitionBackfillsOrError"]
        found = results.get("results") or []
        if found and found[0]["status"] in DONE:
            return found[0]
        assert time.monotonic() < deadline, f"the backfill did not end: {found}"
        time.sleep(3)


def test_the_readmes_backfill_in_a_real_browser(lake, signing_key, tmp_path):
    end = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    synth = synthesize(lake, 30, 3, seed=5, end_day=end, missing_days=0)
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text(DAGSTER_YAML)
    with dg.DagsterInstance.local_temp(str(home)) as instance:
        # As the demo does: the map a range, then one sign run of the last day, which catches up the others.
        assert run_days("daily_map_job", synth.days[0], end, instance, lake.root, signing_key).success
        assert run_days("sign_day_job", end, end, instance, lake.root, signing_key).success
    port = unassigned_port()
    env = {**os.environ, "DAGSTER_HOME": str(home), "SEVENMAPS_LAKE": str(lake.root),
           "SEVENMAPS_SIGNING_KEY": str(signing_key), "SEVENMAPS_FIRST_DAY": synth.days[0].isoformat()}
    dagster = Path(sys.executable).with_name("dagster")
    log_path = tmp_path / "dagster-dev.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([str(dagster), "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
                                cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            url = wait_for_ui(port, proc, log_path, seconds=180)
            base = url.removesuffix("/graphql")
            with Browser(tmp_path / "chromium") as browser:
                browser.goto(f"{base}/assets")
                # Every signed day is done for the sign job's assets: the days the sign run caught up have
                # their sites recorded as superseded by the newest day's (before: "1 done, 2 missing").
                for asset in ("daily_root", "day_snapshot", "day_site"):
                    status = _row_status(browser, asset)
                    assert "\nAll\n" in status, (asset, status)
                _backfill_from_the_catalog(browser, base, synth.days)
                backfill = _wait_for_backfill(url)
                tail = log_path.read_text()[-2000:]
                assert backfill["status"] in ("COMPLETED", "COMPLETED_SUCCESS"), (backfill, tail)
                # The backfill's page, as the UI shows it.
                browser.goto(f"{base}/runs/b/{backfill['id']}")
                browser.wait_for("document.body.innerText.includes('Completed')", "the backfill page says Completed")
                browser.goto(f"{base}/assets")
                assert "\nAll\n" in _row_status(browser, "day_site")
                # The asset's Events tab has the Plots view the docs name (docs/operations.md, "Reading a run").
                browser.goto(f"{base}/assets/daily_status?view=events")
                browser.click(by_text("button", "Plots"), "the Events tab's Plots view")
                browser.wait_for("document.body.innerText.includes('code d')", "a plot of code d")
        finally:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
    assert sorted(d.isoformat() for d in synth.days) == sorted(backfill["partitionNames"])
