"""The schemas ``tools/list`` publishes, in the fewest bytes that say the same to a client.

A client reads every tool's schemas at every session start, and a model pays for each byte of
them in its context. What pydantic generates says several things twice or to nobody:

- every property and model carries a ``title`` that repeats its name (no client shows it, the
  model already reads the name): dropped everywhere;
- an optional argument is ``anyOf: [X, {"type": "null"}]`` with ``default: null``: a client
  leaves an optional argument out, and the catalogue's models accept it left out, so the input
  schema says ``X`` and nothing about null;
- a result's fields carry descriptions a client never shows the model before a call (it
  validates ``structuredContent`` against the schema, which needs the types, not the prose):
  dropped from output schemas. Their null alternatives stay: results carry nulls.

What a value must be is never touched (types, enums, bounds, patterns, required,
``additionalProperties``), and neither are the descriptions of arguments, which are what a model
needs to call a tool correctly. ``tests/mcp_server/test_published_schemas.py`` holds both: the
compact input schema accepts and refuses exactly what the full one does on arguments drawn from
it, and so does the compact output schema on the catalogue's results. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

__all__ = ["compact_input", "compact_output"]

_NULL = {"type": "null"}


def compact_input(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema without titles or the null alternative of optional arguments."""
    out: dict[str, Any] = _compact(schema, drop_null=True, drop_descriptions=False)
    return out


def compact_output(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's output schema with the types and structure a client validates, and no prose."""
    out: dict[str, Any] = _compact(schema, drop_null=False, drop_descriptions=True)
    return out


def _compact(node: Any, *, drop_null: bool, drop_descriptions: bool) -> Any:
    if isinstance(node, list):
        return [_compact(x, drop_null=drop_null, drop_descriptions=drop_descriptions) for x in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            # names here are data (a property called "title" stays), their schemas are compacted
            out[key] = {
                name: _compact(sub, drop_null=drop_null, drop_descriptions=drop_descriptions)
                for name, sub in value.items()
            }
        elif key == "title" and isinstance(value, str):
            continue
        elif key == "description" and drop_descriptions and isinstance(value, str):
            continue
        else:
            out[key] = _compact(value, drop_null=drop_null, drop_descriptions=drop_descriptions)
    if drop_null:
        _drop_null_alternative(out)
    return out


def _drop_null_alternative(node: dict[str, Any]) -> None:
    """``anyOf: [X, null]`` (with ``default: null``) becomes ``X`` merged into ``node``."""
    alternatives = node.get("anyOf")
    if not isinstance(alternatives, list) or _NULL not in alternatives:
        return
    rest = [a for a in alternatives if a != _NULL]
    if len(rest) != 1 or not isinstance(rest[0], dict):
        return
    if any(key in node for key in rest[0]):
        return  # the one alternative would overwrite what the node says beside it
    del node["anyOf"]
    node.update(rest[0])
    if "default" in node and node["default"] is None:
        del node["default"]
