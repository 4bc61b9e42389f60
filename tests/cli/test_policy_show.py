"""`tabwarden policy show` explains every declared policy key: its value, type and range,
default, which way narrows it and what it means — from trust/policy.py's declarations, so a key
added there without a meaning fails here, and the range shown is the one the validator holds.
"""

from __future__ import annotations

import json
from typing import Any

from tabwarden.trust.policy import DEFAULT_POLICY, POLICY_KEYS, PolicyError, validate_value
from tests.cli.world import World


def _keys(shown: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["key"]: entry for entry in shown["keys"]}


def test_every_declared_key_is_listed_with_type_default_and_meaning(world: World) -> None:
    shown = world.json("policy", "show", "--json")
    keys = _keys(shown)
    assert list(keys) == list(POLICY_KEYS)
    for key, entry in keys.items():
        assert entry["meaning"] and len(entry["meaning"].split()) >= 5, key
        assert entry["type"] and entry["narrower"], key
        default = DEFAULT_POLICY[key]
        assert entry["default"] == (list(default) if isinstance(default, tuple) else default)

    proc = world.run("policy", "show")
    assert proc.returncode == 0, proc.stderr.decode()
    text = proc.stdout.decode()
    assert "not paired yet" in text  # the default `pair` will sign, said as such
    flat = " ".join(text.split())
    for key, entry in keys.items():
        assert f"\n{key} = {json.dumps(shown['policy'][key])}\n" in text, key
        assert entry["meaning"] in flat and entry["type"] in flat, key
    assert "tabwarden policy set KEY=VALUE" in text
    assert "tabwarden policy restrict KEY=VALUE" in text


def test_the_range_shown_is_the_range_the_validator_enforces(world: World) -> None:
    for key, entry in _keys(world.json("policy", "show", "--json")).items():
        if not entry["type"].startswith("integer "):
            continue
        low, high = (int(n) for n in entry["type"].split()[1].split(".."))
        assert validate_value(key, low) == low and validate_value(key, high) == high
        for outside in (low - 1, high + 1):
            try:
                validate_value(key, outside)
            except PolicyError:
                continue
            raise AssertionError(f"{key}={outside} accepted outside the range shown")


def test_show_reads_the_signed_policy_as_it_is_now(paired: World) -> None:
    proc = paired.run("policy", "restrict", "maxAgentTabs=5")
    assert proc.returncode == 0, proc.stderr.decode()
    proc = paired.run("policy", "show")
    assert proc.returncode == 0, proc.stderr.decode()
    text = proc.stdout.decode()
    assert "\nmaxAgentTabs = 5\n" in text
    assert "not paired" not in text
    assert paired.json("policy", "show", "--json")["policy"]["maxAgentTabs"] == 5
