"""Hand-editing the record never widens; hand-added narrowing records are honoured unsigned.

Every test edits a real trust.json the way a same-user program could, then asks a TrustReader
(whose key loader is the key store, not the file) what the record grants.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tabwarden.trust import store
from tabwarden.trust.grants import GRANT_DOMAIN, grant_is_valid, sign_grant
from tabwarden.trust.keys import HostKey
from tabwarden.trust.record import parse
from tabwarden.trust.verify import Effective, effective
from tests.trust import NOW, SHA_A, SHA_B, denied, hand_edit, paired, read_json, reader, with_client


def _eff(path: Path, key: HostKey) -> Effective:
    return reader(path, key).current(NOW + 100)


def _forged_client(obj: dict[str, Any], **changes: Any) -> dict[str, Any]:
    forged: dict[str, Any] = copy.deepcopy(obj["clients"][0])
    forged.update(changes)
    return forged


# --- grants that do not verify are ignored -----------------------------------------------------


@pytest.mark.promise("TR-01")
def test_client_added_with_empty_sig_is_ignored(tmp_path: Path) -> None:
    path, key = with_client(tmp_path)
    obj = read_json(path)
    obj["clients"].append(_forged_client(obj, label="evil", sha256=SHA_B, sig=""))
    hand_edit(path, obj)
    eff = _eff(path, key)
    assert [c.label for c in eff.paired_clients] == ["claude"]
    assert any("'evil'" in r and "signature does not verify" in r for r in eff.ignored)


def test_client_added_without_sig_field_refuses_the_record(tmp_path: Path) -> None:
    path, key = with_client(tmp_path)
    obj = read_json(path)
    forged = _forged_client(obj, label="evil", sha256=SHA_B)
    del forged["sig"]
    obj["clients"].append(forged)
    hand_edit(path, obj)
    eff = _eff(path, key)
    assert denied(eff)
    assert eff.refused is not None and "missing field 'sig'" in eff.refused


@pytest.mark.promise("TR-01")
def test_client_with_sig_copied_from_another_grant_is_ignored(tmp_path: Path) -> None:
    path, key = with_client(tmp_path)
    obj = read_json(path)
    obj["clients"].append(_forged_client(obj, label="evil", sha256=SHA_B))  # claude's sig
    obj["clients"].append(_forged_client(obj, label="evil2", sig=obj["policy"]["baseline"]["sig"]))
    hand_edit(path, obj)
    eff = _eff(path, key)
    assert [c.label for c in eff.paired_clients] == ["claude"]
    assert sum("signature does not verify" in r for r in eff.ignored) == 2


@pytest.mark.promise("TR-01")
def test_modifying_a_signed_client_field_voids_the_grant(tmp_path: Path) -> None:
    path, key = with_client(tmp_path)
    assert [c.exe for c in _eff(path, key).paired_clients] == ["/usr/bin/claude"]
    obj = read_json(path)
    obj["clients"][0]["exe"] = "/home/evil/claude"
    hand_edit(path, obj)
    eff = _eff(path, key)
    assert eff.paired_clients == ()
    assert any("clients[0] ('claude'): signature does not verify" in r for r in eff.ignored)


@pytest.mark.promise("TR-01")
def test_flipping_eval_in_the_signed_baseline_falls_back_to_default(tmp_path: Path) -> None:
    path, key = paired(tmp_path)
    store.set_baseline(path, key, {"origins": ["https://a.test"], "clickGraceSeconds": 5}, NOW)
    assert _eff(path, key).policy.origins == ("https://a.test",)
    obj = read_json(path)
    obj["policy"]["baseline"]["values"]["eval"] = True
    hand_edit(path, obj)
    eff = _eff(path, key)
    assert eff.policy.eval is False
    assert eff.policy.origins == ()  # the whole baseline is void: default policy
    assert any("policy.baseline: signature does not verify" in r for r in eff.ignored)


@pytest.mark.promise("TR-01")
def test_swapping_the_host_key_and_resigning_everything_is_tampering(tmp_path: Path) -> None:
    path, key = with_client(tmp_path)
    store.engage_kill(path, "cli", NOW + 2)
    attacker = HostKey.generate()
    obj = read_json(path)
    obj["hostKey"]["public"] = attacker.public.b64
    obj["hostKey"]["fingerprint"] = attacker.public.fingerprint
    obj["kill"] = {"serial": 0, "events": []}

    def resign(grant: dict[str, Any]) -> dict[str, Any]:
        return sign_grant(attacker, grant, epoch=grant["epoch"], kill_serial=0)

    obj["clients"] = [resign(c) for c in obj["clients"]]
    obj["clients"].append(resign(_forged_client(obj, label="evil", sha256=SHA_B)))
    obj["policy"]["baseline"]["values"]["eval"] = True
    obj["policy"]["baseline"] = resign(obj["policy"]["baseline"])
    obj["releases"] = [resign({"kind": "release", "serial": 99, "epoch": 1, "killSerial": 0})]
    hand_edit(path, obj)
    # The attacker's document is internally consistent ...
    attacker_view = effective(parse(path.read_bytes()), attacker.public, NOW)
    assert not attacker_view.killed and len(attacker_view.paired_clients) == 2
    # ... but checked against the key store's key, nothing it says counts.
    eff = _eff(path, key)
    assert eff.killed and eff.paired_clients == () and eff.policy.eval is False
    assert "not the host key in the key store" in eff.ignored[0]
    assert sum("host key is not ours" in r for r in eff.ignored) >= 4


def test_fingerprint_that_does_not_match_is_tampering(tmp_path: Path) -> None:
    path, key = with_client(tmp_path)
    obj = read_json(path)
    obj["hostKey"]["fingerprint"] = HostKey.generate().public.fingerprint
    hand_edit(path, obj)
    eff = _eff(path, key)
    assert eff.killed and eff.paired_clients == ()
    assert "fingerprint" in eff.ignored[0]


@given(st.binary(max_size=200))
def test_any_host_key_bytes_in_the_file_are_judged_without_raising(der: bytes) -> None:
    import base64
    from dataclasses import replace

    doc = parse(SAMPLE_DOC)
    forged = replace(doc, host_key=replace(doc.host_key, public=base64.b64encode(der).decode()))
    eff = effective(forged, SAMPLE_KEY.public, NOW)
    assert eff.killed and eff.paired_clients == ()
    assert "tampering" in eff.ignored[0]


def _sample() -> tuple[bytes, HostKey]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path, key = with_client(Path(tmp))
        return path.read_bytes(), key


SAMPLE_DOC, SAMPLE_KEY = _sample()


# --- the kill latch --------------------------------------------------------------------------


@pytest.mark.promise("TR-03")
def test_deleting_kill_events_does_not_release_when_a_later_grant_records_the_kill(
    tmp_path: Path,
) -> None:
    path, key = with_client(tmp_path)
    store.engage_kill(path, "cli", NOW + 2)
    store.add_client(path, key, "codex", "/usr/bin/codex", SHA_B, NOW + 3)  # killSerial 1
    obj = read_json(path)
    obj["kill"] = {"serial": 0, "events": []}
    hand_edit(path, obj)
    eff = _eff(path, key)  # a fresh reader: only the document speaks
    assert eff.killed and eff.kill_serial == 1


@pytest.mark.promise("TR-03")
def test_deleting_kill_events_is_caught_by_a_reader_that_saw_the_kill(tmp_path: Path) -> None:
    path, key = with_client(tmp_path)
    watcher = reader(path, key)
    assert not watcher.current(NOW).killed
    store.engage_kill(path, "cli", NOW + 2)
    assert watcher.current(NOW).killed
    obj = read_json(path)
    obj["kill"] = {"serial": 0, "events": []}
    obj["epoch"] += 5
    hand_edit(path, obj)
    eff = watcher.current(NOW)
    assert denied(eff)
    assert eff.refused is not None and "kill serial went backwards" in eff.refused


@pytest.mark.promise("TR-03")
def test_replaying_an_old_release_does_not_release_a_newer_kill(tmp_path: Path) -> None:
    path, key = with_client(tmp_path)
    store.engage_kill(path, "first", NOW)
    store.release_kill(path, key, NOW)
    store.engage_kill(path, "second", NOW)
    obj = read_json(path)
    obj["releases"].append(copy.deepcopy(obj["releases"][0]))
    forged = copy.deepcopy(obj["releases"][0])
    forged["serial"] = 2  # re-aimed at the new kill: signature breaks
    obj["releases"].append(forged)
    hand_edit(path, obj)
    eff = _eff(path, key)
    assert eff.killed
    assert any("releases[2] (serial 2): signature does not verify" in r for r in eff.ignored)


# --- narrowing records need no signature -------------------------------------------------------


@pytest.mark.promise("TR-02")
def test_hand_added_kill_event_is_honoured(tmp_path: Path) -> None:
    path, key = with_client(tmp_path)
    obj = read_json(path)
    obj["kill"]["events"].append({"serial": 7, "at": NOW, "reason": "panic"})
    hand_edit(path, obj)
    eff = _eff(path, key)
    assert eff.killed and eff.kill_serial == 7
    store.release_kill(path, key, NOW)  # the key holder can still release it
    assert not _eff(path, key).killed


@pytest.mark.promise("TR-02")
def test_hand_added_restrictions_are_honoured_and_widening_ones_ignored(tmp_path: Path) -> None:
    path, key = paired(tmp_path)
    store.set_baseline(
        path, key, {"origins": ["https://a.test", "https://b.test"], "eval": True}, NOW
    )
    obj = read_json(path)
    obj["policy"]["restrictions"] += [
        {"key": "origins", "value": ["https://a.test"], "at": NOW},
        {"key": "eval", "value": False, "at": NOW},
        {"key": "upload", "value": True, "at": NOW},  # widening: ignored
        {"key": "origins", "value": ["https://evil.test"], "at": NOW},  # widening: ignored
    ]
    hand_edit(path, obj)
    eff = _eff(path, key)
    assert eff.policy.origins == ("https://a.test",)
    assert eff.policy.eval is False and eff.policy.upload is False
    assert sum("would widen" in r for r in eff.ignored) == 2


@pytest.mark.promise("TR-02")
def test_hand_added_revocation_is_honoured(tmp_path: Path) -> None:
    path, key = with_client(tmp_path)
    obj = read_json(path)
    obj["revocations"].append({"kind": "client", "label": "claude", "at": NOW})
    hand_edit(path, obj)
    eff = _eff(path, key)
    assert eff.paired_clients == () and not eff.killed
    assert any("revoked" in r for r in eff.ignored)


def test_restrictions_still_apply_when_the_host_key_was_swapped(tmp_path: Path) -> None:
    path, key = paired(tmp_path)
    obj = read_json(path)
    obj["hostKey"]["public"] = HostKey.generate().public.b64
    obj["policy"]["restrictions"].append({"key": "presenceConfirm", "value": True, "at": NOW})
    hand_edit(path, obj)
    eff = _eff(path, key)
    assert eff.killed and eff.policy.presence_confirm is True


def test_grant_signed_after_the_documents_epoch_is_ignored(tmp_path: Path) -> None:
    path, key = with_client(tmp_path)
    obj = read_json(path)
    obj["epoch"] = 1  # the client was signed at epoch 2
    hand_edit(path, obj)
    eff = _eff(path, key)
    assert eff.paired_clients == ()
    assert any("later than the record's epoch" in r for r in eff.ignored)


# --- any change to a signed grant voids it, by property ----------------------------------------

HOST = HostKey.generate()
GRANT = sign_grant(
    HOST,
    {
        "kind": "client",
        "label": "claude",
        "exe": "/usr/bin/claude",
        "sha256": SHA_A,
        "pairedAt": NOW,
        "path": "terminal",
    },
    epoch=3,
    kill_serial=1,
)
_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=12),
    st.lists(st.integers(), max_size=2),
)


def test_the_fixture_grant_is_valid_and_domain_separated() -> None:
    assert grant_is_valid(HOST.public, GRANT)
    assert GRANT_DOMAIN.startswith(b"tabwarden/")


@given(st.sampled_from(sorted(k for k in GRANT if k != "sig")), _values)
@pytest.mark.promise("TR-01")
def test_changing_any_signed_field_invalidates(field: str, value: Any) -> None:
    if value == GRANT[field] and type(value) is type(GRANT[field]):
        value = [value]
    forged = {**GRANT, field: value}
    assert not grant_is_valid(HOST.public, forged)


@given(st.sampled_from(sorted(k for k in GRANT if k != "sig")))
def test_removing_any_signed_field_invalidates(field: str) -> None:
    forged = {k: v for k, v in GRANT.items() if k != field}
    assert not grant_is_valid(HOST.public, forged)


@given(st.text(min_size=1, max_size=8).filter(lambda k: k not in GRANT), _values)
def test_adding_any_field_invalidates(field: str, value: Any) -> None:
    assert not grant_is_valid(HOST.public, {**GRANT, field: value})


@given(st.integers(0, 200), st.integers(0, 255))
def test_flipping_a_signature_byte_invalidates(index: int, byte: int) -> None:
    import base64

    sig = bytearray(base64.b64decode(GRANT["sig"]))
    index %= len(sig)
    if sig[index] == byte:
        byte ^= 1
    sig[index] = byte
    assert not grant_is_valid(HOST.public, {**GRANT, "sig": base64.b64encode(bytes(sig)).decode()})


def test_grant_validity_survives_a_json_round_trip() -> None:
    assert grant_is_valid(HOST.public, json.loads(json.dumps(GRANT)))
