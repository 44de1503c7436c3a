"""Run a fleet in its own process (the benchmark keeps servers and prober from sharing one GIL).

    python -m sevenmaps_pipeline.devtools.fleet.serve SPEC.json INFO.json

SPEC holds {"timeline": ..., "latency": {host: seconds}} and optionally "slow_seconds" (how long a
`timeout` server takes to answer). Once serving, INFO gets {port, ca_file, host_map, registry_url,
codehost_url, lookup_urls}; when standard input closes, INFO gets the per-host request counts (and the
servers' by method and path) and the process exits. Requests are counted, not recorded.
"""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path

from .run import Fleet


def main(spec_path: str, info_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    with Fleet(timeline=spec["timeline"], slow_seconds=spec.get("slow_seconds", 12.0), record=False) as fleet:
        fleet.latency.update(spec.get("latency", {}))
        info = {"port": fleet.port, "ca_file": str(fleet.ca_file), "host_map": fleet.host_map,
                "registry_url": fleet.registry_url, "codehost_url": fleet.codehost_url,
                "lookup_urls": fleet.lookup_urls()}
        Path(info_path).write_text(json.dumps(info))
        sys.stdin.read()  # serve until the parent closes our stdin
        usage = resource.getrusage(resource.RUSAGE_SELF)
        info.update(requests=fleet.requests, request_kinds=fleet.request_kinds, max_in_flight=fleet.max_in_flight,
                    overlaps=fleet.overlaps, cpu_seconds=usage.ru_utime + usage.ru_stime)
        Path(info_path).write_text(json.dumps(info))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
