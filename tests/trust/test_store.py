"""The record on disk: fail-closed reads, epochs, locked writes, rollback, the pairing code."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tabwarden.errors import UsageError
from tabwarden.paths import BadLabel
from tabwarden.trust import store
from tabwarden.trust.keys import HostKey
from tabwarden.trust.policy import DEFAULT_POLICY, PolicyError, apply_set
from tabwarden.trust.ratchet import SEAL_FILE_NAME
from tabwarden.trust.reader import TrustReader
from tabwarden.trust.record import TrustDocument, TrustUnreadable
from tabwarden.trust.record_file import load, trust_path, update
from tabwarden.trust.store import PresenceRequired
from tabwarden.trust.verify import Effective
from tests.trust import (
    NOW,
    SHA_A,
    SHA_B,
    denied,
    hand_write,
    paired,
    read_json,
    reader,
    with_client,
)


def test_trust_path_follows_the_config_dir(tmp_path: Path) -> None:
    assert trust_path({"TABWARDEN_CONFIG_DIR": str(tmp_path)}) == tmp_path / "trust.json"
    assert trust_path({"XDG_CONFIG_HOME": "/x"}) == Path("/x/tabwarden/trust.json")


def test_files_are_private_and_the_dir_is_0700(tmp_path: Path) -> None:
    path, _ = with_client(tmp_path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert sorted(os.listdir(path.parent)) == [SEAL_FILE_NAME, "trust.json", "trust.lock"]
    assert stat.S_IMODE(os.stat(path.parent / SEAL_FILE_NAME).st_mode) == 0o600  # no temp left


# --- fail closed: every case through a real file and a TrustReader ---------------------------


def _sound(tmp_path: Path) -> tuple[Path, HostKey, TrustReader]:
    path, key = with_client(tmp_path)
    watcher = reader(path, key)
    eff = watcher.current(NOW)
    assert not eff.killed and [c.label for c in eff.paired_clients] == ["claude"]
    return path, key, watcher


def _assert_refused(watcher: TrustReader, fragment: str) -> None:
    eff = watcher.current(NOW)
    assert denied(eff), eff
    assert eff.refused is not None and fragment in eff.refused, eff.refused
    assert eff.policy.origins == () and eff.policy.eval is False and eff.policy.presence_confirm


def _replace_with_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path, 0o600)


def _replace_with_dir(path: Path) -> None:
    path.unlink()
    path.mkdir(mode=0o700)


def _text_edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    hand_write(path, text.replace(old, new, 1))


CORRUPTIONS: dict[str, tuple[Any, str]] = {
    "missing after pairing": (lambda p: p.unlink(), "vanished"),
    "truncated": (
        lambda p: hand_write(p, p.read_bytes()[: len(p.read_bytes()) // 2]),
        "invalid JSON",
    ),
    "empty": (lambda p: hand_write(p, b""), "invalid JSON"),
    "invalid JSON": (lambda p: hand_write(p, b"{not json}"), "invalid JSON"),
    "trailing garbage": (lambda p: hand_write(p, p.read_bytes() + b"}"), "invalid JSON"),
    "duplicate keys": (
        lambda p: _text_edit(p, '"epoch": ', '"epoch": 99, "epoch": '),
        "duplicate key 'epoch'",
    ),
    "wrong types": (lambda p: _text_edit(p, '"clients": [', '"clients": {"x": ['), "invalid JSON"),
    "wrong type epoch": (
        lambda p: hand_write(p, json.dumps({**read_json(p), "epoch": "9"})),
        "expected an integer",
    ),
    "unknown version": (
        lambda p: hand_write(p, json.dumps({**read_json(p), "version": 2})),
        "unknown version",
    ),
    "mode 0640": (lambda p: os.chmod(p, 0o640), "mode 0640"),
    "mode 0604": (lambda p: os.chmod(p, 0o604), "mode 0604"),
    "a directory": (_replace_with_dir, "not a regular file"),
    "a fifo": (_replace_with_fifo, "not a regular file"),
    "dir mode 0755": (lambda p: os.chmod(p.parent, 0o755), "not 0700"),  # noqa: S103
}


@pytest.mark.parametrize("name", list(CORRUPTIONS))
@pytest.mark.promise("TR-05")
def test_reader_fails_closed(tmp_path: Path, name: str) -> None:
    corrupt, fragment = CORRUPTIONS[name]
    path, key, watcher = _sound(tmp_path)
    corrupt(path)
    _assert_refused(watcher, fragment)
    _assert_refused(reader(path, key), fragment)  # a fresh process sees the same
    with pytest.raises(TrustUnreadable):
        load(path, expect_paired=True)


@pytest.mark.promise("TR-05")
def test_symlinked_record_is_refused_even_to_a_valid_record(tmp_path: Path) -> None:
    path, key, watcher = _sound(tmp_path)
    elsewhere = tmp_path / "real.json"
    os.replace(path, elsewhere)
    os.symlink(elsewhere, path)
    _assert_refused(watcher, "symlink")
    with pytest.raises(TrustUnreadable, match="symlink"):
        load(path, expect_paired=False)


def test_symlinked_config_dir_is_refused(tmp_path: Path) -> None:
    path, key, _ = _sound(tmp_path)
    moved = tmp_path / "moved"
    os.replace(path.parent, moved)
    os.symlink(moved, path.parent)
    _assert_refused(reader(path, key), "symlink")


@pytest.mark.root  # chown to another user
@pytest.mark.promise("TR-05")
def test_record_owned_by_someone_else_is_refused(tmp_path: Path) -> None:
    path, _key, watcher = _sound(tmp_path)
    os.chown(path, 65534, 65534)
    _assert_refused(watcher, "owned by uid 65534")


@pytest.mark.root  # chown to another user
def test_config_dir_owned_by_someone_else_is_refused(tmp_path: Path) -> None:
    path, key, _ = _sound(tmp_path)
    os.chown(path.parent, 65534, 65534)
    _assert_refused(reader(path, key), "owned by uid 65534")
    with pytest.raises(TrustUnreadable):
        store.engage_kill(path, "cli", NOW)


def test_missing_record_without_a_host_key_is_unpaired(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "trust.json"
    assert load(path, expect_paired=False) is None
    eff = TrustReader(path, lambda: None).current(NOW)
    assert eff == Effective.unpaired()
    assert not eff.killed and eff.policy == DEFAULT_POLICY


@pytest.mark.promise("TR-06")
def test_a_record_that_vanishes_after_being_seen_paired_is_tampering(tmp_path: Path) -> None:
    """Deleting trust.json and the host key under a running reader never turns it back into
    the unpaired posture (which would serve anyone): it denies, and keeps denying."""
    path, key = paired(tmp_path)
    held: list[HostKey] = [key]
    watcher = TrustReader(path, lambda: held[0].public if held else None)
    store.engage_kill(path, "cli", NOW)
    assert watcher.current(NOW).killed
    path.unlink()
    held.clear()
    for _ in range(2):
        eff = watcher.current(NOW)
        assert eff.refused is not None and "vanished" in eff.refused
        assert eff.killed and eff.clients_pinned
    # A fresh process (a new reader) that never saw the record finds the ratchet seal beside
    # where the key was: vanished too. Only when the seal is deleted as well does it start
    # unpaired (the residual the extension's pinned host key answers).
    fresh = TrustReader(path, lambda: None).read(NOW)
    assert fresh.tamper is not None and fresh.tamper.kind == "vanished"
    assert denied(fresh.effective)
    (path.parent / SEAL_FILE_NAME).unlink()
    assert TrustReader(path, lambda: None).current(NOW) == Effective.unpaired()


def test_record_without_a_host_key_in_the_store_is_refused(tmp_path: Path) -> None:
    path, _ = paired(tmp_path)
    _assert_refused(TrustReader(path, lambda: None), "no host key is stored")


def test_key_loader_failure_is_a_denial_not_an_exception(tmp_path: Path) -> None:
    path, _ = paired(tmp_path)

    def broken() -> None:
        raise RuntimeError("keyring on fire")

    _assert_refused(TrustReader(path, broken), "RuntimeError")


def test_fixing_the_file_ends_the_denial(tmp_path: Path) -> None:
    path, _key, watcher = _sound(tmp_path)
    os.chmod(path, 0o644)
    assert watcher.current(NOW).killed
    os.chmod(path, 0o600)
    assert not watcher.current(NOW).killed


def test_reader_caches_until_the_file_changes(tmp_path: Path) -> None:
    path, key = with_client(tmp_path)
    calls = []

    def loader() -> Any:
        calls.append(1)
        return key.public

    watcher = TrustReader(path, loader)
    first = watcher.current(NOW)
    assert watcher.current(NOW) is first and len(calls) == 1
    store.revoke(path, "client", "claude", NOW)
    second = watcher.current(NOW)
    assert second is not first and second.paired_clients == () and len(calls) == 2


settings_files = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@settings_files
@given(raw=st.binary(max_size=512))
@pytest.mark.promise("TR-05")
def test_reader_never_raises_on_arbitrary_file_contents(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "cfg" / "trust.json"
    if not path.exists():
        paired(tmp_path)
    hand_write(path, raw)
    eff = TrustReader(path, lambda: HostKey.generate().public).current(NOW)
    assert denied(eff)


# --- epochs ----------------------------------------------------------------------------------


def test_epoch_increments_by_one_per_write(tmp_path: Path) -> None:
    path, key = paired(tmp_path)
    epochs = [read_json(path)["epoch"]]
    writes: list[Callable[[], TrustDocument]] = [
        lambda: store.add_client(path, key, "claude", "/usr/bin/claude", SHA_A, NOW),
        lambda: store.add_restriction(path, "eval", False, NOW),
        lambda: store.engage_kill(path, "cli", NOW),
        lambda: store.release_kill(path, key, NOW),
        lambda: store.set_baseline(path, key, {"eval": True}, NOW),
        lambda: store.revoke(path, "client", "claude", NOW),
        lambda: store.set_pairing_code(path, "c" * 64, NOW + 300),
        lambda: store.rollback(path, key, 1, NOW),
    ]
    for write in writes:
        returned = write()
        epochs.append(read_json(path)["epoch"])
        assert returned.epoch == epochs[-1]
    assert epochs == list(range(1, len(writes) + 2))


@pytest.mark.promise("TR-05")
def test_epoch_regression_seen_by_a_reader_is_denied(tmp_path: Path) -> None:
    path, key, watcher = _sound(tmp_path)
    old = path.read_bytes()
    store.add_restriction(path, "eval", False, NOW)
    assert watcher.current(NOW).epoch == 3
    hand_write(path, old)  # a perfectly valid, older record (and a seal forged to match)
    _assert_refused(watcher, "rolled back (epoch 2, highest seen 3)")
    assert not reader(path, key).current(NOW).killed  # (a fresh process cannot tell)
    store.add_restriction(path, "eval", False, NOW)  # epoch 3 again: not lower
    assert not watcher.current(NOW).killed


# --- the writers -----------------------------------------------------------------------------


def test_update_without_a_record_refuses(tmp_path: Path) -> None:
    with pytest.raises(TrustUnreadable, match="missing"):
        store.engage_kill(tmp_path / "cfg" / "trust.json", "cli", NOW)


def test_initialise_refuses_to_overwrite_unless_re_pairing(tmp_path: Path) -> None:
    path, old_key = with_client(tmp_path)
    before = path.read_bytes()
    new_key = HostKey.generate()
    with pytest.raises(Exception, match="already exists"):
        store.initialise(path, new_key, "file", NOW)
    assert path.read_bytes() == before
    in_store = [old_key]
    old_view = TrustReader(path, lambda: in_store[0].public)
    store.engage_kill(path, "cli", NOW)
    assert old_view.current(NOW).killed
    in_store[0] = new_key  # the key store now holds the new key
    doc = store.initialise(path, new_key, "file", NOW, replace_existing=True)
    assert doc.epoch == 4 and doc.clients == () and doc.host_key.public == new_key.public.b64
    assert doc.kill.serial == 1  # the kill level carries on ...
    eff = old_view.current(NOW)
    assert eff.refused is None and not eff.killed  # ... and re-pairing released it
    assert not reader(path, new_key).current(NOW).killed


@pytest.mark.promise("TR-08")
def test_failed_mutation_writes_nothing(tmp_path: Path) -> None:
    path, _ = paired(tmp_path)
    before = path.read_bytes()

    def boom(doc: Any) -> Any:
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        update(path, boom)
    assert path.read_bytes() == before


def test_add_restriction_refuses_widening(tmp_path: Path) -> None:
    path, key = paired(tmp_path)
    store.set_baseline(path, key, {"origins": ["https://a.test"]}, NOW)
    before = path.read_bytes()
    for k, v in [
        ("eval", True),
        ("origins", ["https://a.test", "https://b.test"]),
        ("confirm", ["submit"]),
        ("clickGraceSeconds", 31),
    ]:
        with pytest.raises(PolicyError, match="widen"):
            store.add_restriction(path, k, v, NOW)
    with pytest.raises(PolicyError):
        store.add_restriction(path, "eval", "no", NOW)
    assert path.read_bytes() == before
    store.add_restriction(path, "origins", [], NOW)
    assert reader(path, key).current(NOW).policy.origins == ()


def test_grant_writers_refuse_a_key_that_is_not_the_records(tmp_path: Path) -> None:
    path, _ = paired(tmp_path)
    before = path.read_bytes()
    other = HostKey.generate()
    with pytest.raises(TrustUnreadable, match="not the host key"):
        store.add_client(path, other, "claude", "/usr/bin/claude", SHA_A, NOW)
    with pytest.raises(TrustUnreadable):
        store.release_kill(path, other, NOW)
    assert path.read_bytes() == before


def test_add_client_validates_and_re_pairing_lifts_a_revocation(tmp_path: Path) -> None:
    path, key = with_client(tmp_path)
    with pytest.raises(BadLabel):
        store.add_client(path, key, "../x", "/usr/bin/x", SHA_A, NOW)
    store.revoke(path, "client", "claude", NOW)
    doc = load(path, expect_paired=True)
    assert doc is not None and doc.clients == () and len(doc.revocations) == 1
    assert reader(path, key).current(NOW).paired_clients == ()
    store.add_client(path, key, "claude", "/usr/bin/claude2", SHA_B, NOW)
    eff = reader(path, key).current(NOW)
    assert [(c.label, c.sha256) for c in eff.paired_clients] == [("claude", SHA_B)]
    assert eff.client_matching(SHA_B) is not None and eff.client_matching(SHA_A) is None


@pytest.mark.promise("BP-05")
def test_browser_credentials_are_signed_grants(tmp_path: Path) -> None:
    from tabwarden.trust.record import Credential

    path, key = paired(tmp_path)
    cred = Credential(
        credential_id="AAEC", public_key="pQECAyYg", sign_count=0, enrolled_at=NOW, path="window"
    )
    store.add_browser_credential(path, key, "chrome", cred, NOW)
    store.add_browser_credential(
        path,
        key,
        "chrome",
        Credential(
            credential_id="BBBB",
            public_key="pQECAyYg",
            sign_count=3,
            enrolled_at=NOW,
            path="webauthn",
        ),
        NOW,
    )
    eff = reader(path, key).current(NOW)
    assert [c.credential_id for c in eff.browsers[0].credentials] == ["AAEC", "BBBB"]
    store.revoke(path, "browser", "chrome", NOW)
    assert reader(path, key).current(NOW).browsers == ()


def test_set_baseline_keeps_history_and_drops_restrictions_on_keys_it_sets(tmp_path: Path) -> None:
    path, key = paired(tmp_path)
    store.add_restriction(path, "clickGraceSeconds", 10, NOW)
    store.add_restriction(path, "eval", False, NOW)
    current = reader(path, key).current(NOW).policy
    store.set_baseline(path, key, apply_set(DEFAULT_POLICY, {"eval": True}).to_json(), NOW)
    doc = load(path, expect_paired=True)
    assert doc is not None and len(doc.policy.history) == 1
    assert [r.key for r in doc.policy.restrictions] == ["clickGraceSeconds"]
    eff = reader(path, key).current(NOW)
    assert eff.policy.eval is True and eff.policy.click_grace_seconds == current.click_grace_seconds


# --- rollback --------------------------------------------------------------------------------


@pytest.mark.promise("PR-04")
def test_narrowing_rollback_needs_no_key(tmp_path: Path) -> None:
    path, key = paired(tmp_path)
    store.set_baseline(path, key, {"eval": True, "origins": ["https://a.test"]}, NOW)
    store.rollback(path, None, 1, NOW)
    eff = reader(path, key).current(NOW)
    assert eff.policy == DEFAULT_POLICY


@pytest.mark.promise("PR-04")
def test_widening_rollback_without_key_needs_presence_and_changes_nothing(tmp_path: Path) -> None:
    path, key = paired(tmp_path)
    store.set_baseline(path, key, {"origins": ["https://a.test"], "eval": True}, NOW)
    store.set_baseline(path, key, {"origins": []}, NOW)  # narrower now
    before = path.read_bytes()
    with pytest.raises(PresenceRequired) as info:
        store.rollback(path, None, 1, NOW)
    assert info.value.code == "presence_required"
    assert path.read_bytes() == before
    store.rollback(path, key, 1, NOW)  # with the key (presence proven by the caller)
    eff = reader(path, key).current(NOW)
    assert eff.policy.eval is True and eff.policy.origins == ("https://a.test",)


def test_rollback_refuses_a_forged_history_entry(tmp_path: Path) -> None:
    path, key = paired(tmp_path)
    store.set_baseline(path, key, {"upload": True}, NOW)
    obj = read_json(path)
    obj["policy"]["history"][0]["values"]["eval"] = True
    hand_write(path, json.dumps(obj))
    with pytest.raises(PolicyError, match="does not verify"):
        store.rollback(path, key, 1, NOW)
    with pytest.raises(PolicyError, match="only 1 earlier"):
        store.rollback(path, key, 2, NOW)


# --- the pairing code ------------------------------------------------------------------------


@pytest.mark.promise("TR-13")
def test_pairing_code_is_stored_hashed_and_used_once(tmp_path: Path) -> None:
    path, _ = paired(tmp_path)
    code = "482-913"
    store.set_pairing_code(path, hashlib.sha256(code.encode()).hexdigest(), NOW + 300)
    assert code.encode() not in path.read_bytes()
    assert not store.consume_pairing_code(path, "000-000", NOW)
    assert read_json(path)["pairingCode"]["attempts"] == 1
    assert store.consume_pairing_code(path, code, NOW)
    assert read_json(path)["pairingCode"] is None
    assert not store.consume_pairing_code(path, code, NOW)


@pytest.mark.promise("TR-13")
def test_pairing_code_expires_and_burns_after_too_many_attempts(tmp_path: Path) -> None:
    path, _ = paired(tmp_path)
    digest = hashlib.sha256(b"right").hexdigest()
    store.set_pairing_code(path, digest, NOW + 300)
    assert not store.consume_pairing_code(path, "right", NOW + 300)
    store.set_pairing_code(path, digest, NOW + 300)
    for _ in range(store.PAIRING_MAX_ATTEMPTS):
        assert not store.consume_pairing_code(path, "wrong", NOW)
    assert not store.consume_pairing_code(path, "right", NOW)


@pytest.mark.promise("BP-11")
def test_setting_a_key_back_to_its_signed_value_lifts_its_restriction(tmp_path: Path) -> None:
    """Lower grace 30 -> 10 for free, then set it back to exactly 30 with presence: the person
    just set that key, so the restriction must go, not silently keep 10."""
    path, key = paired(tmp_path)
    r = reader(path, key)
    signed = r.current(NOW + 1).policy.click_grace_seconds
    store.add_restriction(path, "clickGraceSeconds", 10, NOW + 2)
    assert r.current(NOW + 3).policy.click_grace_seconds == 10
    eff = r.current(NOW + 4)
    store.set_baseline(
        path,
        key,
        apply_set(eff.policy, {"clickGraceSeconds": signed}).to_json(),
        NOW + 5,
        set_keys={"clickGraceSeconds": signed},
    )
    assert r.current(NOW + 6).policy.click_grace_seconds == signed
    # Without naming the key, an unchanged value keeps the narrowing (the old behaviour).
    store.add_restriction(path, "clickGraceSeconds", 10, NOW + 7)
    eff = r.current(NOW + 8)
    store.set_baseline(path, key, apply_set(eff.policy, {"eval": False}).to_json(), NOW + 9)
    assert r.current(NOW + 10).policy.click_grace_seconds == 10
    with pytest.raises(UsageError):
        store.set_baseline(path, key, eff.policy.to_json(), NOW + 11, set_keys=["nope"])
