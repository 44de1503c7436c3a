"""The day's graph is declared once (curated/day.py DAY_GRAPH) and the Dagster specs are generated from it; this
holds both to what each builder really reads. The reads are observed, not assumed: every file a build opens
under the lake is recorded by the kernel (Linux inotify, IN_OPEN on every folder of the lake) while the
builders run one at a time over a small synthetic lake, with the in-process relations (curated/memo.py) and
the lake's caches (cache/) dropped before each build, so each build reads its inputs itself."""

from __future__ import annotations

import ctypes
import datetime as dt
import os
import shutil
import struct
from collections import defaultdict
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest
from conftest import DAY

from sevenmaps_pipeline.curated import memo
from sevenmaps_pipeline.curated.day import DAY_GRAPH, MAP_ASSET_NAMES, RAW_KINDS_OF_SCAN, asset_inputs
from sevenmaps_pipeline.definitions import defs
from sevenmaps_pipeline.defs.map_assets import EVERY_DAY_OFFSET
from sevenmaps_pipeline.devtools.synth import synthesize
from sevenmaps_pipeline.lake import schemas
from sevenmaps_pipeline.lake.paths import COVERED_RAW, DAY_DIR, LakePaths

IN_OPEN, IN_ISDIR, IN_NONBLOCK = 0x20, 0x40000000, 0o4000
OWNER = {table: asset.name for asset in DAY_GRAPH for table in asset.tables}
RAW_SCHEMAS = {"origins": schemas.RAW_ORIGINS, "readiness": schemas.RAW_READINESS,
               "readiness_surfaces": schemas.RAW_READINESS_SURFACES, "skills": schemas.RAW_SKILLS,
               "packages": schemas.RAW_PACKAGES, "domains": schemas.RAW_DOMAINS, "hourly": schemas.RAW_HOURLY,
               "five_minute": schemas.RAW_FIVE_MINUTE, "submitted": schemas.RAW_SUBMITTED}


class Opens:
    """The files opened under a folder tree, as the kernel reports them (whoever opens them: DuckDB, pyarrow
    or Python)."""

    def __init__(self, root: Path):
        self.root = root
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(IN_NONBLOCK)
        assert self.fd >= 0, os.strerror(ctypes.get_errno())
        self.folders: dict[int, str] = {}

    def watch(self) -> None:
        """Watch every folder there is now (a build writes new ones; it reads only what existed before)."""
        for folder, _, _ in os.walk(self.root):
            wd = self.libc.inotify_add_watch(self.fd, folder.encode(), IN_OPEN)
            assert wd >= 0, os.strerror(ctypes.get_errno())
            self.folders[wd] = folder

    def take(self) -> set[str]:
        """The files opened since the last call, relative to the root."""
        opened: set[str] = set()
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return opened
            at = 0
            while at < len(data):
                wd, mask, _, size = struct.unpack_from("iIII", data, at)
                name = data[at + 16:at + 16 + size].rstrip(b"\0").decode()
                at += 16 + size
                if name and not mask & IN_ISDIR:
                    opened.add(os.path.relpath(os.path.join(self.folders[wd], name), self.root))

    def close(self) -> None:
        os.close(self.fd)


def _source(relative: str) -> tuple[str, dt.date] | None:
    """(what a file of the lake is, as the day's graph names it; its day), or None for what is no input: the
    build's own temp files, caches, the quarantine (files moved out of the raw area)."""
    parts = relative.split("/")
    if parts[0] in ("cache", "quarantine") or parts[-1].startswith("."):
        return None
    day = DAY_DIR.match(parts[2]) if len(parts) > 3 else None
    assert day is not None, f"a read outside the day partitions: {relative}"
    when = dt.date.fromisoformat(day.group(1))
    if parts[0] == "raw":
        return ("raw_probes" if parts[1] in RAW_KINDS_OF_SCAN else f"raw/{parts[1]}"), when
    assert parts[0] == "curated" and parts[1] in OWNER, f"a read of something no day asset writes: {relative}"
    return OWNER[parts[1]], when


