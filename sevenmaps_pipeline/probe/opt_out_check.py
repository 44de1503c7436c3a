"""Token proofs at a host's well-known path: the form opt-out (registry/opt_outs.py,
`/.well-known/7maps-optout.txt`) and the owner claim (registry/owners.py, `/.well-known/7maps-owner.txt`).
The file is fetched through the prober's guarded client and must be the token we issued, alone, served as
text/plain with a 2xx status. It is read whatever robots.txt says: the host asked for this one request, as
an owner asks for a check."""

from __future__ import annotations

from ..registry.opt_outs import MAX_TOKEN_FILE_BYTES, OPT_OUT_PATH, token_file_is
from .config import ProbeConfig
from .http import build_client
from .surfaces import fetch_document


async def token_proof(host: str, path: str, token: str, config: ProbeConfig) -> tuple[bool, str]:
    """(the file at https://HOST/PATH holds the token, what was seen)."""
    url = f"https://{host}{path}"
    async with build_client(config) as client:
        doc = await fetch_document(client, url, "text/plain", config.timeouts.well_known_per_origin,
                                   MAX_TOKEN_FILE_BYTES)
    if doc.status is None or not 200 <= doc.status < 300:
        return False, f"{url}: {doc.detail}"
    if token_file_is(doc.status, doc.content_type, (doc.body or "").encode(), token):
        return True, f"{url} is the token"
    return False, (f"{url} answered ({doc.content_type or 'no content type'}), but not with the token issued for "
                   f"{host} alone as text/plain")


async def form_proof(host: str, token: str, config: ProbeConfig) -> tuple[bool, str]:
    """The form opt-out's proof."""
    return await token_proof(host, OPT_OUT_PATH, token, config)
