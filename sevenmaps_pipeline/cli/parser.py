"""The `sevenmaps` command line's options. Each command names its handler, "<module>:<function>" in this package,
which `main` imports only when the command runs: this module imports argparse alone, so `sevenmaps --help`
and a command that needs no Dagster never load it."""

from __future__ import annotations

import argparse

from .examples import describe

EPILOG = """\
examples:
  sevenmaps demo                              30 days of the loopback fleet through Dagster, signed, verified
  sevenmaps probe https://mcp.example.com/mcp  check one endpoint and show what it answered
  sevenmaps synth --servers 100000 --days 30 --seed 1 --lake /tmp/lake
  sevenmaps verify                            check every signed day of the default lake
  sevenmaps sql "SELECT code, count(*) FROM daily_status GROUP BY code"
  sevenmaps ui                                the Dagster UI (backfill: Catalog > not group:hourly > select all)
"""

EXIT_CODES = """exit codes: 0 done; 1 the command found a problem (a failed check or verification, a failed run);
2 a usage or input error, such as a lake that is not there (or a folder that holds none) or a port in use (named
in one line); 3 a fork (verify) or an endpoint not answering (probe); 4 the log behind its signed roots, not forked
(verify, log check: run `sevenmaps log sync`); 130 interrupted"""

VERIFY_EPILOG = """\
trust:
  Without --public-key or --vkey, the key comes from --state (remembered by an earlier run), and only
  then from the lake's own .well-known/7maps.json, which whoever can write the lake can replace; the
  report says so. Pin the key you got from a source you trust.
examples:
  sevenmaps verify --public-key 7maps.json --state ~/.7maps-state.json
  sevenmaps verify --vkey "$(cat trusted.vkey)" --witness "$(cat w1.vkey)" --quorum 1
  sevenmaps verify --export data_lake/exports/2026-11-24_2026-11-30 --public-key 7maps.json
exit codes: 0 verified, 1 a problem (named with its day and file), 2 no such lake or a bad option, 3 a fork,
  4 the log only behind its roots (a signer stopped between a root and its checkpoint: `sevenmaps log sync`)
"""

BENCH_PARTS = ("risk", "risk-reach", "categories", "lake", "export", "tools", "probe", "registry", "serve")

