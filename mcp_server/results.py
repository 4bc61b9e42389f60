"""Tool results as MCP clients see them: structured content plus text, and coded errors.

Every failure is an ``isError`` result whose text reads ``<code>: <message>``, ``hint: <hint>``
and ``retry: <what repeating it risks>``, and whose ``_meta["dev.tabwarden/error"]`` carries
``{code, message, hint, retry}`` for programs. ``code`` is stable, from the shared table;
``retry`` (``safe``, ``after_check`` or ``unsafe``) is the table's, resolved for the tool
(``tabwarden.errors.retry_for``: a read-only tool is safe to repeat where an action is not).
Error results carry **no** ``structuredContent``: clients validate structured content against
the tool's output schema even on errors (the MCP Inspector rejects the whole result otherwise).
Never put a secret in a message.

A successful result carries its structured content and, as its text block, the same JSON
(docs/adr/0006) — or, for a model with a ``text_block()`` that answers, that text, which holds
every field of the structured content (page_snapshot's line form, docs/adr/0016). A large
result (its JSON over ``WHOLE_TEXT_MAX_CHARS``) is sent once: the text block then says so and
shows the result with every long string cut (``summary_text``), the whole of it being in
structured content alone (ADR 0006, "Large results").
"""

from __future__ import annotations

import json
from typing import Any

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


#: Up to this many characters of JSON, the text block repeats the whole result; above it, the
#: result travels once (structured content) and the text block is ``summary_text``'s. The
#: default page_text slice (100,000 characters) and every small result stay far below it.
WHOLE_TEXT_MAX_CHARS = 1_000_000
#: In a large result's text block, each string is cut to this many characters.
SUMMARY_STRING_CHARS = 2_000


def ok_result(model: BaseModel) -> CallToolResult:
    data = model.model_dump(mode="json")
    # A result model may say its own text block (page_snapshot's line form: ADR 0016); it must
    # carry every field of the structured content. Otherwise the JSON, as ADR 0006 says.
    own = getattr(model, "text_block", None)
    text = own() if callable(own) else None
    if text is None:
        text = model.model_dump_json()
        if len(text) > WHOLE_TEXT_MAX_CHARS:
            text = summary_text(data, len(text))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def summary_text(data: dict[str, Any], size: int) -> str:
    """A large result's text block: what it is, where the whole of it is, and the result with
    every string over ``SUMMARY_STRING_CHARS`` cut (saying how much was cut)."""
    return (
        f"This result is {size:,} characters of JSON. To send it once, its whole form is only in "
        f"this result's structured content; below, each string over {SUMMARY_STRING_CHARS:,} "
        f"characters is cut.\n" + json.dumps(_cut(data), ensure_ascii=False)
    )


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > SUMMARY_STRING_CHARS:
        rest = len(value) - SUMMARY_STRING_CHARS
        return f"{value[:SUMMARY_STRING_CHARS]}… [{rest:,} more characters in structuredContent]"
    if isinstance(value, dict):
        return {key: _cut(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut(item) for item in value]
    return value
