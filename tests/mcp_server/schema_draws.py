"""Drawing values from a JSON schema, for tests that check a schema against the model it was made
from: often valid, not always (the model judges). Seeded by the caller's ``random.Random``."""

from __future__ import annotations

import random
import re
from typing import Any

#: Strings tried for a string field: a ref, selectors, text, addresses, file names, page ranges.
STRINGS = (
    "",
    "@e12",
    "#submit",
    "Sign in",
    "//button[1]",
    "http://127.0.0.1:8000/form?q=1",
    "report.pdf",
    "1-3, 5",
    "Enter",
    "x" * 300,
)


def resolve(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            return resolve(defs[ref.rsplit("/", 1)[-1]], defs)
        return {k: resolve(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [resolve(v, defs) for v in node]
    return node


def _number(node: dict[str, Any], rng: random.Random, integer: bool) -> float | int:
    lo = float(node.get("minimum", node.get("exclusiveMinimum", -50)))
    hi = float(node.get("maximum", node.get("exclusiveMaximum", lo + 10_000)))
    picks = [lo, hi, rng.uniform(lo, hi), 0, 1, -1]
    value = rng.choice(picks)
    return round(value) if integer else value


def draw(node: dict[str, Any], rng: random.Random) -> Any:
    """A value for ``node`` that is often, not always, valid (pydantic judges)."""
    if "anyOf" in node:
        return draw(rng.choice(node["anyOf"]), rng)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return rng.choice(node["enum"])
    kind = node.get("type")
    if kind == "null":
        return None
    if kind == "boolean":
        return rng.random() < 0.5
    if kind in ("integer", "number"):
        return _number(node, rng, kind == "integer")
    if kind == "string":
        pattern = node.get("pattern")
        pool = [s for s in STRINGS if pattern is None or re.search(pattern, s)]
        return rng.choice(pool or list(STRINGS))
    if kind == "array":
        count = rng.randint(node.get("minItems", 0), min(node.get("maxItems", 3), 3))
        return [draw(node.get("items", {"type": "string"}), rng) for _ in range(count)]
    if kind == "object":
        required = set(node.get("required", ()))
        out = {
            name: draw(prop, rng)
            for name, prop in node.get("properties", {}).items()
            if name in required or rng.random() < 0.4
        }
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            out.update({f"k{i}": draw(extra, rng) for i in range(rng.randint(0, 2))})
        return out
    return None