# What `sevenmaps --help` lists, in its order: the order a newcomer meets the commands in (try it, scan, read
# the map, control what is checked, prove it), which cuts across the command groups below. argparse lists
# commands in the order they are added, so they are all added here, and each group then adds its options.
COMMAND_HELP = {
    "demo": "replay 30 days of the loopback fleet through the prober and Dagster, sign, verify, summarise",
    "synth": "land deterministic synthetic raw probes and registry snapshots",
    "run": "scan the registry for the open UTC day and build its map (the daily job, outside the UI); a day that "
           "has passed is never probed",
    "readiness": "score one MCP endpoint live on the readiness rubric (mcp-2026-09-11.5), with the daily runs' "
                 "code: p50 is this check's round trip; the namespace line needs --name and the repository line "
                 "--repository, else they are unseen",
    "readiness-skill": "score a local Agent Skill folder on the readiness rubric (skill-2026-09-11.2; the code-host "
                       "lines are unseen without a repository)",
    "status": "what ran (days scanned, built, signed), what is late and what waits to be signed, and why; exit 1 "
              "when something is late",
    "serve": "the map's MCP server for agents (/mcp: route, server_status, verify_lock, changes_since, watch, "
             "report_road) and the static site for people (/), over the latest built day; Ctrl-C stops it",
    "site": "build the static site of a built day into site/days/D (the sign job does this after each day's "
            "snapshot); site/current points at the newest",
    "route": "which tools to use for a task, as the MCP server's route answers it (JSON); it reads the day's "
             "tools afresh each time (seconds at the registry's size), where a running `serve` keeps them read",
    "server": "one server's last 30 days (each code with its date), the status shown now, its tools with their "
              "risk and its recent changes, as the MCP server's server_status answers them",
    "opt-out": "the opt-out registry every check reads: `list`; `add HOST` (the operator records one); `issue HOST` "
               "(a form token the host publishes at /.well-known/7maps-optout.txt); `verify HOST` (fetch it: once "
               "it holds the token, the host is never contacted again)",
    "submit": "queue a server that is not in the registry for the map: checked every 6 hours for 7 days, then "
              "admitted (it answered reliably, kept one tool list, described every tool) or refused with the reason",
    "submissions": "the submitted servers: queued, admitted or refused, with the reason",
    "owner": "owner claims: `list`; `issue HOST` (a token the owner publishes at /.well-known/7maps-owner.txt); "
             "`verify HOST`; `note HOST --text ...` (shown beside the figures, never in them); `five-minute HOST "
             "--url URL ...` (at most 3 endpoints of the host); `bad-call HOST [--off]` (the owner asks for the "
             "rubric's bad-call step on their endpoints)",
    "incident": "a person's review of incidents: `list` (live incidents, and apart from them the failure reports "
                "awaiting review, never shown); `show SERVER` (the evidence); `close SERVER --by NAME --reason TEXT` "
                "(stops being live at once); `confirm SERVER --by NAME --reason TEXT` (only on a check of ours that "
                "saw it fail)",
    "backfill": "build the map for a range of days, then sign the finished ones, as runs of the code location (the "
                "UI shows them); a day that has passed is never probed (n)",
    "probe": "check one endpoint the 7Maps way and print everything seen (exit 0 when initialize and tools/list "
             "answer, an empty list included, 3 otherwise)",
    "classify-tools": "risk level of each tool in a JSON array of MCP tools (one JSON line per tool: name, risk, "
                      "rule, evidence)",
    "verify": "recompute every signed day from its files and check roots, chain, signatures and the log against a "
              "key you trust; exit 1 naming the first bad day and file, 3 on a fork, 4 when the log is only behind "
              "its roots",
    "prove": "print the C2SP tlog-proof that a signed file's line is in the log",
    "verify-proof": "check a .tlog-proof with only the log's key (and witnesses)",
    "log": "the transparency log: `log check` re-derives every tile and the checkpoint; `log sync` appends signed "
           "days the log lacks (a lake signed before the log existed, or a signer stopped between a root and its "
           "checkpoint: verify's BEHIND)",
    "export": "write a researcher's snapshot of signed days (Parquet, roots, proofs, SHA256SUMS, datapackage.json, "
              "croissant.json, README, WITHHELD.txt)",
    "witness": "run a C2SP tlog-witness that cosigns only consistent checkpoints",
    "keygen": "create an Ed25519 signing key (mode 0600)",
    "sql": "run a query on warehouse.duckdb, read-only",
    "warehouse": "rebuild warehouse.duckdb (views only) and swap it in atomically",
    "data-dictionary": "print the data dictionary (Markdown) from the schemas",
    "ui": "the Dagster UI over the lake's own Dagster home (<lake>/.dagster unless $DAGSTER_HOME is set); Ctrl-C or "
          "SIGTERM stops it",
    "bench": "100,000 endpoints: 30 days through Dagster, the tool tables at ~20 tools per list, and the prober "
             "against the fleet: figures and ratios",
}

def _endpoint_options(p: argparse.ArgumentParser) -> None:
    """The options of a one-endpoint command (probe, readiness), read by _probe_config."""
    p.add_argument("--allow-private", action="store_true",
                   help="an owner checking their own server: allow localhost, private addresses and plain http")
    p.add_argument("--resolve", action="append", metavar="HOST:PORT",
                   help="connect HOST to 127.0.0.1:PORT (like curl --resolve); TLS still checks HOST")
    p.add_argument("--ca-file", help="trust this CA bundle (e.g. a test server's)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr (each step as it goes)")


def _trust_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--public-key", metavar="FILE", help="the key you trust: a PEM file or a 7maps.json")
    p.add_argument("--vkey", help="the log's verifier key '<name>+<id>+<key>' (or a file holding it)")
    p.add_argument("--witness", action="append", metavar="VKEY",
                   help="a witness's cosignature vkey (or a file holding it); repeatable")
    p.add_argument("--quorum", type=int, help="witness cosignatures required (default: every --witness)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sevenmaps", description="A daily, signed map of every remote MCP server in the official registry.",
        epilog=EPILOG + "\n" + EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lake", help="lake root (default: $SEVENMAPS_LAKE, else data_lake/ of the "
                        "checkout it runs from, or of the working directory when installed as a package)")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    # The same options after the subcommand (`sevenmaps verify --lake L`): SUPPRESS keeps the value given
    # before it when they are not repeated.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--lake", default=argparse.SUPPRESS, help="lake root (default: $SEVENMAPS_LAKE, else "
                        "data_lake/ of the checkout it runs from, or of the working directory when installed)")
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands = {name: sub.add_parser(name, parents=[common], help=text) for name, text in COMMAND_HELP.items()}
    for add_options in (_dev_commands, _check_commands, _pipeline_commands, _reading_commands, _control_commands,
                        _integrity_commands):
        add_options(commands)
    for name, p in commands.items():  # each command's --help: what it does, then examples (cli/examples.py)
        describe(p, name, p.description or COMMAND_HELP[name])
    return parser


