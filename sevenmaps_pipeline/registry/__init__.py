"""The official MCP registry: the list API client and the listing rules (what may be probed)."""
