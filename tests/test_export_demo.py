"""Every snapshot the demo wrote (the `day_snapshot` asset, one per signed day, from the loopback fleet's
real answers: nulls, lists and structs in every table) passes `frictionless validate datapackage.json` with
no error, and its croissant.json describes every file and column (docs/verifying.md "Snapshots")."""

from __future__ import annotations

from test_export import croissant_problems, frictionless_validate

from sevenmaps_pipeline.integrity.export_check import verify_export


def test_every_demo_snapshot_validates_and_its_croissant_describes_it(fleet_demo_lake):
    snapshots = sorted(p for p in fleet_demo_lake.exports_dir.iterdir() if (p / "SHA256SUMS").is_file())
    assert len(snapshots) >= 4  # one per signed demo day
    for folder in snapshots:
        report = frictionless_validate(folder)
        errors = [(t["name"], e["type"], e["message"]) for t in report["tasks"] for e in t["errors"]]
        assert report["valid"] and errors == [] and report["errors"] == [], (folder.name, errors[:10])
        assert len(report["tasks"]) == sum(1 for _ in folder.rglob("*.parquet"))
        assert croissant_problems(folder) == [], folder.name
        assert verify_export(folder).ok, folder.name
