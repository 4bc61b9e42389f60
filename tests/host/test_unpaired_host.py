"""Defence in depth at hop 2: the host refuses an unpaired client itself, whatever hop 1 said.

The attacker: a program nobody paired starts the genuine ``tabwarden mcp`` (so the attested host
admits its connection) but points it at a record of its own making, one that pairs the attacker,
so hop 1 lets its calls through. The host reads the person's record, where no client is paired,
and refuses every request with hop 1's own code and hint; nothing reaches the browser and the
person's record is unchanged. Real processes: the attested host, the real ``tabwarden mcp``
spawned by the SDK's stdio client, a real socket."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.fakes import FakeBrowser, host_env, tool_error
from tests.fixtures import config_of, nothing_relayed, pair_record, pair_this_process

GUARD = 60.0  # hang guard only


@pytest.mark.promise("H1-04")
def test_the_host_refuses_an_attested_server_while_no_client_is_paired(
    attested_browser: FakeBrowser, tmp_path: Path
) -> None:
    config = config_of(attested_browser)
    pair_record(config)  # the person's record: a host key, no client
    before = (config / "trust.json").read_bytes()
    forged = tmp_path / "forged"
    pair_this_process(forged)  # the attacker's own record, which pairs the attacker
    errors: list[dict[str, object]] = []

    async def scenario() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "tabwarden", "mcp"],
            env=host_env(attested_browser.runtime, TABWARDEN_CONFIG_DIR=str(forged)),
        )
        with open(tmp_path / "mcp.err", "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                for _ in range(2):  # refused and cut off; a second try is refused again
                    error = tool_error(await client.call_tool("tab_list", {}))
                    assert error is not None
                    errors.append(error)

    asyncio.run(asyncio.wait_for(scenario(), GUARD))
    assert [e["code"] for e in errors] == ["client_not_paired"] * 2, errors
    for error in errors:
        assert "no client is paired yet" in str(error["message"]), error
        assert "`tabwarden pair-client`" in str(error["message"]), error
    attested_browser.wait_stderr("refused: this client is not a paired MCP client")
    nothing_relayed(attested_browser)
    assert (config / "trust.json").read_bytes() == before
