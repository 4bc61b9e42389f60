"""The document parser is strict, round-trips exactly, and only ever raises TrustUnreadable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabwarden.trust import store
from tabwarden.trust.keys import HostKey
from tabwarden.trust.reader import TrustReader
from tabwarden.trust.record import TrustUnreadable, empty_document, parse, serialise
from tests.trust import SHA_A, credential, paired

KEY = HostKey.generate()


def _full_doc(tmp_path: Path) -> bytes:
    path, key = paired(tmp_path)
    store.add_client(path, key, "claude", "/usr/bin/claude", SHA_A, 1)
    store.engage_kill(path, "cli", 2)
    store.release_kill(path, key, 3)
    store.add_restriction(path, "origins", [], 4)
    store.revoke(path, "browser", "chrome", 5)
    store.set_pairing_code(path, "c" * 64, 10)
    return path.read_bytes()


def test_round_trip_is_exact(tmp_path: Path) -> None:
    raw = _full_doc(tmp_path)
    doc = parse(raw)
    assert serialise(doc) == raw
    assert doc.to_json() == json.loads(raw)
    assert parse(serialise(doc)) == doc


def test_empty_document() -> None:
    doc = empty_document(KEY.public, "keyring")
    assert doc.epoch == 0 and doc.version == 1
    assert doc.host_key.public == KEY.public.b64
    assert doc.host_key.fingerprint == KEY.public.fingerprint
    assert not doc.clients and doc.policy.baseline is None and doc.pairing_code is None
    assert parse(serialise(doc)) == doc
    with pytest.raises(ValueError):
        empty_document(KEY.public, "cloud")


def _edit(raw: bytes, change: Any) -> bytes:
    obj = json.loads(raw)
    change(obj)
    return json.dumps(obj).encode()


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda o: o.update(version=2), "unknown version"),
        (lambda o: o.update(version="1"), "unknown version"),
        (lambda o: o.update(epoch="3"), "epoch: expected an integer"),
        (lambda o: o.update(epoch=-1), "epoch: integer out of range"),
        (lambda o: o.update(epoch=True), "epoch: expected an integer"),
        (lambda o: o.update(clients={}), "clients: expected a list"),
        (lambda o: o.pop("kill"), "missing field 'kill'"),
        (lambda o: o.update(extra=1), "unknown field 'extra'"),
        (lambda o: o["clients"][0].pop("sig"), "missing field 'sig'"),
        (lambda o: o["clients"][0].update(kind="baseline"), "kind must be 'client'"),
        (lambda o: o["clients"][0].update(pairedAt=1.5), None),
        (lambda o: o["kill"]["events"][0].update(serial=None), "expected an integer"),
        (lambda o: o["hostKey"].update(store="cloud"), "hostKey.store"),
        (lambda o: o["policy"].update(baseline=[]), "expected an object"),
        (lambda o: o["policy"]["restrictions"][0].update(value={"a": 1}), "value"),
        (lambda o: o["revocations"][0].update(kind="host"), "kind"),
        (lambda o: o.update(pairingCode={"sha256": "x"}), "missing field"),
    ],
)
def test_wrong_shapes_are_unreadable(tmp_path: Path, change: Any, reason: str | None) -> None:
    raw = _full_doc(tmp_path)
    with pytest.raises(TrustUnreadable) as info:
        parse(_edit(raw, change))
    if reason:
        assert reason in info.value.reason
    assert info.value.code == "trust_unreadable" and info.value.exit_status == 3


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"", "invalid JSON"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b'{"version": 1,', "invalid JSON"),
        (b'{"version": 1} trailing', "invalid JSON"),
        (b'{"version": 1, "version": 1}', "duplicate key"),
        (b'{"version": NaN}', "non-integer"),
        (b'{"version": 1e0}', "non-integer"),
        (b"[" * 100_000 + b"]" * 100_000, None),
        (b'{"version": 1' + b"0" * 5000 + b"}", "integer too long"),
        (b"[1]", "expected an object"),
        (b'"\\ud800"', "expected an object"),
    ],
)
def test_bad_bytes_are_unreadable(raw: bytes, reason: str | None) -> None:
    with pytest.raises(TrustUnreadable) as info:
        parse(raw)
    if reason:
        assert reason in info.value.reason


def test_truncation_anywhere_is_unreadable(tmp_path: Path) -> None:
    raw = _full_doc(tmp_path).rstrip()
    for cut in range(0, len(raw), max(1, len(raw) // 200)):
        with pytest.raises(TrustUnreadable):
            parse(raw[:cut])


def test_duplicate_key_inside_a_grant_is_unreadable(tmp_path: Path) -> None:
    raw = _full_doc(tmp_path)
    text = raw.decode().replace(
        '"exe": "/usr/bin/claude",', '"exe": "/usr/bin/claude", "exe": "/tmp/evil",'
    )
    assert text.encode() != raw
    with pytest.raises(TrustUnreadable, match="duplicate key 'exe'"):
        parse(text.encode())


def test_lone_surrogate_string_is_unreadable(tmp_path: Path) -> None:
    obj = json.loads(_full_doc(tmp_path))
    obj["kill"]["events"][0]["reason"] = "\ud800"
    with pytest.raises(TrustUnreadable, match="not valid Unicode"):
        parse(json.dumps(obj).encode())


# --- never anything but TrustUnreadable --------------------------------------------------------


def _parse_or_unreadable(raw: bytes) -> None:
    try:
        parse(raw)
    except TrustUnreadable:
        pass


@given(st.binary(max_size=2048))
def test_arbitrary_bytes_only_ever_raise_unreadable(raw: bytes) -> None:
    _parse_or_unreadable(raw)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["version", "epoch", "hostKey", "clients", "kill", "policy", "x", "sig"]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@given(_json)
def test_arbitrary_json_only_ever_raises_unreadable(value: Any) -> None:
    _parse_or_unreadable(json.dumps(value).encode())


@settings(max_examples=300)
@given(st.data())
def test_mutated_real_documents_only_ever_raise_unreadable(data: st.DataObject) -> None:
    raw = bytearray(SAMPLE)
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(raw) - 1))
        op = data.draw(st.sampled_from(["flip", "insert", "delete"]))
        if op == "flip":
            raw[pos] = data.draw(st.integers(0, 255))
        elif op == "insert":
            raw[pos:pos] = data.draw(st.binary(min_size=1, max_size=8))
        else:
            del raw[pos : pos + data.draw(st.integers(1, 16))]
    _parse_or_unreadable(bytes(raw))


def _sample() -> bytes:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return _full_doc(Path(tmp))


SAMPLE = _sample()


def test_credential_uv_round_trips_and_only_true_is_written(tmp_path: Path) -> None:
    path, key = paired(tmp_path)
    store.add_browser_credential(path, key, "chrome", credential(True), 2)
    store.add_browser_credential(path, key, "chromium", credential(False), 3)
    raw = path.read_bytes()
    doc = parse(raw)
    assert serialise(doc) == raw
    [chrome] = [b for b in doc.browsers if b.label == "chrome"]
    [chromium] = [b for b in doc.browsers if b.label == "chromium"]
    assert chrome.credentials[0].uv is True
    assert json.loads(raw)["browsers"][0]["credentials"][0]["uv"] is True
    # A credential without UV carries no field at all: grants signed before the field existed
    # serialise exactly as they were signed and keep verifying.
    assert chromium.credentials[0].uv is False
    assert "uv" not in json.loads(raw)["browsers"][1]["credentials"][0]
    eff = TrustReader(path, lambda: key.public).current(4)
    assert {b.label: b.credentials[0].uv for b in eff.browsers} == {
        "chrome": True,
        "chromium": False,
    }


@pytest.mark.parametrize("value", [False, 1, "true", None])
def test_credential_uv_other_than_true_is_unreadable(tmp_path: Path, value: Any) -> None:
    path, key = paired(tmp_path)
    store.add_browser_credential(path, key, "chrome", credential(True), 2)
    raw = _edit(path.read_bytes(), lambda o: o["browsers"][0]["credentials"][0].update(uv=value))
    with pytest.raises(TrustUnreadable) as info:
        parse(raw)
    assert "uv" in info.value.reason


@pytest.mark.promise("BP-12")
def test_dropping_uv_from_a_signed_grant_breaks_its_signature(tmp_path: Path) -> None:
    """An attacker with write access cannot quietly relax UV: the grant no longer verifies."""
    path, key = paired(tmp_path)
    store.add_browser_credential(path, key, "chrome", credential(True), 2)
    raw = _edit(path.read_bytes(), lambda o: o["browsers"][0]["credentials"][0].pop("uv"))
    path.write_bytes(raw)
    eff = TrustReader(path, lambda: key.public).current(4)
    assert eff.browsers == () or all(not b.credentials for b in eff.browsers)


@pytest.mark.promise("BP-04")
def test_window_only_browser_round_trips_and_is_never_a_downgrade(tmp_path: Path) -> None:
    path, key = paired(tmp_path)
    store.add_window_only_browser(path, key, "edge", 2)
    raw = path.read_bytes()
    assert serialise(parse(raw)) == raw
    [edge] = TrustReader(path, lambda: key.public).current(3).browsers
    assert edge.window_only and edge.credentials == ()
    # Enrolling a credential ends window-only mode; going back is refused and writes nothing.
    store.add_browser_credential(path, key, "edge", credential(True), 4)
    [edge] = TrustReader(path, lambda: key.public).current(5).browsers
    assert not edge.window_only and len(edge.credentials) == 1
    before = path.read_bytes()
    with pytest.raises(store.AlreadyEnrolled):
        store.add_window_only_browser(path, key, "edge", 6)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda b: b.update(windowOnly=False), "windowOnly"),
        (lambda b: b.update(windowOnly=1), "windowOnly"),
        (
            lambda b: b["credentials"].append(
                {
                    "credentialId": "x",
                    "publicKey": "y",
                    "signCount": 0,
                    "enrolledAt": 1,
                    "path": "webauthn",
                }
            ),
            "holds no credential",
        ),
    ],
)
def test_window_only_shapes_are_strict(tmp_path: Path, change: Any, reason: str) -> None:
    path, key = paired(tmp_path)
    store.add_window_only_browser(path, key, "edge", 2)
    with pytest.raises(TrustUnreadable) as info:
        parse(_edit(path.read_bytes(), lambda o: change(o["browsers"][0])))
    assert reason in info.value.reason
