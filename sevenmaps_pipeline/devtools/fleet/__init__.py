"""The loopback fleet: real MCP servers (official `mcp` SDK) and misbehaving Starlette apps over HTTPS,
plus a registry, for the demo and the integration tests (docs/development.md, "The fleet")."""
