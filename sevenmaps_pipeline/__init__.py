"""sevenmaps-pipeline: a daily, signed map of every remote MCP server in the official MCP registry."""

__version__ = "0.1.0"
