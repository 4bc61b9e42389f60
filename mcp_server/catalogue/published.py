"""What ``tools/list`` publishes, in the fewest bytes that say the same to a client.

A client reads every tool's schemas at every session start, and a model pays for each byte of
the tool list in its context (docs/adr/0012-a-tool-list-a-model-can-afford.md). What pydantic
generates says several things twice or to nobody:

- every property and model carries a ``title`` that repeats its name (no client shows it, the
  model already reads the name): dropped everywhere;
- an optional argument is ``anyOf: [X, {"type": "null"}]`` with ``default: null``: a client
  leaves an optional argument out, and the catalogue's models accept it left out, so the input
  schema says ``X`` and nothing about null; a default of ``false`` says what leaving a flag out
  means anyway: dropped too (other defaults stay: they say what a left-out value is);
- ``type: string`` beside an ``enum`` of strings repeats what the enum says: dropped;
- a nested argument model (``waitFor``, ``observe``, a region …) is a ``$ref`` into ``$defs``
  that every tool repeats anyway: written in place, once, where it is used;
- a result's schema: the server checks every result against the tool's full result model
  before it is sent (``ToolCalls``), and no client shows an output schema to the model, so
  what a client validates is that the structured content is an object (ADR 0006 keeps it).

What an argument's value must be is never touched (types, enums, bounds, patterns, required,
``additionalProperties``), nor the descriptions of arguments, which are what a model needs to
call a tool correctly. ``tests/mcp_server/test_published_schemas.py`` holds it: the compact
input schema accepts and refuses exactly what the full one does on arguments drawn from it, and
the published output schema accepts every result the full one accepts.

``PROFILES`` names the opt-in tool families (``tabwarden mcp --caps``): the default list is
every tool outside them, and a tool outside the chosen ones answers ``tool_not_enabled``.
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

__all__ = [
    "ALL_CAPS",
    "OUTPUT_SCHEMA",
    "PROFILES",
    "PROFILE_WORDS",
    "compact_annotations",
    "compact_input",
    "compact_output",
    "enabled_tools",
    "family_of_tool",
    "unknown_caps",
]

_NULL = {"type": "null"}

#: Every published output schema: the structured content is a JSON object (the server holds it
#: to the tool's full result model before it is sent).
OUTPUT_SCHEMA: Mapping[str, Any] = MappingProxyType({"type": "object"})

#: The MCP specification's default of each tool annotation: a hint equal to it says nothing.
ANNOTATION_DEFAULTS: Mapping[str, bool] = MappingProxyType(
    {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}
)

#: The opt-in tool families, each listed only when ``tabwarden mcp --caps`` names it (``all``:
#: every one). A tool in none of them is in the default list. docs/adr/0012 says why each is
#: opt-in: tools most tasks never need, or whose policy keeps them off by default.
PROFILES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "input": (
            "page_type",
            "page_keys",
            "page_mouse",
            "page_hover",
            "page_drag",
            "page_clear",
            "page_fill_form",
        ),
        "layout": ("page_scroll", "page_reveal", "page_settle", "page_viewport", "page_emulate"),
        "read": ("page_markdown", "page_scrape", "page_get_state", "cookie_get", "storage_get"),
        "devtools": ("page_console", "page_network", "page_fetch"),
        "files": ("page_upload", "page_pdf", "page_wait_download"),
    }
)

#: What each family is for, in the words ``tabwarden mcp --help`` and the ADR use.
PROFILE_WORDS: Mapping[str, str] = MappingProxyType(
    {
        "input": "trusted keyboard and mouse: type, keys, real clicks, hover, drag, clear, and "
        "forms in one call",
        "layout": "scroll, reveal lazy lists, wait for the page to settle, emulate a screen, "
        "user agent, place, colour scheme, locale and timezone",
        "read": "Markdown, scraping, one element's state, cookie and storage keys",
        "devtools": "console and network capture, and the policy-gated fetch",
        "files": "upload (policy-gated), print to PDF, wait for a download",
    }
)

#: The word that enables every family.
ALL_CAPS = "all"


def unknown_caps(caps: Iterable[str]) -> list[str]:
    """The names in ``caps`` that are neither a family nor ``all``."""
    return [cap for cap in caps if cap != ALL_CAPS and cap not in PROFILES]


def enabled_tools(names: Iterable[str], caps: Iterable[str] = ()) -> frozenset[str]:
    """The tools among ``names`` that ``tools/list`` lists with families ``caps`` enabled."""
    chosen = set(caps)
    hidden = {
        tool
        for family, tools in PROFILES.items()
        if family not in chosen and ALL_CAPS not in chosen
        for tool in tools
    }
    return frozenset(name for name in names if name not in hidden)


def family_of_tool(name: str) -> str | None:
    """The opt-in family a tool belongs to (None: the default list)."""
    for family, tools in PROFILES.items():
        if name in tools:
            return family
    return None


def compact_input(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema without prose a client never needs, each nested model in place."""
    defs = schema.get("$defs", {})
    out: dict[str, Any] = _compact(schema, defs, ())
    return out


def compact_output(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's published output schema: ``OUTPUT_SCHEMA`` (``schema`` is the full one)."""
    if schema.get("type") != "object":
        raise ValueError("a tool's structured result is a JSON object")
    return dict(OUTPUT_SCHEMA)


def compact_annotations(annotations: Mapping[str, Any]) -> dict[str, Any]:
    """The annotations that say something: each hint that differs from the spec's default, and
    ``readOnlyHint`` and ``destructiveHint`` always (the hints a client acts on to ask its user:
    said outright, never left to a default a client may not apply)."""
    return {
        key: value
        for key, value in annotations.items()
        if value is not None
        and (key in _ALWAYS or ANNOTATION_DEFAULTS.get(key, not value) != value)
    }


_ALWAYS = frozenset({"readOnlyHint", "destructiveHint"})


def _compact(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_compact(x, defs, seen) for x in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in seen or name not in defs:
            raise ValueError(f"cannot publish the recursive or missing definition {name}")
        # a model's docstring is for its readers here; the property's own words are published
        merged = {k: v for k, v in defs[name].items() if k != "description"}
        merged |= {k: v for k, v in node.items() if k != "$ref"}
        return _compact(merged, defs, (*seen, name))
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            # names here are data (a property called "title" stays), their schemas are compacted
            out[key] = {name: _compact(sub, defs, seen) for name, sub in value.items()}
        elif key == "$defs" or (key == "title" and isinstance(value, str)):
            continue
        elif key == "default" and (value is None or value is False):
            continue
        else:
            out[key] = _compact(value, defs, seen)
    enum = out.get("enum")
    if out.get("type") == "string" and isinstance(enum, list):
        del out["type"]  # pydantic writes type string beside an enum of strings only
    _drop_null_alternative(out)
    return out


def _drop_null_alternative(node: dict[str, Any]) -> None:
    """``anyOf: [X, null]`` (with ``default: null``) becomes ``X`` merged into ``node``."""
    alternatives = node.get("anyOf")
    if not isinstance(alternatives, list) or _NULL not in alternatives:
        return
    rest = [a for a in alternatives if a != _NULL]
    if len(rest) == 1 and isinstance(rest[0], dict) and not any(key in node for key in rest[0]):
        del node["anyOf"]
        node |= rest[0]
    elif len(rest) > 1:
        node["anyOf"] = rest
