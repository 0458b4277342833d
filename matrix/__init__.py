"""mcp-matrix: how every real MCP client will treat your server's tools."""

__version__ = "0.1.0"
