"""The host-call catalogue is the one list: the bridge admits exactly its actions, every action
is documented in docs/protocol.md, and every host call the extension makes is in it."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from tabwarden.host.calls import UnknownHostAction
from tabwarden.host.host_calls import HOST_CALLS, host_calls
from tabwarden.trust.gate import TrustGate

ROOT = Path(__file__).resolve().parents[2]
#: Quoted action names passed to the extension's host-call helpers (``hostCall("x"``,
#: ``call("x"``) — the patterns the extension's modules use.
_JS_CALL = re.compile(r"""\b(?:hostCall|call)\(\s*["']([a-z_]+)["']""")


def test_taps_are_exactly_the_two_ceremonies_that_verify_an_assertion() -> None:
    assert {name for name, call in HOST_CALLS.items() if call.tap} == {
        "pair_complete",
        "presence_complete",
    }


def test_every_host_call_is_documented() -> None:
    text = (ROOT / "docs" / "protocol.md").read_text("utf-8")
    missing = [name for name in HOST_CALLS if f"`{name} {{" not in text]
    assert missing == []


def test_the_extension_calls_only_catalogued_actions() -> None:
    used: set[str] = set()
    for path in (ROOT / "extension").rglob("*.js"):
        used |= set(_JS_CALL.findall(path.read_text("utf-8")))
    assert used, "no host calls found: the pattern no longer matches the extension's code"
    assert used - set(HOST_CALLS) == set()


@pytest.mark.parametrize("action", ["constructor", "__proto__", "pair", "unkill", "Kill"])
def test_anything_else_is_unknown_before_a_handler_runs(tmp_path: Path, action: str) -> None:
    config = tmp_path / "cfg"
    call = host_calls(TrustGate({"TABWARDEN_CONFIG_DIR": str(config)}), "chromium")

    async def attempt() -> None:  # HostCalls promises an Awaitable; asyncio.run wants a coroutine
        await call(action, {})

    with pytest.raises(UnknownHostAction):
        asyncio.run(attempt())
    assert not config.exists()  # nothing was read into being, nothing written
