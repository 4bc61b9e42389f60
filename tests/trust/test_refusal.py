"""The one refusal rule hop 1 and hop 2 share: its order and its fail-closed cases."""

from __future__ import annotations

import dataclasses

import pytest

from tabwarden.trust.policy import DEFAULT_POLICY
from tabwarden.trust.refusal import MeasuredClient, refusal
from tabwarden.trust.verify import ClientGrant, Effective

PAIRED = MeasuredClient(sha256="a" * 64, description="/usr/bin/cc")
OTHER = MeasuredClient(sha256="b" * 64, description="/tmp/evil")


def _eff(**changes: object) -> Effective:
    base = Effective(
        paired_clients=(
            ClientGrant(label="cc", exe="/usr/bin/cc", sha256=PAIRED.sha256, paired_at=1),
        ),
        browsers=(),
        killed=False,
        policy=DEFAULT_POLICY,
        epoch=3,
        clients_pinned=True,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_a_paired_client_may_act() -> None:
    assert refusal(_eff(), PAIRED) is None


@pytest.mark.parametrize(
    "client", [OTHER, None, MeasuredClient(sha256="", description="/tmp/evil")]
)
def test_an_unpaired_or_unmeasured_client_is_refused(client: MeasuredClient | None) -> None:
    found = refusal(_eff(), client, who="/tmp/evil")
    assert found is not None and found.code == "client_not_paired"
    assert found.message == "/tmp/evil is not a paired MCP client"


@pytest.mark.promise("H1-02")
def test_a_paired_client_whose_hash_changed_is_told_how_to_re_pair() -> None:
    updated = MeasuredClient(sha256="c" * 64, description="/usr/bin/cc")
    found = refusal(_eff(), updated)
    assert found is not None and found.code == "client_not_paired"
    assert found.message == (
        "the client /usr/bin/cc changed since it was paired as 'cc' (sha256 aaaaaaaaaaaa… → "
        "cccccccccccc…): it probably updated itself; re-pair it with `tabwarden pair-client`"
    )


@pytest.mark.promise("H1-02")
def test_a_script_of_an_interpreter_paired_alone_is_refused_and_told_why() -> None:
    """A record from before interpreters were pinned with their script: `/usr/bin/cc` paired by
    its image. A script it hosts is refused, and the message says what changed."""
    script = MeasuredClient(
        sha256="d" * 64, description="/usr/bin/cc /srv/x.js", image="/usr/bin/cc", hosted=True
    )
    found = refusal(_eff(), script)
    assert found is not None and found.code == "client_not_paired"
    assert "paired as 'cc' by its image alone" in found.message
    assert "`tabwarden pair-client`" in found.message


def test_revoking_the_last_client_never_unpins() -> None:
    found = refusal(_eff(paired_clients=()), OTHER)
    assert found is not None and found.code == "client_not_paired"


@pytest.mark.promise("H1-04")
@pytest.mark.parametrize("client", [PAIRED, OTHER, None])
def test_with_no_client_paired_every_client_is_refused_and_told_how_to_pin_one(
    client: MeasuredClient | None,
) -> None:
    """There is no unpinned posture: before any client is paired, any client (measured or not)
    is refused, and the words name the commands that pin the one the person uses."""
    found = refusal(Effective.unpaired(), client, who="/tmp/evil")
    assert found is not None and found.code == "client_not_paired"
    assert found.message.startswith("/tmp/evil is not a paired MCP client: no client is paired")
    assert "`tabwarden setup --client claude`" in found.message
    assert "`tabwarden pair-client`" in found.message


@pytest.mark.promise("H1-04")
def test_the_hosts_relay_refuses_an_unpaired_client_with_hop_1s_code_and_words() -> None:
    """Defence in depth: hop 2 does not lean on ``tabwarden mcp`` refusing for it. With no client
    paired the host refuses even an attested MCP server's connection, with the code and the
    hint hop 1 answers; the kill switch and a refused record still come first."""
    from tabwarden.host.bridge import _Client, trust_refusal

    connection = _Client(number=1, role="mcp", stream=None, measured=OTHER)  # type: ignore[arg-type]
    hop1 = refusal(Effective.unpaired(), OTHER)
    assert hop1 is not None and hop1.code == "client_not_paired"
    assert trust_refusal(Effective.unpaired(), connection) == (hop1.code, hop1.message)
    assert "`tabwarden pair-client`" in hop1.message
    unmeasured = _Client(number=2, role="mcp", stream=None, measured=None)  # type: ignore[arg-type]
    assert trust_refusal(Effective.unpaired(), unmeasured) is not None
    killed = dataclasses.replace(Effective.unpaired(), killed=True)
    assert trust_refusal(killed, connection) == ("killed", "the kill switch is engaged")


def test_order_unreadable_then_killed_then_not_paired() -> None:
    denied = Effective.deny_all("corrupt")
    assert (r := refusal(denied, PAIRED)) is not None and r.code == "trust_unreadable"
    assert "corrupt" not in r.message  # the precise reason stays in the local log
    killed = _eff(killed=True)
    assert (r := refusal(killed, OTHER)) is not None and r.code == "killed"
    assert (r := refusal(killed, PAIRED)) is not None and r.code == "killed"


@pytest.mark.promise("H1-05")
def test_a_revoked_client_is_told_it_was_revoked_and_never_about_another() -> None:
    """``client_revoked`` names the label the asking client was paired under and when it was
    revoked (UTC), and the one way back; it never names another client, paired or revoked."""
    from tabwarden.trust.verify import RevokedClient

    gone = RevokedClient(label="old-agent", sha256=OTHER.sha256, revoked_at=1_700_000_000)
    other_gone = RevokedClient(label="secret-tool", sha256="d" * 64, revoked_at=1_700_000_100)
    eff = _eff(revoked_clients=(gone, other_gone))
    found = refusal(eff, OTHER, who="/tmp/evil")
    assert found is not None and found.code == "client_revoked"
    assert found.message == (
        "/tmp/evil was revoked: it was paired as 'old-agent' and revoked on 2023-11-14 22:13 UTC; "
        "only a person can bring it back, with `tabwarden pair-client` at a terminal"
    )
    for secret in ("secret-tool", "'cc'", "d" * 12, PAIRED.sha256[:12], OTHER.sha256[:12]):
        assert secret not in found.message
    # The latest revocation of the same client names it; a live grant of it wins outright.
    again = RevokedClient(label="agent-2", sha256=OTHER.sha256, revoked_at=1_700_000_200)
    found = refusal(_eff(revoked_clients=(gone, again)), OTHER)
    assert found is not None and "'agent-2'" in found.message
    live = dataclasses.replace(gone, sha256=PAIRED.sha256)
    assert refusal(_eff(revoked_clients=(live,)), PAIRED) is None
    # A client never paired is refused as before, and told nothing about the revoked ones.
    stranger = MeasuredClient(sha256="e" * 64, description="/tmp/stranger")
    found = refusal(eff, stranger)
    assert found is not None and found.code == "client_not_paired"
    assert "old-agent" not in found.message and "revoked" not in found.message
    # Revoked as the last client: still told so; unmeasurable: nothing to match, not named.
    found = refusal(_eff(paired_clients=(), revoked_clients=(gone,)), OTHER)
    assert found is not None and found.code == "client_revoked"
    found = refusal(_eff(revoked_clients=(gone,)), None)
    assert found is not None and found.code == "client_not_paired"
    # The kill switch and a refused record come first.
    assert (r := refusal(_eff(killed=True, revoked_clients=(gone,)), OTHER)) is not None
    assert r.code == "killed"
