"""The JSON-RPC lines an MCP client writes to a server's stdin before it measures anything: the
handshake (``initialize``, then ``notifications/initialized``) and ``tools/list``, one JSON
object a line. The bench's stdio clients (bench/toolslist.py, bench/coldstart.py) and the tests
that meet ``tabwarden mcp`` where a client does (tests/mcp_server/stdio_session.py) all speak
them from here. Pure: no I/O."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

#: The protocol version every client here asks for.
PROTOCOL_VERSION = "2025-11-25"
#: The notification that ends the handshake.
INITIALIZED: Mapping[str, Any] = {"jsonrpc": "2.0", "method": "notifications/initialized"}
#: The tool list request, after the handshake (its answer carries id 2).
TOOLS_LIST: Mapping[str, Any] = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def initialize(client: str) -> dict[str, Any]:
    """The ``initialize`` request (id 1) of a client called ``client``."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": client, "version": "1"},
        },
    }


def line(message: Mapping[str, Any]) -> bytes:
    """``message`` as the one line it travels as."""
    return (json.dumps(message) + "\n").encode()
