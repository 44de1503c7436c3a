"""The opt-out registry (docs/operations.md, "Opt-outs"): the hosts that asked never to be contacted, how
each asked and when, kept in the lake (`control/opt_outs.parquet`) and read by every check kind before it
contacts anything (the daily scan and its registry snapshot, the readiness run). robots.txt is read on
every visit as well; this registry is for the other ways a host asks.

- `operator`: the operator recorded it (an email, a ticket), with a note saying so;
- `form`: the form's proof. The operator issues a token for the host (`sevenmaps opt-out issue HOST`);
  the host publishes it at `https://HOST/.well-known/7maps-optout.txt`; once the file holds the token
  (`sevenmaps opt-out verify HOST`), the host is opted out. The token proves control of the host, so
  nobody can opt out a host they do not run.

An opted-out host, and every name under it, is never contacted again and drops off the map at its next
daily check; signed past days stay as they are. An unreadable registry stops a run rather than be read
as empty: a host that asked is never contacted because a file broke.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass

import pyarrow as pa

from ..lake.control import ControlError, Refused, read_control_rows
from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths

OPT_OUT_PATH = "/.well-known/7maps-optout.txt"
HOWS = ("operator", "form")
SCHEMA = pa.schema([
    pa.field("host", pa.string(), nullable=False),
    pa.field("status", pa.string(), nullable=False),  # opted_out | pending (a form token issued, not yet seen)
    pa.field("how", pa.string(), nullable=False),  # operator | form
    pa.field("requested_at", pa.timestamp("us", tz="UTC"), nullable=False),
    pa.field("opted_out_at", pa.timestamp("us", tz="UTC")),
    pa.field("token", pa.string()),  # the form token (public once the host publishes it)
    pa.field("note", pa.string()),
])


class OptOutRegistryError(ControlError):
    """The registry cannot be read or changed as asked."""


@dataclass(frozen=True)
class OptOut:
    host: str
    status: str
    how: str
    requested_at: dt.datetime
    opted_out_at: dt.datetime | None = None
    token: str | None = None
    note: str | None = None


def normal_host(host: str) -> str:
    """A host name as the registry keeps it: lower case, no trailing dot, no port, no scheme or path."""
    text = host.strip().lower()
    if "://" in text:
        text = text.split("://", 1)[1]
    text = text.split("/", 1)[0].split("@")[-1].rsplit(":", 1)[0].rstrip(".")
    if not text or any(c.isspace() for c in text) or "." not in text:
        raise OptOutRegistryError(Refused.NOT_A_HOST, f"not a host name: {host!r}")
    return text


def read_opt_outs(lake: LakePaths) -> list[OptOut]:
    rows = read_control_rows(lake.opt_outs_file, "the opt-out registry", OptOutRegistryError,
                             "; no host is contacted until it is repaired")
    return [OptOut(**{k: r.get(k) for k in SCHEMA.names}) for r in rows]


def opted_out_hosts(lake: LakePaths) -> frozenset[str]:
    """The hosts never to contact (each covers the names under it)."""
    return frozenset(o.host for o in read_opt_outs(lake) if o.status == "opted_out")


def _write(lake: LakePaths, entries: list[OptOut]) -> None:
    rows = [e.__dict__ for e in sorted(entries, key=lambda e: (e.host, e.status))]
    write_parquet(lake, lake.opt_outs_file, pa.Table.from_pylist(rows, SCHEMA))


def record_opt_out(lake: LakePaths, host: str, how: str, now: dt.datetime, note: str | None = None,
                   token: str | None = None) -> OptOut:
    """Opt a host out (kept as it was if it already is: the first date stands)."""
    if how not in HOWS:
        raise OptOutRegistryError(Refused.UNKNOWN_HOW, f"how must be one of {', '.join(HOWS)}, not {how!r}")
    host = normal_host(host)
    entries = read_opt_outs(lake)
    for entry in entries:
        if entry.host == host and entry.status == "opted_out":
            return entry
    requested = next((e.requested_at for e in entries if e.host == host), now)
    entry = OptOut(host, "opted_out", how, requested, now, token, note)
    _write(lake, [e for e in entries if e.host != host] + [entry])
    return entry


def issue_token(lake: LakePaths, host: str, now: dt.datetime) -> OptOut:
    """A form token for the host (the same one until it is verified), recorded as pending."""
    host = normal_host(host)
    entries = read_opt_outs(lake)
    for entry in entries:
        if entry.host == host:
            if entry.status == "opted_out":
                raise OptOutRegistryError(Refused.ALREADY_OPTED_OUT,
                                          f"{host} has already opted out ({entry.how}, {entry.opted_out_at})")
            return entry
    entry = OptOut(host, "pending", "form", now, token=f"7maps-optout-{secrets.token_urlsafe(24)}")
    _write(lake, entries + [entry])
    return entry


def pending_token(lake: LakePaths, host: str) -> str:
    host = normal_host(host)
    for entry in read_opt_outs(lake):
        if entry.host == host and entry.status == "pending" and entry.token:
            return entry.token
    raise OptOutRegistryError(Refused.NO_TOKEN_ISSUED,
                              f"no form token was issued for {host}: `sevenmaps opt-out issue {host}` first")


def file_holds_token(body: bytes, token: str) -> bool:
    """The published file holds the token on a line of its own (surrounding whitespace ignored)."""
    text = body[:4096].decode("utf-8", "replace")
    return any(line.strip() == token for line in text.splitlines())
