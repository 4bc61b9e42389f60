"""Everything derived from the catalogue, written by one command.

``python -m tabwarden.mcp_server.catalogue.generate --write`` rewrites, from the tools'
declarations in this package:

- ``tests/mcp_server/tools_list.json``: what ``tools/list`` publishes (names, titles,
  descriptions, input and output schemas, annotations), as the in-process server lists it with
  every tool (``tabwarden mcp --caps all``; the default list leaves out the opt-in families,
  ``published.PROFILES``);
- README.md's Tools table and docs/protocol.md's action catalogue, each between its markers
  (``ToolSpec.docs`` holds the rows' words);
- ``extension/worker/catalogue.js``: the facts the extension acts on (which handler family serves
  each action, the actions that take ``waitFor`` / ``observe``, the frame table, the actions
  whose address lineage the provenance gate decides and on which argument, and the JSON schema of
  each action's ``args`` as relayed (``wire.request_schema``), which its dispatcher checks).

Without ``--write`` it checks and names each stale file (exit status 1);
tests/mcp_server/test_generated_references.py runs the check. This is the one module of the
catalogue that reads and writes files, and only those above; the server never imports it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import CATALOGUE, FAMILY, Acting, Asks, FrameOutput, Gate, Lineage, ToolSpec
from .wire import request_schema

__all__ = ["COMMAND", "TARGETS", "generated", "main"]

COMMAND = "python -m tabwarden.mcp_server.catalogue.generate --write"
REPO = Path(__file__).resolve().parents[2]

README_BEGIN = (
    "<!-- tools: generated from mcp_server/catalogue/ by "
    f"`{COMMAND}`; edit the tools' declarations, not these rows -->"
)
README_END = "<!-- tools: end -->"
PROTOCOL_BEGIN = README_BEGIN.replace("tools:", "actions:")
PROTOCOL_END = "<!-- actions: end -->"

#: The gates a README reader must not miss, set in bold.
_BOLD_GATES = frozenset({Gate.CONFIRM, Gate.OFF_BY_DEFAULT})

TOOLS_LIST_FIELDS = ("title", "description", "inputSchema", "outputSchema", "annotations")


def _names(names: list[str]) -> str:
    return " / ".join(f"`{name}`" for name in names)


def readme_table() -> str:
    """The README's Tools table, markers included: one row per tool, or per tools listed
    together (``docs.listed_with``), in catalogue order."""
    with_ = {spec.name: [spec.name] for spec in CATALOGUE if spec.docs.listed_with is None}
    for spec in CATALOGUE:
        if spec.docs.listed_with is not None:
            with_[spec.docs.listed_with].append(spec.name)
    lines = [README_BEGIN, "| tool | what it does | gate | risk |", "|---|---|---|---|"]
    for spec in CATALOGUE:
        if spec.docs.listed_with is not None:
            continue
        gate = spec.gate.value if spec.gate not in _BOLD_GATES else f"**{spec.gate.value}**"
        cells = [
            _names(with_[spec.name]),
            spec.docs.does,
            spec.docs.gate or gate,
            spec.docs.risk or spec.risk.value,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(README_END)
    return "\n".join(lines)


def protocol_table() -> str:
    """docs/protocol.md's action catalogue, markers included: one row per relayed action."""
    lines = [
        PROTOCOL_BEGIN,
        "| action | args | result | gate beyond origin + ownership |",
        "|---|---|---|---|",
    ]
    for spec in CATALOGUE:
        if spec.action is None:
            continue
        docs = spec.docs
        lines.append(f"| `{spec.action}` | {docs.args} | {docs.result} | {docs.guard} |")
    lines.append(PROTOCOL_END)
    return "\n".join(lines)


