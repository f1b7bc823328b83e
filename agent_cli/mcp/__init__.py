"""MCP servers (Model Context Protocol) through the official `mcp` SDK: their tools join every
agent's tool list as `mcp__<server>__<tool>`, behind the permission gate."""
