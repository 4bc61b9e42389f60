"""Every relayed tool's ``wire()`` of valid arguments matches the wire schema the generator
writes into extension/worker/catalogue.js, as the extension's own validator
(extension/shared/arg-schema.js) checks it under Node; and that schema refuses a key the tool
does not take.

The arguments are drawn from each tool's published input schema (seeded, so a failure repeats):
what the MCP server accepts and ``wire()`` sends must be what the extension lets through, or a
valid call would answer bad_request in every browser.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tabwarden.mcp_server.catalogue import CATALOGUE, BadArguments, Relay, ToolSpec
from tabwarden.mcp_server.catalogue.wire import KEYWORDS, request_schema
from tests.mcp_server.schema_draws import draw, resolve

REPO = Path(__file__).resolve().parents[2]
RELAYED = [spec for spec in CATALOGUE if spec.action is not None]

#: Candidate arguments drawn per tool; at least MIN_VALID of them must be valid (a form of
#: several fields, each naming its element by exactly one of four keys, is valid in ~1 % of draws).
DRAWS = 600
MIN_VALID = 5

#: The validator, run under Node: each case is {action, args}; prints each one's refusal or null.
CHECK = """
import { readFileSync } from "node:fs";
const [catalogue, validator] = process.argv.slice(1);
const { ACTION_ARGS } = await import(catalogue);
const { argsMismatch, KEYWORDS } = await import(validator);
const schemas = new Map(ACTION_ARGS);
const cases = JSON.parse(readFileSync(0, "utf8"));
const verdicts = cases.map(({ action, args }) =>
  schemas.has(action) ? argsMismatch(schemas.get(action), JSON.parse(args)) : "no schema");
console.log(JSON.stringify({ verdicts, keywords: [...KEYWORDS].sort() }));
"""


#: A call's lineage as the relay attaches it (mcp_server/tools.py ``_provenance``).
PROVENANCE = {
    "evidence": [
        {"sourceOrigin": "http://a.test", "kind": "url", "token": "h…", "readAt": 1},
    ],
    "captures": [{"sourceOrigin": "http://b.test", "readAt": 2}],
}


def _relayed(spec: ToolSpec, wire: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The args the extension receives: ``wire()`` and what the relay adds (mcp_server/tools.py
    ``_relay``: a lineage when there is one, an upload's checked paths, names and sizes)."""
    request = dict(wire)
    if rng.random() < 0.5:
        request["provenance"] = PROVENANCE
    if isinstance(spec.call, Relay) and spec.call.sandbox_file is not None:
        request |= {spec.call.sandbox_file: ["/u/a.txt"], "files": [{"name": "a.txt", "size": 2}]}
    return request


def valid_arguments(spec: ToolSpec) -> dict[str, Any]:
    """The first draw of ``spec``'s arguments that its model accepts and makes a request of
    (seeded by its name)."""
    schema = spec.arguments.model_json_schema()
    root = resolve(schema, schema.get("$defs", {}))
    rng = random.Random(spec.name)  # noqa: S311 — test data, not a secret
    for _ in range(DRAWS):
        drawn = draw(root, rng)
        try:
            spec.arguments.model_validate(drawn).wire()
        except (ValidationError, BadArguments):
            continue
        return dict(drawn)
    raise AssertionError(f"{spec.name}: no valid arguments in {DRAWS} draws")


def _wires(spec: ToolSpec) -> list[dict[str, Any]]:
    """The relayed args of each valid draw of the tool's arguments (seeded by its name)."""
    schema = spec.arguments.model_json_schema()
    root = resolve(schema, schema.get("$defs", {}))
    rng = random.Random(spec.name)  # noqa: S311 — test data, not a secret
    wires: list[dict[str, Any]] = []
    for _ in range(DRAWS):
        try:
            args = spec.arguments.model_validate(draw(root, rng))
            wires.append(_relayed(spec, args.wire(), rng))
        except (ValidationError, BadArguments):
            continue
    return wires


