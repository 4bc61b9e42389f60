"""Tool results as MCP clients see them: structured content plus text, and coded errors.

Every failure is an ``isError`` result whose text reads ``<code>: <message>`` and ``hint: <hint>``,
and whose ``_meta["dev.tabwarden/error"]`` carries ``{code, message, hint}`` for programs; ``code``
is stable, from the shared table. Error results carry **no** ``structuredContent``: clients
validate structured content against the tool's output schema even on errors (the MCP Inspector
rejects the whole result otherwise). Never put a secret in a message.
"""

from __future__ import annotations

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

from tabwarden.errors import hint_for

#: Where a tool error's machine-readable form lives in the result's ``_meta``.
ERROR_META_KEY = "dev.tabwarden/error"


def error_result(code: str, message: str) -> CallToolResult:
    """A tool error result: stable code, human message and hint, in text and structured form."""
    hint = hint_for(code)
    text = f"{code}: {message}" + (f"\nhint: {hint}" if hint else "")
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        is_error=True,
        _meta={ERROR_META_KEY: {"code": code, "message": message, "hint": hint}},
    )


def ok_result(model: BaseModel) -> CallToolResult:
    data = model.model_dump(mode="json")
    return CallToolResult(
        content=[TextContent(type="text", text=model.model_dump_json())], structured_content=data
    )
