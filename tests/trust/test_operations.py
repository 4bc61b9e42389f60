"""The trust operations in process, against a real record on disk: each recipe's whole sequence
(refusal → validation → write → audit with the proof's path), and for each guard the attempt
that must fail with nothing written and nothing audited as granted."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from tabwarden.paths import BadLabel
from tabwarden.trust import operations, store
from tabwarden.trust.grants import grant_is_valid
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
from tabwarden.trust.record import Credential, TrustUnreadable
from tabwarden.trust.record_file import load
from tabwarden.trust.store import PresenceRequired
from tests.fixtures import TrustWorld, trust_world
from tests.trust import NOW, SHA_A, hand_edit, read_json

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


@pytest.mark.promise("BP-14")
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
    operations.widen(world.ctx, PHRASE, {"origins": ["https://a.example"]}, NOW)
    _enrol(world)
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


# --- re-enrolling a browser without a reset ------------------------------------------------

REENROL = TerminalPhrase(action="pair --browser")


def _credential(credential_id: str) -> Credential:
    return Credential(
        credential_id=credential_id, public_key="pk", sign_count=0, enrolled_at=NOW,
        path="webauthn",
    )  # fmt: skip


def _browsers(world: TrustWorld) -> dict[str, list[str]]:
    return {
        b.label: [c.credential_id for c in b.credentials] for b in world.ctx.effective().browsers
    }


def test_reissue_binds_a_fresh_code_to_the_label_and_keeps_every_other_grant(
    tmp_path: Path,
) -> None:
    world = trust_world(tmp_path)
    operations.pair_client(
        world.ctx, PHRASE, label="claude", exe="/usr/bin/claude", sha256=SHA_A, now=NOW
    )
    _enrol(world, "chromium")
    brave = _enrol(world, "brave")
    operations.revoke(world.ctx, "browser", "chromium", NOW)
    policy_before = world.ctx.effective().policy
    both = operations.TerminalAndTap(
        phrase=REENROL,
        tap=VerifiedTap(
            browser="brave", owner="brave", credential=brave, new_sign_count=6,
            user_verified=True,
        ),
    )  # fmt: skip

    operations.reissue_browser_code(world.ctx, both, "chromium", "1234-5678", NOW)

    doc = read_json(world.ctx.trust_path)
    code = doc["pairingCode"]
    assert (code["sha256"], code["expiresAt"], code["attempts"]) == (
        hashlib.sha256(b"1234-5678").hexdigest(),
        NOW + operations.PAIRING_CODE_TTL,
        0,
    )
    assert (code["binding"]["kind"], code["binding"]["browser"]) == ("codeBinding", "chromium")
    loaded = load(world.ctx.trust_path, expect_paired=True)
    assert loaded is not None and loaded.pairing_code is not None
    grant = loaded.pairing_code.binding_grant()
    assert world.key is not None and grant is not None
    assert grant_is_valid(world.key.public, grant)  # signed over this code's hash and expiry
    eff = world.ctx.effective()
    assert [c.label for c in eff.paired_clients] == ["claude"]
    assert _browsers(world) == {"brave": ["cred-1"]}  # the revoked one stays revoked
    assert eff.policy == policy_before and not eff.killed
    entry = world.audit()[-1]
    assert (entry["event"], entry["decision"], entry["path"], entry["browser"]) == (
        "browser_code",
        "granted",
        "webauthn",
        "chromium",
    )
    assert entry["paths"] == ["terminal", "webauthn"]
    for raw in (world.ctx.trust_path.read_bytes(), (world.config / "audit.jsonl").read_bytes()):
        assert b"1234-5678" not in raw and b"12345678" not in raw


def test_reissue_is_refused_for_an_enrolled_label_while_killed_unpaired_or_for_a_bad_label(
    tmp_path: Path,
) -> None:
    world = trust_world(tmp_path)
    _enrol(world, "chromium")
    before, entries = world.record_bytes(), len(world.audit())
    with pytest.raises(operations.BrowserEnrolled) as enrolled_exc:
        operations.reissue_browser_code(world.ctx, REENROL, "chromium", "1234-5678", NOW)
    assert "revoke browser LABEL" in (enrolled_exc.value.hint or "")
    with pytest.raises(BadLabel):
        operations.reissue_browser_code(world.ctx, REENROL, "Not A Label", "1234-5678", NOW)
    assert world.record_bytes() == before and len(world.audit()) == entries

    operations.revoke(world.ctx, "browser", "chromium", NOW)
    operations.kill(world.ctx, "test", NOW)
    before, entries = world.record_bytes(), len(world.audit())
    with pytest.raises(operations.Killed):
        operations.reissue_browser_code(world.ctx, REENROL, "chromium", "1234-5678", NOW)
    assert world.record_bytes() == before and len(world.audit()) == entries

    unpaired = trust_world(tmp_path / "u", paired=False)
    with pytest.raises(NotPaired):
        operations.reissue_browser_code(unpaired.ctx, REENROL, "chromium", "1234-5678", NOW)
    assert unpaired.record_bytes() is None and unpaired.audit() == []


@pytest.mark.promise("TR-07")
def test_a_re_inserted_revoked_grant_stays_revoked_after_the_label_re_enrols(
    tmp_path: Path,
) -> None:
    """The attacker keeps a copy of the browser grant from before `revoke browser` (validly
    signed, its epoch not later than the record's) and puts it back once the label has enrolled
    a new credential — beside the new grant, or instead of it. It is revoked either way."""
    world = trust_world(tmp_path)
    assert world.key is not None
    _enrol(world, "chromium")
    [old_grant] = read_json(world.ctx.trust_path)["browsers"]
    operations.revoke(world.ctx, "browser", "chromium", NOW)
    [revocation] = read_json(world.ctx.trust_path)["revocations"]
    assert revocation["epoch"] == read_json(world.ctx.trust_path)["epoch"]
    operations.enrol_browser(world.ctx, "chromium", _credential("cred-new"), NOW)
    assert _browsers(world) == {"chromium": ["cred-new"]}

    beside = read_json(world.ctx.trust_path)
    beside["browsers"].append(old_grant)
    hand_edit(world.ctx.trust_path, beside)
    eff = world.ctx.effective()
    assert _browsers(world) == {"chromium": ["cred-new"]}
    assert any("revoked" in reason for reason in eff.ignored), eff.ignored

    instead = read_json(world.ctx.trust_path)
    instead["browsers"] = [old_grant]
    hand_edit(world.ctx.trust_path, instead)
    assert _browsers(world) == {}
    assert not operations.enrolled(world.ctx.effective(), "chromium")


@pytest.mark.promise("TR-07")
def test_a_revocation_written_before_revocations_had_an_epoch_keeps_revoking_after_re_enrolment(
    tmp_path: Path,
) -> None:
    """Old records parse: a revocation without ``epoch`` still revokes every grant of its label,
    and pairing the label again pins it to the epoch before the new grant."""
    world = trust_world(tmp_path)
    _enrol(world, "chromium")
    [old_grant] = read_json(world.ctx.trust_path)["browsers"]
    legacy = read_json(world.ctx.trust_path)
    legacy["browsers"] = []
    legacy["revocations"] = [{"kind": "browser", "label": "chromium", "at": NOW}]
    hand_edit(world.ctx.trust_path, legacy)
    assert _browsers(world) == {}
    legacy["browsers"] = [old_grant]
    hand_edit(world.ctx.trust_path, legacy)
    assert _browsers(world) == {}  # epoch-less: every grant of the label

    operations.enrol_browser(world.ctx, "chromium", _credential("cred-new"), NOW)
    doc = read_json(world.ctx.trust_path)
    [revocation] = doc["revocations"]
    assert revocation["epoch"] == doc["epoch"] - 1
    assert _browsers(world) == {"chromium": ["cred-new"]}
    doc["browsers"].append(old_grant)
    hand_edit(world.ctx.trust_path, doc)
    assert _browsers(world) == {"chromium": ["cred-new"]}


@pytest.mark.promise("TR-07")
def test_a_tap_verified_before_revoke_cannot_bring_the_browser_back(tmp_path: Path) -> None:
    """A tap verified just before `revoke browser` lands after it: storing its sign count must
    not re-create the revoked grant (its credential is no longer enrolled)."""
    world = trust_world(tmp_path)
    assert world.key is not None
    cred = _enrol(world, "chromium")
    tap = _tap(cred, 6)
    operations.revoke(world.ctx, "browser", "chromium", NOW)
    before, entries = world.record_bytes(), len(world.audit())
    with pytest.raises(store.NotEnrolled):
        operations.record_tap(world.ctx, world.key, tap, NOW)
    with pytest.raises(store.NotEnrolled):
        operations.widen(world.ctx, tap, {"eval": True}, NOW)
    assert world.record_bytes() == before and len(world.audit()) == entries
    assert _browsers(world) == {} and world.ctx.effective().policy.eval is False


def test_a_context_for_a_gate_audits_beside_that_gates_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gate built for another config directory (a throwaway browser's, a second profile's)
    writes its audit entries there, never into the process's own config directory."""
    from tabwarden.trust.gate import TrustGate

    own = tmp_path / "own"
    monkeypatch.setenv("TABWARDEN_CONFIG_DIR", str(own))
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    ctx = operations.TrustContext.for_gate(TrustGate({"TABWARDEN_CONFIG_DIR": str(other)}))
    assert ctx.audit().path == other / "audit.jsonl"
    operations.kill(ctx, "test", NOW)
    assert (other / "audit.jsonl").read_text().count('"event":"kill"') == 1
    assert not (own / "audit.jsonl").exists()


# --- two factors where an authenticator exists ---------------------------------------------


def _both(cred: Credential, new: int, action: str = "test") -> operations.TerminalAndTap:
    return operations.TerminalAndTap(phrase=TerminalPhrase(action=action), tap=_tap(cred, new))


@pytest.mark.promise("PR-02")
def test_the_phrase_alone_grants_nothing_once_an_authenticator_is_enrolled(
    tmp_path: Path,
) -> None:
    """A same-user program typing the phrase at its own pty: every grant a terminal starts is
    refused, nothing written, and each refusal audited."""
    world = trust_world(tmp_path)
    cred = _enrol(world)
    operations.widen(world.ctx, _both(cred, 6), {"origins": ["https://a.example"]}, NOW)
    operations.kill(world.ctx, "test", NOW)
    before, entries = world.record_bytes(), len(world.audit())
    attempts: list[tuple[str, Callable[[], object]]] = [
        ("unkill", lambda: operations.release_kill(world.ctx, PHRASE, NOW)),
        ("policy_set", lambda: operations.widen(world.ctx, PHRASE, {"eval": True}, NOW)),
        ("policy_rollback", lambda: operations.rollback(world.ctx, 1, NOW, PHRASE)),
        (
            "pair_client",
            lambda: operations.pair_client(
                world.ctx, PHRASE, label="evil", exe="/tmp/evil", sha256=SHA_A, now=NOW
            ),
        ),
    ]
    for event, attempt in attempts:
        with pytest.raises(operations.SecondFactorRequired) as refused:
            attempt()
        assert refused.value.code == "presence_required"
        assert "tap" in str(refused.value) and "options page" in refused.value.hint
        assert world.record_bytes() == before
        last = world.audit()[-1]
        assert (last["event"], last["decision"], last["path"]) == (event, "refused", "terminal")
    assert len(world.audit()) == entries + len(attempts)
    assert world.ctx.effective().killed
    assert [c.label for c in world.ctx.effective().paired_clients] == []


@pytest.mark.promise("PR-02")
def test_pair_browser_needs_a_tap_while_another_browser_holds_an_authenticator(
    tmp_path: Path,
) -> None:
    world = trust_world(tmp_path)
    _enrol(world, "brave")
    before = world.record_bytes()
    with pytest.raises(operations.SecondFactorRequired):
        operations.reissue_browser_code(world.ctx, REENROL, "chromium", "1234-5678", NOW)
    assert world.record_bytes() == before
    assert world.audit()[-1]["decision"] == "refused"


@pytest.mark.promise("PR-02")
def test_phrase_and_tap_grant_and_the_audit_names_both_paths(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    cred = _enrol(world, count=5)
    operations.kill(world.ctx, "test", NOW)
    operations.release_kill(world.ctx, _both(cred, 6, "unkill"), NOW)
    assert not world.ctx.effective().killed
    entry = world.audit()[-1]
    assert (entry["event"], entry["decision"], entry["path"]) == ("unkill", "granted", "webauthn")
    assert entry["paths"] == ["terminal", "webauthn"] and entry["credential"] == "cred-1"
    [browser] = world.ctx.effective().browsers
    assert browser.credentials[0].sign_count == 6  # stored: the same assertion cannot replay


@pytest.mark.promise("PR-02")
def test_window_only_pairings_keep_the_phrase_alone(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    assert world.key is not None
    store.add_window_only_browser(world.ctx.trust_path, world.key, "chromium", NOW)
    operations.widen(world.ctx, PHRASE, {"origins": [ORIGIN]}, NOW)
    operations.kill(world.ctx, "test", NOW)
    operations.release_kill(world.ctx, PHRASE, NOW)
    assert world.ctx.effective().policy.origins == (ORIGIN,)
    assert [e["path"] for e in world.audit() if e["decision"] == "granted"] == [
        "terminal",
        "terminal",
    ]


@pytest.mark.promise("PR-02")
def test_a_tampered_record_naming_an_authenticator_is_not_accepted_by_the_phrase_alone(
    tmp_path: Path,
) -> None:
    """``unkill`` after tampering accepts the record as it is: with an authenticator in it, that
    acceptance needs a tap as well (its signatures alone decide what the record holds)."""
    world = trust_world(tmp_path)
    _enrol(world)
    doc = read_json(world.ctx.trust_path)
    doc["policy"]["restrictions"] = []
    hand_edit(world.ctx.trust_path, doc, reseal=False)  # the seal no longer vouches for it
    assert operations.tampering(world.ctx) is not None
    before = world.record_bytes()
    with pytest.raises(operations.SecondFactorRequired):
        operations.release_kill(world.ctx, PHRASE, NOW)
    assert world.record_bytes() == before
    assert world.audit()[-1]["decision"] == "refused"


@pytest.mark.promise("PR-02")
def test_a_record_that_cannot_be_read_refuses_the_phrase(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    world.ctx.trust_path.write_bytes(b"{not json")
    with pytest.raises(TrustUnreadable):
        operations.widen(world.ctx, PHRASE, {"origins": [ORIGIN]}, NOW)
    assert world.ctx.trust_path.read_bytes() == b"{not json"


# --- the two-factor latch: revoking the last authenticator does not bring the phrase back ----


def _latch_refusals(world: TrustWorld) -> list[tuple[str, Callable[[], object]]]:
    return [
        ("policy_set", lambda: operations.widen(world.ctx, PHRASE, {"eval": True}, NOW)),
        ("policy_rollback", lambda: operations.rollback(world.ctx, 1, NOW, PHRASE)),
        (
            "pair_client",
            lambda: operations.pair_client(
                world.ctx, PHRASE, label="evil", exe="/tmp/evil", sha256=SHA_A, now=NOW
            ),
        ),
        (
            "browser_code",
            lambda: operations.reissue_browser_code(world.ctx, REENROL, "spare", "1234-5678", NOW),
        ),
        ("kill", lambda: operations.kill(world.ctx, "test", NOW)),  # free; then:
        ("unkill", lambda: operations.release_kill(world.ctx, PHRASE, NOW)),
    ]


def test_the_first_enrolment_latches_the_record_and_a_window_only_pairing_does_not(
    tmp_path: Path,
) -> None:
    world = trust_world(tmp_path)
    assert world.key is not None
    store.add_window_only_browser(world.ctx.trust_path, world.key, "spare", NOW)
    assert "twoFactor" not in read_json(world.ctx.trust_path)
    assert world.ctx.effective().two_factor is False
    assert operations.two_factor_latched(world.ctx) is False
    _enrol(world)
    latch = read_json(world.ctx.trust_path)["twoFactor"]
    assert latch["kind"] == "twoFactor" and grant_is_valid(world.key.public, latch)
    assert world.ctx.effective().two_factor is True
    _enrol(world, "brave")  # a second enrolment keeps the one latch, re-signs nothing
    assert read_json(world.ctx.trust_path)["twoFactor"] == latch


def test_the_latch_survives_revoking_every_authenticator_and_the_phrase_alone_is_refused(
    tmp_path: Path,
) -> None:
    """The attacker's way round the two-factor rule: `revoke browser` is free. Once the record
    is latched, every widening a terminal starts is refused with ``second_factor_lost`` (hint:
    ``pair --reset``), nothing written, each refusal audited; narrowings stay free."""
    world = trust_world(tmp_path)
    assert world.key is not None
    store.add_window_only_browser(world.ctx.trust_path, world.key, "spare", NOW)
    cred = _enrol(world)
    operations.widen(world.ctx, _both(cred, 6), {"origins": [ORIGIN]}, NOW)
    operations.revoke(world.ctx, "browser", "chromium", NOW)  # free, no proof
    assert not operations.authenticators_enrolled(world.ctx, world.key, NOW)
    assert operations.two_factor_latched(world.ctx)
    attempts = _latch_refusals(world)
    for event, attempt in attempts:
        if event == "kill":
            attempt()
            continue
        before, entries = world.record_bytes(), len(world.audit())
        with pytest.raises(operations.SecondFactorLost) as refused:
            attempt()
        assert refused.value.code == "second_factor_lost"
        assert "`tabwarden pair --reset`" in refused.value.hint
        assert world.record_bytes() == before
        last = world.audit()[-1]
        assert (last["event"], last["decision"], last["path"], last["reason"]) == (
            event, "refused", "terminal", "authenticator was enrolled",
        )  # fmt: skip
        assert len(world.audit()) == entries + 1
    eff = world.ctx.effective()
    assert eff.killed and eff.paired_clients == () and eff.policy.eval is False
    # narrowings stay free on a latched record
    operations.restrict(world.ctx, {"origins": []}, NOW)
    operations.revoke(world.ctx, "browser", "spare", NOW)
    operations.kill(world.ctx, "again", NOW)
    after = world.ctx.effective()
    assert after.policy.origins == () and after.browsers == () and after.two_factor


def test_only_a_reset_clears_the_latch_and_then_the_phrase_alone_grants(tmp_path: Path) -> None:
    world = trust_world(tmp_path)
    assert world.key is not None
    _enrol(world)
    operations.revoke(world.ctx, "browser", "chromium", NOW)
    operations.kill(world.ctx, "test", NOW)
    with pytest.raises(operations.SecondFactorLost):
        operations.widen(world.ctx, PHRASE, {"origins": [ORIGIN]}, NOW)
    # `pair --reset` writes a new record (here under the same key, as the unit allows)
    store.initialise(world.ctx.trust_path, world.key, "file", NOW, replace_existing=True)
    assert "twoFactor" not in read_json(world.ctx.trust_path)
    assert not operations.two_factor_latched(world.ctx)
    operations.widen(world.ctx, PHRASE, {"origins": [ORIGIN]}, NOW)
    assert world.ctx.effective().policy.origins == (ORIGIN,)
    assert world.audit()[-1]["decision"] == "granted"


def test_a_record_written_before_the_latch_existed_loads_unlatched(tmp_path: Path) -> None:
    """A record from before the field (an authenticator enrolled, no ``twoFactor``) loads and
    verifies as it did: not latched, the enrolled authenticator still asks for the tap."""
    world = trust_world(tmp_path)
    assert world.key is not None
    _enrol(world)
    doc = read_json(world.ctx.trust_path)
    del doc["twoFactor"]
    hand_edit(world.ctx.trust_path, doc)  # as an older tabwarden wrote and sealed it
    loaded = load(world.ctx.trust_path, expect_paired=True)
    assert loaded is not None and loaded.two_factor is None
    eff = world.ctx.effective()
    assert (
        eff.refused is None
        and not eff.two_factor
        and [b.label for b in eff.browsers] == ["chromium"]
    )
    with pytest.raises(operations.SecondFactorRequired):
        operations.widen(world.ctx, PHRASE, {"eval": True}, NOW)
    _enrol(world, "brave")  # the next enrolment latches it
    assert operations.two_factor_latched(world.ctx)


def test_a_latch_whose_signature_does_not_verify_refuses_the_record(tmp_path: Path) -> None:
    """Only a forger writes a latch that does not verify (another key's, or edited): the whole
    record is refused, and the phrase alone grants nothing on it."""
    world = trust_world(tmp_path)
    assert world.key is not None
    _enrol(world)
    operations.revoke(world.ctx, "browser", "chromium", NOW)
    doc = read_json(world.ctx.trust_path)
    doc["twoFactor"]["epoch"] = 1  # re-aimed: its signature no longer covers it
    hand_edit(world.ctx.trust_path, doc)
    before = world.record_bytes()
    eff = world.ctx.effective()
    assert eff.refused is not None and "twoFactor" in eff.refused
    assert eff.killed and eff.paired_clients == () and eff.browsers == ()
    with pytest.raises((TrustUnreadable, operations.SecondFactorLost)):
        operations.pair_client(
            world.ctx, PHRASE, label="evil", exe="/tmp/evil", sha256=SHA_A, now=NOW
        )
    assert world.record_bytes() == before


def test_a_latch_removed_by_hand_is_refused_and_not_accepted_by_the_phrase_alone(
    tmp_path: Path,
) -> None:
    """Deleting ``twoFactor`` from the file: the seal no longer vouches for the record, so every
    reader denies and every writer refuses; ``unkill`` (which would accept the record as it is)
    is refused on the phrase alone as well, nothing written."""
    world = trust_world(tmp_path)
    assert world.key is not None
    _enrol(world)
    operations.revoke(world.ctx, "browser", "chromium", NOW)
    doc = read_json(world.ctx.trust_path)
    del doc["twoFactor"]
    hand_edit(world.ctx.trust_path, doc, reseal=False)
    assert operations.tampering(world.ctx) is not None
    assert world.ctx.effective().refused is not None
    before = world.record_bytes()
    with pytest.raises(TrustUnreadable):
        operations.pair_client(
            world.ctx, PHRASE, label="evil", exe="/tmp/evil", sha256=SHA_A, now=NOW
        )
    with pytest.raises(operations.SecondFactorLost):
        operations.release_kill(world.ctx, PHRASE, NOW)
    assert world.record_bytes() == before
