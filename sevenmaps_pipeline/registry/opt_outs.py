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
import re
import secrets
from dataclasses import dataclass

import pyarrow as pa

from ..lake.control import ControlError, Refused, changes_control_file, control_characters, read_control_rows
from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths
from ..rules.hosts import connect_name, ends_in_a_number
from ..rules.psl import registrable_domain

OPT_OUT_PATH = "/.well-known/7maps-optout.txt"
# A token proves control only while it is fresh: each one issued lives this long (docs/operations.md).
TOKEN_DAYS = 7
MAX_TOKEN_FILE_BYTES = 4096
MAX_NOTE_CHARS = 1_000  # as an owner's note (registry/owners.py)
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\Z")
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
    """A host name as the registry keeps it: lower case, no trailing dot, no port, no scheme or path; one
    real host: dot-separated labels of letters, digits and hyphens (a unicode name in its IDNA form), not an
    IP address, and not a public suffix, which would stand for everyone's domains below it."""
    text = host.strip().lower()
    if "://" in text:
        text = text.split("://", 1)[1]
    text = text.split("/", 1)[0].split("@")[-1].rsplit(":", 1)[0].rstrip(".")
    if not text.isascii():  # the name httpx would connect to (IDNA 2008: `faß.de` is xn--fa-hia.de, not fass.de)
        # a URL's other parts would be cut away by the URL parser (`ü.evil.com#.victim.com`: helper-87)
        ascii_name = None if any(c in "#?%[]\\" or c.isspace() for c in text) else connect_name(text)
        if ascii_name is None:
            raise OptOutRegistryError(Refused.NOT_A_HOST, f"not a host name: {host[:100]!r}")
        text = ascii_name
    labels = text.split(".")
    if len(text) > 253 or len(labels) < 2 or not all(_LABEL.match(label) for label in labels):
        raise OptOutRegistryError(Refused.NOT_A_HOST, f"not a host name: {host[:100]!r} (letters, digits and "
                                  "hyphens in dot-separated labels)")
    if ends_in_a_number(text):  # an IP address as a browser reads it (127.1, 0x7f.0.0.1), valid or not
        raise OptOutRegistryError(Refused.NOT_A_HOST, f"{text} is an IP address, not a host name")
    if registrable_domain(text) is None:
        raise OptOutRegistryError(Refused.PUBLIC_SUFFIX, f"{text} is a public suffix (it stands for everyone's "
                                  "domains below it), not one host")
    return text


def read_opt_outs(lake: LakePaths) -> list[OptOut]:
    rows = read_control_rows(lake.opt_outs_file, "the opt-out registry", OptOutRegistryError,
                             "; no host is contacted until it is repaired", required=("host", "status"))
    return [OptOut(**{k: r.get(k) for k in SCHEMA.names}) for r in rows]


def opted_out_hosts(lake: LakePaths) -> frozenset[str]:
    """The hosts never to contact (each covers the names under it)."""
    return frozenset(o.host for o in read_opt_outs(lake) if o.status == "opted_out")


def _write(lake: LakePaths, entries: list[OptOut]) -> None:
    rows = [e.__dict__ for e in sorted(entries, key=lambda e: (e.host, e.status))]
    write_parquet(lake, lake.opt_outs_file, pa.Table.from_pylist(rows, SCHEMA))


@changes_control_file(lambda lake: lake.opt_outs_file)
def record_opt_out(lake: LakePaths, host: str, how: str, now: dt.datetime, note: str | None = None,
                   token: str | None = None) -> OptOut:
    """Opt a host out (kept as it was if it already is: the first date stands)."""
    if how not in HOWS:
        raise OptOutRegistryError(Refused.UNKNOWN_HOW, f"how must be one of {', '.join(HOWS)}, not {how!r}")
    if note is not None and len(note) > MAX_NOTE_CHARS:
        raise OptOutRegistryError(Refused.NOTE_TOO_LONG, f"the note has {len(note):,} characters; at most "
                                  f"{MAX_NOTE_CHARS:,}")
    if note is not None and control_characters(note):  # shown to the operator as written
        raise OptOutRegistryError(Refused.NOTE_CONTROL_CHARACTERS, "the note holds control characters (an escape, "
                                  "a line break): plain text on one line")
    host = normal_host(host)
    entries = read_opt_outs(lake)
    for entry in entries:
        if entry.host == host and entry.status == "opted_out":
            return entry
    requested = next((e.requested_at for e in entries if e.host == host), now)
    entry = OptOut(host, "opted_out", how, requested, now, token, note)
    _write(lake, [e for e in entries if e.host != host] + [entry])
    return entry


def new_token(kind: str) -> str:
    return f"7maps-{kind}-{secrets.token_urlsafe(24)}"


def token_expired(issued_at: dt.datetime, now: dt.datetime) -> bool:
    return now - issued_at > dt.timedelta(days=TOKEN_DAYS)


@changes_control_file(lambda lake: lake.opt_outs_file)
def issue_token(lake: LakePaths, host: str, now: dt.datetime) -> OptOut:
    """A new form token for the host, recorded as pending (it replaces one issued before: each request gets
    its own, valid for TOKEN_DAYS)."""
    host = normal_host(host)
    entries = read_opt_outs(lake)
    for entry in entries:
        if entry.host == host and entry.status == "opted_out":
            raise OptOutRegistryError(Refused.ALREADY_OPTED_OUT,
                                      f"{host} has already opted out ({entry.how}, {entry.opted_out_at})")
    entry = OptOut(host, "pending", "form", now, token=new_token("optout"))
    _write(lake, [e for e in entries if e.host != host] + [entry])
    return entry


def pending_token(lake: LakePaths, host: str, now: dt.datetime) -> str:
    """The host's pending form token, while it is fresh."""
    host = normal_host(host)
    for entry in read_opt_outs(lake):
        if entry.host == host and entry.status == "pending" and entry.token:
            if token_expired(entry.requested_at, now):
                raise OptOutRegistryError(Refused.TOKEN_EXPIRED, f"the form token for {host} was issued on "
                                          f"{entry.requested_at:%Y-%m-%d} and has expired ({TOKEN_DAYS} days): "
                                          f"`sevenmaps opt-out issue {host}` for a new one")
            return entry.token
    raise OptOutRegistryError(Refused.NO_TOKEN_ISSUED,
                              f"no form token was issued for {host}: `sevenmaps opt-out issue {host}` first")


def token_file_is(status: int | None, content_type: str | None, body: bytes, token: str) -> bool:
    """The proof: a 2xx text/plain answer whose body is the token alone (a trailing newline allowed). A
    page that merely contains it (an HTML page echoing what it was sent, a listing) proves nothing."""
    if status is None or not 200 <= status < 300:
        return False
    if (content_type or "").split(";", 1)[0].strip().lower() != "text/plain":
        return False
    return len(body) <= MAX_TOKEN_FILE_BYTES and body.decode("utf-8", "replace").strip() == token
