"""Put first on PYTHONPATH of `dagster dev` by tests/test_ui_backfill.py: in the dagster-daemon process that
`dagster dev` starts (`python -m dagster._daemon run`), the backfill daemon ticks every
$SEVENMAPS_TEST_DAEMON_TICK_SECONDS instead of every 30 s. Dagster has no setting for it: the loop reads the
constant DEFAULT_DAEMON_INTERVAL_SECONDS of dagster._daemon.controller when it starts (dagster/_daemon/backfill.py;
the AssetDaemon reads it too, only for asset sensors off, which no sevenmaps home turns off). The daemon's code is
unchanged; only its wait between ticks is shorter (docs/development.md, "The suite's time"). Every other process
is left alone, and the next sitecustomize on the path (a profiler's, say) is imported as if this one were not."""

import importlib
import os
import sys

if "dagster._daemon" in getattr(sys, "orig_argv", ()):
    import dagster._daemon.controller as _controller

    tick = int(os.environ["SEVENMAPS_TEST_DAEMON_TICK_SECONDS"])
    # A Dagster without the constant would tick as before, unseen: the line below says it took, and the test
    # looks for it in dagster dev's log (an error here is printed by site.py as "Error in sitecustomize").
    if not isinstance(getattr(_controller, "DEFAULT_DAEMON_INTERVAL_SECONDS", None), int):
        raise RuntimeError("dagster._daemon.controller.DEFAULT_DAEMON_INTERVAL_SECONDS is gone: "
                           "tests/daemon_ticks/sitecustomize.py must follow Dagster")
    _controller.DEFAULT_DAEMON_INTERVAL_SECONDS = tick
    print(f"tests/daemon_ticks: the daemon's backfill ticks every {tick} s", file=sys.stderr, flush=True)

# Python imports only the first sitecustomize on the path. (The import that runs this file looks its module up
# by name once it has run: this one, or the next one in its place.)
_here = os.path.dirname(os.path.abspath(__file__))
_path = sys.path[:]
_this = sys.modules.pop("sitecustomize")
sys.path[:] = [p for p in _path if os.path.abspath(p or os.curdir) != _here]
try:
    importlib.import_module("sitecustomize")
except ModuleNotFoundError as missing:
    if missing.name != "sitecustomize":
        raise
    sys.modules["sitecustomize"] = _this
finally:
    sys.path[:] = _path
