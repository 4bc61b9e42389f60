"""``tools/list`` is what every MCP client sees: names, titles, descriptions, input and output
schemas and annotations. ``tools_list.json`` was generated from main's hand-written registrations
(before the catalogue, ``mcp_server/catalogue/``, existed); the catalogue-derived registration
must reproduce it exactly. A deliberate change is made by regenerating the snapshot
(``python -m tabwarden.mcp_server.catalogue.generate --write``) in the same commit, so the diff
shows what every client will see differently."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from mcp import Client

from tabwarden.mcp_server.bridge_client import BridgeClient
from tabwarden.mcp_server.server import build_server
from tests.fixtures import paired_guard

SNAPSHOT = Path(__file__).with_name("tools_list.json")
FIELDS = ("title", "description", "inputSchema", "outputSchema", "annotations")


def _listed(runtime: Path) -> dict[str, dict[str, Any]]:
    bridge = BridgeClient(label="snap", env={"TABWARDEN_RUNTIME_DIR": str(runtime)})
    server = build_server(bridge, paired_guard())

    async def scenario() -> dict[str, dict[str, Any]]:
        async with Client(server, raise_exceptions=True) as client:
            tools = (await client.list_tools()).tools
        listed: dict[str, dict[str, Any]] = {}
        for tool in tools:
            wire = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
            listed[tool.name] = {key: wire.get(key) for key in FIELDS}
        return listed

    return asyncio.run(scenario())


def test_tools_list_matches_the_snapshot(runtime_dir: Path) -> None:
    expected = json.loads(SNAPSHOT.read_text("utf-8"))
    listed = _listed(runtime_dir)
    assert sorted(listed) == sorted(expected)
    for name, want in expected.items():
        for key in FIELDS:
            assert listed[name][key] == want[key], f"{name}: {key} differs from the snapshot"
