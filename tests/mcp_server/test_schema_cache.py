"""``mcp_server/schema_cache.py``: the tools' published schemas remembered across starts. A start
from the cache serves exactly what a fresh generation serves, validates arguments the same way,
and a cache that is stale, damaged or unsafe is never believed."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tabwarden.mcp_server.bridge_client import BridgeClient
from tabwarden.mcp_server.catalogue import CATALOGUE
from tabwarden.mcp_server.schema_cache import SCHEMA_CACHE_FILE, SchemaCache, cache_key
from tabwarden.mcp_server.server import build_server
from tabwarden.mcp_server.tools import CallLog, catalogue_tools
from tests.fixtures import paired_guard

FIELDS = ("title", "description", "inputSchema", "outputSchema", "annotations")


class _Guard:
    """A gate that lets everything through (what is compared here is the tools' shape)."""

    def check(self, tool: str) -> tuple[str, str] | None:
        return None

    def refusal(self, *, despite_kill: bool = False) -> tuple[str, str] | None:
        return None

    def confirm_timeout(self) -> int:
        return 40

    def provenance_mode(self) -> str:
        return "confirm"

    def outcome(self, tool: str, how: str, code: str) -> None:
        return None

    def provenance(
        self,
        tool: str,
        how: str,
        argument: str,
        evidence: list[dict[str, Any]],
        path: str | None = None,
    ) -> None:
        return None


async def _no_answer(*_: Any) -> Any:
    raise AssertionError("nothing is called here")


def _listed(runtime: Path, schemas: SchemaCache | None) -> dict[str, dict[str, Any]]:
    bridge = BridgeClient(label="cache", env={"TABWARDEN_RUNTIME_DIR": str(runtime)})
    server = build_server(bridge, paired_guard(), schemas=schemas)

    async def scenario() -> dict[str, dict[str, Any]]:
        async with Client(server, raise_exceptions=True) as client:
            tools = (await client.list_tools()).tools
            refused = await client.call_tool("tab_close", {"tabId": "not a number"})
        assert refused.is_error  # the argument model built at start validates every call
        listed: dict[str, dict[str, Any]] = {}
        for tool in tools:
            wire = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
            listed[tool.name] = {key: wire.get(key) for key in FIELDS}
        return listed

    return asyncio.run(scenario())


def _key() -> str:
    import tabwarden.mcp_server.tools as tools_module

    models = [m for spec in CATALOGUE for m in (spec.arguments, spec.result)]
    return cache_key(models, *tools_module.PUBLISHERS)


@pytest.mark.promise("H1-08")
def test_a_start_from_the_cache_serves_what_a_fresh_generation_serves(
    tmp_path: Path, runtime_dir: Path
) -> None:
    config = tmp_path / "config"
    fresh = _listed(runtime_dir, None)
    first = _listed(runtime_dir, SchemaCache(config))  # a miss: generates, then stores
    assert (config / SCHEMA_CACHE_FILE).stat().st_mode & 0o777 == 0o600
    second = _listed(runtime_dir, SchemaCache(config))  # a hit
    assert first == fresh
    assert second == fresh


@pytest.mark.promise("H1-08")
def test_every_cached_tool_is_the_tool_the_sdk_builds(tmp_path: Path) -> None:
    schemas = SchemaCache(tmp_path / "config")
    built = catalogue_tools(_Guard(), _no_answer, CallLog(), schemas)  # a miss
    cached = catalogue_tools(_Guard(), _no_answer, CallLog(), schemas)  # a hit
    assert [t.name for t in cached] == [t.name for t in built]
    for hit, made in zip(cached, built, strict=True):
        for attr in ("title", "description", "parameters", "is_async", "context_kwarg"):
            assert getattr(hit, attr) == getattr(made, attr), f"{made.name}: {attr}"
        assert hit.annotations == made.annotations
        assert hit.output_schema == made.output_schema
        assert hit.fn_metadata.output_model is made.fn_metadata.output_model
        assert hit.fn_metadata.wrap_output == made.fn_metadata.wrap_output
        assert hit.fn_metadata.arg_model.model_json_schema(
            by_alias=True
        ) == made.fn_metadata.arg_model.model_json_schema(by_alias=True)


def _poison(config: Path, key: str) -> None:
    """A cache of ``key`` whose tab_list tells the client something else."""
    schemas = SchemaCache(config)
    catalogue_tools(_Guard(), _no_answer, CallLog(), schemas)
    path = config / SCHEMA_CACHE_FILE
    document = json.loads(path.read_bytes())
    document["key"] = key
    document["tools"]["tab_list"]["parameters"] = {"type": "object", "description": "INJECTED"}
    path.write_text(json.dumps(document))


def _served_parameters(config: Path) -> dict[str, Any]:
    [tool] = [
        t
        for t in catalogue_tools(_Guard(), _no_answer, CallLog(), SchemaCache(config))
        if t.name == "tab_list"
    ]
    return tool.parameters


@pytest.mark.promise("H1-08")
def test_a_cache_of_other_code_is_not_believed_and_is_replaced(tmp_path: Path) -> None:
    config = tmp_path / "config"
    _poison(config, "0" * 64)  # what an older or edited catalogue left
    assert "INJECTED" not in json.dumps(_served_parameters(config))
    document = json.loads((config / SCHEMA_CACHE_FILE).read_bytes())
    assert document["key"] == _key()  # regenerated and stored under this code's key
    assert "INJECTED" not in json.dumps(document)


@pytest.mark.promise("H1-08")
def test_a_damaged_or_incomplete_cache_is_as_if_empty(tmp_path: Path) -> None:
    config = tmp_path / "config"
    catalogue_tools(_Guard(), _no_answer, CallLog(), SchemaCache(config))
    path = config / SCHEMA_CACHE_FILE
    good = _served_parameters(config)
    document = json.loads(path.read_bytes())
    del document["tools"]["tab_list"]
    path.write_text(json.dumps(document))
    assert _served_parameters(config) == good
    path.write_bytes(b"{not json")
    assert _served_parameters(config) == good
    assert json.loads(path.read_bytes())["key"] == _key()


@pytest.mark.promise("H1-08")
def test_a_cache_the_private_fs_rules_refuse_is_never_read_nor_replaced(tmp_path: Path) -> None:
    config = tmp_path / "config"
    _poison(config, _key())
    path = config / SCHEMA_CACHE_FILE
    os.chmod(path, 0o644)  # someone widened it: no longer ours alone
    before = path.read_bytes()
    assert "INJECTED" not in json.dumps(_served_parameters(config))
    assert path.read_bytes() == before  # left as found
    assert path.stat().st_mode & 0o777 == 0o644


@pytest.mark.promise("H1-08")
def test_an_edit_to_a_source_is_a_new_key(tmp_path: Path) -> None:
    models = [m for spec in CATALOGUE for m in (spec.arguments, spec.result)]
    publisher = tmp_path / "tools.py"
    publisher.write_text("x = 1\n")
    before = cache_key(models, str(publisher))
    assert cache_key(models, str(publisher)) == before  # the same code, the same key
    publisher.write_text("x = 2\n")
    assert cache_key(models, str(publisher)) != before
