"""Launch the code location's jobs the way the UI and the schedules do (docs/operations.md, "Runs").

`sevenmaps run`, `sevenmaps demo` and every CLI path that materialises open the code location
(`sevenmaps_pipeline.definitions`, the location `make ui` serves), create each run from the location's
own job (so it carries the location's origin: the job pages, the Overview timeline, the partition bars
and backfill pages list it) and hand it to the instance's run launcher, which runs it in its own
process. The caller waits for it and reads the outcome from the run's event log.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
from dagster._core.definitions.selector import JobSubsetSelector
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import ModuleTarget

from ..packaged import workplace
from .run_launcher import alive, worker_pid

LOCATION = "sevenmaps_pipeline.definitions"
TERMINAL = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}


def root_cause(error: Any) -> str:
    """The last line of the innermost error (the cause, not Dagster's wrappers around it)."""
    while error is not None and error.cause is not None:
        error = error.cause
    lines = error.message.strip().splitlines() if error is not None else []
    if not lines:
        return "failed"
    # A Failure is raised with our own words: they are the cause, without the class Dagster puts first.
    return lines[-1].removeprefix(f"{dg.Failure.__module__}.{dg.Failure.__qualname__}: ")


@dataclass
class RunOutcome:
    """What a finished run did, read back from the instance (the same for every way a run is launched)."""

    run_id: str
    job_name: str
    status: dg.DagsterRunStatus
    events: list[Any] = field(default_factory=list)  # DagsterEvent, in order

    @property
    def success(self) -> bool:
        return self.status == dg.DagsterRunStatus.SUCCESS

    @classmethod
    def read(cls, instance: dg.DagsterInstance, run_id: str) -> RunOutcome:
        run = instance.get_run_by_id(run_id)
        if run is None:
            raise LookupError(f"run {run_id} is not in the Dagster home")
        events = [e.dagster_event for e in instance.all_logs(run_id) if e.dagster_event is not None]
        return cls(run_id, run.job_name, run.status, events)

    def failures(self) -> list[tuple[str, str]]:
        """(step, root cause) for each failed step or resource; the run's own failure when neither."""
        found = []
        for event in self.events:
            if event.is_step_failure or event.event_type_value == "RESOURCE_INIT_FAILURE":
                found.append((event.step_key or "resources", root_cause(event.event_specific_data.error)))
        if not found and not self.success:
            for event in self.events:
                if event.event_type_value in ("PIPELINE_FAILURE", "RUN_FAILURE"):
                    error = getattr(event.event_specific_data, "error", None)
                    found.append(("run", root_cause(error) if error else " ".join((event.message or "").split())))
            found = found[-1:] or [("run", f"ended {self.status.value}")]
        return found

    def materialization_metadata(self, key: str) -> Any:
        for event in self.events:
            if event.event_type_value == "ASSET_MATERIALIZATION":
                value = event.event_specific_data.materialization.metadata.get(key)
                if value is not None:
                    return value.value
        return None

    def step_seconds(self) -> list[tuple[str, float]]:
        return [(e.step_key, e.event_specific_data.duration_ms / 1000) for e in self.events
                if e.event_type_value == "STEP_SUCCESS"]

    def checks(self) -> list[bool]:
        return [e.event_specific_data.passed for e in self.events if e.event_type_value == "ASSET_CHECK_EVALUATION"]


def day_tags(first: dt.date | None, last: dt.date | None) -> dict[str, str]:
    """One partition, or the range tags of a single-run backfill (what the UI's backfill daemon sets); none
    for a job without day partitions (its caller tags an hourly partition itself)."""
    if first is None or last is None:
        return {}
    if first == last:
        return {"dagster/partition": first.isoformat()}
    return {"dagster/asset_partition_range_start": first.isoformat(),
            "dagster/asset_partition_range_end": last.isoformat()}


def run_config(lake_root: Path, signing_key: Path | None = None, prober: Mapping[str, Any] | None = None,
               witnesses: list[str] | None = None, log_level: str = "INFO") -> dict[str, Any]:
    lake: dict[str, Any] = {"root": str(lake_root)}
    if signing_key:
        lake["signing_key"] = str(signing_key)
    if witnesses:
        lake["witnesses"] = list(witnesses)
    resources: dict[str, Any] = {"lake": {"config": lake}}
    if prober:
        resources["prober"] = {"config": dict(prober)}
    return {"resources": resources, "loggers": {"console": {"config": {"log_level": log_level}}}}


class CodeLocation:
    """The code location, opened once (a code server process), launching any number of runs."""

    def __init__(self, instance: dg.DagsterInstance, workspace: Any):
        self.instance = instance
        self._workspace = workspace

    def launch(self, job_name: str, first: dt.date | None, last: dt.date | None, config: Mapping[str, Any],
               tags: Mapping[str, str] | None = None) -> str:
        return self._start(job_name, first, last, config, tags, queued=False)

    def submit(self, job_name: str, first: dt.date | None, last: dt.date | None, config: Mapping[str, Any],
               tags: Mapping[str, str] | None = None) -> str:
        """The run handed to the instance's run queue, as a schedule's or the UI's is: the daemon starts it
        when its lane is free (defs/lanes.py)."""
        return self._start(job_name, first, last, config, tags, queued=True)

    def _start(self, job_name: str, first: dt.date | None, last: dt.date | None, config: Mapping[str, Any],
               tags: Mapping[str, str] | None, queued: bool) -> str:
        context = self._workspace.create_request_context()
        location = context.get_code_location(LOCATION)
        repository = next(iter(location.get_repositories().values()))
        job = location.get_job(JobSubsetSelector(location_name=location.name, repository_name=repository.name,
                                                 job_name=job_name, op_selection=None))
        plan = location.get_execution_plan(job, dict(config), step_keys_to_execute=None, known_state=None,
                                           instance=self.instance)
        run = self.instance.create_run(
            job_name=job.name, run_id=None, run_config=dict(config), resolved_op_selection=None,
            step_keys_to_execute=None, op_selection=None, status=None, root_run_id=None, parent_run_id=None,
            tags={**job.tags, **day_tags(first, last), **(tags or {})}, job_snapshot=job.job_snapshot,
            execution_plan_snapshot=plan.execution_plan_snapshot, parent_job_snapshot=job.parent_job_snapshot,
            remote_job_origin=job.get_remote_origin(), job_code_origin=job.get_python_origin(),
            asset_selection=None, asset_check_selection=None, asset_graph=repository.asset_graph)
        if queued:
            self.instance.submit_run(run.run_id, context)
        else:
            self.instance.launch_run(run.run_id, context)
        return run.run_id

    def wait(self, run_id: str, poll_seconds: float = 0.2, grace_seconds: float = 5.0,
             progress: Callable[[str], None] | None = None) -> RunOutcome:
        """Wait for the run to end. A run whose process died without ending it (killed, out of memory) is
        reported failed after a grace period, never waited on forever; Ctrl-C stops the run (terminated,
        not left running). With `progress`, what the run does meanwhile (RunProgress)."""
        gone_since: float | None = None
        pid: int | None = None
        watching = RunProgress(self.instance, run_id, progress) if progress else None
        try:
            while True:
                run = self.instance.get_run_by_id(run_id)
                ended = run is not None and run.status in TERMINAL
                if watching:
                    watching = watching.read(final=ended)  # the last events once the run has ended
                if ended:
                    return RunOutcome.read(self.instance, run_id)
                pid = pid or worker_pid(self.instance, run_id)  # read from the event log once, not every poll
                if pid is not None and not alive(pid):
                    gone_since = gone_since or time.monotonic()
                    if time.monotonic() - gone_since > grace_seconds and run is not None:
                        self.instance.report_run_failed(
                            run, f"the run's process (pid {pid}) exited without finishing the run")
                time.sleep(poll_seconds)
        except KeyboardInterrupt:
            self.instance.run_launcher.terminate(run_id)
            raise

    def run(self, job_name: str, first: dt.date | None, last: dt.date | None, config: Mapping[str, Any],
            tags: Mapping[str, str] | None = None, progress: Callable[[str], None] | None = None) -> RunOutcome:
        return self.wait(self.launch(job_name, first, last, config, tags), progress=progress)


class RunProgress:
    """What a run does while a command waits on it, as lines for `say`: each step as it starts and ends, and
    every `every` seconds the assets built so far (a registry-sized backfill ran minutes with no word: helper-100).
    It reads the run's event log from where it left off, at most once a second."""

    KINDS = {dg.DagsterEventType.STEP_START, dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE,
             dg.DagsterEventType.ASSET_MATERIALIZATION}

    def __init__(self, instance: dg.DagsterInstance, run_id: str, say: Callable[[str], None], every: float = 15.0):
        self.instance, self.run_id, self.say, self.every = instance, run_id, say, every
        self.cursor: str | None = None
        self.started = self.read_at = self.said_at = time.monotonic()
        self.built, self.built_said, self.latest = 0, 0, ""

    def read(self, final: bool = False) -> RunProgress | None:
        """Itself, or None once the event log cannot be read: progress is told, never waited on (helper-101 F7: a
        storage error here ended the command's wait while the run went on)."""
        try:
            self._read(final)
            return self
        except Exception as exc:  # noqa: BLE001 - any error of the event log's storage; the run is waited on still
            why = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
            self.say(f"  (no more progress lines: the run's event log could not be read: {why})")
            return None

    def _read(self, final: bool) -> None:
        now = time.monotonic()
        if now - self.read_at < 1.0 and self.cursor is not None and not final:
            return
        self.read_at = now
        found = self.instance.get_records_for_run(self.run_id, cursor=self.cursor, of_type=self.KINDS)
        self.cursor = found.cursor
        for record in found.records:
            event = record.event_log_entry.dagster_event
            if event is None:
                continue
            at = f"{now - self.started:.0f}s"
            if event.event_type == dg.DagsterEventType.ASSET_MATERIALIZATION:
                self.built += 1
                key = event.asset_key.to_user_string() if event.asset_key else "?"
                self.latest = f"{key} of {event.partition}" if event.partition else key
            elif event.event_type == dg.DagsterEventType.STEP_START:
                self.say(f"  step {event.step_key} started ({at})")
            else:
                done = "finished" if event.event_type == dg.DagsterEventType.STEP_SUCCESS else "FAILED"
                self.say(f"  step {event.step_key} {done} ({at}; {self.built} assets built in the run so far)")
                self.built_said, self.said_at = self.built, now
        if self.built > self.built_said and now - self.said_at >= self.every:
            self.say(f"  {self.built} assets built so far, the latest {self.latest} ({now - self.started:.0f}s)")
            self.built_said, self.said_at = self.built, now


@contextlib.contextmanager
def code_location(instance: dg.DagsterInstance) -> Iterator[CodeLocation]:
    """Open the code location for `instance` (its code server inherits this process's environment, so
    $SEVENMAPS_LAKE, $SEVENMAPS_FIRST_DAY and $SEVENMAPS_NO_SCAN reach the runs)."""


    target = ModuleTarget(module_name=LOCATION, attribute=None, working_directory=str(workplace()),
                          location_name=LOCATION)
    with WorkspaceProcessContext(instance, target, code_server_log_level="WARNING") as workspace:
        errors = workspace.create_request_context().get_code_location_error(LOCATION)
        if errors is not None:
            raise RuntimeError(f"the code location {LOCATION} did not load: {errors.message.strip()}")
        yield CodeLocation(instance, workspace)

