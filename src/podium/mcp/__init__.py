"""MCP: tools from MCP servers for Podium agents (``client.py``), and Podium apps served over MCP (``server.py``).

Needs the ``mcp`` extra (``pip install 'podium[mcp]'``); the ``mcp`` package loads when a server is connected.
"""

from podium.mcp.client import MCPError, MCPServer, MCPTool

__all__ = ["MCPError", "MCPServer", "MCPTool"]
