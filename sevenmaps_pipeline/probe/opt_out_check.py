"""Token proofs at a host's well-known path: the form opt-out (registry/opt_outs.py,
`/.well-known/7maps-optout.txt`) and the owner claim (registry/owners.py, `/.well-known/7maps-owner.txt`).
The file is fetched through the prober's guarded client and must hold the token we issued on a line of its
own. It is read whatever robots.txt says: the host asked for this one request, as an owner asks for a check."""

from __future__ import annotations

from ..registry.opt_outs import OPT_OUT_PATH, file_holds_token
from .config import ProbeConfig
from .http import build_client
from .surfaces import fetch_document


async def token_proof(host: str, path: str, token: str, config: ProbeConfig) -> tuple[bool, str]:
    """(the file at https://HOST/PATH holds the token, what was seen)."""
    url = f"https://{host}{path}"
    async with build_client(config) as client:
        doc = await fetch_document(client, url, "text/plain", config.timeouts.well_known_per_origin, 4096)
    if doc.status != 200:
        return False, f"{url}: {doc.detail}"
    if file_holds_token((doc.body or "").encode(), token):
        return True, f"{url} holds the token"
    return False, f"{url} answered, without the token issued for {host} on a line of its own"


async def form_proof(host: str, token: str, config: ProbeConfig) -> tuple[bool, str]:
    """The form opt-out's proof."""
    return await token_proof(host, OPT_OUT_PATH, token, config)
