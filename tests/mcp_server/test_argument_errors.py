"""A call whose arguments do not fit its tool answers ``bad_request`` in the project's error
form (code, message naming each field and the rule it broke, hint, retry), before anything
reaches the browser; an argument the tool does not take is refused, never dropped; and the
value given is never repeated (it may be what the model was about to type into a password
field). In-process, the SDK's own client, every tool of the catalogue."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from tabwarden.mcp_server.bridge_client import BridgeClient
from tabwarden.mcp_server.catalogue import CATALOGUE
from tabwarden.mcp_server.server import build_server
from tabwarden.protocol.codes import BAD_REQUEST
from tests.fakes import tool_error
from tests.fixtures import paired_guard
from tests.mcp_server.test_wire_schema import valid_arguments

#: A value that must never come back in an error.
SECRET = "hunter2-correct-horse"


def _server(runtime: Path) -> MCPServer[Any]:
    """No host listens in ``runtime``: a call that passes validation answers
    extension_not_connected (or, for a local tool, its answer), never bad_request."""
    bridge = BridgeClient(label="test", env={"TABWARDEN_RUNTIME_DIR": str(runtime)})
    return build_server(bridge, paired_guard())


@pytest.mark.promise("H1-12")
async def test_an_argument_a_tool_does_not_take_is_refused_never_dropped(runtime_dir: Path) -> None:
    async with Client(_server(runtime_dir), raise_exceptions=True) as client:
        for spec in CATALOGUE:
            valid = valid_arguments(spec)
            answer = tool_error(await client.call_tool(spec.name, valid))
            assert answer is None or answer["code"] != BAD_REQUEST, (spec.name, valid, answer)

            answer = tool_error(await client.call_tool(spec.name, valid | {"frame_": SECRET}))
            assert answer is not None, f"{spec.name} took an argument it does not have"
            assert answer["code"] == BAD_REQUEST, (spec.name, answer)
            assert "`frame_`" in answer["message"] and spec.name in answer["message"], answer
            assert SECRET not in str(answer), answer
            assert answer["hint"], answer


@pytest.mark.promise("H1-12")
async def test_a_wrong_value_names_its_field_and_rule_and_never_repeats_the_value(
    runtime_dir: Path,
) -> None:
    async with Client(_server(runtime_dir), raise_exceptions=True) as client:
        cases: list[tuple[str, dict[str, Any], str]] = [
            ("page_fill", {"tabId": 1, "selector": "#pw", "value": SECRET * 10_000}, "value"),
            ("page_fill", {"tabId": SECRET, "selector": "#pw", "value": "x"}, "tabId"),
            ("page_click", {"tabId": 1, "ref": SECRET}, "ref"),
        ]
        for name, args, field in cases:
            result = await client.call_tool(name, args)
            answer = tool_error(result)
            assert answer is not None and answer["code"] == BAD_REQUEST, answer
            assert f"`{field}`" in answer["message"], answer
            assert all(SECRET not in str(block) for block in result.content), result
            assert SECRET not in str(result.meta), result.meta
            text = result.content[0].text  # type: ignore[union-attr]
            assert text.startswith("bad_request: invalid arguments for "), text
            assert "\nhint: " in text and "\nretry: safe" in text, text


async def test_every_published_input_schema_says_it_takes_nothing_else(runtime_dir: Path) -> None:
    async with Client(_server(runtime_dir), raise_exceptions=True) as client:
        tools = (await client.list_tools()).tools
    assert {t.name for t in tools} == {spec.name for spec in CATALOGUE}
    loose = [t.name for t in tools if t.input_schema.get("additionalProperties") is not False]
    assert loose == []


@pytest.mark.parametrize("given", ['["a"]', "not json"])
async def test_a_list_sent_as_a_json_string_is_still_read_as_the_sdk_reads_it(
    runtime_dir: Path, given: str
) -> None:
    # Some clients send a list argument as JSON text; the SDK unpacks it before validation,
    # and so must the step that replaced its validation (a string that is no JSON stays text).
    [spec] = [s for s in CATALOGUE if s.name == "page_scrape"]
    args: dict[str, Any] = valid_arguments(spec) | {"attrs": given}
    with anyio.fail_after(30):
        async with Client(_server(runtime_dir), raise_exceptions=True) as client:
            answer = tool_error(await client.call_tool("page_scrape", args))
    assert answer is not None
    assert (answer["code"] == BAD_REQUEST) == (given == "not json"), answer
