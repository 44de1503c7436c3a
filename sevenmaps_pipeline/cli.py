"""The `sevenmaps` command line."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

from .lake.paths import PROJECT_ROOT, LakePaths, parse_day

EPILOG = """\
examples:
  sevenmaps demo                              30 days of the loopback fleet through Dagster, signed, verified
  sevenmaps probe https://mcp.example.com/mcp  check one endpoint and show what it answered
  sevenmaps synth --servers 100000 --days 30 --seed 1 --lake /tmp/lake
  sevenmaps verify                            check every signed day of ./data_lake
  sevenmaps sql "SELECT code, count(*) FROM daily_status GROUP BY code"
  sevenmaps ui                                the Dagster UI (backfills: Assets > select > Materialize)
"""


# Packages that only the devtools (fleet, demo, benches) need: the `devtools` extra.
DEVTOOLS_ONLY = ("mcp", "uvicorn", "starlette")


def _lake(args: argparse.Namespace) -> LakePaths:
    return LakePaths.at(args.lake)


def cmd_demo(args: argparse.Namespace) -> int:
    from .devtools.demo import run_demo, run_fleet_demo

    key = Path(args.signing_key).resolve() if args.signing_key else None
    if args.synthetic:
        return run_demo(_lake(args), args.servers, args.days, args.seed, key)
    return run_fleet_demo(_lake(args), args.days, key)


def cmd_synth(args: argparse.Namespace) -> int:
    from .devtools.synth import synthesize

    lake = _lake(args)
    end = parse_day(args.end_day) if args.end_day else dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    started = time.perf_counter()
    print(f"synthesising {args.servers:,} endpoints x {args.days} days ending {end} into {lake.root}", flush=True)
    result = synthesize(lake, args.servers, args.days, args.seed, end, args.missing_days,
                        progress=lambda msg: print(f"  {msg}", flush=True))
    print(f"done in {time.perf_counter() - started:.1f}s: {result.probe_rows:,} probe rows, "
          f"{result.registry_rows:,} registry rows, {result.distinct_tool_lists:,} distinct tool lists")
    return 0


def cmd_probe(args: argparse.Namespace) -> int:
    from .probe.config import ProbeConfig
    from .probe.report import run_probe
    from .registry.listing import has_userinfo

    if has_userinfo(args.url):  # the secret is not echoed back either
        print("error: the URL carries credentials (user:password@host); 7Maps-bot never sends credentials, "
              "so it never checks such a URL. Remove the userinfo and try again.", file=sys.stderr)
        return 2
    host_map = {}
    for item in args.resolve or []:
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit():
            print(f"error: --resolve takes HOST:PORT, got {item!r}", file=sys.stderr)
            return 2
        host_map[host.lower()] = int(port)
    config = ProbeConfig(allow_private=args.allow_private, host_map=host_map,
                         ca_file=Path(args.ca_file) if args.ca_file else None)
    text, code = run_probe(args.url, config, args.remote_type, args.json)
    print(text)
    return code


def cmd_run(args: argparse.Namespace) -> int:
    import dagster as dg

    from .defs.home import ensure_dagster_home
    from .defs.runner import run_days

    day = parse_day(args.day)
    lake = _lake(args)
    ensure_dagster_home(respect_env=True)
    print(f"scanning {args.registry} for {day} into {lake.root} (Dagster home {os.environ['DAGSTER_HOME']})")
    with dg.DagsterInstance.get() as instance:
        run = run_days("daily_map_job", day, day, instance, lake.root, prober={"registry_url": args.registry},
                       raise_on_error=False)
    if not run.success:
        for event in run.all_events:
            if event.is_step_failure:
                print(event.event_specific_data.error.message, file=sys.stderr)
        return 1
    print(f"run {run.run_id} succeeded")
    return 0


def cmd_classify_tools(args: argparse.Namespace) -> int:
    import json

    from .rules.risk import classify

    try:
        tools = json.loads(Path(args.file).read_text() if args.file != "-" else sys.stdin.read())
    except (OSError, ValueError) as exc:
        print(f"error: cannot read a JSON array of tools from {args.file}: {exc}", file=sys.stderr)
        return 2
    if isinstance(tools, dict) and isinstance(tools.get("tools"), list):
        tools = tools["tools"]  # a whole tools/list result
    if not isinstance(tools, list):
        print("error: expected a JSON array of MCP tool objects", file=sys.stderr)
        return 2
    for tool in tools:
        if not isinstance(tool, dict):
            print(json.dumps({"name": None, "risk": None, "rule": "not a tool object", "evidence": []}))
            continue
        result = classify(tool, ignore_annotations=args.ignore_annotations).as_dict()
        print(json.dumps({k: result[k] for k in ("name", "risk", "rule", "evidence", "contradiction", "method")},
                         ensure_ascii=False))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from .integrity.verify import verify_lake

    report = verify_lake(_lake(args))
    print(report.summary())
    return 0 if report.ok else 1


def cmd_keygen(args: argparse.Namespace) -> int:
    from .integrity.keys import SigningKeyError, generate_key

    try:
        path = generate_key(Path(args.out), _lake(args))
    except SigningKeyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote Ed25519 signing key {path} (mode 0600). Keep it out of the lake and out of git.")
    return 0


def cmd_sql(args: argparse.Namespace) -> int:
    from .lake import duck

    lake = _lake(args)
    if not lake.warehouse.exists():
        print(f"error: no warehouse at {lake.warehouse}; run `sevenmaps warehouse` or a pipeline run first",
              file=sys.stderr)
        return 2
    with duck.connect(str(lake.warehouse), read_only=True) as con:
        con.sql(args.query).show(max_rows=args.max_rows, max_width=200)
    return 0


def cmd_warehouse(args: argparse.Namespace) -> int:
    from .lake.warehouse import publish_warehouse

    print(f"published {publish_warehouse(_lake(args), force=True)}")
    return 0


def cmd_data_dictionary(args: argparse.Namespace) -> int:
    from .lake.schemas import data_dictionary_markdown

    text = data_dictionary_markdown()
    if not args.write_readme:
        sys.stdout.write(text)
        return 0
    readme = PROJECT_ROOT / "README.md"
    start, end = "<!-- data-dictionary:start -->\n", "<!-- data-dictionary:end -->"
    before, rest = readme.read_text().split(start, 1)
    readme.write_text(before + start + text + end + rest.split(end, 1)[1])
    print(f"updated the data dictionary in {readme}")
    return 0


def cmd_ui(args: argparse.Namespace) -> int:
    from .defs.home import ensure_dagster_home

    home = ensure_dagster_home(respect_env=True)
    os.environ.setdefault("SEVENMAPS_LAKE", str(_lake(args).root))
    print(f"Dagster UI on http://127.0.0.1:{args.port} (Dagster home {home}, lake {os.environ['SEVENMAPS_LAKE']})")
    os.chdir(PROJECT_ROOT)
    dagster = Path(sys.executable).with_name("dagster")
    os.execv(str(dagster), [str(dagster), "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(args.port)])
    return 0  # not reached


def cmd_bench(args: argparse.Namespace) -> int:
    from .devtools.bench import run_bench
    from .devtools.bench_probe import print_probe_bench, run_probe_bench
    from .devtools.bench_tools import print_tools_bench, run_tools_bench

    code = 0
    if args.only in (None, "risk"):
        from .devtools.risk_corpus import measure, report

        print(report(measure()))
        print()
    if args.only in (None, "lake"):
        code = run_bench(args.servers, args.days, args.seed)
        print()
    if args.only in (None, "tools"):
        print_tools_bench(run_tools_bench(args.servers, args.seed))
        print()
    if args.only in (None, "probe"):
        print("[bench] prober: 2,000 fleet endpoints with injected latency, and the naive SDK baseline ...", flush=True)
        print_probe_bench(run_probe_bench(endpoints=args.endpoints))
    return code


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sevenmaps", description="A daily, signed map of every remote MCP server in the official registry.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lake", help="lake root (default: $SEVENMAPS_LAKE, else ./data_lake)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("demo", help="replay 30 days of the loopback fleet through the prober and Dagster, "
                       "sign, verify, summarise")
    p.add_argument("--synthetic", action="store_true",
                   help="use the synthetic generator instead of the fleet (with --servers and --seed)")
    p.add_argument("--servers", type=int, default=400)
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--signing-key", help="private key path (created if missing; never inside the lake)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("synth", help="land deterministic synthetic raw probes and registry snapshots")
    p.add_argument("--servers", type=int, required=True, help="number of endpoints")
    p.add_argument("--days", type=int, required=True, help="number of UTC days")
    p.add_argument("--seed", type=int, required=True, help="same seed, same lake")
    p.add_argument("--end-day", help="last day, YYYY-MM-DD (default: yesterday, UTC)")
    p.add_argument("--missing-days", type=int, help="days with no run at all (default: days // 15)")
    p.set_defaults(func=cmd_synth)

    p = sub.add_parser("run", help="scan the registry for the open UTC day and build its map (the daily job, "
                       "outside the UI); a day that has passed is never probed")
    p.add_argument("--day", required=True, help="the UTC day, YYYY-MM-DD (must be today to scan)")
    p.add_argument("--registry", default="https://registry.modelcontextprotocol.io", help="registry base URL")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("probe", help="check one endpoint the 7Maps way and print everything seen "
                       "(exit 0 when it answers with tools, 3 otherwise)")
    p.add_argument("url")
    p.add_argument("--json", action="store_true", help="one JSON object instead of text")
    p.add_argument("--allow-private", action="store_true",
                   help="an owner checking their own server: allow localhost, private addresses and plain http")
    p.add_argument("--remote-type", default="streamable-http", choices=["streamable-http", "sse"])
    p.add_argument("--resolve", action="append", metavar="HOST:PORT",
                   help="connect HOST to 127.0.0.1:PORT (like curl --resolve); TLS still checks HOST")
    p.add_argument("--ca-file", help="trust this CA bundle (e.g. a test server's)")
    p.set_defaults(func=cmd_probe)

    p = sub.add_parser("classify-tools", help="risk level of each tool in a JSON array of MCP tools "
                       "(one JSON line per tool: name, risk, rule, evidence)")
    p.add_argument("file", help="a JSON array of tool objects (or a tools/list result); - for stdin")
    p.add_argument("--ignore-annotations", action="store_true", help="decide from names and descriptions only")
    p.set_defaults(func=cmd_classify_tools)

    p = sub.add_parser("verify", help="recompute every signed day from the files and the published public key; "
                       "exit 1 naming the first bad day and file")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("keygen", help="create an Ed25519 signing key (mode 0600)")
    p.add_argument("--out", required=True, help="where to write the private key (outside the lake)")
    p.set_defaults(func=cmd_keygen)

    p = sub.add_parser("sql", help="run a query on warehouse.duckdb, read-only")
    p.add_argument("query")
    p.add_argument("--max-rows", type=int, default=40)
    p.set_defaults(func=cmd_sql)

    p = sub.add_parser("warehouse", help="rebuild warehouse.duckdb (views only) and swap it in atomically")
    p.set_defaults(func=cmd_warehouse)

    p = sub.add_parser("data-dictionary", help="print the data dictionary (Markdown) from the schemas")
    p.add_argument("--write-readme", action="store_true", help="replace the dictionary in README.md")
    p.set_defaults(func=cmd_data_dictionary)

    p = sub.add_parser("ui", help="the Dagster UI over this project's Dagster home")
    p.add_argument("--port", type=int, default=3000)
    p.set_defaults(func=cmd_ui)

    p = sub.add_parser("bench", help="100,000 endpoints: 30 days through Dagster, the tool tables at ~20 tools "
                       "per list, and the prober against the fleet: figures and ratios")
    p.add_argument("--servers", type=int, default=100_000)
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--endpoints", type=int, default=2000, help="fleet endpoints for the prober benchmark")
    p.add_argument("--only", choices=["risk", "lake", "tools", "probe"],
                   help="run one benchmark: risk (the words-only estimate on real tools), lake, tools or probe")
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    import warnings

    warnings.filterwarnings("ignore", message=".*is currently in beta.*")
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ModuleNotFoundError as exc:
        if exc.name not in DEVTOOLS_ONLY:
            raise
        print(f"error: `sevenmaps {args.command}` needs the devtools extra ({exc.name} is not installed): "
              "pip install 'sevenmaps-pipeline[devtools]'", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
