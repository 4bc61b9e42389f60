# Invariant: for every tool in mcp_server.catalogue.CATALOGUE, any arguments object a client can send either validates (spec.arguments.model_validate) or raises pydantic's ValidationError, and a validated one either refuses with BadArguments or gives a wire dict — never another exception — whose keys are the model's fields, which encodes as a bridge frame, and which validates again to the same wire dict.  # noqa: E501
"""Atheris harness for the MCP tool-argument validation, driven from the catalogue.

Input: byte 0 chooses the tool (``CATALOGUE`` order, so a new tool is fuzzed without touching
this file). Byte 1 even: the rest is parsed as JSON (an arguments object straight from the
wire; inputs that are not a JSON object are skipped, as the SDK would refuse them). Odd: the rest
is a recipe that fills the model's own fields — and some it does not have — with values from
typed pools of valid values and near misses.

Run: ``python fuzz/fuzz_tool_args.py -runs=100000 -max_len=4096`` (or ``python -m fuzz.run``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fuzz.preamble import instrumented, run_libfuzzer
    from fuzz.seed_edits import SCALARS, Recipe
else:
    try:  # `python -m fuzz.run`, pytest
        from fuzz.preamble import instrumented, run_libfuzzer
        from fuzz.seed_edits import SCALARS, Recipe
    except ImportError:  # `python fuzz/fuzz_tool_args.py`: this directory is sys.path[0]
        from preamble import instrumented, run_libfuzzer
        from seed_edits import SCALARS, Recipe

# pydantic and the MCP types are imported first, uninstrumented: instrumenting them costs
# tens of seconds per start and guides nothing (their validators are compiled code anyway).
import mcp_types  # noqa: F401
from pydantic import ValidationError

from tabwarden.protocol.codes import BAD_REQUEST

with instrumented(__name__):
    from tabwarden.mcp_server.catalogue import CATALOGUE, BadArguments, Relay
    from tabwarden.protocol import frames

#: Values a client might send for any field: the right types, the wrong ones, the edges.
POOL: tuple[Any, ...] = (
    *SCALARS,
    0,
    7,
    2**31,
    -5,
    "7",
    " 7",
    "@e12",
    "#main > a",
    "//a[@href]",
    "Enter",
    "bottom",
    "top",
    "visible",
    "absent",
    "local",
    "session",
    "https://example.com/",
    "javascript:alert(1)",
    "x" * 9000,
    ["href", "title"],
    ["href", 1],
    {"nested": True},
    60_000,
    60_001,
    5_000_000,
    5_000_001,
    float("nan"),
    1e300,
)
EXTRA = ("extra", "tabid", "args", "__proto__", "type", "")


def _arguments(spec_fields: list[str], recipe: Recipe) -> dict[str, Any]:
    args: dict[str, Any] = {}
    names = [*spec_fields, *EXTRA]
    for _ in range(recipe.below(len(spec_fields) + 3)):
        name = recipe.pick(spec_fields) if spec_fields and recipe.byte() % 6 else recipe.pick(names)
        args[name] = recipe.pick(POOL)
    return args


def check(spec_index: int, arguments: Any) -> None:
    spec = CATALOGUE[spec_index % len(CATALOGUE)]
    model = spec.arguments
    try:
        validated = model.model_validate(arguments)
    except ValidationError:
        return
    try:
        wire = validated.wire()
    except BadArguments as exc:
        assert exc.code == BAD_REQUEST
        return
    assert type(wire) is dict, wire
    assert set(wire) <= set(model.model_fields), (spec.name, sorted(wire))
    # What the bridge client sends: a hop-2 frame (a lone surrogate travels as its \u escape).
    frames.encode_frame({"type": "request", "id": 1, "action": spec.name, "args": wire})
    again = model.model_validate(wire)
    assert again.wire() == wire, (spec.name, wire, again.wire())
    if isinstance(spec.call, Relay) and spec.call.sandbox_file is not None:
        named = wire[spec.call.sandbox_file]  # the paths the MCP server checks in the sandbox
        assert isinstance(named, list) and named and all(isinstance(p, str) for p in named)


def test_one_input(data: bytes) -> None:
    if len(data) < 2:
        return
    spec = CATALOGUE[data[0] % len(CATALOGUE)]
    if data[1] & 1 == 0:
        try:
            arguments = json.loads(data[2:])
        except ValueError:  # not JSON (UnicodeDecodeError included): the SDK refuses it first
            return
        except RecursionError:
            return
        if not isinstance(arguments, dict):
            return
    else:
        arguments = _arguments(list(spec.arguments.model_fields), Recipe(data[2:]))
    check(data[0], arguments)


def _seed(index: int, args: dict[str, Any]) -> bytes:
    return bytes([index, 0]) + json.dumps(args).encode()


_BY_NAME = {spec.name: i for i, spec in enumerate(CATALOGUE)}
SEEDS: list[bytes] = [
    *(bytes([i, 1]) + bytes(range(1, 40)) for i in range(len(CATALOGUE))),
    _seed(_BY_NAME["tab_open"], {"url": "https://example.com/"}),
    _seed(_BY_NAME["page_click"], {"tabId": 3, "ref": "@e1"}),
    _seed(_BY_NAME["page_click"], {"tabId": 3, "ref": "@e1", "selector": "a"}),
    _seed(_BY_NAME["page_fill"], {"tabId": 3, "selector": "#q", "value": "hi", "index": 1}),
    _seed(_BY_NAME["page_press"], {"tabId": 3, "key": "Enter"}),
    _seed(_BY_NAME["page_scroll"], {"tabId": 3, "to": "top"}),
    _seed(_BY_NAME["page_scroll"], {"tabId": 3, "text": "Next"}),
    _seed(_BY_NAME["page_wait_for"], {"tabId": 3, "selector": "", "timeoutMs": 60000}),
    _seed(_BY_NAME["page_scrape"], {"tabId": 3, "selector": "a", "attrs": None}),
    _seed(_BY_NAME["page_text"], {"tabId": 3, "offset": 0, "maxChars": 5000000}),
    _seed(_BY_NAME["storage_get"], {"tabId": 3, "area": "session", "key": ""}),
    _seed(_BY_NAME["page_eval"], {"tabId": 3, "code": "1+1"}),
    _seed(_BY_NAME["page_upload"], {"tabId": 3, "selector": "input", "path": "a.txt"}),
    _seed(_BY_NAME["page_upload"], {"tabId": 3, "ref": "@e1", "paths": ["a.txt", "b.txt"]}),
    _seed(_BY_NAME["page_eval"], {"tabId": 3, "code": "(el, n) => n", "ref": "@e1", "args": [1]}),
]


def main() -> None:
    run_libfuzzer(test_one_input)


if __name__ == "__main__":
    main()
