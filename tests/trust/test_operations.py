"""The trust operations in process, against a real record on disk: each recipe's whole sequence
(refusal → validation → write → audit with the proof's path), and for each guard the attempt
that must fail with nothing written and nothing audited as granted."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tabwarden.trust import operations, store
from tabwarden.trust.keystore import FileStore
from tabwarden.trust.operations import (
    GrantRefused,
    NotPaired,
    TapRequired,
    TerminalPhrase,
    VerifiedTap,
    WindowClick,
)
from tabwarden.trust.policy import PolicyError
from tabwarden.trust.record import Credential
from tabwarden.trust.store import PresenceRequired
from tests.fixtures import TrustWorld, trust_world
from tests.trust import NOW, SHA_A

ORIGIN = "https://mail.example"
PHRASE = TerminalPhrase(action="test")


def _enrol(world: TrustWorld, label: str = "chromium", count: int = 5) -> Credential:
    assert world.key is not None
    cred = Credential(
        credential_id="cred-1", public_key="pk", sign_count=count, enrolled_at=NOW, path="webauthn"
    )
    store.add_browser_credential(world.ctx.trust_path, world.key, label, cred, NOW)
    return cred


def _tap(cred: Credential, new: int) -> VerifiedTap:
    return VerifiedTap(
        browser="chromium", owner="chromium", credential=cred, new_sign_count=new,
        user_verified=True,
    )  # fmt: skip


def test_restrict_narrows_and_audits(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    operations.restrict(world.ctx, {"confirmTimeoutSeconds": 30}, NOW)
    assert world.ctx.effective().policy.confirm_timeout_seconds == 30
    [entry] = world.audit()
    assert entry["event"] == "policy_restrict" and entry["decision"] == "narrowed"
    assert entry["changed"] == ["confirmTimeoutSeconds"]


def test_a_restriction_that_would_widen_writes_nothing_even_beside_a_narrowing_one(
    tmp_path: Path,
) -> None:
    world = trust_world(tmp_path)
    before = world.record_bytes()
    with pytest.raises(PolicyError, match="would widen"):
        operations.restrict(world.ctx, {"confirmTimeoutSeconds": 30, "eval": True}, NOW)
    assert world.record_bytes() == before and world.audit() == []
    assert world.ctx.effective().policy.eval is False


def test_widen_needs_the_key_and_records_the_proofs_path(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    operations.widen(world.ctx, PHRASE, {"origins": [ORIGIN]}, NOW)
    assert world.ctx.effective().policy.origins == (ORIGIN,)
    [entry] = world.audit()
    assert (entry["event"], entry["decision"], entry["path"]) == (
        "policy_set",
        "granted",
        "terminal",
    )

    unpaired = trust_world(tmp_path / "other", paired=False)
    with pytest.raises(NotPaired):
        operations.widen(unpaired.ctx, PHRASE, {"eval": True}, NOW)
    assert unpaired.record_bytes() is None and unpaired.audit() == []


def test_a_tap_stores_its_counter_before_the_action(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    cred = _enrol(world, count=5)
    operations.widen(world.ctx, _tap(cred, 9), {"eval": True}, NOW)
    [browser] = world.ctx.effective().browsers
    assert browser.credentials[0].sign_count == 9
    [entry] = world.audit()
    assert entry["path"] == "webauthn" and entry["credential"] == "cred-1"
    assert entry["user_verified"] is True and entry["browser"] == "chromium"


def test_a_narrowing_rollback_needs_no_proof(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    operations.widen(world.ctx, PHRASE, {"eval": True}, NOW)
    operations.rollback(world.ctx, 1, NOW)  # back to eval off: narrowing, written unsigned
    assert world.ctx.effective().policy.eval is False
    assert world.audit()[-1]["decision"] == "narrowed"


def test_a_widening_rollback_needs_a_proof(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    operations.widen(world.ctx, PHRASE, {"eval": True}, NOW)
    operations.widen(world.ctx, PHRASE, {"eval": False}, NOW)
    before, entries = world.record_bytes(), len(world.audit())
    with pytest.raises(PresenceRequired):
        operations.rollback(world.ctx, 1, NOW)
    assert world.record_bytes() == before and len(world.audit()) == entries
    operations.rollback(world.ctx, 1, NOW, PHRASE)
    assert world.ctx.effective().policy.eval is True
    assert world.audit()[-1]["path"] == "terminal"


def test_a_window_click_cannot_approve_an_origin_for_an_enrolled_browser(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    _enrol(world)
    before, entries = world.record_bytes(), len(world.audit())
    with pytest.raises(TapRequired):
        operations.approve_origin(world.ctx, WindowClick(browser="chromium"), ORIGIN, NOW)
    assert world.record_bytes() == before and len(world.audit()) == entries
    # Another, window-only browser label may.
    operations.approve_origin(world.ctx, WindowClick(browser="brave"), ORIGIN, NOW)
    assert ORIGIN in world.ctx.effective().policy.origins
    assert world.audit()[-1]["path"] == "window" and world.audit()[-1]["origin"] == ORIGIN


def test_no_origin_is_approved_while_killed_or_unpaired(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    operations.kill(world.ctx, "test", NOW)
    before = world.record_bytes()
    with pytest.raises(operations.Killed):
        operations.approve_origin(world.ctx, WindowClick(browser="b"), ORIGIN, NOW)
    assert world.record_bytes() == before
    unpaired = trust_world(tmp_path / "u", paired=False)
    with pytest.raises(GrantRefused):
        operations.approve_origin(unpaired.ctx, WindowClick(browser="b"), ORIGIN, NOW)
    assert unpaired.record_bytes() is None


def test_an_origin_must_be_exact(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    before = world.record_bytes()
    with pytest.raises(PolicyError):
        operations.approve_origin(world.ctx, PHRASE, "https://mail.example/inbox", NOW)
    assert world.record_bytes() == before


def test_kill_before_pairing_is_the_latch_and_unkill_removes_it(tmp_path: Path) -> None:
    world = trust_world(tmp_path, paired=False)
    with pytest.raises(NotPaired):
        operations.killed(world.ctx)
    assert operations.kill(world.ctx, "test", NOW) == 0
    assert world.ctx.kill_latch.exists() and operations.killed(world.ctx)
    operations.release_kill(world.ctx, PHRASE, NOW)
    assert not world.ctx.kill_latch.exists() and not world.ctx.effective().killed
    assert [e["event"] for e in world.audit()] == ["kill", "unkill"]


def test_kill_and_release_on_a_paired_record(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    operations.kill(world.ctx, "test", NOW, browser="chromium")
    assert world.ctx.effective().killed
    assert world.audit()[-1]["browser"] == "chromium"
    operations.release_kill(world.ctx, PHRASE, NOW)
    assert not world.ctx.effective().killed


def test_pair_client_with_a_tap_and_revoke_it(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    cred = _enrol(world)
    operations.pair_client(
        world.ctx, _tap(cred, 6), label="claude", exe="/usr/bin/claude", sha256=SHA_A, now=NOW
    )
    [client] = world.ctx.effective().paired_clients
    assert (client.label, client.path) == ("claude", "webauthn")
    operations.revoke(world.ctx, "client", "claude", NOW, browser="chromium")
    assert world.ctx.effective().paired_clients == ()
    assert [e["event"] for e in world.audit()] == ["pair_client", "revoke"]


def test_an_enrolled_browser_is_never_downgraded_to_window_only(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    _enrol(world)
    before, entries = world.record_bytes(), len(world.audit())
    with pytest.raises(store.AlreadyEnrolled):
        operations.enrol_browser(world.ctx, "chromium", None, NOW)
    assert world.record_bytes() == before and len(world.audit()) == entries


def test_pair_host_keeps_the_code_out_of_the_record_and_the_log(tmp_path: Path) -> None:
    world = trust_world(tmp_path, paired=False)
    key_store = FileStore(world.config / "host-key.pem")
    key = operations.pair_host(world.ctx, PHRASE, key_store, reset=False, code="ABCD-1234", now=NOW)
    assert key_store.load() is not None
    raw = world.ctx.trust_path.read_bytes()
    log = (world.config / "audit.jsonl").read_bytes()
    assert b"ABCD-1234" not in raw and b"ABCD-1234" not in log
    assert hashlib.sha256(b"ABCD-1234").hexdigest().encode() in raw
    [entry] = world.audit()
    assert entry["fingerprint"] == key.public.fingerprint and entry["path"] == "terminal"
    with pytest.raises(operations.AlreadyPaired):
        operations.pair_host(world.ctx, PHRASE, key_store, reset=False, code="X", now=NOW)


def test_the_origin_decision_is_the_hosts_and_writes_nothing(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    before = world.record_bytes()
    assert operations.decide_origin(world.ctx, "chromium", ORIGIN).ask == "click"
    _enrol(world)
    operations.widen(world.ctx, PHRASE, {"origins": ["https://a.example"]}, NOW)
    enrolled_record = world.record_bytes()
    decision = operations.decide_origin(world.ctx, "chromium", ORIGIN)
    assert decision.ask == "tap"
    assert decision.detail == '{"origins":["https://a.example","https://mail.example"]}'
    assert operations.decide_origin(world.ctx, "chromium", "https://a.example").ask == "none"
    assert operations.decide_origin(world.ctx, "brave", ORIGIN).ask == "click"
    assert world.record_bytes() == enrolled_record != before
    with pytest.raises(PolicyError):
        operations.decide_origin(world.ctx, "chromium", "https://a.example/path")
    operations.kill(world.ctx, "test", NOW)
    with pytest.raises(operations.Killed):
        operations.decide_origin(world.ctx, "chromium", ORIGIN)
    with pytest.raises(NotPaired):
        operations.decide_origin(trust_world(tmp_path / "u", paired=False).ctx, "chromium", ORIGIN)