def _js(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _address(spec: ToolSpec) -> dict[str, Any] | None:
    """Where the provenance gate decides a tool's address lineage: the one argument declared
    ``Lineage.ADDRESS`` or ``Lineage.REQUEST_TARGET`` (``request``: its body goes there too)."""
    found = [
        (name, lineage)
        for name, field in spec.arguments.model_fields.items()
        for lineage in field.metadata
        if lineage in (Lineage.ADDRESS, Lineage.REQUEST_TARGET)
    ]
    if len(found) > 1:
        raise ValueError(f"{spec.name}: the provenance gate decides one address per call")
    if not found:
        return None
    name, lineage = found[0]
    return {"address": name, **({"request": True} if lineage is Lineage.REQUEST_TARGET else {})}


def extension_module() -> str:
    """``extension/worker/catalogue.js``: the catalogue's facts the extension acts on."""
    relayed = [spec for spec in CATALOGUE if spec.action is not None]
    families = "".join(f"  [{_js(s.action)}, {_js(FAMILY[s.name])}],\n" for s in relayed)
    observing = "".join(f"  {_js(s.name)},\n" for s in relayed if issubclass(s.arguments, Acting))
    framed = [s for s in relayed if s.frames in (FrameOutput.RENDERS, FrameOutput.SAVES)]
    frames = "".join(f"  [{_js(s.name)}, {_js(s.frames.value)}],\n" for s in framed)
    addressed = [(s.name, rule) for s in relayed if (rule := _address(s)) is not None]
    addresses = "".join(f"  [{_js(name)}, {_js(rule)}],\n" for name, rule in addressed)
    schemas = "".join(f"  [{_js(s.action)}, {_compact(request_schema(s))}],\n" for s in relayed)
    graced = "".join(f"  {_js(s.name)},\n" for s in relayed if s.asks is Asks.GRACE)
    every = "".join(f"  {_js(s.name)},\n" for s in relayed if s.asks is Asks.EVERY_CALL)
    return f"""\
// worker/catalogue.js — generated from mcp_server/catalogue/ by `{COMMAND}`:
// edit the tools' declarations there, never this file (a test fails when it differs from what
// the generator writes). The catalogue's facts the extension acts on. Pure data: imports nothing.

/**
 * Every action the MCP server relays, in catalogue order, with the handler family that serves it
 * (handlers/<family>.js; handlers/actions.js builds its dispatch map from this).
 * @type {{ReadonlyArray<[string, string]>}}
 */
export const ACTION_FAMILIES = Object.freeze([
{families}]);

/**
 * The actions that take `waitFor` and `observe` (their arguments are the catalogue's `Acting`;
 * handlers/interact.js withAftermath wraps each).
 * @type {{ReadonlyArray<string>}}
 */
export const OBSERVING_ACTIONS = Object.freeze([
{observing}]);

/**
 * The actions whose output renders every frame of the page or saves a file a frame started
 * (the catalogue's `FrameOutput`; docs/adr/0007-frames-in-rendered-output.md).
 * @type {{ReadonlyArray<[string, "renders" | "saves"]>}}
 */
export const FRAME_OUTPUT = Object.freeze([
{frames}]);

/**
 * The actions whose address lineage worker/provenance-gate.js decides before the handler runs: the
 * argument the catalogue declares an address (`Lineage.ADDRESS`) or a request's target
 * (`Lineage.REQUEST_TARGET`: `request`, its body and headers go there too).
 * @type {{ReadonlyArray<[string, {{address: string, request?: boolean}}]>}}
 */
export const ADDRESS_LINEAGE = Object.freeze([
{addresses}]);

/**
 * The JSON schema of every action's `args` as the MCP server sends them (`Arguments.wire()`;
 * mcp_server/catalogue/wire.py derives each from the tool's input schema): worker/dispatch.js
 * checks a request's `args` against its action's with shared/arg-schema.js before the handler runs.
 * @type {{ReadonlyArray<[string, Record<string, unknown>]>}}
 */
export const ACTION_ARGS = Object.freeze([
{schemas}]);

/**
 * The actions whose own confirm-window question a grace may cover (the catalogue's
 * `Asks.GRACE`): after the person allows one, further calls of any of them on that tab and that
 * origin are not asked again for the policy's clickGraceSeconds (worker/grace.js).
 * @type {{ReadonlyArray<string>}}
 */
export const GRACE_ACTIONS = Object.freeze([
{graced}]);

/**
 * The actions that ask the person on every call (`Asks.EVERY_CALL`): no grace ever covers them.
 * @type {{ReadonlyArray<string>}}
 */
export const EVERY_CALL_ACTIONS = Object.freeze([
{every}]);
"""


def tools_list() -> str:
    """``tools_list.json``: every tool as the in-process server lists it."""
    from mcp import Client

    from tabwarden.mcp_server.bridge_client import BridgeClient
    from tabwarden.mcp_server.server import ToolGuard, build_server
    from tabwarden.trust.verify import Effective

    with tempfile.TemporaryDirectory(prefix="tabwarden-generate-") as runtime:
        bridge = BridgeClient(label="generate", env={"TABWARDEN_RUNTIME_DIR": runtime})
        server = build_server(bridge, ToolGuard(Effective.unpaired, None))

        async def listed() -> dict[str, dict[str, Any]]:
            async with Client(server, raise_exceptions=True) as client:
                tools = (await client.list_tools()).tools
            out: dict[str, dict[str, Any]] = {}
            for tool in tools:
                wire = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
                out[tool.name] = {key: wire.get(key) for key in TOOLS_LIST_FIELDS}
            return out

        return json.dumps(asyncio.run(listed()), indent=1, sort_keys=True)


def _between(begin: str, end: str, render: Callable[[], str]) -> Callable[[str], str]:
    def replace(text: str) -> str:
        start, stop = text.find(begin), text.find(end)
        if start == -1 or stop == -1 or stop < start:
            raise ValueError(f"the markers {begin[:24]}… are missing or out of order")
        return text[:start] + render() + text[stop + len(end) :]

    return replace


#: Each generated file, relative to the repository, and how its fresh text is made from its
#: current text (a block between markers is replaced; a whole file is written anew).
TARGETS: dict[str, Callable[[str], str]] = {
    "tests/mcp_server/tools_list.json": lambda _old: tools_list(),
    "README.md": _between(README_BEGIN, README_END, readme_table),
    "docs/protocol.md": _between(PROTOCOL_BEGIN, PROTOCOL_END, protocol_table),
    "extension/worker/catalogue.js": lambda _old: extension_module(),
}


def generated(root: Path = REPO) -> dict[str, tuple[str, str]]:
    """Each target's ``(current, fresh)`` text."""
    out: dict[str, tuple[str, str]] = {}
    for rel, fresh in TARGETS.items():
        path = root / rel
        current = path.read_text("utf-8") if path.exists() else ""
        out[rel] = (current, fresh(current))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tabwarden.mcp_server.catalogue.generate",
        description="Check (default) or rewrite every file generated from the tool catalogue.",
    )
    parser.add_argument("--write", action="store_true", help="rewrite the stale files")
    parser.add_argument("--root", type=Path, default=REPO, help="the repository (default: this)")
    args = parser.parse_args(argv)
    texts = generated(args.root)
    stale = [rel for rel, (current, fresh) in texts.items() if current != fresh]
    if args.write:
        for rel in stale:
            (args.root / rel).write_text(texts[rel][1], "utf-8")
            print(f"wrote {rel}")
        return 0
    for rel in stale:
        print(f"{rel} is stale: run {COMMAND}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
