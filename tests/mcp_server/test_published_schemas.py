"""The schemas ``tools/list`` publishes are the compact form of the catalogue's models
(mcp_server/catalogue/published.py) and say the same to a client: on values drawn from each
tool's full pydantic schema (seeded by the tool's name), the published input schema accepts
exactly what the full one accepts wherever no argument is null (an optional argument is left
out, never sent as null), and never accepts what the full one refuses; the published output
schema accepts exactly what the full one does, nulls included (results carry them)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tabwarden.mcp_server.catalogue import CATALOGUE, ToolSpec
from tabwarden.mcp_server.catalogue.published import compact_input, compact_output
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
def test_the_published_output_schema_accepts_exactly_what_the_result_schema_does(
    spec: ToolSpec,
) -> None:
    schema = spec.result.model_json_schema(mode="serialization")
    full = Draft202012Validator(schema)
    compact = Draft202012Validator(LISTED[spec.name]["outputSchema"])
    verdicts = [(full.is_valid(v), compact.is_valid(v), v) for v in _draws(schema, spec.name)]
    assert all(a == b for a, b, _ in verdicts), [v for a, b, v in verdicts if a != b][:3]


def test_nothing_published_repeats_a_name_as_a_title_or_describes_a_result_field() -> None:
    for name, tool in LISTED.items():
        assert "title" not in _keys(tool["inputSchema"]) - _property_names(tool["inputSchema"]), (
            name
        )
        assert "description" not in _keys(tool["outputSchema"]) - _property_names(
            tool["outputSchema"]
        ), name


def _property_names(node: Any) -> set[str]:
    if isinstance(node, dict):
        own = set(node.get("properties", {})) if isinstance(node.get("properties"), dict) else set()
        return own | {k for v in node.values() for k in _property_names(v)}
    if isinstance(node, list):
        return {k for v in node for k in _property_names(v)}
    return set()


def test_compaction_drops_only_prose_and_the_null_alternative() -> None:
    full = {
        "title": "Args",
        "type": "object",
        "properties": {
            "title": {"title": "Title", "type": "string", "description": "kept"},
            "ref": {
                "anyOf": [{"type": "string", "pattern": "^@e"}, {"type": "null"}],
                "default": None,
                "description": "a ref",
            },
            "both": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
        },
        "required": ["title"],
        "additionalProperties": False,
    }
    assert compact_input(full) == {
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "kept"},
            "ref": {"type": "string", "pattern": "^@e", "description": "a ref"},
            "both": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
        },
        "required": ["title"],
        "additionalProperties": False,
    }
    assert compact_output(full)["properties"]["ref"] == {
        "anyOf": [{"type": "string", "pattern": "^@e"}, {"type": "null"}],
        "default": None,
    }
