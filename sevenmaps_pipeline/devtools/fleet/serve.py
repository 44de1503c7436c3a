"""Run a fleet in its own process (the benchmark keeps servers and prober from sharing one GIL).

    python -m sevenmaps_pipeline.devtools.fleet.serve SPEC.json INFO.json

SPEC holds {"timeline": ..., "latency": {host: seconds}} and optionally "slow_seconds" (how long a `timeout`
server takes to answer) and "workdir" (the fleet's folder, its CA's key among its files: one the parent
removes, since the parent may kill this process, which then removes nothing). Once serving, INFO gets {port,
ca_file, host_map, registry_url, codehost_url, lookup_urls}. Each line read on standard input writes INFO
again with the per-host request counts since the line before (and the servers' requests by method and path,
the most in flight per host, the overlaps, the process's CPU so far, and `report`, the line's number) and
starts the counts afresh, so that one fleet serves several measured runs one after another; when standard
input closes, INFO gets the last counts and the process exits. Requests are counted, not recorded.
"""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path

from .run import Fleet


def main(spec_path: str, info_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    workdir = Path(spec["workdir"]) if spec.get("workdir") else None
    with Fleet(timeline=spec["timeline"], slow_seconds=spec.get("slow_seconds", 12.0), workdir=workdir,
               record=False) as fleet:
        fleet.latency.update(spec.get("latency", {}))
        info = {"port": fleet.port, "ca_file": str(fleet.ca_file), "host_map": fleet.host_map,
                "registry_url": fleet.registry_url, "codehost_url": fleet.codehost_url,
                "lookup_urls": fleet.lookup_urls()}
        _write_whole(info_path, info)
        for report, _ in enumerate(sys.stdin, 1):  # serve until the parent closes our stdin
            _write_counts(fleet, info, info_path, report)
        _write_counts(fleet, info, info_path, None)


def _write_counts(fleet: Fleet, info: dict, info_path: str, report: int | None) -> None:
    """The counts since the last report, written whole (the parent polls the file); then fresh counts. The
    parent asks only between its runs, when no request is in flight."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    info.update(requests=fleet.requests, request_kinds=fleet.request_kinds, max_in_flight=fleet.max_in_flight,
                overlaps=fleet.overlaps, cpu_seconds=usage.ru_utime + usage.ru_stime, report=report)
    fleet.requests, fleet.request_kinds, fleet.max_in_flight, fleet.overlaps = {}, {}, {}, []
    _write_whole(info_path, info)


def _write_whole(info_path: str, info: dict) -> None:
    """INFO written whole, by a rename: the parent polls for the file and reads it at once, and a file it
    found empty (the first INFO was once written in place) failed the benchmark."""
    partial = Path(info_path).with_suffix(".partial")
    partial.write_text(json.dumps(info))
    partial.replace(info_path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
