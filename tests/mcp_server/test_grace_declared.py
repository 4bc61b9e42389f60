"""Which confirm-window questions a grace may skip is declared per tool in the catalogue
(``ToolSpec.asks``), never listed by hand: every tool whose extension handler asks the person a
question of its own declares how often, the gates that always ask cannot be declared graceable,
and worker/catalogue.js ``GRACE_ACTIONS`` (what worker/grace.js covers) is written from it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from tabwarden.mcp_server.catalogue import BY_NAME, CATALOGUE, Asks, Gate, ToolSpec

REPO = Path(__file__).resolve().parents[2]
HANDLERS = REPO / "extension" / "handlers"

#: A question put in a handler: interact.js's ``ask(ctx, {... tool: "x"``, or a direct
#: ``confirm({ kind: "action", tool: "x"`` (the tool named within the call's first lines).
_ASKED = re.compile(r"(?:\bask\(ctx, \{|\bconfirm\(\{)[^;]{0,200}?\btool: \"([a-z_]+)\"", re.S)


def _asked_in_handlers() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted(HANDLERS.glob("*.js")):
        for name in _ASKED.findall(path.read_text("utf-8")):
            found.setdefault(name, set()).add(path.name)
    return found


def test_the_scan_finds_the_questions_it_must() -> None:
    asked = _asked_in_handlers()
    for name in ("page_click", "page_press", "page_select", "page_keys", "page_mouse"):
        assert name in asked, name
    assert {"tab_close", "page_dialog", "page_fetch"} <= set(asked)


def test_every_tool_a_handler_asks_about_declares_how_often() -> None:
    undeclared = {
        name: files
        for name, files in _asked_in_handlers().items()
        if name not in BY_NAME or BY_NAME[name].asks is None
    }
    assert not undeclared, f"declare asks=Asks.GRACE or Asks.EVERY_CALL for: {undeclared}"


def test_what_must_always_be_asked_is_declared_so() -> None:
    for spec in CATALOGUE:
        if spec.gate in (Gate.OFF_BY_DEFAULT, Gate.PRESENCE_CONFIRM):
            assert spec.asks is Asks.EVERY_CALL, spec.name
    for name in ("page_eval", "page_upload", "page_fetch", "page_dialog", "tab_close"):
        assert BY_NAME[name].asks is Asks.EVERY_CALL, name


def _kwargs(name: str) -> dict[str, object]:
    return {f.name: getattr(BY_NAME[name], f.name) for f in dataclasses.fields(ToolSpec)}


def test_a_spec_that_asks_without_saying_how_often_cannot_be_made() -> None:
    with pytest.raises(ValueError, match="declare asks"):
        ToolSpec(**{**_kwargs("page_select"), "asks": None})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="every call"):
        ToolSpec(**{**_kwargs("page_eval"), "asks": Asks.GRACE})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="declare asks"):
        ToolSpec(**{**_kwargs("page_fetch"), "asks": None})  # type: ignore[arg-type]


def test_the_extension_covers_exactly_the_declared_graceable_tools() -> None:
    text = (REPO / "extension" / "worker" / "catalogue.js").read_text("utf-8")
    block = re.search(
        r"^export const GRACE_ACTIONS = Object\.freeze\(\[(.*?)^\]\);", text, re.M | re.S
    )
    assert block
    declared = {s.name for s in CATALOGUE if s.asks is Asks.GRACE}
    assert set(re.findall(r'"([a-z_]+)"', block.group(1))) == declared
