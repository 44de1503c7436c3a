"""Owner claims (docs/operations.md, "Owner claims"): a host's owner proves control of it with a token we
issue, published at `https://HOST/.well-known/7maps-owner.txt`. A verified owner may

- add a note in their own words beside each of their endpoints (shown beside the server's figures, never
  mixed into them: no figure, ranking or route reads it), and
- choose a few endpoints on the host (3, or $SEVENMAPS_FIVE_MINUTE_PER_OWNER: the same for everyone) for
  five-minute checks.

The claims live in `control/owners.parquet`: operator control files, not observations, so no signed root
covers them. Nothing about the person is kept: a host, a token, dates, the note and the chosen endpoints.
Verification buys nothing on the map itself (docs/methodology.md, "Placement is never bought"), except the
readiness rubric's own "namespace proven: a verified claim" line (docs/methodology.md, "Readiness").
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from dataclasses import dataclass
from urllib.parse import urlsplit

import pyarrow as pa

from ..lake.control import ControlError, Refused, changes_control_file, read_control_rows
from ..lake.keys import server_key
from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths
from .listing import carries_credentials, is_opted_out, redacted_url
from .opt_outs import TOKEN_DAYS, OptOutRegistryError, new_token, normal_host, token_expired

OWNER_PATH = "/.well-known/7maps-owner.txt"
FIVE_MINUTE_PER_OWNER_ENV = "SEVENMAPS_FIVE_MINUTE_PER_OWNER"
MAX_FIVE_MINUTE_ENDPOINTS = 3  # the default of $SEVENMAPS_FIVE_MINUTE_PER_OWNER
MAX_NOTE_CHARS = 1_000
SCHEMA = pa.schema([
    pa.field("host", pa.string(), nullable=False),
    pa.field("status", pa.string(), nullable=False),  # pending | verified
    pa.field("token", pa.string(), nullable=False),
    pa.field("requested_at", pa.timestamp("us", tz="UTC"), nullable=False),
    pa.field("verified_at", pa.timestamp("us", tz="UTC")),
    pa.field("five_minute", pa.list_(pa.string())),  # server_keys on the host, at most MAX_FIVE_MINUTE_ENDPOINTS
    pa.field("note", pa.string()),  # the owner's words, shown beside the host's endpoints
    pa.field("note_updated_at", pa.timestamp("us", tz="UTC")),
    # The owner asked for the rubric's bad-call step (a real tools/call) on their host's endpoints.
    pa.field("bad_call", pa.bool_()),
])


class OwnerClaimError(ControlError):
    """The claim cannot be read or changed as asked."""


@dataclass(frozen=True)
class OwnerClaim:
    host: str
    status: str
    token: str
    requested_at: dt.datetime
    verified_at: dt.datetime | None = None
    five_minute: tuple[str, ...] = ()
    note: str | None = None
    note_updated_at: dt.datetime | None = None
    bad_call: bool | None = None


def _host(host: str) -> str:
    try:
        return normal_host(host)
    except OptOutRegistryError as exc:
        raise OwnerClaimError(exc.kind, str(exc)) from None


def read_claims(lake: LakePaths) -> list[OwnerClaim]:
    rows = read_control_rows(lake.owners_file, "the owner claims", OwnerClaimError, required=("host", "status"))
    return [OwnerClaim(**{**{k: r.get(k) for k in SCHEMA.names}, "five_minute": tuple(r.get("five_minute") or ())})
            for r in rows]


def _write(lake: LakePaths, claims: list[OwnerClaim]) -> None:
    rows = [{**dataclasses.asdict(c), "five_minute": list(c.five_minute)} for c in sorted(claims, key=lambda c: c.host)]
    write_parquet(lake, lake.owners_file, pa.Table.from_pylist(rows, SCHEMA))


def claim_of(lake: LakePaths, host: str) -> OwnerClaim | None:
    host = _host(host)
    return next((c for c in read_claims(lake) if c.host == host), None)


@changes_control_file(lambda lake: lake.owners_file)
def issue_owner_token(lake: LakePaths, host: str, now: dt.datetime) -> OwnerClaim:
    """A new token for a host's claim, valid for TOKEN_DAYS (it replaces a pending one: each request gets its
    own); a verified claim is left as it is."""
    host = _host(host)
    claims = read_claims(lake)
    existing = next((c for c in claims if c.host == host), None)
    if existing is not None and existing.status == "verified":
        return existing
    claim = OwnerClaim(host, "pending", new_token("owner"), now)
    _write(lake, [c for c in claims if c.host != host] + [claim])
    return claim


def pending_claim(lake: LakePaths, host: str, now: dt.datetime) -> OwnerClaim:
    """The host's claim whose token is to be checked: issued, and still fresh (a verified one as it is)."""
    claim = claim_of(lake, host)
    if claim is None:
        raise OwnerClaimError(Refused.NO_TOKEN_ISSUED,
                              f"no owner token was issued for {host}: `sevenmaps owner issue {host}` first")
    if claim.status == "pending" and token_expired(claim.requested_at, now):
        raise OwnerClaimError(Refused.TOKEN_EXPIRED, f"the owner token for {claim.host} was issued on "
                              f"{claim.requested_at:%Y-%m-%d} and has expired ({TOKEN_DAYS} days): "
                              f"`sevenmaps owner issue {claim.host}` for a new one")
    return claim


