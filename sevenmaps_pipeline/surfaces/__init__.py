"""What agents and people ask of the map: the route, the map's own MCP server and its operations log, and
report intake, as thin adapters over one built day (publishing/mapday.py) (docs/agents.md)."""
