"""Day manifests, hash-chained daily roots, Ed25519 signing and verification (DESIGN §4 "Signed roots")."""
