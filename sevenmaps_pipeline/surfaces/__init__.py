"""What agents and people read: the route, locks and change feeds, the map's own MCP server, badges, lists
and the static site, as pure query functions over one built day (surfaces/mapday.py) with thin adapters
(docs/agents.md)."""
