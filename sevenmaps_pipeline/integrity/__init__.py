"""Day manifests, hash-chained daily roots, Ed25519 signing and verification (docs/verifying.md)."""
