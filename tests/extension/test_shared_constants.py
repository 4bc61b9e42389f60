"""Numbers the extension and the MCP server must agree on, held equal (each lives in one place
per side; this test is the link)."""

from __future__ import annotations

import re
from pathlib import Path

from tabwarden.mcp_server import tools

REPO = Path(__file__).resolve().parents[2]


def _js_const(path: str, name: str) -> int:
    text = (REPO / path).read_text("utf-8")
    found = re.search(rf"^export const {name} = ([0-9_]+);", text, re.M)
    assert found, f"{name} not found in {path}"
    return int(found.group(1).replace("_", ""))


def test_the_extension_ends_a_call_before_the_server_gives_up_on_it() -> None:
    slack_ms = _js_const("extension/worker/dispatch.js", "CALL_SLACK_MS")
    margin_ms = _js_const("extension/worker/dispatch.js", "CALL_MARGIN_MS")
    assert slack_ms == tools.CONFIRM_SLACK_SECONDS * 1000
    assert 0 < margin_ms < slack_ms  # the extension's timeout, naming the step, arrives first


def test_the_terminal_session_and_its_actions_are_the_hosts() -> None:
    """The host relays the terminal's requests under one reserved session name; the extension
    serves them only to that name (handlers/tabs.js). Drift would either refuse `tabwarden tabs`
    or, worse, leave the extension's second check comparing against a name the host never sends."""
    from tabwarden.host.sessions import TERMINAL_ACTIONS, TERMINAL_SESSION

    text = (REPO / "extension/handlers/tabs.js").read_text("utf-8")
    session = re.search(r'^export const TERMINAL_SESSION = "([a-z]+)";', text, re.M)
    actions = re.search(r"^export const TERMINAL_ACTIONS = new Set\(\[([^\]]*)\]\);", text, re.M)
    assert session and actions
    assert session.group(1) == TERMINAL_SESSION
    assert set(re.findall(r'"([a-z_]+)"', actions.group(1))) == TERMINAL_ACTIONS


def test_every_policy_key_has_plain_words_on_the_options_page() -> None:
    """The options page names each policy key in a person's words (shared/policy-words.js
    POLICY_WORDS); a key added to trust/policy.py without words would show as its bare name."""
    from tabwarden.trust.policy import POLICY_KEYS

    text = (REPO / "extension/shared/policy-words.js").read_text("utf-8")
    block = re.search(
        r"^export const POLICY_WORDS = Object\.freeze\(\{(.*?)^\}\);", text, re.M | re.S
    )
    assert block
    assert set(re.findall(r"^\s+([A-Za-z]+):", block.group(1), re.M)) == set(POLICY_KEYS)


def test_every_refused_tap_reason_has_words_for_the_person() -> None:
    """The host's reason codes for a refused tap (trust/presence.py REASON_CODES) and the words
    the options page shows for them (extension/shared/presence-reasons.js REASON_TEXT) are one set;
    the page adds only its own "no_answer" (no authenticator answered in the page)."""
    from tabwarden.trust.presence import REASON_CODES

    text = (REPO / "extension/shared/presence-reasons.js").read_text("utf-8")
    block = re.search(
        r"^export const REASON_TEXT = Object\.freeze\(\{(.*?)^\}\);", text, re.M | re.S
    )
    assert block
    words = set(re.findall(r"^  ([a-z_]+):", block.group(1), re.M))
    assert words == REASON_CODES | {"no_answer"}
