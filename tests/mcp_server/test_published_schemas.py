"""The schemas ``tools/list`` publishes are the compact form of the catalogue's models
(mcp_server/catalogue/published.py) and say the same to a client: on values drawn from each
tool's full pydantic schema (seeded by the tool's name), the published input schema accepts
exactly what the full one accepts wherever no argument is null (an optional argument is left
out, never sent as null), and never accepts what the full one refuses; the published output
schema accepts every result the full one accepts (the server holds each result to the full
model before it is sent: docs/adr/0012)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tabwarden.mcp_server.catalogue import BY_NAME, CATALOGUE, ToolSpec
from tabwarden.mcp_server.catalogue.published import (
    OUTPUT_SCHEMA,
    compact_annotations,
    compact_input,
    compact_output,
)
from tests.mcp_server.schema_draws import draw, resolve

LISTED = json.loads(Path(__file__).with_name("tools_list.json").read_text())
DRAWS = 300


def _has_null(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, dict):
        return any(_has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_null(v) for v in value)
    return False


def _draws(schema: dict[str, Any], seed: str) -> list[Any]:
    """Values drawn from ``schema``, and each again with one property set to a value at or just
    past one of its bounds (so a bound the published schema lost shows)."""
    root = resolve(schema, schema.get("$defs", {}))
    rng = random.Random(seed)  # noqa: S311 — test data, not a secret
    values: list[Any] = []
    for _ in range(DRAWS):
        value = draw(root, rng)
        values.append(value)
        props = root.get("properties", {})
        if isinstance(value, dict) and props:
            name = rng.choice(sorted(props))
            values.append({**value, name: rng.choice(_edges(props[name]))})
    return values


def _edges(node: dict[str, Any]) -> list[Any]:
    """Values at and just past the bounds ``node`` (or any of its alternatives) sets."""
    edges: list[Any] = ["", "zz", None, True, 0, -1, 1.5, [], {}]
    for alt in [node, *node.get("anyOf", ())]:
        for key, step in (("maximum", 1), ("minimum", -1), ("exclusiveMaximum", 0)):
            if isinstance(alt.get(key), int | float):
                edges += [alt[key], alt[key] + step]
        if isinstance(alt.get("maxLength"), int):
            edges += ["x" * alt["maxLength"], "x" * (alt["maxLength"] + 1)]
        if isinstance(alt.get("maxItems"), int):
            edges.append(["x"] * (alt["maxItems"] + 1))
        edges += list(alt.get("enum", ())) + ["not-one-of-them"]
    return edges


def _keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {k for v in node.values() for k in _keys(v)}
    if isinstance(node, list):
        return {k for v in node for k in _keys(v)}
    return set()


@pytest.mark.parametrize("spec", CATALOGUE, ids=lambda s: s.name)
def test_the_published_input_schema_accepts_what_the_model_schema_accepts(spec: ToolSpec) -> None:
    published = LISTED[spec.name]["inputSchema"]
    full = Draft202012Validator(spec.arguments.model_json_schema())
    compact = Draft202012Validator(published)
    accepted = 0
    for value in _draws(spec.arguments.model_json_schema(), spec.name):
        by_full, by_compact = full.is_valid(value), compact.is_valid(value)
        if by_compact:
            assert by_full, f"{spec.name}: published schema accepts {value!r}, the model's refuses"
        if not _has_null(value):
            assert by_full == by_compact, f"{spec.name}: the two disagree on {value!r}"
        accepted += by_compact
    assert accepted > 0, f"{spec.name}: no draw was valid, so the comparison said nothing"


@pytest.mark.parametrize("spec", CATALOGUE, ids=lambda s: s.name)
def test_the_published_output_schema_accepts_every_result_the_result_schema_accepts(
    spec: ToolSpec,
) -> None:
    schema = spec.result.model_json_schema(mode="serialization")
    full = Draft202012Validator(schema)
    published = LISTED[spec.name]["outputSchema"]
    assert published == dict(OUTPUT_SCHEMA), spec.name
    compact = Draft202012Validator(published)
    valid = [v for v in _draws(schema, spec.name) if full.is_valid(v)]
    assert valid, f"{spec.name}: no draw was a valid result, so the comparison said nothing"
    assert all(compact.is_valid(v) for v in valid)
    assert not compact.is_valid([]) and not compact.is_valid("a result")


def test_nothing_published_repeats_a_name_as_a_title_or_a_definition() -> None:
    for name, tool in LISTED.items():
        schema = tool["inputSchema"]
        assert "title" not in _keys(schema) - _property_names(schema), name
        assert "$defs" not in _keys(schema) - _property_names(schema), name
        assert "$ref" not in _keys(schema) - _property_names(schema), name


def _property_names(node: Any) -> set[str]:
    if isinstance(node, dict):
        own = set(node.get("properties", {})) if isinstance(node.get("properties"), dict) else set()
        return own | {k for v in node.values() for k in _property_names(v)}
    if isinstance(node, list):
        return {k for v in node for k in _property_names(v)}
    return set()


def test_compaction_drops_only_prose_defaults_that_say_nothing_and_the_null_alternative() -> None:
    full = {
        "title": "Args",
        "type": "object",
        "$defs": {
            "Wait": {
                "title": "Wait",
                "description": "a docstring, for this code's readers",
                "type": "object",
                "properties": {"state": {"enum": ["a", "b"], "type": "string", "default": "a"}},
            }
        },
        "properties": {
            "title": {"title": "Title", "type": "string", "description": "kept"},
            "ref": {
                "anyOf": [{"type": "string", "pattern": "^@e"}, {"type": "null"}],
                "default": None,
                "description": "a ref",
            },
            "both": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
            "flag": {"type": "boolean", "default": False},
            "wait": {
                "anyOf": [{"$ref": "#/$defs/Wait"}, {"type": "null"}],
                "default": None,
                "description": "then wait",
            },
        },
        "required": ["title"],
        "additionalProperties": False,
    }
    assert compact_input(full) == {
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "kept"},
            "ref": {"type": "string", "pattern": "^@e", "description": "a ref"},
            "both": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "flag": {"type": "boolean"},
            "wait": {
                "type": "object",
                "properties": {"state": {"enum": ["a", "b"], "default": "a"}},
                "description": "then wait",
            },
        },
        "required": ["title"],
        "additionalProperties": False,
    }
    assert compact_output(full) == {"type": "object"}


def test_published_annotations_are_the_hints_that_differ_from_the_specification_defaults() -> None:
    given = {"readOnlyHint": True, "destructiveHint": True, "openWorldHint": False, "title": None}
    assert compact_annotations(given) == {
        "readOnlyHint": True,
        "destructiveHint": True,
        "openWorldHint": False,
    }
    assert compact_annotations({"readOnlyHint": False, "openWorldHint": True}) == {
        "readOnlyHint": False
    }
    for name, tool in LISTED.items():
        spec = BY_NAME[name].annotations.model_dump(by_alias=True, exclude_none=True)
        listed = tool["annotations"] or {}
        for hint, default in {
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": False,
            "openWorldHint": True,
        }.items():
            assert listed.get(hint, default) == spec.get(hint, default), (name, hint)
