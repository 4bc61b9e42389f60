"""A refusal because a policy switch is off teaches: it names the key and the exact command a
person runs to allow it. Both tables of those words — the host's (trust/refusal.py
``SWITCH_ON``/``switch_off``) and the extension's (extension/shared/policy-words.js
``SWITCH_REFUSALS``/``turnOnWords``) — are checked entry by entry: each command is parsed by the
real CLI (``tabwarden policy set|restrict KEY=VALUE``), its key is a policy key, its value is one
the policy accepts, and it allows what was refused. The host's own refusals are checked over the
real host call."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tabwarden.cli.commands import parse_assignments
from tabwarden.cli.entry import build_parser
from tabwarden.trust import store
from tabwarden.trust.keys import HostKey
from tabwarden.trust.policy import DENY_POLICY, POLICY_KEYS, apply_set, is_narrowing, validate_value
from tabwarden.trust.refusal import SWITCH_ON, switch_off
from tests.fakes import FakeBrowser
from tests.fixtures import change_detail, config_of, enrol_via_pairing, gate_of, host_call, refused

REPO = Path(__file__).resolve().parents[2]
COMMAND = re.compile(r"`tabwarden policy (set|restrict) ([A-Za-z]+)=([^`\s]+)`")


def _allowing(words: str, key: str) -> tuple[str, Any]:
    """The one command in ``words``, parsed as the CLI parses it: (verb, value) for ``key``."""
    found = COMMAND.findall(words)
    assert len(found) == 1, words
    verb, named, raw = found[0]
    assert named == key, words
    args = build_parser().parse_args(["policy", verb, f"{named}={raw}"])
    changes = parse_assignments(args.assignments)
    assert list(changes) == [key] and key in POLICY_KEYS
    assert validate_value(key, changes[key]) == changes[key]
    return verb, changes[key]


@pytest.mark.parametrize("key", sorted(SWITCH_ON))
def test_every_host_switch_refusal_names_its_key_and_a_command_the_cli_takes(key: str) -> None:
    # A policy that refuses it: the narrowest, with presenceConfirm off (there it is on).
    refusing = apply_set(DENY_POLICY, {"presenceConfirm": False})
    words = switch_off(key, "it", refusing)
    assert f"(policy {key})" in words
    verb, value = _allowing(words, key)
    assert value == SWITCH_ON[key]
    # Run, it allows what was refused, by the free way when that narrows.
    assert apply_set(refusing, {key: value})[key] == value
    assert (verb == "restrict") == is_narrowing(refusing, key, value)


def _extension_words() -> dict[str, dict[str, Any]]:
    node = shutil.which("node")
    assert node, "node is needed for the extension's tables"
    script = (
        "const m = await import(process.argv[1]);"
        "const out = {};"
        "for (const [k, e] of Object.entries(m.SWITCH_REFUSALS))"
        " out[k] = {value: e.value, words: m.turnOnWords(k),"
        " taught: m.teach('policy_denied', `x (the policy's ${k} is off)`, 500)};"
        "console.log(JSON.stringify(out));"
    )
    module = REPO / "extension" / "shared" / "policy-words.js"
    proc = subprocess.run(
        [node, "--input-type=module", "-e", script, str(module)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    table: dict[str, dict[str, Any]] = json.loads(proc.stdout)
    return table


def test_every_extension_switch_refusal_names_its_key_and_a_command_the_cli_takes() -> None:
    table = _extension_words()
    assert {"eval", "upload", "pageFetch", "passwordFill", "dialogArming"} <= set(table)
    for key, entry in table.items():
        for words in (entry["words"], entry["taught"]):
            verb, value = _allowing(words, key)
            assert verb == "set" and value == entry["value"], (key, words)
            assert not is_narrowing(DENY_POLICY, key, value), key  # it widens: it allows
    assert "sign in themselves" in table["passwordFill"]["words"]


# -- over the real host call --

ORIGIN = "https://app.example.test"


def _set_policy(config: Path, key: HostKey, changes: dict[str, Any]) -> None:
    policy = apply_set(gate_of(config).current().policy, changes)
    store.set_baseline(config / "trust.json", key, policy.to_json(), int(time.time()))


def test_a_refused_tap_confirmation_names_the_key_and_the_command(
    fake_browser: FakeBrowser,
) -> None:
    key, _ = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    detail = change_detail({"code": "1 + 1", "origin": ORIGIN})
    for changes, named, command in (
        ({"eval": False, "presenceConfirm": True}, "eval", "`tabwarden policy set eval=true`"),
        (
            {"eval": True, "presenceConfirm": False},
            "presenceConfirm",
            "`tabwarden policy restrict presenceConfirm=true`",
        ),
    ):
        _set_policy(config, key, changes)
        reply = host_call(
            fake_browser, "presence_begin", {"action": "confirm.eval", "detail": detail}
        )
        refused(reply, "policy_denied")
        message = reply["error"]["message"]
        assert f"(policy {named})" in message and command in message, message
