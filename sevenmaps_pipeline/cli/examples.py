"""What each command's `--help` shows under its options: examples a newcomer can run as written (the lake
from --lake, else $SEVENMAPS_LAKE, else ./data_lake; docs/operations.md "The command line"). A command
without examples here fails tests/test_cli_help.py."""

from __future__ import annotations

import argparse
import textwrap

EXAMPLES: dict[str, tuple[str, ...]] = {
    "demo": ("sevenmaps demo", "sevenmaps demo --synthetic --servers 400 --days 30 --seed 7 --lake /tmp/lake"),
    "synth": ("sevenmaps synth --servers 100000 --days 30 --seed 1 --lake /tmp/lake",),
    "run": ("sevenmaps run --day \"$(date -u +%F)\"",),
    "readiness": ("sevenmaps readiness https://mcp.example.com/mcp",
                  "sevenmaps readiness https://mcp.example.com/mcp --name com.example/weather --json"),
    "readiness-skill": ("sevenmaps readiness-skill ./skills/pdf --json",),
    "status": ("sevenmaps status", "sevenmaps status --lake /tmp/lake"),
    "serve": ("sevenmaps serve", "sevenmaps serve --host 0.0.0.0 --port 8765 --allowed-host map.example.org"),
    "site": ("sevenmaps site", "sevenmaps site --day 2026-11-20"),
    "route": ("sevenmaps route \"read the weather forecast for a city\"",
              "sevenmaps route \"send an email\" --risk red --limit 3"),
    "server": ("sevenmaps server 1a2b3c4d5e6f", "sevenmaps server https://mcp.example.com/mcp --json",
               "sevenmaps server com.example/weather --day 2026-11-20"),
    "opt-out": ("sevenmaps opt-out list", "sevenmaps opt-out add example.com --note \"asked by mail on 2026-11-02\""),
    "submit": ("sevenmaps submit https://mcp.example.com/mcp",),
    "submissions": ("sevenmaps submissions",),
    "owner": ("sevenmaps owner issue example.com", "sevenmaps owner verify example.com",
              "sevenmaps owner note example.com --text \"planned maintenance on Sundays\""),
    "incident": ("sevenmaps incident list", "sevenmaps incident show https://mcp.example.com/mcp"),
    "backfill": ("sevenmaps backfill --from 2026-11-01 --to 2026-11-07",),
    "probe": ("sevenmaps probe https://mcp.example.com/mcp",
              "sevenmaps probe http://127.0.0.1:8000/mcp --allow-private --json"),
    "classify-tools": ("sevenmaps classify-tools tools.json", "cat tools.json | sevenmaps classify-tools -"),
    "verify": ("sevenmaps verify --public-key 7maps.json",),
    "prove": ("sevenmaps prove curated/daily_status/day=2026-11-20/part-0.parquet --out status.tlog-proof",),
    "verify-proof": ("sevenmaps verify-proof status.tlog-proof --vkey \"$(cat trusted.vkey)\" --data part-0.parquet",),
    "log": ("sevenmaps log check", "sevenmaps log sync"),
    "export": ("sevenmaps export --day 2026-11-01 --to 2026-11-30",),
    "witness": ("sevenmaps witness --name witness.example.org/w1 --key w1.key --log \"$(cat data_lake/log/vkey)\" "
                "--state w1-state.json",),
    "keygen": ("sevenmaps keygen --out ~/.secrets/7maps-signing-key.pem",),
    "sql": ("sevenmaps sql \"SELECT code, count(*) FROM daily_status GROUP BY code\"",
            "sevenmaps sql \"SELECT * FROM tools\" --format parquet --out tools.parquet"),
    "warehouse": ("sevenmaps warehouse",),
    "data-dictionary": ("sevenmaps data-dictionary", "sevenmaps data-dictionary --write"),
    "ui": ("sevenmaps ui", "sevenmaps ui --port 3001 --lake /tmp/lake", "sevenmaps ui --new --lake /srv/7maps/lake"),
    "bench": ("sevenmaps bench", "sevenmaps bench --only risk"),
    "incident list": ("sevenmaps incident list", "sevenmaps incident list --queue --json"),
    "incident show": ("sevenmaps incident show 1a2b3c4d5e6f",),
    "incident close": ("sevenmaps incident close 1a2b3c4d5e6f --by ana --reason \"the owner fixed the certificate\"",),
    "incident confirm": ("sevenmaps incident confirm 1a2b3c4d5e6f --by ana --reason \"our hourly check failed "
                         "twice\"",),
}


def describe(p: argparse.ArgumentParser, name: str, text: str) -> None:
    """`p`'s help page: what it does (`text`, a sentence) and its examples, laid out as written. A command
    whose epilog is already laid out by hand (verify: trust, examples, exit codes) keeps it."""
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = textwrap.fill(text[0].upper() + text[1:].rstrip(".") + ".", width=100)
    if p.epilog is None:
        p.epilog = "examples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[name])
