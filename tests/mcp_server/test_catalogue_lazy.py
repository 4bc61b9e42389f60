"""The catalogue's models (``catalogue.Model``) and the SDK's per-tool argument models
(``sdk.defer_argument_models``) build no validator when ``tabwarden mcp`` starts: not at import,
not when the tools are made from the schema cache, not for ``tools/list``; a tool's own models
are built when it is first called, and validate as before (the tools-list snapshot and the
catalogue tests hold what they publish and accept).

Each probe runs in a fresh interpreter: this one has built most models already."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tabwarden.mcp_server.catalogue import CATALOGUE

IMPORT_PROBE = """
import json
from tabwarden.mcp_server import catalogue

def every(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from every(sub)

models = sorted(set(every(catalogue.Model)), key=lambda m: m.__name__)
built_at_import = [m.__name__ for m in models if m.__pydantic_complete__]
catalogue.BY_NAME["tab_close"].arguments.model_validate({"tabId": 3})
print(json.dumps({
    "models": len(models),
    "built_at_import": built_at_import,
    "close_built_on_use": catalogue.BY_NAME["tab_close"].arguments.__pydantic_complete__,
}))
"""

START_PROBE = """
import asyncio, json, sys
from pathlib import Path
from tabwarden.mcp_server.sdk import defer_package_inits
defer_package_inits()
from tabwarden.mcp_server import catalogue
from tabwarden.mcp_server.bridge_client import BridgeClient
from tabwarden.mcp_server.schema_cache import SchemaCache
from tabwarden.mcp_server.server import ToolGuard, build_server
from tabwarden.trust.verify import Effective
from tests.fixtures import paired_guard
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase

config, runtime = Path(sys.argv[1]), sys.argv[2]
bridge = BridgeClient(label="lazy", env={"TABWARDEN_RUNTIME_DIR": runtime})
guard = paired_guard()
build_server(bridge, guard, schemas=SchemaCache(config))  # fills the cache, as a first start
server = build_server(bridge, guard, schemas=SchemaCache(config))  # a start from the cache

def every(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from every(sub)

def built():
    models = [*every(catalogue.Model), *every(ArgModelBase)]
    return len(models), sorted(m.__name__ for m in models if m.__pydantic_complete__)

async def scenario():
    from mcp import Client
    async with Client(server, raise_exceptions=True) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        after_list = built()
        refused = await client.call_tool("tab_close", {"tabId": "not a number"})
        return listed, after_list, refused.is_error, built()

listed, (models, after_list), refused, (_, after_call) = asyncio.run(scenario())
print(json.dumps({"listed": len(listed), "models": models, "after_list": after_list,
                  "refused": refused, "after_call": after_call}))
"""


def _probe(script: str, *args: str) -> dict[str, object]:
    out = subprocess.run(  # noqa: S603 (this interpreter and a fixed script)
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    seen: dict[str, object] = json.loads(out.stdout)
    return seen


@pytest.mark.promise("H1-08")
def test_importing_the_catalogue_builds_no_validator() -> None:
    seen = _probe(IMPORT_PROBE)
    assert isinstance(seen["models"], int) and seen["models"] > 50
    assert seen["built_at_import"] == []
    assert seen["close_built_on_use"] is True  # the observation can see a model being built


@pytest.mark.promise("H1-08")
def test_a_start_from_the_schema_cache_builds_a_tools_validators_only_at_its_first_call(
    tmp_path: Path,
) -> None:
    config, runtime = tmp_path / "config", tmp_path / "run"
    config.mkdir(mode=0o700)
    runtime.mkdir(mode=0o700)
    seen = _probe(START_PROBE, str(config), str(runtime))
    assert seen["listed"] == len(CATALOGUE)
    assert isinstance(seen["models"], int) and seen["models"] > 2 * 50  # ours + the SDK's
    assert seen["after_list"] == []  # started and listed: no validator built
    assert seen["refused"] is True  # the bad argument is still refused...
    # ...by the one model the call built: the catalogue's (GatedTool validates every call with
    # it; the SDK's model from the signature only publishes the schema and is never built).
    assert seen["after_call"] == ["TabArgs"]
