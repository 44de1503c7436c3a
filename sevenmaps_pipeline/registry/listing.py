"""The listing rules: which registry remotes may be probed, and why each other one is skipped.

The methodology's `scope.skipped` (docs/methodology.md, "The prober"): sse-only remotes, templated
addresses, non-https addresses, IP addresses, localhost and private names, opted-out hosts (robots.txt is
read per origin by the prober); and URLs that carry credentials (userinfo, or a query parameter named as a
secret: `?api_key=`), since 7Maps-bot never sends credentials: such a URL is never contacted and is stored
redacted. A public name that resolves to a
non-public address is refused later, at connect time (probe/netguard.py), and skipped with SkipReason.NON_PUBLIC.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import json
import re
import unicodedata
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ..rules.hosts import FULL_STOPS, PRIVATE_SUFFIXES, connect_name, ip_literal, whatwg_ipv4


class SkipReason(enum.StrEnum):
    """Why a listing is not contacted (the methodology's `scope.skipped`), each a named kind whose value is
    the text stored in `skip_reason`."""

    SSE_ONLY = "sse-only remote"
    TEMPLATED = "templated URL"
    NOT_HTTPS = "non-https URL"
    IP = "IP address"
    PRIVATE = "localhost or private name"
    OPTED_OUT = "host opted out"
    ROBOTS = "robots.txt disallows 7Maps-bot"
    CREDENTIALS = "credentials in URL"
    NON_PUBLIC = "resolves to a non-public address"


class Malformed(enum.StrEnum):
    """Why a registry entry or remote is not a listing at all."""

    NOT_AN_OBJECT = "entry is not an object"
    SERVER_NOT_AN_OBJECT = "entry.server is not an object"
    NO_VALID_NAME = "entry has no valid name"
    REMOTES_NOT_A_LIST = "remotes is not a list"
    REMOTE_NOT_AN_OBJECT = "remote is not an object"
    NOT_KEYABLE = "URL cannot be keyed"
    NO_URL = "remote has no URL"
    UNKNOWN_TYPE = "unknown remote type"
    UNPARSEABLE = "unparseable URL"
    NO_HOST = "URL has no host"
    TOO_DEEP = "entry nests too deeply to be read"
    NOT_HTTP = "not an http(s) URL"  # an owner's own check (--allow-private) takes plain http too, nothing else


@dataclass(frozen=True)
class ListingDecision:
    """What the listing rules decide for one remote: probe it, skip it (`kind`: a SkipReason) or set it aside
    as malformed (`kind`: a Malformed); `text` is the line stored as its skip_reason."""

    verdict: str  # probe | skip | malformed
    kind: SkipReason | Malformed | None = None
    detail: str | None = None  # what the text adds to the kind (the remote type given, the parser's words)

    @property
    def text(self) -> str | None:
        if self.kind is None:
            return None
        return str(self.kind) if self.detail is None else f"{self.kind}{self.detail}"


PROBE = ListingDecision("probe")
REDACTED = "REDACTED"
# userinfo (`user:secret@`) in any http(s) URL inside a text: what is stored in its place.
_USERINFO = re.compile(r"(?i)\b(https?:(?://|\\/\\/))[^/\\\s\"'?#]*@")


# An http(s) URL's userinfo as a browser may read it: after the scheme and any slashes or backslashes, everything up
# to the last "@" before the path, whatever it holds (a backslash, a space, quotes), slashes or none
# (`https:user:pw@host`). Only http(s): "Slack: mention @users" is prose, not a URL.
_URL_USERINFO = re.compile(r"(?is)^(\s*https?:[/\\]*)(?![/\\])[^/?#]*@")
# userinfo of a URL of any scheme written with "//" inside a text (`postgres://user:pw@db`).
_ANY_SCHEME_USERINFO = re.compile(r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*://)[^/\\\s\"'?#@]*@")
# A secret a listing's JSON may carry outside a URL: the value of a header or variable whose name says it is one,
# and an Authorization value (a long token with a digit) in any text.
_SECRET_NAME = re.compile(r"(?i)auth|token|key|secret|cookie|passw|session|credential"
                          r"|(?:^|[^a-z])(?:pass|pw)(?:$|[^a-z])|(?-i:[A-Za-z0-9]P(?:ass|w)(?:$|[^a-z]))")
# An all-caps name has no word boundaries to read (`DBPASS`, `MYSQLPW`): `PASS` or `PW` ending a word of it counts
# (status-1.7), the price being `BYPASS` and `COMPASS`, whose URLs are skipped (docs/changelog.md).
_ALL_CAPS_PASS = re.compile(r"(?:PASS|PW)(?![A-Z])")
_LOWERCASE = re.compile(r"[a-z]")
# A parameter whose name ends in a secret's name (`?api_key=`, `&access_token=`, `;sig=`, `X-Amz-Signature=`, read
# percent-decoded too), with its value: a credential as userinfo is (status-1.5): the URL is never contacted and the
# value is stored REDACTED. Since status-1.6 also a secret's name numbered, versioned or as an array (`key1`,
# `token_v2`, `apikey[]`), and `pass` or `pw` as a word of their own (`?pw=`, `db_pass`, `userPass`; never the end of
# another word: `bypass`, `compass`): docs/changelog.md.
_SECRET_PARAMETER = (r"(?:(?:key|token|secret|passw(?:or)?d|pwd|passphrase|auth|authorization|credentials?|creds?"
                     r"|bearer|signature|sig|jwt|session(?:_?id)?)"
                     r"|(?:(?<=^)|(?<=[^a-z0-9])|(?-i:(?<=[a-z0-9])(?=P))|(?-i:(?<=[A-Z])(?=P[a-z])))(?:pass|pw))"
                     r"(?:[_.-]?v?[0-9]+)?(?:\[[^\]]{0,32}\]){0,4}")  # bounded: linear in a hostile name
_SECRET_PARAMETER_NAME = re.compile(r"(?ais).*?" + _SECRET_PARAMETER)  # ASCII case only: `ſig` is no `sig`
_ALL_CAPS_PARAMETER_NAME = re.compile(r"(?as).*?(?:PASS|PW)(?:[_.-]?V?[0-9]+)?(?:\[[^\]]{0,32}\]){0,4}")
# A parameter (name=value) after "?", "&", ";" or "#" (a fragment's, where OAuth puts a token) in text: its value
# ends at the next separator, white space or a quote (prose goes on after it); a name may hold a tab or a line
# break, which a URL parser drops. In a URL itself a value runs further (`_redact_url_parameters`).
_PARAMETER = re.compile(r"([?&;#])((?:[^?&;#=\s\"'<>]|[\t\r\n])*)=([^?&;#\s\"'<>]*)")
_TAB_OR_NEWLINE = re.compile(r"[\t\r\n]")  # what a URL parser drops (urlsplit, WHATWG)
_URL_LIKE = re.compile(r"(?i)[a-z][a-z0-9+.-]*:\S*")
_AUTH_VALUE = re.compile(r"(?i)\b(bearer|basic)(\s+)(?=[a-z0-9._~+/=-]*\d)[a-z0-9._~+/=-]{16,}")


def carries_credentials(url: str) -> bool:
    """Whether a URL carries a credential: userinfo (`user:pw@`), or a parameter named as a secret with a value,
    in its query or its path (`?api_key=...`, `;sig=...`; a name percent-encoded, `api%5Fkey`, read decoded).
    7Maps-bot never sends credentials: such a URL is never contacted."""
    return has_userinfo(url) or _secret_parameter(url)


def _secret_parameter(url: str, fragment: bool = False) -> bool:
    """Whether a parameter named as a secret has a value (other than REDACTED) in what a request sends of the URL,
    or with `fragment`, anywhere in it (what is stored)."""
    read = _TAB_OR_NEWLINE.sub("", url)
    read = read.replace("#", "&", 1) if fragment else read.split("#", 1)[0]  # a fragment's first parameter too
    # Two readings: the text's (a name after any separator) and a URL parser's (a value to the next `&`).
    return any(_is_secret(m) and m.group(3) != REDACTED for m in _PARAMETER.finditer(read)) or (
        _redact_url_parameters(read) != read)


def _is_secret(parameter: re.Match[str]) -> bool:
    """A parameter named as a secret (its name read percent-decoded too), with a value."""
    return bool(parameter.group(3)) and _secret_name(parameter.group(2))


# A name's bracketed keys (`config[api_key]`, `auth[token][0]`): each is read as a name of its own (status-1.6).
_BRACKETED = re.compile(r"\[([^\[\]]{1,64})\]")


def _secret_name(name: str) -> bool:
    read = unquote(_TAB_OR_NEWLINE.sub("", name))
    return any(_names_a_secret_parameter(each) for each in (read, *_BRACKETED.findall(read)))


def _names_a_secret_parameter(name: str) -> bool:
    return _SECRET_PARAMETER_NAME.fullmatch(name) is not None or (
        _LOWERCASE.search(name.partition("[")[0]) is None and _ALL_CAPS_PARAMETER_NAME.fullmatch(name) is not None)


def _names_a_secret(name: object) -> bool:
    """Whether a header's or a variable's name says its value is a secret (`X-Api-Key`, `DB_PASS`, `DBPASS`)."""
    if not isinstance(name, str):
        return False
    return _SECRET_NAME.search(name) is not None or (
        _LOWERCASE.search(name) is None and _ALL_CAPS_PASS.search(name) is not None)


def _redact_url_parameters(url: str) -> str:
    """A URL with the value of each parameter named as a secret REDACTED where it stands, as a URL parser reads the
    value: in the query and the fragment it runs to the next `&` (a secret in a `;`-separated piece, to it too); in
    the path, to the next `;`, `&` or `/`."""
    head, hash_sign, fragment = url.partition("#")
    head, question_mark, query = head.partition("?")
    after_scheme = head.find("://") + 3 if "://" in head else 0
    slash = head.find("/", after_scheme)
    authority, path = (head, "") if slash < 0 else (head[:slash], head[slash:])
    # a segment that is itself `name=value` is one too (`/mcp/api_key=...`, status-1.7)
    path = "/".join(_redacted_after_secret(segment, ";&", named_at_start=True) for segment in path.split("/"))
    query, fragment = ("&".join(_redacted_after_secret(piece, ";", named_at_start=True) for piece in part.split("&"))
                       for part in (query, fragment))
    return authority + path + question_mark + query + hash_sign + fragment


def _redacted_after_secret(piece: str, separators: str, named_at_start: bool) -> str:
    """`piece` with the value of its first `name=value` (after one of `separators`, or at its start when
    `named_at_start`) whose name is a secret's REDACTED, and all that follows it in `piece`: a parser may read
    that as the value."""
    starts = [0] if named_at_start else []
    starts += [m.end() for m in re.finditer(f"[{separators}]", piece)]
    for start in starts:
        name, equals, _ = re.split(f"[{separators}]", piece[start:], maxsplit=1)[0].partition("=")
        rest = piece[start + len(name) + 1:]
        if equals and rest and rest != REDACTED and _secret_name(name):
            return piece[:start + len(name) + 1] + REDACTED
    return piece


def _redact_parameters(text: str) -> str:
    """Each parameter named as a secret in a text, its value REDACTED (one already REDACTED left as it is)."""
    return _PARAMETER.sub(lambda m: f"{m.group(1)}{m.group(2)}={REDACTED}"
                          if _is_secret(m) and not m.group(3).startswith(REDACTED) else m.group(0), text)


def has_userinfo(url: str) -> bool:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "@" in url
    return "@" in parts.netloc or _URL_USERINFO.match(url) is not None


def redacted_url(url: str) -> str:
    """A listed URL as it may be stored: its userinfo, in any form a browser may read as one, and the value of a
    parameter named as a secret made REDACTED; one the patterns do not reach (a tab or a line break inside its
    scheme, which a URL parser drops) is rebuilt from its parts without its userinfo."""
    secret_parameter = _secret_parameter(url, fragment=True)
    if not secret_parameter and not has_userinfo(url):
        return url  # nothing to redact: stored as listed
    if secret_parameter:  # read as a URL parser reads it (a tab or a line break dropped), then as text reads it
        url = _redact_parameters(_redact_url_parameters(_TAB_OR_NEWLINE.sub("", url)))
    redacted = _redact_credentials(_URL_USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", url, count=1))
    if redacted != url or not has_userinfo(url):
        return redacted
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return REDACTED
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, f"{REDACTED}@{host}", parts.path, parts.query, parts.fragment))


def redact_text(text: str) -> str:
    """Free text as it may be stored: the userinfo of every URL in it (http(s) in any spelling, any scheme written
    with "//"), the value of a query parameter named as a secret, and a long Bearer or Basic token made REDACTED."""
    return _redact_parameters(_redact_credentials(text))


def redact_json_text(text: str) -> str:
    """A server's answer as it may be stored, its credentials REDACTED, and still the JSON it was: a JSON text is
    redacted string by string, each read with its escapes decoded (`\\u0040` is an `@`), a string found secret by
    `redact_value` or as the value of a key named as a secret (`"password": ...`, `{"name": "X-Api-Key", "value":
    ...}`, as in a registry entry) rewritten, and every other byte kept as sent (numbers, a key given twice); a text
    that is no JSON is redacted as text."""
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or too deep to read: as text
        return redact_text(text)
    secrets: set[str] = set()
    _secret_values(parsed, secrets)

    def redacted(token: re.Match[str]) -> str:
        value = json.loads(token.group(0))
        new = REDACTED if value in secrets else redact_value(value)
        if new == value:
            return token.group(0)
        # Non-ASCII kept (an ASCII escape would multiply a long text past the stored cut); a lone surrogate escaped.
        written = json.dumps(new, ensure_ascii=False)
        return written if not _LONE_SURROGATE.search(written) else json.dumps(new)

    return _JSON_STRING.sub(redacted, text)


# A JSON string token of a text that parses as JSON: its escapes are the only backslashes, so it ends at the first
# quote no backslash escapes (linear: no nested repetition).
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _secret_values(node: Any, found: set[str], depth: int = 0) -> None:
    """The strings of a parsed JSON document that are secrets by where they stand: the value of a key named as a
    secret, and the `value` of an object whose `name` is one or that is marked `isSecret` (redacted_entry's rule)."""
    if depth > 200:
        return
    if isinstance(node, list):
        for item in node:
            _secret_values(item, found, depth + 1)
    elif isinstance(node, dict):
        named = _names_a_secret(node.get("name"))
        if "value" in node and isinstance(node["value"], str) and node["value"] and (
                named or node.get("isSecret") is True or node.get("is_secret") is True):
            found.add(node["value"])
        for key, value in node.items():
            if isinstance(value, str) and isinstance(key, str) and _secret_name(key):
                if value:  # an empty one hides nothing, and every empty string would go with it
                    found.add(value)
            else:
                _secret_values(value, found, depth + 1)


def _redact_credentials(text: str) -> str:
    """The text with every URL's userinfo and any long Bearer or Basic token REDACTED (its parameters as written)."""
    text = _ANY_SCHEME_USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", redact_userinfo(text))
    return _AUTH_VALUE.sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)


def redacted_entry(entry: Any) -> Any:
    """A registry entry as it may be stored: every URL in it redacted as `redacted_url`, any other text as
    `redact_text`, and the value of a header or variable marked `isSecret` or named as a secret (Authorization,
    X-Api-Key, OPENAI_API_KEY, ...) REDACTED. RecursionError when it nests too deeply to walk (the caller lists it
    malformed)."""
    if isinstance(entry, str):
        return redact_value(entry)
    if isinstance(entry, list):
        return [redacted_entry(item) for item in entry]
    if not isinstance(entry, dict):
        return entry
    secret = "value" in entry and (entry.get("isSecret") is True or entry.get("is_secret") is True or (
        _names_a_secret(entry.get("name"))))
    return {redacted_entry(key) if isinstance(key, str) else key: REDACTED if secret and key == "value"
            else redacted_url(value) if key == "url" and isinstance(value, str)  # read as a URL, as stored
            else redacted_entry(value) for key, value in entry.items()}


# An HTTP auth-param (RFC 9110 11.2: `name=token` or `name="quoted"`), as a WWW-Authenticate challenge carries them.
_AUTH_PARAM = re.compile(r"""(?<![A-Za-z0-9!#$%&'*+.^_`|~-])([A-Za-z0-9!#$%&'*+.^_`|~-]+)(\s*=\s*)"""
                         r"""("(?:[^"\\]|\\.)*"|[^\s,"]*)""")


def redact_auth_params(header: str) -> str:
    """A WWW-Authenticate (or any auth) header as it may be stored: each auth-param named as a secret
    (`access_token="..."`, `token=...`) REDACTED, its quotes kept; the others, URLs in them included, for
    `redact_text` to read."""
    def one(m: re.Match[str]) -> str:
        if not _secret_name(m.group(1)) or m.group(3) in ("", '""', REDACTED, f'"{REDACTED}"'):
            return m.group(0)
        value = f'"{REDACTED}"' if m.group(3).startswith('"') else REDACTED
        return f"{m.group(1)}{m.group(2)}{value}"
    return _AUTH_PARAM.sub(one, header)


def redact_value(text: str) -> str:
    """A string of an entry or an answer as it may be stored: a URL as `redacted_url`, any other text as
    `redact_text`."""
    if has_userinfo(text):
        return redacted_url(text)
    # A URL of any scheme, as a parser reads it (tabs and line breaks dropped), with a secret parameter: its values
    # redacted as a URL's; prose (white space in it) as text.
    candidate = _TAB_OR_NEWLINE.sub("", text).strip()
    if _URL_LIKE.fullmatch(candidate) and _secret_parameter(candidate, fragment=True):
        return redacted_url(candidate)
    return redact_text(text)


def redact_userinfo(text: str) -> str:
    """The text with the userinfo of every http(s) URL in it replaced by REDACTED (a URL in a registry
    entry's JSON included, slashes escaped or not): credentials are never stored (the methodology's `never`)."""
    return _USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", text)


def is_private_name(host: str) -> bool:
    if host in ("localhost", "") or "." not in host:
        return True
    return any(host.endswith(s) or host == s[1:] for s in PRIVATE_SUFFIXES)


def is_opted_out(host: str, opted_out: Collection[str]) -> bool:
    """The host, or a name it is under, opted out (an opt-out covers every name under the host), in any of the forms
    an internationalised name is written in."""
    names = _opted_names(opted_out if isinstance(opted_out, frozenset) else frozenset(opted_out))
    return any(".".join(labels[i:]) in names for form in _host_forms(host)
               for labels in (form.split("."),) for i in range(len(labels)))


@functools.lru_cache(maxsize=64)
def _opted_names(opted_out: frozenset[str]) -> frozenset[str]:
    """Every form of every opted-out name, once per set (a day's scan asks for each of its listings)."""
    return frozenset(form for name in opted_out for form in _host_forms(name))


@functools.lru_cache(maxsize=65_536)
def _host_forms(host: str) -> tuple[str, ...]:
    """A host name as written (lower case, any full stop as ".", no trailing dot), and, when it is internationalised,
    its unicode form (NFC), the ASCII name httpx connects to (IDNA 2008, UTS 46: `faß.de` is `xn--fa-hia.de`) and IDNA
    2003's (`fass.de`, the form opt-outs were stored in before status-1.7: helper-87). A registry may list any of
    them: an opt-out of one is an opt-out of all, erring toward never contacting (`fass.de` and `faß.de` are two
    domains) (docs/operations.md, "Opt-outs")."""
    host = host.lower().translate(FULL_STOPS).rstrip(".")
    if host.isascii() and "xn--" not in host:
        return (host,)
    forms = {host}
    try:  # each ACE label decoded alone: Python's codec refuses one IDNA 2003 would write otherwise (`xn--fa-hia`)
        text = unicodedata.normalize("NFC", ".".join(
            label[4:].encode("ascii").decode("punycode") if label.startswith("xn--") else label
            for label in host.split(".")))
    except UnicodeError:
        return tuple(forms)
    if "" in text.split("."):
        return tuple(forms)
    forms.add(text)
    if (ascii_name := connect_name(text)) is not None:
        forms.add(ascii_name)
    with contextlib.suppress(UnicodeError):
        forms.add(text.encode("idna").decode("ascii").lower())
    return tuple(forms)


def listing_decision(url: str | None, remote_type: str | None, *, opted_out: Collection[str] = (),
                     host_map: Mapping[str, int] | None = None) -> ListingDecision:
    """Whether one registry remote is probed, skipped (and why) or malformed (and why).

    Names in `host_map` (demo and test configuration only) are the fleet's, so they are not private."""
    if not isinstance(url, str) or not url.strip():
        return ListingDecision("malformed", Malformed.NO_URL)
    if remote_type not in ("streamable-http", "sse"):
        return ListingDecision("malformed", Malformed.UNKNOWN_TYPE, f" {remote_type!r}")
    if "{" in url or "}" in url:
        return ListingDecision("skip", SkipReason.TEMPLATED)
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError as exc:
        return ListingDecision("malformed", Malformed.UNPARSEABLE, f": {exc}")
    if "@" in parts.netloc or carries_credentials(url):  # never contacted
        return ListingDecision("skip", SkipReason.CREDENTIALS)
    if parts.scheme.lower() != "https":
        return ListingDecision("skip", SkipReason.NOT_HTTPS)
    host = (parts.hostname or "").lower().rstrip(".")
    if not host.isascii():  # every rule reads the name we would connect to (`127.0.0.1。` is 127.0.0.1: helper-86)
        host = connect_name(host) or host.translate(FULL_STOPS).rstrip(".")
    if not host:
        return ListingDecision("malformed", Malformed.NO_HOST)
    try:  # a host a browser reads as IPv4 (127.1, 0x7f.0.0.1, 2130706433) is an IP address too
        numeric = whatwg_ipv4(host)
    except ValueError as exc:
        return ListingDecision("malformed", Malformed.UNPARSEABLE, f": {exc}")
    if numeric is not None or ip_literal(host):
        return ListingDecision("skip", SkipReason.IP)
    # The fleet's map is normalised already (probe.config.HostMap): look the name up, and normalise the
    # keys only when it is not found (never once per listing for every name).
    mapped = host_map is not None and (host in host_map or host in {h.lower().rstrip(".") for h in host_map})
    if not mapped and is_private_name(host):
        return ListingDecision("skip", SkipReason.PRIVATE)
    if is_opted_out(host, opted_out):
        return ListingDecision("skip", SkipReason.OPTED_OUT)
    if remote_type == "sse":  # last: only a public, permitted SSE endpoint is opened (and kept off the map)
        return ListingDecision("skip", SkipReason.SSE_ONLY)
    return PROBE
