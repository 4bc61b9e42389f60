"""The one refusal rule hop 1 and hop 2 share: its order and its fail-closed cases."""

from __future__ import annotations

import dataclasses

import pytest

from tabwarden.trust.policy import DEFAULT_POLICY
from tabwarden.trust.refusal import refusal
from tabwarden.trust.verify import ClientGrant, Effective

PAIRED = "a" * 64
OTHER = "b" * 64


def _eff(**changes: object) -> Effective:
    base = Effective(
        paired_clients=(ClientGrant(label="cc", exe="/usr/bin/cc", sha256=PAIRED, paired_at=1),),
        browsers=(),
        killed=False,
        policy=DEFAULT_POLICY,
        epoch=3,
        clients_pinned=True,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_a_paired_client_may_act() -> None:
    assert refusal(_eff(), PAIRED) is None


@pytest.mark.parametrize("client", [OTHER, None, ""])
def test_an_unpaired_or_unmeasured_client_is_refused(client: str | None) -> None:
    found = refusal(_eff(), client, who="/tmp/evil")
    assert found is not None and found.code == "client_not_paired"
    assert found.message == "/tmp/evil is not a paired MCP client"


def test_revoking_the_last_client_never_unpins() -> None:
    found = refusal(_eff(paired_clients=()), OTHER)
    assert found is not None and found.code == "client_not_paired"


def test_unpinned_posture_serves_any_client() -> None:
    assert refusal(Effective.unpaired(), None) is None


def test_order_unreadable_then_killed_then_not_paired() -> None:
    denied = Effective.deny_all("corrupt")
    assert (r := refusal(denied, PAIRED)) is not None and r.code == "trust_unreadable"
    assert "corrupt" not in r.message  # the precise reason stays in the local log
    killed = _eff(killed=True)
    assert (r := refusal(killed, OTHER)) is not None and r.code == "killed"
    assert (r := refusal(killed, PAIRED)) is not None and r.code == "killed"
