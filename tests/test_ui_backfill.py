"""A backfill launched the way the UI launches it: GraphQL against `dagster dev`, carried out by its daemon."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pyarrow.parquet as pq
import pytest

from sevenmaps_pipeline.defs.jobs import MAP_ASSET_NAMES
from sevenmaps_pipeline.demo import DAGSTER_YAML
from sevenmaps_pipeline.integrity.verify import verify_lake
from sevenmaps_pipeline.lake.paths import PROJECT_ROOT
from sevenmaps_pipeline.synth import synthesize

END = dt.date(2026, 11, 20)
LAUNCH = """mutation($params: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $params) {
    __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message }
  }
}"""
STATUS = """query($id: String!) {
  partitionBackfillOrError(backfillId: $id) { __typename ... on PartitionBackfill { status } }
}"""


# The daemon takes each asset layer in turn (about 30 s a tick), so the backfill needs a few minutes at most.
TERMINAL = {"COMPLETED", "COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED", "FAILING"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ui_backfill_of_missed_days_through_the_daemon(lake, signing_key, tmp_path):
    synth = synthesize(lake, 60, 6, seed=21, end_day=END, missing_days=1)
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text(DAGSTER_YAML)
    port = _free_port()
    env = {**os.environ, "DAGSTER_HOME": str(home), "SEVENMAPS_LAKE": str(lake.root),
           "SEVENMAPS_SIGNING_KEY": str(signing_key)}
    dagster = Path(sys.executable).with_name("dagster")
    with open(tmp_path / "dagster-dev.log", "w") as log:
        proc = subprocess.Popen([str(dagster), "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
                                cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        url = f"http://127.0.0.1:{port}/graphql"
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/server_info", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, "dagster dev did not come up"
                time.sleep(1)
            params = {"partitionNames": [d.isoformat() for d in synth.days],
                      "assetSelection": [{"path": [a]} for a in MAP_ASSET_NAMES + ("daily_root",)],
                      "fromFailure": False}
            answer = httpx.post(url, json={"query": LAUNCH, "variables": {"params": params}}, timeout=60).json()
            launched = answer["data"]["launchPartitionBackfill"]
            assert launched["__typename"] == "LaunchBackfillSuccess", json.dumps(answer)
            deadline = time.monotonic() + 300
            status, seen = "REQUESTED", []
            while status not in TERMINAL:
                assert time.monotonic() < deadline, f"backfill still {status}"
                time.sleep(2)
                reply = httpx.post(url, json={"query": STATUS, "variables": {"id": launched["backfillId"]}},
                                   timeout=30).json()
                status = reply["data"]["partitionBackfillOrError"]["status"]
                seen.append(status)
            if status not in ("COMPLETED", "COMPLETED_SUCCESS"):
                log.flush()
                lines = (tmp_path / "dagster-dev.log").read_text().splitlines()
                interesting = [ln for ln in lines if any(w in ln for w in ("ERROR", "Failure", "Error:", "failed"))]
                pytest.fail(f"backfill ended {status} (statuses seen: {seen})\n" + "\n".join(interesting[-40:]))
        finally:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
    # Dagster also rebuilds the map of days downstream of the ones asked for (later histories include
    # them); every day asked for is built and signed, in chain order.
    report = verify_lake(lake)
    assert report.ok
    assert report.days_verified[:len(synth.days)] == synth.days
    (missed,) = synth.missing_days
    codes = set(pq.read_table(lake.curated_file("daily_status", missed), columns=["code"]).column("code").to_pylist())
    assert codes == {"n"}
