"""A revocation keeps the client grant it removed (as signed), so the revoked client is told it
was revoked; the name is believed only under a signature that verifies, and records written
before the field load and verify unchanged."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tabwarden.trust import store
from tabwarden.trust.keys import HostKey
from tabwarden.trust.record import TrustUnreadable, parse, serialise
from tabwarden.trust.refusal import MeasuredClient, refusal
from tabwarden.trust.verify import effective
from tests.trust import NOW, SHA_A, SHA_B, read_json, with_client

CLAUDE = MeasuredClient(sha256=SHA_A, description="/usr/bin/claude")
STRANGER = MeasuredClient(sha256="c" * 64, description="/tmp/stranger")


def _revoked(tmp_path: Path) -> tuple[Path, HostKey]:
    path, key = with_client(tmp_path)  # "claude", SHA_A
    store.revoke(path, "client", "claude", NOW + 5)
    return path, key


@pytest.mark.promise("H1-05")
def test_revoke_keeps_the_signed_grant_and_the_record_round_trips(tmp_path: Path) -> None:
    path, key = with_client(tmp_path)
    granted = read_json(path)["clients"][0]
    store.revoke(path, "client", "claude", NOW + 5)
    obj = read_json(path)
    assert obj["clients"] == []
    [kept] = obj["revocations"]
    assert kept["client"] == granted  # byte for byte the grant that was signed
    doc = parse(path.read_bytes())
    assert parse(serialise(doc)) == doc and serialise(doc) == path.read_bytes()
    eff = effective(doc, key.public, NOW + 10)
    [revoked] = eff.revoked_clients
    assert (revoked.label, revoked.sha256, revoked.revoked_at) == ("claude", SHA_A, NOW + 5)
    assert eff.paired_clients == () and eff.clients_pinned


@pytest.mark.promise("H1-05")
def test_a_revocation_without_the_field_loads_verifies_and_still_revokes(tmp_path: Path) -> None:
    """Records written before revocations kept the client: unchanged bytes, same verdict, and the
    revoked client is refused as before (``client_not_paired``: nothing names it)."""
    path, key = _revoked(tmp_path)
    obj = read_json(path)
    del obj["revocations"][0]["client"]
    old = json.dumps(obj, indent=2).encode() + b"\n"
    doc = parse(old)
    assert doc.revocations[0].client is None
    assert serialise(doc) == old  # no field appears on a rewrite
    eff = effective(doc, key.public, NOW + 10)
    assert eff.revoked_clients == () and eff.ignored == ()
    found = refusal(eff, CLAUDE)
    assert found is not None and found.code == "client_not_paired"


@pytest.mark.promise("H1-05")
def test_a_flipped_hash_in_the_kept_grant_fails_verification_and_names_nobody(
    tmp_path: Path,
) -> None:
    """Someone who can write the file moves the revoked name onto another client (or off the
    revoked one): the kept grant's signature covers its hash, so the edit fails verification,
    the name is not believed, and both clients are refused ``client_not_paired`` as before."""
    path, key = _revoked(tmp_path)
    doc = parse(path.read_bytes())
    [revocation] = doc.revocations
    assert revocation.client is not None
    flipped = dataclasses.replace(revocation.client, sha256=STRANGER.sha256)
    tampered = doc.with_(revocations=(dataclasses.replace(revocation, client=flipped),))
    eff = effective(parse(serialise(tampered)), key.public, NOW + 10)
    assert eff.revoked_clients == ()
    assert any("revocations[0].client: signature does not verify" in r for r in eff.ignored)
    for client in (CLAUDE, STRANGER):
        found = refusal(eff, client)
        assert found is not None and found.code == "client_not_paired", found
    # The revocation itself still revokes (narrowing records are honoured unsigned): a copy of
    # the revoked grant put back stays revoked.
    back = tampered.with_(clients=(revocation.client,))
    assert effective(back, key.public, NOW + 10).paired_clients == ()


@pytest.mark.promise("H1-05")
def test_a_kept_grant_that_the_revocation_does_not_revoke_names_nobody(tmp_path: Path) -> None:
    """A validly signed grant of another label, or one signed after the revocation (pasted in
    from a later pairing), is not the client this revocation removed."""
    path, key = _revoked(tmp_path)
    store.add_client(path, key, "codex", "/usr/bin/codex", SHA_B, NOW + 6)
    doc = parse(path.read_bytes())
    [revocation] = doc.revocations
    [codex] = doc.clients
    for moved in (codex, dataclasses.replace(codex, label="claude")):
        edited = doc.with_(revocations=(dataclasses.replace(revocation, client=moved),))
        eff = effective(edited, key.public, NOW + 10)
        assert eff.revoked_clients == (), moved


def test_only_a_client_revocation_may_keep_a_client(tmp_path: Path) -> None:
    path, _ = _revoked(tmp_path)
    obj = read_json(path)
    obj["revocations"][0]["kind"] = "browser"
    with pytest.raises(TrustUnreadable, match=r"revocations\[0\]\.client"):
        parse(json.dumps(obj).encode())
    obj["revocations"][0]["kind"] = "client"
    del obj["revocations"][0]["client"]["sig"]
    with pytest.raises(TrustUnreadable, match="missing field 'sig'"):
        parse(json.dumps(obj).encode())


def test_a_browser_revocation_keeps_nothing(tmp_path: Path) -> None:
    path, _ = with_client(tmp_path)
    store.revoke(path, "browser", "claude", NOW + 5)  # the same label, another kind
    [revocation] = parse(path.read_bytes()).revocations
    assert (revocation.kind, revocation.client) == ("browser", None)
    assert "client" not in read_json(path)["revocations"][0]
