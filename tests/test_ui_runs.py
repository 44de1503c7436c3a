"""The runs the CLI launches are where a Dagster user looks: after the demo, `make ui` (a real `dagster dev`
over the lake's own Dagster home) lists each job's runs under the job, through the same GraphQL resolver
as the job page, and the partitions start on the lake's first day, so nothing shows "missing" but days
the map missed. And `make ui` started in the background stops on SIGTERM, `sevenmaps ui` on SIGINT."""

from __future__ import annotations

import datetime as dt
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import dagster as dg
import httpx
import pytest
from conftest import DEMO_DAYS, unassigned_port, wait_for_ui
from dagster._core.instance.ref import InstanceRef

from sevenmaps_pipeline.defs.home import bound_lake
from sevenmaps_pipeline.defs.runner import run_days
from sevenmaps_pipeline.lake.paths import PROJECT_ROOT

JOB = """query($job: String!) {
  pipelineOrError(params: {pipelineName: $job, repositoryName: "__repository__",
                           repositoryLocationName: "sevenmaps_pipeline.definitions"}) {
    __typename ... on Pipeline { runs { runId status tags { key value } } }
  }
}"""
PARTITIONS = """query($key: [String!]!) {
  assetNodes(assetKeys: [{path: $key}]) { partitionKeys partitionStats { numMaterialized numPartitions numFailed } }
}"""


def _ignore_sigint() -> None:
    """What a shell does to a command it starts with `&`: SIGINT ignored, SIGTERM at its default. The test
    process's own SIGTERM may be ignored: Dagster's in-process runs, on leaving, set SIGTERM to whatever
    SIGINT is (dagster._utils.interrupts), and an xdist worker may ignore SIGINT; a make that inherits
    SIGTERM ignored keeps ignoring it and never forwards it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _start(cmd: list[str], env: dict, log: Path) -> subprocess.Popen:
    with open(log, "w") as out:
        return subprocess.Popen(cmd, cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=_ignore_sigint)


def _stopped(proc: subprocess.Popen, log: Path, how: str) -> None:
    """The UI exits within 90 s of `how`; if not, its whole session is killed (no process outlives the test)
    and the test fails saying so."""
    try:
        proc.wait(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"the UI did not stop within 90 s of {how}: {log.read_text()[-1500:]}")


def _group_gone(pgid: int, seconds: float = 60) -> bool:
    """Every process of the UI's session has exited (webserver, daemon, code servers included)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.5)
    os.killpg(pgid, signal.SIGKILL)
    return False


def _gql(url: str, query: str, **variables) -> dict:
    answer = httpx.post(url, json={"query": query, "variables": variables}, timeout=60).json()
    assert "errors" not in answer, answer
    return answer["data"]


def test_the_demos_runs_are_under_their_jobs_and_partitions_start_on_its_first_day(fleet_demo_lake, tmp_path):
    lake = fleet_demo_lake
    home = lake.root / ".dagster"
    assert bound_lake(home) == lake.root
    end = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    first = end - dt.timedelta(days=DEMO_DAYS - 1)
    # A run executed in-process (no code location origin) is in the home but on no job page: the contrast.
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
        stray = run_days("daily_map_job", end, end, instance, lake.root).run_id

    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "SEVENMAPS_FIRST_DAY")}
    env.update(SEVENMAPS_LAKE=str(lake.root), PORT=str(unassigned_port()))
    log = tmp_path / "make-ui.log"
    proc = _start(["make", "--no-print-directory", "ui"], env, log)
    try:
        url = wait_for_ui(int(env["PORT"]), proc, log)
        for job in ("daily_map_job", "sign_day_job"):
            runs = _gql(url, JOB, job=job)["pipelineOrError"]["runs"]
            # One map run per day (each day replayed as its own scan), one sign run for every day.
            assert len(runs) == (DEMO_DAYS if job == "daily_map_job" else 1), (job, runs)
            assert {r["status"] for r in runs} == {"SUCCESS"}
            tags = [{t["key"]: t["value"] for t in r["tags"]} for r in runs]
            assert {t["sevenmaps/lake"] for t in tags} == {str(lake.root)}
            expected = ({d.isoformat() for d in (first + dt.timedelta(days=i) for i in range(DEMO_DAYS))}
                        if job == "daily_map_job" else {end.isoformat()})
            assert {t["dagster/partition"] for t in tags} == expected
            assert stray not in {r["runId"] for r in runs}
        status = _gql(url, PARTITIONS, key=["daily_status"])["assetNodes"][0]
        # The demo's days, through yesterday: nothing before the lake's first day, and the open day is no
        # partition of the map until it has ended (defs/partitions.py), as of signing.
        assert status["partitionKeys"][0] == first.isoformat()
        for asset in ("daily_status", "daily_root"):
            stats = _gql(url, PARTITIONS, key=[asset])["assetNodes"][0]["partitionStats"]
            assert stats == {"numMaterialized": DEMO_DAYS, "numPartitions": DEMO_DAYS, "numFailed": 0}, asset
    finally:
        os.kill(proc.pid, signal.SIGTERM)  # to make only: make forwards SIGTERM to the UI
    _stopped(proc, log, "SIGTERM to make")
    assert _group_gone(proc.pid), f"processes left after SIGTERM to make: {log.read_text()[-1500:]}"
    # No Python warning on the operator's console: `dagster dev`'s own "superseded by dg dev" is hidden.
    assert not re.search(r"\w*Warning: ", log.read_text()), log.read_text()[-1500:]

    # `sevenmaps ui` started in the background stops on SIGINT to its process group (Ctrl-C's path).
    port = unassigned_port()
    log = tmp_path / "sevenmaps-ui.log"
    proc = _start([str(Path(os.sys.executable).with_name("sevenmaps")), "--lake", str(lake.root), "ui", "--port",
                   str(port)], env, log)
    try:
        wait_for_ui(port, proc, log)
    finally:
        os.killpg(proc.pid, signal.SIGINT)
    _stopped(proc, log, "SIGINT to its process group")
    assert _group_gone(proc.pid), f"processes left after SIGINT: {log.read_text()[-1500:]}"
