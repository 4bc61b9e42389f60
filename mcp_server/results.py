"""Tool results as MCP clients see them: structured content plus text, and coded errors.

Every failure is an ``isError`` result whose ``structuredContent.error`` has a stable ``code`` from
the shared table, a human ``message`` and a one-line ``hint``. Never put a secret in a message.
"""

from __future__ import annotations

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

from tabwarden.errors import hint_for


def error_result(code: str, message: str) -> CallToolResult:
    """A tool error result: stable code, human message and hint, in text and structured form."""
    hint = hint_for(code)
    text = f"{code}: {message}" + (f"\nhint: {hint}" if hint else "")
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content={"error": {"code": code, "message": message, "hint": hint}},
        is_error=True,
    )


def ok_result(model: BaseModel) -> CallToolResult:
    data = model.model_dump(mode="json")
    return CallToolResult(
        content=[TextContent(type="text", text=model.model_dump_json())], structured_content=data
    )