@pytest.fixture(scope="module")
def observed(tmp_path_factory) -> dict[str, dict[str, set[int]]]:
    """asset -> source -> how many days back of the day built it read it, over three days of a lake that holds
    every raw kind a day covers."""
    lake = LakePaths.at(tmp_path_factory.mktemp("graph") / "lake")
    days = synthesize(lake, 30, 3, seed=11, end_day=DAY, missing_days=0).days
    for day in days:  # the kinds the generator does not land, present (empty) so a build that reads them opens them
        for kind, spec in RAW_SCHEMAS.items():
            lake.raw_dir(kind, day).mkdir(parents=True, exist_ok=True)
            pq.write_table(spec.schema.empty_table(), lake.raw_dir(kind, day) / "part-0.parquet")
    assert all(lake.raw_files(kind, day) for kind in COVERED_RAW for day in days)
    reads: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    opens = Opens(lake.root)
    try:
        for day in days:
            for asset in DAY_GRAPH:
                memo.forget()
                shutil.rmtree(lake.root / "cache", ignore_errors=True)
                opens.watch()
                opens.take()
                asset.build(lake, day)
                for relative in opens.take():
                    found = _source(relative)
                    if found is not None:
                        source, when = found
                        if source != asset.name or when != day or source == "raw_probes":
                            reads[asset.name][source].add((day - when).days)
    finally:
        opens.close()
    return reads


def test_every_read_is_declared_and_every_declared_input_is_read(observed):
    problems = []
    for asset in DAY_GRAPH:
        got = observed[asset.name]
        for source, backs in sorted(got.items()):
            declared = [r for r in asset.reads if r.source == source]
            if not declared:
                problems.append(f"{asset.name} reads {source} (days back {sorted(backs)}), undeclared")
            elif not all(declared[0].reaches(b) for b in backs):
                problems.append(f"{asset.name} reads {source} {sorted(backs)} days back, beyond {declared[0].days}")
        problems += [f"{asset.name} is declared to read {r.source} and never did" for r in asset.reads
                     if r.source not in got]
    assert not problems, "\n".join(problems)


def _days_back(mapping: dg.PartitionMapping) -> int:
    """How many days before the day a Dagster mapping between daily partitions reaches (0: the same day)."""
    if isinstance(mapping, dg.IdentityPartitionMapping):
        return 0
    assert isinstance(mapping, dg.TimeWindowPartitionMapping) and mapping.end_offset == 0, mapping
    return -mapping.start_offset


def test_the_dagster_graph_has_a_dependency_for_every_day_asset_read_and_no_other(observed):
    graph = defs.get_repository_def().asset_graph
    problems = []
    for name in MAP_ASSET_NAMES:
        key = dg.AssetKey(name)
        parents = {p.to_user_string() for p in graph.get(key).parent_keys} - {"probe_slice"}
        read = {source for source in observed[name] if source in MAP_ASSET_NAMES and source != name}
        if parents != read:
            problems.append(f"{name}: Dagster deps {sorted(parents)}, its builder reads {sorted(read)}")
        for source in sorted(read & parents):
            mapping = graph.get_partition_mapping(key, dg.AssetKey(source))
            if max(observed[name][source]) > _days_back(mapping):
                problems.append(f"{name} reads {source} {sorted(observed[name][source])} days back; Dagster "
                                f"maps {_days_back(mapping)}")
    assert not problems, "\n".join(problems)


def test_the_dagster_windows_are_the_declared_ones():
    """Dagster gives the map's one multi-asset one input per upstream asset, so every asset that reads an
    upstream names the widest window any of them reads (defs/day_map.py); each is at least the asset's own."""
    graph = defs.get_repository_def().asset_graph
    widest: dict[str, int | None] = {}
    for name in MAP_ASSET_NAMES:
        for read in asset_inputs(name):
            old = widest.get(read.source, 1)
            widest[read.source] = None if read.days is None or old is None else max(old, read.days)
    for name in MAP_ASSET_NAMES:
        for read in asset_inputs(name):
            mapping = graph.get_partition_mapping(dg.AssetKey(name), dg.AssetKey(read.source))
            days = widest[read.source]
            assert _days_back(mapping) == (days - 1 if days else EVERY_DAY_OFFSET), (name, read, mapping)
