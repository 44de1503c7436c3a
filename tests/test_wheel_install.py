"""A non-editable install works from any working directory: the wheel ships sql/ and assets/, reads them
through importlib.resources, and materialises a synthetic day through Dagster far from the checkout."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

from sevenmaps_pipeline.lake.paths import PROJECT_ROOT

CHILD = textwrap.dedent("""
    import datetime as dt, json, sys
    from pathlib import Path
    import dagster as dg
    import sevenmaps_pipeline
    from sevenmaps_pipeline import packaged
    from sevenmaps_pipeline.defs.runner import run_days
    from sevenmaps_pipeline.devtools.synth import synthesize
    from sevenmaps_pipeline.lake.paths import LakePaths
    lake = LakePaths.at(Path("lake").resolve())
    end = dt.date(2026, 11, 20)
    synthesize(lake, 60, 2, seed=3, end_day=end)
    with dg.DagsterInstance.ephemeral() as instance:
        run = run_days("daily_map_job", end, end, instance, lake.root, log_level="WARNING")
    print(json.dumps({"package": sevenmaps_pipeline.__file__, "source_root": str(packaged.SOURCE_ROOT),
                      "sql": str(packaged.shipped("sql", "daily_status.sql")), "success": run.success,
                      "status": lake.curated_file("daily_status", end).is_file(),
                      "history": lake.curated_file("server_history", end).is_file()}))
""")


def test_the_wheel_installs_and_runs_a_day_outside_the_source_tree(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist),
                    str(PROJECT_ROOT)], check=True, timeout=300)
    [wheel] = dist.glob("sevenmaps_pipeline-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "sevenmaps_pipeline/sql/daily_status.sql" in names
    assert "sevenmaps_pipeline/assets/risk_vocabulary.json" in names
    assert "sevenmaps_pipeline/publishing/templates/server.html" in names  # the site's pages (Jinja2)
    assert "sevenmaps_pipeline/devtools/fleet/apps.py" in names  # its own subpackage, not the product

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], check=True, timeout=300)
    # The dependencies come from this environment's site-packages, added as a plain path: its .pth files
    # (the editable install's finder among them) are not read, so only the wheel provides the package.
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "zz_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "child.py").write_text(CHILD)
    proc = subprocess.run([str(python), "child.py"], cwd=work, capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "DAGSTER_HOME": str(tmp_path),
                               "SEVENMAPS_FIRST_DAY": "2026-01-01"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    import json

    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["package"].startswith(str(venv)) and report["source_root"] == "None"
    assert report["sql"].startswith(str(venv))
    assert report["success"] and report["status"] and report["history"]
