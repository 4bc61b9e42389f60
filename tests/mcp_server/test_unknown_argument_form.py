"""Every tool of the catalogue, generated from it: an argument the tool does not take is refused
as ``bad_request`` in the project's error form — the text an agent reads starts with the code,
names the argument and the tool, and carries a ``hint:`` naming the next step and ``retry:`` —
never dropped (``page_text {frame}`` once read the top page silently), and the value given never
comes back. A new tool is covered by being in the catalogue."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer

from tabwarden.mcp_server.bridge_client import BridgeClient
from tabwarden.mcp_server.catalogue import CATALOGUE
from tabwarden.mcp_server.server import build_server
from tests.fixtures import paired_guard
from tests.mcp_server.test_wire_schema import valid_arguments

#: The value under the unknown argument: it must never be repeated.
SECRET = "unknown-arg-value-5f1c"


def _server(runtime: Path) -> MCPServer[Any]:
    bridge = BridgeClient(label="test", env={"TABWARDEN_RUNTIME_DIR": str(runtime)})
    return build_server(bridge, paired_guard())


async def test_an_unknown_argument_is_bad_request_in_the_error_form(runtime_dir: Path) -> None:
    async with Client(_server(runtime_dir), raise_exceptions=True) as client:
        for spec in CATALOGUE:
            for extra in ("frame_", "colour"):
                args = valid_arguments(spec) | {extra: SECRET}
                result = await client.call_tool(spec.name, args)
                assert result.is_error, (spec.name, extra)
                text = result.content[0].text  # type: ignore[union-attr]
                assert text.startswith(f"bad_request: invalid arguments for {spec.name}"), text
                assert f"`{extra}`" in text, text
                hint = text.split("\nhint: ", 1)
                assert len(hint) == 2 and hint[1].split("\n")[0].strip(), text
                assert "\nretry: " in text, text
                assert all(SECRET not in str(block) for block in result.content), result
                assert SECRET not in str(result.meta)
