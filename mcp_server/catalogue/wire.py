"""The JSON schema of a tool's wire arguments (what ``Arguments.wire()`` sends the extension as the
request's ``args``), derived from its input schema by the transformations ``wire()`` applies:

- a null never travels (``wire()`` drops every unset field), so ``null`` leaves every type;
- an element is named by exactly one of its ``TARGET`` fields, never an empty one (``named()``),
  or one of the model's other ``WIRE_FORMS`` (``PointArgs``: ``x`` and ``y``), or — when
  ``TARGET_OPTIONAL`` — none of them: a ``oneOf`` of the forms' ``required`` lists;
- what only a person reads (titles, descriptions, defaults) is left out, and every ``$ref`` is
  written in place, so the extension's validator (extension/shared/arg-schema.js) needs none;
- ``request_schema`` adds what the relay puts beside them (the call's lineage, an upload's bytes).

``generate.py`` writes each relayed action's schema into extension/worker/catalogue.js, and the
extension's dispatcher checks every request's ``args`` against it before a handler runs.
tests/mcp_server/test_wire_schema.py holds that every tool's ``wire()`` of valid arguments matches.
Pure: no I/O; never hand-write a tool's schema here, declare the shape on its model.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from .lineage import _nested_models
from .vocabulary import Relay, ToolSpec

__all__ = ["KEYWORDS", "PROVENANCE", "SANDBOX_FILE", "request_schema", "wire_schema"]

#: What a person reads, not what a value must be.
_DROPPED = frozenset({"title", "description", "default", "examples"})

#: Every keyword a wire schema may hold (extension/shared/arg-schema.js KEYWORDS enforces exactly
#: these and refuses every value under a schema with another).
KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "pattern",
        "items",
        "minItems",
        "maxItems",
        "anyOf",
        "oneOf",
        "not",
    }
)


def _models(model: type[BaseModel]) -> Iterator[type[BaseModel]]:
    yield model
    for field in model.model_fields.values():
        for nested in _nested_models(field.annotation):
            yield from _models(nested)


def _forms(model: type[BaseModel]) -> list[dict[str, Any]] | None:
    """The ways a model's wire form names its element (None: it names none)."""
    target: tuple[str, ...] = getattr(model, "TARGET", ())
    if not target:
        return None
    forms: list[dict[str, Any]] = [{"required": [key]} for key in target]
    forms += [{"required": list(form)} for form in getattr(model, "WIRE_FORMS", ())]
    if getattr(model, "TARGET_OPTIONAL", False):
        forms.append({"not": {"anyOf": [{"required": [key]} for key in target]}})
    return forms


def _without_null(node: dict[str, Any]) -> dict[str, Any]:
    alternatives = [a for a in node.get("anyOf", ()) if a != {"type": "null"}]
    if "anyOf" not in node or len(alternatives) > 1:
        return node if "anyOf" not in node else {**node, "anyOf": alternatives}
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    return {**rest, **alternatives[0]}


#: The call's page lineage the relay adds to any request (mcp_server/tools.py ``_provenance``):
#: its entries' fields are checked by the extension's provenance gate, which reads them.
PROVENANCE: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "evidence": {"type": "array", "items": {"type": "object"}},
        "captures": {"type": "array", "items": {"type": "object"}},
    },
}

#: What the relay adds for a ``Relay.sandbox_file`` argument (mcp_server/tools.py
#: ``_sandbox_files``): each checked file's name and size, in the order of the paths.
SANDBOX_FILE: dict[str, Any] = {
    "files": {
        "type": "array",
        "minItems": 1,
        "items": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "size": {"type": "integer", "minimum": 0},
            },
            "required": ["name", "size"],
        },
    },
}


def request_schema(spec: ToolSpec) -> dict[str, Any]:
    """The schema of a relayed call's ``args`` as the extension receives them: the tool's wire
    form (``wire_schema``) with what the relay adds (its lineage; a sandbox file's contents)."""
    schema = wire_schema(spec.arguments)
    props: dict[str, Any] = schema["properties"]
    props["provenance"] = PROVENANCE
    if isinstance(spec.call, Relay) and spec.call.sandbox_file is not None:
        props.update(SANDBOX_FILE)
        required = [spec.call.sandbox_file, *SANDBOX_FILE]
        schema["required"] = [*schema.get("required", ()), *required]
    return schema


def wire_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The schema of ``model``'s wire form (``Arguments.wire()``), compact and self-contained."""
    schema = model.model_json_schema()
    defs: dict[str, Any] = schema.pop("$defs", {})
    classes = {cls.__name__: cls for cls in _models(model)}

    def convert(node: Any, owner: type[BaseModel] | None) -> Any:
        if isinstance(node, list):
            return [convert(item, None) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            return convert(defs[name], classes[name])
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED:
                continue
            if key == "properties":
                out[key] = {name: convert(prop, None) for name, prop in value.items()}
            else:
                out[key] = convert(value, None)
        out = _without_null(out)
        forms = _forms(owner) if owner is not None else None
        if forms is not None:
            props = out["properties"]
            for key in getattr(owner, "TARGET", ()):
                props[key] = {**props[key], "minLength": 1}
            out["oneOf"] = forms
        unknown = set(out) - KEYWORDS
        if unknown:
            raise ValueError(f"{model.__name__}: the wire schema would hold {sorted(unknown)}")
        return out

    converted: dict[str, Any] = convert(schema, model)
    return converted