def _dev_commands(commands: dict[str, argparse.ArgumentParser]) -> None:
    p = commands["demo"]
    p.add_argument("--synthetic", action="store_true",
                   help="use the synthetic generator instead of the fleet (with --servers and --seed)")
    p.add_argument("--servers", type=int, default=400, help="with --synthetic: its endpoints (default 400)")
    p.add_argument("--days", type=int, default=30, help="days to replay (default 30)")
    p.add_argument("--seed", type=int, default=7, help="with --synthetic: its seed (default 7)")
    p.add_argument("--signing-key", help="private key path (created if missing; never inside the lake)")
    p.set_defaults(handler="dev:cmd_demo")

    p = commands["synth"]
    p.add_argument("--servers", type=int, required=True, help="number of endpoints")
    p.add_argument("--days", type=int, required=True, help="number of UTC days")
    p.add_argument("--seed", type=int, required=True, help="same seed, same lake")
    p.add_argument("--end-day", help="last day, YYYY-MM-DD (default: yesterday, UTC)")
    p.add_argument("--missing-days", type=int, help="days with no run at all (default: days // 15)")
    p.set_defaults(handler="dev:cmd_synth")

    p = commands["bench"]
    p.add_argument("--servers", type=int, default=100_000, help="the synthetic lake's endpoints (default 100,000)")
    p.add_argument("--days", type=int, default=30, help="its days (default 30)")
    p.add_argument("--seed", type=int, default=1, help="its seed (default 1)")
    p.add_argument("--endpoints", type=int, default=2000, help="fleet endpoints for the prober benchmark")
    p.add_argument("--probe-median-ms", type=float, default=150.0,
                   help="the prober benchmark's median injected latency per request (uniform, 1/5 to 9/5 of it)")
    p.add_argument("--probe-rounds", type=int, default=3,
                   help="rounds of the prober benchmark (quiet, beside a busy process, the SDK): medians of them")
    p.add_argument("--registry-endpoints", type=int, default=25_000,
                   help="endpoints of the simulated registry (the registry and serve benchmarks)")
    p.add_argument("--registry-concurrency", type=int, default=256,
                   help="the prober's concurrency for the simulated registry")
    p.add_argument("--cpu-hog", type=int, default=0, metavar="N",
                   help="the registry benchmark with N busy processes beside it for the whole scan (a machine "
                        "someone else is using: answering servers must not be recorded down)")
    p.add_argument("--lake-shape", choices=("real", "toy"), default="real",
                   help="the lake benchmark's tool lists: the corpora's (real) or the small generated ones (toy)")
    p.add_argument("--serve-calls", type=int, default=600,
                   help="route calls sent at once to `sevenmaps serve` (the serve benchmark)")
    p.add_argument("--only", choices=BENCH_PARTS,
                   help="run one benchmark: risk (the words-only estimate on real tools), risk-reach (what any "
                        "rule over their words, or every field of theirs but the annotations, can reach on them: a "
                        "model fit and scored by publisher), categories (the "
                        "category rule on real servers: how many the tools' verdict moved), lake, export (one "
                        "snapshot of the lake's signed day), tools, probe, registry (the whole registry, "
                        "simulated) or serve (a flood of route calls and the site beside it)")
    p.add_argument("--compare", action="store_true",
                   help="run nothing: name each figure of each part's latest run more than 20%% worse than the median "
                        "of its last three runs, and each outcome that drifted (exit 1 if any)")
    p.add_argument("--history", metavar="FILE",
                   help="the history each part appends its figures to and --compare reads (default: "
                        "$SEVENMAPS_BENCH_HISTORY, else .bench/history.jsonl)")
    p.set_defaults(handler="dev:cmd_bench")


