"""Numbers the extension and the MCP server must agree on, held equal (each lives in one place
per side; this test is the link)."""

from __future__ import annotations

import re
from pathlib import Path

from tabwarden.mcp_server import tools

REPO = Path(__file__).resolve().parents[2]


def _js_const(path: str, name: str) -> int:
    text = (REPO / path).read_text("utf-8")
    found = re.search(rf"^export const {name} = ([0-9_]+);", text, re.M)
    assert found, f"{name} not found in {path}"
    return int(found.group(1).replace("_", ""))


def test_the_extension_ends_a_call_before_the_server_gives_up_on_it() -> None:
    slack_ms = _js_const("extension/lib/dispatch.js", "CALL_SLACK_MS")
    margin_ms = _js_const("extension/lib/dispatch.js", "CALL_MARGIN_MS")
    assert slack_ms == tools.CONFIRM_SLACK_SECONDS * 1000
    assert 0 < margin_ms < slack_ms  # the extension's timeout, naming the step, arrives first
