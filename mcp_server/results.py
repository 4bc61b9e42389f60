"""Tool results as MCP clients see them: structured content plus text, and coded errors.

Every failure is an ``isError`` result whose text reads ``<code>: <message>``, ``hint: <hint>``
and ``retry: <what repeating it risks>``, and whose ``_meta["dev.tabwarden/error"]`` carries
``{code, message, hint, retry}`` for programs. ``code`` is stable, from the shared table;
``retry`` (``safe``, ``after_check`` or ``unsafe``) is the table's, resolved for the tool
(``tabwarden.errors.retry_for``: a read-only tool is safe to repeat where an action is not).
Error results carry **no** ``structuredContent``: clients validate structured content against
the tool's output schema even on errors (the MCP Inspector rejects the whole result otherwise).
Never put a secret in a message.
"""

from __future__ import annotations

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

from tabwarden.errors import RETRY_AFTER_CHECK, RETRY_SAFE, hint_for, retry_for

#: Where a tool error's machine-readable form lives in the result's ``_meta``.
ERROR_META_KEY = "dev.tabwarden/error"

_RETRY_WORDS = {
    RETRY_SAFE: "safe (the call did nothing)",
    RETRY_AFTER_CHECK: "check the page first (the call may have acted)",
}


def error_result(code: str, message: str, *, read_only: bool = False) -> CallToolResult:
    """A tool error result: stable code, human message, hint and retry safety, in text and
    structured form. ``read_only``: the tool cannot act, so an unknown outcome is safe to
    repeat (the default assumes it can)."""
    hint = hint_for(code)
    retry = retry_for(code, read_only=read_only)
    words = _RETRY_WORDS.get(retry, "not without the person (they said no)")
    text = f"{code}: {message}" + (f"\nhint: {hint}" if hint else "") + f"\nretry: {words}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        is_error=True,
        _meta={ERROR_META_KEY: {"code": code, "message": message, "hint": hint, "retry": retry}},
    )


def ok_result(model: BaseModel) -> CallToolResult:
    data = model.model_dump(mode="json")
    return CallToolResult(
        content=[TextContent(type="text", text=model.model_dump_json())], structured_content=data
    )