def _check_commands(commands: dict[str, argparse.ArgumentParser]) -> None:
    p = commands["readiness"]
    p.add_argument("url", help="the endpoint's URL (https, unless --allow-private)")
    p.add_argument("--json", action="store_true", help="one JSON object with every line")
    p.add_argument("--remote-type", default="streamable-http", choices=["streamable-http", "sse"],
                   help="sse: a legacy HTTP+SSE endpoint, read over that transport")
    _endpoint_options(p)
    p.add_argument("--name", help="the server's registry name (io.github.ACCOUNT/... or com.example/...): its "
                   "namespace proof is then seen, as for a registry listing")
    p.add_argument("--repository", help="the server's repository URL (as its registry entry gives it), looked "
                   "up on the code host ($SEVENMAPS_CODEHOST_URL, token from $SEVENMAPS_GITHUB_TOKEN)")
    p.add_argument("--bad-call", action="store_true", help="step 5 of the rubric, off by default and never made "
                   "by the map: call one tool that declares readOnlyHint with deliberately bad arguments and "
                   "judge how legible its error is (a real tool call, under its own user agent, never 7Maps-bot: "
                   "only where the host's verified owner asked for it, `sevenmaps owner bad-call HOST`; not scored)")
    p.set_defaults(handler="checks:cmd_readiness")

    p = commands["readiness-skill"]
    p.add_argument("folder", help="the skill's folder (holding SKILL.md)")
    p.add_argument("--json", action="store_true", help="one JSON object with every line")
    p.add_argument("--repository", help="the skill's repository URL, looked up on the code host "
                   "($SEVENMAPS_CODEHOST_URL, token from $SEVENMAPS_GITHUB_TOKEN)")
    p.set_defaults(handler="checks:cmd_readiness_skill")

    p = commands["probe"]
    p.add_argument("url", help="the endpoint's URL (https, unless --allow-private)")
    p.add_argument("--json", action="store_true", help="one JSON object instead of text")
    p.add_argument("--remote-type", default="streamable-http", choices=["streamable-http", "sse"],
                   help="sse: a legacy HTTP+SSE endpoint, read over that transport")
    _endpoint_options(p)
    p.set_defaults(handler="checks:cmd_probe")

    p = commands["classify-tools"]
    p.add_argument("file", help="a JSON array of tool objects (or a tools/list result); - for stdin")
    p.add_argument("--ignore-annotations", action="store_true", help="decide from names and descriptions only")
    p.set_defaults(handler="checks:cmd_classify_tools")


def _pipeline_commands(commands: dict[str, argparse.ArgumentParser]) -> None:
    p = commands["run"]
    p.add_argument("--day", required=True, help="the UTC day, YYYY-MM-DD (must be today to scan)")
    p.add_argument("--registry", default="https://registry.modelcontextprotocol.io", help="registry base URL")
    p.set_defaults(handler="pipeline:cmd_run")

    p = commands["backfill"]
    p.add_argument("--from", dest="first", required=True, help="first UTC day, YYYY-MM-DD")
    p.add_argument("--to", dest="last", required=True, help="last UTC day, YYYY-MM-DD")
    p.add_argument("--no-sign", action="store_true", help="build the map only; leave signing to the schedule")
    p.add_argument("--signing-key", help="private key path (default: $SEVENMAPS_SIGNING_KEY, else "
                   "./.secrets/7maps-signing-key.pem)")
    p.set_defaults(handler="pipeline:cmd_backfill")

    p = commands["data-dictionary"]
    p.add_argument("--write", action="store_true", help="replace the generated part of docs/data-dictionary.md")
    p.set_defaults(handler="pipeline:cmd_data_dictionary")

    p = commands["ui"]
    p.add_argument("--port", type=int, default=3000, help="the UI's port on 127.0.0.1 (default 3000)")
    p.add_argument("--new", action="store_true", help="start over a new, empty lake (its folder made); without "
                   "it, a lake that is not there is refused")
    p.set_defaults(handler="pipeline:cmd_ui")


