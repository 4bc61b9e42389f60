"""tabwarden — a guarded bridge between MCP clients and your browser."""

__version__ = "0.1.0"