@changes_control_file(lambda lake: lake.owners_file)
def mark_verified(lake: LakePaths, host: str, now: dt.datetime) -> OwnerClaim:
    """Record that the host's well-known file held its token (the caller fetched it: probe/opt_out_check.py
    `token_proof`)."""
    claim = claim_of(lake, host)
    if claim is None:
        raise OwnerClaimError(Refused.NO_TOKEN_ISSUED,
                              f"no owner token was issued for {host}: `sevenmaps owner issue {host}` first")
    if claim.status == "verified":
        return claim
    verified = dataclasses.replace(claim, status="verified", verified_at=now)
    _write(lake, [c for c in read_claims(lake) if c.host != claim.host] + [verified])
    return verified


def _verified(lake: LakePaths, host: str) -> OwnerClaim:
    claim = claim_of(lake, host)
    if claim is None or claim.status != "verified":
        raise OwnerClaimError(Refused.NO_VERIFIED_OWNER,
                              f"{_host(host)} has no verified owner: `sevenmaps owner issue` and `owner verify` first")
    return claim


@changes_control_file(lambda lake: lake.owners_file)
def set_note(lake: LakePaths, host: str, note: str, now: dt.datetime) -> OwnerClaim:
    """The owner's note, in their own words (plain text; an empty note removes it)."""
    claim = _verified(lake, host)
    text = " ".join(note.split())
    if len(text) > MAX_NOTE_CHARS:
        raise OwnerClaimError(Refused.NOTE_TOO_LONG,
                              f"the note has {len(text):,} characters; at most {MAX_NOTE_CHARS:,}")
    if any(ord(c) < 32 for c in text):
        raise OwnerClaimError(Refused.NOTE_CONTROL_CHARACTERS, "the note holds control characters")
    updated = dataclasses.replace(claim, note=text or None, note_updated_at=now)
    _write(lake, [c for c in read_claims(lake) if c.host != claim.host] + [updated])
    return updated


def five_minute_cap() -> int:
    """Endpoints an owner may choose for five-minute checks: $SEVENMAPS_FIVE_MINUTE_PER_OWNER (the same for
    every owner), else MAX_FIVE_MINUTE_ENDPOINTS."""
    value = os.environ.get(FIVE_MINUTE_PER_OWNER_ENV, "").strip()
    if not value:
        return MAX_FIVE_MINUTE_ENDPOINTS
    if not value.isdigit() or not 0 < int(value) <= 50:
        raise OwnerClaimError(Refused.BAD_SETTING,
                              f"${FIVE_MINUTE_PER_OWNER_ENV} must be a whole number from 1 to 50, not {value!r}")
    return int(value)


@changes_control_file(lambda lake: lake.owners_file)
def ask_bad_call(lake: LakePaths, host: str, asked: bool) -> OwnerClaim:
    """The verified owner asks for (or withdraws) the bad-call step on their host's endpoints: the one tool
    call 7Maps makes, only where the owner asked (docs/methodology.md, "The bad call")."""
    claim = _verified(lake, host)
    updated = dataclasses.replace(claim, bad_call=asked)
    _write(lake, [c for c in read_claims(lake) if c.host != claim.host] + [updated])
    return updated


def bad_call_asked(lake: LakePaths, url_host: str) -> OwnerClaim | None:
    """The verified claim whose owner asked for the bad call on this host (or a name under theirs), if any."""
    for claim in read_claims(lake):
        if claim.status == "verified" and claim.bad_call and is_opted_out(url_host, frozenset({claim.host})):
            return claim
    return None


@changes_control_file(lambda lake: lake.owners_file)
def choose_five_minute(lake: LakePaths, host: str, urls: list[str]) -> OwnerClaim:
    """The owner's endpoints for five-minute checks: on the host (or a name under it), at most
    five_minute_cap(); an empty list stops them."""
    claim = _verified(lake, host)
    keys: list[str] = []
    for url in urls:
        if not url.lower().startswith("https://") or carries_credentials(url):
            raise OwnerClaimError(Refused.NOT_AN_HTTPS_URL,
                                  f"{redacted_url(url)!r}: an https URL without credentials, please")
        name = (urlsplit(url).hostname or "").lower()
        if not is_opted_out(name, frozenset({claim.host})):  # the same host, or a name under it
            raise OwnerClaimError(Refused.NOT_THEIR_HOST,
                                  f"{url} is not on {claim.host}: an owner chooses endpoints of their own host")
        key = server_key(url)
        if key not in keys:
            keys.append(key)
    cap = five_minute_cap()
    if len(keys) > cap:
        raise OwnerClaimError(Refused.TOO_MANY_ENDPOINTS,
                              f"{len(keys)} endpoints chosen; five-minute checks are for at most {cap} per owner "
                              "(the same for everyone)")
    updated = dataclasses.replace(claim, five_minute=tuple(keys))
    _write(lake, [c for c in read_claims(lake) if c.host != claim.host] + [updated])
    return updated


def five_minute_keys(lake: LakePaths) -> dict[str, str]:
    """server_key -> the verified owner's host, for every endpoint chosen for five-minute checks."""
    return {key: c.host for c in read_claims(lake) if c.status == "verified" for key in c.five_minute}


def verified_owner_of(claims: list[OwnerClaim], url_host: str, day: dt.date) -> OwnerClaim | None:
    """The verified claim covering this host (the host, or a name under the claimed one), verified on or before
    `day` (UTC), so a day rebuilt later reads the claims it could have read then. The readiness rubric counts
    it for "namespace proven: a verified claim" (docs/methodology.md, "Readiness": the namespace line)."""
    for claim in claims:
        if (claim.status == "verified" and claim.verified_at is not None and claim.verified_at.date() <= day
                and is_opted_out(url_host, frozenset({claim.host}))):
            return claim
    return None