def _reading_commands(commands: dict[str, argparse.ArgumentParser]) -> None:
    commands["status"].set_defaults(handler="reading:cmd_status")

    p = commands["serve"]
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine "
                   "only; 0.0.0.0 every interface, as behind a proxy)")
    p.add_argument("--port", type=int, default=8765, help="the port (default 8765)")
    p.add_argument("--allowed-host", action="append", help="a Host header to accept besides the address served "
                   "(behind a proxy: its public name; repeatable). Others are refused (DNS-rebinding guard)")
    p.set_defaults(handler="serving:cmd_serve")

    p = commands["site"]
    p.add_argument("--day", help="YYYY-MM-DD (default: the latest built day)")
    p.set_defaults(handler="serving:cmd_site")

    p = commands["route"]
    p.add_argument("task", help="the task, in plain words")
    p.add_argument("--risk", choices=["green", "yellow", "red"], help="the risk the task needs (default: read from "
                   "the task's verbs)")
    p.add_argument("--limit", type=int, help="how many tools to return: a whole number from 1 to 20 (default 5), as "
                   "route's MCP tool takes it")
    p.add_argument("--day", help="YYYY-MM-DD (default: the latest built day)")
    p.set_defaults(handler="serving:cmd_route")

    p = commands["server"]
    p.add_argument("server", help="the endpoint: its 12-hex server_id, URL, server_key or registry name")
    p.add_argument("--day", help="YYYY-MM-DD (default: the latest built day, and today's checks so far)")
    p.add_argument("--json", action="store_true", help="server_status's whole answer, as JSON")
    p.set_defaults(handler="one_server:cmd_server")

    p = commands["sql"]
    p.add_argument("query", help="one DuckDB query over the warehouse's views (docs/data-dictionary.md), read-only")
    p.add_argument("--max-rows", type=int, default=40, help="rows shown as a table (default 40)")
    p.add_argument("--format", choices=["table", "csv", "json", "parquet"],
                   help="table (the default in the terminal), csv, json (one object per line) or parquet (needs "
                   "--out); with --out, the file's name says it (.csv, .json, .jsonl, .parquet) unless given")
    p.add_argument("--out", help="write the result to this file instead of the terminal")
    p.set_defaults(handler="reading:cmd_sql")

    commands["warehouse"].set_defaults(handler="reading:cmd_warehouse")


def _control_commands(commands: dict[str, argparse.ArgumentParser]) -> None:
    p = commands["opt-out"]
    p.add_argument("action", choices=["list", "add", "issue", "verify"], help="list the opt-outs; add HOST (the "
                   "operator records one); issue HOST (a form token); verify HOST (fetch its published token)")
    p.add_argument("host", nargs="?", help="the host (it covers every name under it)")
    p.add_argument("--note", help="for add: how the host asked (kept with the entry)")
    _endpoint_options(p)
    p.set_defaults(handler="controls:cmd_opt_out")

    p = commands["submit"]
    p.add_argument("url", help="the endpoint's https URL")
    _endpoint_options(p)
    p.set_defaults(handler="controls:cmd_submit")

    commands["submissions"].set_defaults(handler="controls:cmd_submissions")

    p = commands["owner"]
    p.add_argument("action", choices=["list", "issue", "verify", "note", "five-minute", "bad-call"],
                   help="what to do with the owner claims, as the description above says of each")
    p.add_argument("host", nargs="?", help="the host the owner controls (it covers every name under it)")
    p.add_argument("--text", help="for note: the owner's words (empty removes the note)")
    p.add_argument("--url", action="append",
                   help="for five-minute: an endpoint URL on the host (repeat; none stops them)")
    p.add_argument("--off", action="store_true", help="for bad-call: withdraw the owner's request")
    _endpoint_options(p)
    p.set_defaults(handler="controls:cmd_owner")


    _incident_command(commands["incident"])


INCIDENT_ACTIONS = {
    "list": ("the newest built day's live incidents and, apart from them, the queue of failure reports that nothing "
             "confirmed (kept for a person to review, never shown as an incident); every review applied"),
    "show": ("one endpoint's incident or queue entry with its evidence: the failure reports about each day of the "
             "look-back window, our own day codes and checks, and every review of it"),
    "close": ("close a live incident after review: it stops being live at once (the MCP server's answers, `incident "
              "list`) and says who closed it and why; the next builds keep it closed, and a failure confirmed about "
              "a later day opens a new incident. Signed days and their site stay as they were"),
    "confirm": ("confirm queued failure reports of the newest built day, only on a check of ours that day (hourly or "
                "five-minute) that did not answer and no newer one that answered: seed 000 lets our own fresh check "
                "or trusted reports confirm a failure, never a person's word alone. The check is kept as evidence"),
}


