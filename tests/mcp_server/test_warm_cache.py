"""The browser tests start ``tabwarden mcp`` with the tool-schema cache a person's config dir
holds after a first start (``tests.browser.harness.warm_schema_cache``). A spawned server must
believe it, so it reads it and never rewrites it; one of other code it replaces (the control,
so the check can fail)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tabwarden.cli.demo import provision_throwaway_trust
from tabwarden.mcp_server.schema_cache import SCHEMA_CACHE_FILE
from tests.browser.harness import warm_schema_cache


def _config(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    config, run = tmp_path / "config", tmp_path / "run"
    for d in (config, run):
        d.mkdir(mode=0o700)
    provision_throwaway_trust(
        config, client_exe=os.path.realpath("/proc/self/exe"), origins=["http://127.0.0.1:9"]
    )
    env = dict(os.environ, TABWARDEN_CONFIG_DIR=str(config), TABWARDEN_RUNTIME_DIR=str(run))
    env.pop("TABWARDEN_BROWSER", None)
    return config, env


async def _list_tools(env: dict[str, str]) -> list[str]:
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "tabwarden", "mcp", "--caps", "all"], env=env
    )
    async with Client(server) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


async def test_a_spawned_server_believes_the_warmed_cache(tmp_path: Path) -> None:
    config, env = _config(tmp_path)
    warm_schema_cache(config)
    cache = config / SCHEMA_CACHE_FILE
    before = (cache.read_bytes(), cache.stat().st_ino)

    names = await _list_tools(env)

    assert "page_snapshot" in names and len(names) > 40
    assert (cache.read_bytes(), cache.stat().st_ino) == before  # read, not regenerated


async def test_a_cache_of_other_code_is_replaced_by_the_spawned_server(tmp_path: Path) -> None:
    config, env = _config(tmp_path)
    warm_schema_cache(config)
    cache = config / SCHEMA_CACHE_FILE
    document = json.loads(cache.read_bytes())
    key = document["key"]
    document["key"] = "0" * len(key)
    cache.write_text(json.dumps(document))

    await _list_tools(env)

    assert json.loads(cache.read_bytes())["key"] == key  # regenerated under this code's key
