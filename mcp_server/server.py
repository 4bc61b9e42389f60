"""``tabwarden mcp`` — the MCP server an agent spawns over stdio (hop 1).

stdout carries JSON-RPC only; every log line goes to stderr. Each tool either returns its
structured result or an error result whose ``structuredContent.error`` carries a stable ``code``
from the shared table and a one-line ``hint``. A tool never hangs: the bridge client has
deadlines for connecting, the handshake and every call.
"""

from __future__ import annotations

import logging
import sys
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from tabwarden import __version__
from tabwarden.errors import TabwardenError, hint_for
from tabwarden.mcp_server.bridge_client import BridgeClient

log = logging.getLogger("tabwarden.mcp")

INSTRUCTIONS = (
    "tabwarden bridges you to the person's own browser through a guarded channel. "
    "Call bridge_status first if a tool reports extension_not_connected. "
    "Every error result carries structuredContent.error.code and a hint."
)


class Tab(BaseModel):
    id: int = Field(description="Chrome's tab id")
    url: str
    title: str
    active: bool
    windowId: int  # noqa: N815 — wire name


class TabList(BaseModel):
    tabs: list[Tab]


class BridgeStatusOut(BaseModel):
    hostReachable: bool  # noqa: N815
    extensionConnected: bool  # noqa: N815
    protocolVersion: int | None  # noqa: N815
    browser: str | None
    socket: str | None
    lastHandshakeError: str | None  # noqa: N815


def error_result(code: str, message: str) -> CallToolResult:
    """A tool error result: stable code, human message and hint, in text and structured form."""
    hint = hint_for(code)
    text = f"{code}: {message}" + (f"\nhint: {hint}" if hint else "")
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content={"error": {"code": code, "message": message, "hint": hint}},
        is_error=True,
    )


def ok_result(model: BaseModel) -> CallToolResult:
    data = model.model_dump(mode="json")
    return CallToolResult(
        content=[TextContent(type="text", text=model.model_dump_json())], structured_content=data
    )


def build_server(bridge: BridgeClient | None = None) -> MCPServer[Any]:
    bridge = bridge or BridgeClient()
    server: MCPServer[Any] = MCPServer(
        name="tabwarden", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    @server.tool(
        name="tab_list",
        title="List browser tabs",
        description="List the browser's open tabs: id, URL, title, whether active, window id.",
        annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False),
    )
    async def tab_list() -> Annotated[CallToolResult, TabList]:
        try:
            result = await bridge.call("tab_list")
            return ok_result(TabList.model_validate(result))
        except TabwardenError as exc:
            return error_result(exc.code, str(exc))
        except ValueError:
            return error_result("internal_error", "the extension returned a malformed tab list")

    @server.tool(
        name="bridge_status",
        title="Bridge status",
        description=(
            "Answered locally, without a browser round trip: is a tabwarden host reachable, is the "
            "extension connected, the protocol version, and the last handshake error."
        ),
        annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False),
    )
    async def bridge_status() -> Annotated[CallToolResult, BridgeStatusOut]:
        status = await bridge.status()
        return ok_result(BridgeStatusOut.model_validate(status.as_dict()))

    return server


def run() -> int:
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="tabwarden-mcp[%(process)d] %(levelname)s: %(message)s"
    )
    build_server().run("stdio")
    return 0