def _incident_command(p: argparse.ArgumentParser) -> None:
    p.description = ("A person's review of incidents, on the newest built day with every review applied (recorded "
                     "in <lake>/control/incident_reviews.parquet: who, when, why).")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, text in INCIDENT_ACTIONS.items():
        a = actions.add_parser(name, help=text)
        describe(a, f"incident {name}", text)
        a.add_argument("--lake", default=argparse.SUPPRESS, help="lake root (default: $SEVENMAPS_LAKE, else "
                       "data_lake/ of the checkout it runs from, or of the working directory when installed)")
        a.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show the traceback of an error")
        if name == "list":
            a.add_argument("--day", help="a built day, YYYY-MM-DD (default: the newest; an older day shows the "
                           "reviews made before it ended)")
            a.add_argument("--queue", action="store_true", help="only the failure reports awaiting review")
            a.add_argument("--json", action="store_true", help="one JSON object instead of text")
            continue
        a.add_argument("server", help="the endpoint: its URL, server_key, 12-hex server_id or registry name")
        if name == "show":
            a.add_argument("--day", help="a built day, YYYY-MM-DD (default: the newest)")
            continue
        a.add_argument("--by", required=True, metavar="NAME", help="who reviewed it (kept and shown with the "
                       "incident; at most 100 characters)")
        a.add_argument("--reason", required=True, metavar="TEXT", help="why, in plain words (kept and shown; at "
                       "most 500 characters, no control characters)")
    p.set_defaults(handler="incidents:cmd_incident")


def _integrity_commands(commands: dict[str, argparse.ArgumentParser]) -> None:
    p = commands["verify"]
    # Its epilog is laid out by hand (trust, examples, exit codes): printed as written, not reflowed.
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = VERIFY_EPILOG
    _trust_options(p)
    p.add_argument("--state", help="remember the checkpoint and key verified here, and next time require the "
                   "log to be consistent with them (a fork otherwise)")
    p.add_argument("--export", metavar="DIR", help="check a snapshot folder offline instead of the lake")
    p.set_defaults(handler="integrity:cmd_verify")

    p = commands["prove"]
    p.add_argument("path", help="the file as the roots' lines write it, relative to the lake root")
    p.add_argument("--out", help="write the proof to this file (name it .tlog-proof)")
    p.set_defaults(handler="integrity:cmd_prove")

    p = commands["verify-proof"]
    p.add_argument("file", help="the .tlog-proof file (`sevenmaps prove --out`)")
    _trust_options(p)
    p.add_argument("--data", help="also check that this file's bytes are the ones the logged line names")
    p.set_defaults(handler="integrity:cmd_verify_proof")

    p = commands["log"]
    p.add_argument("action", choices=["check", "sync"], help="check: re-derive every tile and the checkpoint; "
                   "sync: append the signed days the log lacks")
    _trust_options(p)
    p.add_argument("--signing-key", help="for sync: the private key (default: $SEVENMAPS_SIGNING_KEY, else "
                   ".secrets/7maps-signing-key.pem)")
    p.set_defaults(handler="integrity:cmd_log_check")

    p = commands["export"]
    p.add_argument("--day", required=True, help="first UTC day, YYYY-MM-DD")
    p.add_argument("--to", help="last UTC day (default: --day)")
    p.add_argument("--out", help="the folder to create (default: <lake>/exports/<day>[_<to>])")
    p.set_defaults(handler="integrity:cmd_export")

    p = commands["witness"]
    p.add_argument("--name", required=True, help="the witness's key name, e.g. witness.example.org/w1")
    p.add_argument("--key", required=True, help="its private key, ML-DSA-44 or Ed25519 (created if missing, "
                   "mode 0600: ML-DSA-44, as C2SP tlog-cosignature recommends, unless --ed25519)")
    p.add_argument("--ed25519", action="store_true", help="create an Ed25519 key (cosignature type 0x04) instead")
    p.add_argument("--log", action="append", required=True, metavar="VKEY",
                   help="a log to witness: its vkey (log/vkey), or a file holding it; repeatable")
    p.add_argument("--state", required=True, help="where it keeps the last checkpoint cosigned per log")
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=7380, help="the port (default 7380)")
    p.set_defaults(handler="integrity:cmd_witness")

    p = commands["keygen"]
    p.add_argument("--out", required=True, help="where to write the private key (outside the lake)")
    p.set_defaults(handler="integrity:cmd_keygen")