def _verdicts(cases: list[dict[str, str]]) -> tuple[list[str | None], list[str]]:
    node = shutil.which("node")
    assert node, "Node.js is required (scripts/setup installs it)"
    extension = REPO / "extension"
    proc = subprocess.run(  # noqa: S603 — Node from PATH and this checkout's own modules
        [
            node,
            "--input-type=module",
            "-e",
            CHECK,
            (extension / "worker" / "catalogue.js").as_uri(),
            (extension / "shared" / "arg-schema.js").as_uri(),
        ],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    return report["verdicts"], report["keywords"]


@pytest.fixture(scope="module")
def wires() -> dict[str, list[dict[str, Any]]]:
    return {spec.action: _wires(spec) for spec in RELAYED if spec.action is not None}


def test_every_tool_draws_enough_valid_arguments(wires: dict[str, list[dict[str, Any]]]) -> None:
    few = {action: len(w) for action, w in wires.items() if len(w) < MIN_VALID}
    assert few == {}, f"too few valid draws to say anything: {few}"


@pytest.mark.promise("H4-64")
def test_wire_of_valid_arguments_matches_the_published_schema(
    wires: dict[str, list[dict[str, Any]]],
) -> None:
    cases = [
        {"action": action, "args": json.dumps(wire)} for action, ws in wires.items() for wire in ws
    ]
    verdicts, _ = _verdicts(cases)
    refused = [
        f"{case['action']} {case['args'][:200]}: {verdict}"
        for case, verdict in zip(cases, verdicts, strict=True)
        if verdict is not None
    ]
    assert refused == [], "\n".join(refused[:20])


@pytest.mark.promise("H4-64")
def test_the_published_schema_refuses_extra_and_prototype_keys(
    wires: dict[str, list[dict[str, Any]]],
) -> None:
    cases: list[dict[str, str]] = []
    for action, ws in wires.items():
        body = json.dumps(ws[0])[1:-1]
        sep = ", " if body else ""
        for extra in ('"zzExtra": 1', '"__proto__": {}', '"constructor": {}', '"session": "s2"'):
            cases.append({"action": action, "args": "{" + body + sep + extra + "}"})
    verdicts, _ = _verdicts(cases)
    let_through = [
        f"{case['action']} {case['args'][-60:]}"
        for case, verdict in zip(cases, verdicts, strict=True)
        if verdict is None or "unknown field" not in verdict
    ]
    assert let_through == [], "\n".join(let_through)


@pytest.mark.promise("H4-64")
def test_nulls_never_travel_and_the_schema_refuses_them(
    wires: dict[str, list[dict[str, Any]]],
) -> None:
    with_null = [action for action, ws in wires.items() for w in ws if None in w.values()]
    # (wire() itself: the relay's additions are never null either)
    assert with_null == [], f"wire() sent a null: {sorted(set(with_null))}"
    cases = [
        {"action": action, "args": json.dumps({**ws[0], name: None})}
        for action, ws in wires.items()
        for name in ws[0]
    ]
    verdicts, _ = _verdicts(cases)
    assert all(v is not None for v in verdicts), [
        c["args"] for c, v in zip(cases, verdicts, strict=True) if v is None
    ]


def _keywords(node: Any) -> set[str]:
    if isinstance(node, list):
        return set().union(*(_keywords(v) for v in node)) if node else set()
    if not isinstance(node, dict):
        return set()
    found = set(node) - {"properties"}
    for key, value in node.items():
        if key == "properties":
            found |= set().union(*(_keywords(p) for p in value.values())) if value else set()
        elif key not in ("enum", "const", "required"):
            found |= _keywords(value)
    return found


@pytest.mark.promise("H4-64")
def test_the_schemas_use_only_the_keywords_the_extension_enforces() -> None:
    used = set().union(*(_keywords(request_schema(s)) for s in RELAYED))
    assert used <= KEYWORDS, sorted(used - KEYWORDS)
    _, enforced = _verdicts([])
    assert sorted(KEYWORDS) == enforced, "wire.py KEYWORDS and arg-schema.js KEYWORDS differ"
