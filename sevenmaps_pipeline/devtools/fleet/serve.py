"""Run a fleet in its own process (the benchmark keeps servers and prober from sharing one GIL).

    python -m sevenmaps_pipeline.devtools.fleet.serve SPEC.json INFO.json

SPEC holds {"timeline": ..., "latency": {host: seconds}}. Once serving, INFO gets {port, ca_file,
host_map}; when standard input closes, INFO gets the per-host request counts and the process exits.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .run import Fleet


def main(spec_path: str, info_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    with Fleet(timeline=spec["timeline"]) as fleet:
        fleet.latency.update(spec.get("latency", {}))
        info = {"port": fleet.port, "ca_file": str(fleet.ca_file), "host_map": fleet.host_map,
                "registry_url": fleet.registry_url}
        Path(info_path).write_text(json.dumps(info))
        sys.stdin.read()  # serve until the parent closes our stdin
        info.update(requests=fleet.requests, max_in_flight=fleet.max_in_flight)
        Path(info_path).write_text(json.dumps(info))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
