"""Lookups of outside services (the code host, OSV, package registries, RDAP): each a client with a
configurable base URL, tested against a loopback fixture that serves the real API's shapes."""
