"""Put first on PYTHONPATH of `dagster dev` by tests/test_ui_backfill.py: in the dagster-daemon process that
`dagster dev` starts (`python -m dagster._daemon run`), the backfill daemon ticks every TICK_SECONDS instead of
every 30 s. Dagster has no setting for it: the loop reads the constant DEFAULT_DAEMON_INTERVAL_SECONDS of
dagster._daemon.controller each time it starts (dagster/_daemon/backfill.py). The daemon's code is unchanged;
only its wait between ticks is shorter, so the test waits seconds where it waited minutes
(docs/development.md, "The suite's time"). Every other Python process is left alone."""

import sys

TICK_SECONDS = 3

if "dagster._daemon" in getattr(sys, "orig_argv", ()):
    import dagster._daemon.controller as _controller

    # A Dagster without the constant would tick as before, unseen: the line below says it took, and the
    # test looks for it in dagster dev's log.
    if not isinstance(getattr(_controller, "DEFAULT_DAEMON_INTERVAL_SECONDS", None), int):
        raise RuntimeError("dagster._daemon.controller.DEFAULT_DAEMON_INTERVAL_SECONDS is gone: "
                           "tests/daemon_ticks/sitecustomize.py must follow Dagster")
    _controller.DEFAULT_DAEMON_INTERVAL_SECONDS = TICK_SECONDS
    print(f"tests/daemon_ticks: the daemon's backfill ticks every {TICK_SECONDS} s", file=sys.stderr, flush=True)
