"""page_fill_form's arguments: an empty list, more than MAX_FORM_FIELDS fields, an unknown kind,
a field that does not make one request (no value, two choices, an unchecked radio, an element
named twice) each answer ``bad_request`` naming the field and the rule, before anything reaches
the browser, and never repeat a value given; and every value a form types or chooses is read by
the provenance ledger, as page_fill's and page_select's are (a list of fields hides none)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from tabwarden.mcp_server.bridge_client import BridgeClient
from tabwarden.mcp_server.catalogue import BY_NAME, Lineage, declared_texts
from tabwarden.mcp_server.catalogue.interact.forms import MAX_FORM_FIELDS
from tabwarden.mcp_server.server import build_server
from tabwarden.protocol.codes import BAD_REQUEST
from tests.fakes import tool_error
from tests.fixtures import paired_guard

SECRET = "hunter2-correct-horse"
NAME = {"kind": "text", "selector": "#name", "value": "Alice"}


def _server(runtime: Path) -> MCPServer[Any]:
    """No host listens in ``runtime``: a call that passes validation answers
    extension_not_connected, never bad_request."""
    bridge = BridgeClient(label="test", env={"TABWARDEN_RUNTIME_DIR": str(runtime)})
    return build_server(bridge, paired_guard())


async def _refusal(client: Client, fields: Any) -> str:
    result = await client.call_tool("page_fill_form", {"tabId": 1, "fields": fields})
    answer = tool_error(result)
    assert answer is not None and answer["code"] == BAD_REQUEST, (fields, answer)
    assert SECRET not in str(result.content) and SECRET not in str(result.meta), result
    assert answer["hint"], answer
    message: str = answer["message"]
    return message


@pytest.mark.promise("H4-76")
async def test_a_form_that_makes_no_request_is_refused_naming_the_field(runtime_dir: Path) -> None:
    async with Client(_server(runtime_dir), raise_exceptions=True) as client:
        assert "`fields`" in await _refusal(client, [])
        too_many = await _refusal(client, [NAME] * (MAX_FORM_FIELDS + 1))
        assert "`fields`" in too_many and str(MAX_FORM_FIELDS) in too_many
        kind = await _refusal(
            client, [NAME, {"kind": "password", "selector": "#pw", "value": SECRET}]
        )
        assert "`fields.1.kind`" in kind
        assert all(k in kind for k in ("'text'", "'select'", "'checkbox'", "'radio'")), kind
        no_value = await _refusal(client, [{"kind": "text", "selector": "#name"}])
        assert "fields[0] (text): give its value" in no_value
        two = await _refusal(
            client, [NAME, {"kind": "select", "selector": "#s", "value": SECRET, "label": "B"}]
        )
        assert "fields[1] (select): give exactly one of value, values, label, optionIndex" in two
        wrong = await _refusal(client, [{"kind": "checkbox", "selector": "#c", "value": SECRET}])
        assert "fields[0] (checkbox) does not take value" in wrong
        radio = await _refusal(client, [{"kind": "radio", "selector": "#r", "checked": False}])
        assert "cannot be unchecked" in radio
        twice = await _refusal(client, [{**NAME, "ref": "@e3"}])
        assert "exactly one of ref, selector, text or xpath" in twice
        long = await _refusal(client, [{**NAME, "value": SECRET * 1000}])
        assert "`fields.0.value`" in long

        # Fifty good fields pass validation (and find no browser here).
        fine = await client.call_tool(
            "page_fill_form", {"tabId": 1, "fields": [NAME] * MAX_FORM_FIELDS}
        )
        answer = tool_error(fine)
        assert answer is not None and answer["code"] != BAD_REQUEST, answer


@pytest.mark.promise("H4-76")
def test_every_value_a_form_types_or_chooses_is_read_for_its_lineage() -> None:
    args = BY_NAME["page_fill_form"].arguments.model_validate(
        {
            "tabId": 1,
            "fields": [
                {"kind": "text", "selector": "#name", "value": "typed"},
                {"kind": "select", "selector": "#s", "values": ["one", "two"]},
                {"kind": "select", "selector": "#t", "label": "shown"},
                {"kind": "checkbox", "text": "I agree", "checked": True},
            ],
        }
    )
    texts = list(declared_texts(args))
    assert texts == [(Lineage.TYPED, v) for v in ("typed", "one", "two", "shown")]
