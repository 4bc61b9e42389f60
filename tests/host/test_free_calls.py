"""The host's free calls in process (no host process, no socket): each handler against a real
record, and the attempts that must be refused with nothing written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tabwarden.host import free_calls
from tabwarden.host.calls import BadHostCall, HostCallContext
from tabwarden.trust import operations
from tabwarden.trust.operations import NotPaired, TerminalPhrase
from tabwarden.trust.policy import PolicyError
from tabwarden.trust.record import TrustUnreadable
from tests.fixtures import TrustWorld, trust_world
from tests.trust import NOW, SHA_A

ORIGIN = "https://mail.example"


def _ctx(world: TrustWorld) -> HostCallContext:
    return HostCallContext(trust=world.ctx, browser_label="chromium")


def test_policy_get_reads_without_writing(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    before = world.record_bytes()
    view = free_calls.policy_get(_ctx(world), {})
    assert view["killed"] is False and view["enrolled"] is False and view["policy"]["eval"] is False
    assert world.record_bytes() == before


def test_policy_restrict_narrows_and_refuses_a_widening(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    done = free_calls.policy_restrict(
        _ctx(world), {"key": "confirmTimeoutSeconds", "value": 20}, NOW
    )
    assert done["done"] is True
    before = world.record_bytes()
    for bad in (
        {"key": "eval", "value": True},  # widening
        {"key": "nonsense", "value": 1},  # unknown key
    ):
        with pytest.raises(PolicyError):
            free_calls.policy_restrict(_ctx(world), bad, NOW)
    for malformed in ({"key": "eval"}, {"key": 3, "value": False}, {}):
        with pytest.raises(BadHostCall):
            free_calls.policy_restrict(_ctx(world), malformed, NOW)
    assert world.record_bytes() == before
    assert [e["browser"] for e in world.audit()] == ["chromium"]


def test_kill_is_free_and_audited_with_the_browser(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    free_calls.kill(_ctx(world), {}, NOW)
    assert world.ctx.effective().killed
    [entry] = world.audit()
    assert entry["event"] == "kill" and entry["browser"] == "chromium"


def test_client_revoke_only_for_a_paired_label(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    operations.pair_client(
        world.ctx, TerminalPhrase(action="t"), label="cc", exe="/usr/bin/cc", sha256=SHA_A, now=NOW
    )
    before = world.record_bytes()
    for args in ({"label": "nobody"}, {"label": "../x"}, {}):
        with pytest.raises(BadHostCall):
            free_calls.client_revoke(_ctx(world), args, NOW)
    assert world.record_bytes() == before
    free_calls.client_revoke(_ctx(world), {"label": "cc"}, NOW)
    assert world.ctx.effective().paired_clients == ()


def test_origin_decide_answers_and_refuses_bad_input(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    assert free_calls.origin_decide(_ctx(world), {"origin": ORIGIN}) == {
        "origin": ORIGIN,
        "ask": "click",
    }
    bad: Any
    for bad in ({"origin": ORIGIN + "/inbox"}, {"origin": "x" * 5000}, {"origin": 7}, {}):
        with pytest.raises(BadHostCall):
            free_calls.origin_decide(_ctx(world), bad)


def test_everything_refuses_an_unpaired_or_corrupt_record(tmp_path: Path) -> None:
    unpaired = trust_world(tmp_path / "u", paired=False)
    with pytest.raises(NotPaired):
        free_calls.policy_restrict(_ctx(unpaired), {"key": "eval", "value": False}, NOW)
    with pytest.raises(NotPaired):
        free_calls.origin_decide(_ctx(unpaired), {"origin": ORIGIN})
    assert unpaired.record_bytes() is None
    corrupt = trust_world(tmp_path / "c")
    corrupt.ctx.trust_path.write_bytes(b"{not json")
    for handler, args in (
        (free_calls.policy_get, {}),
        (free_calls.clients_recent, {}),
        (free_calls.origin_decide, {"origin": ORIGIN}),
    ):
        with pytest.raises(TrustUnreadable):
            handler(_ctx(corrupt), args)
    with pytest.raises(TrustUnreadable):
        free_calls.policy_restrict(_ctx(corrupt), {"key": "eval", "value": False}, NOW)
    assert corrupt.ctx.trust_path.read_bytes() == b"{not json"
