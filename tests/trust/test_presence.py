"""WebAuthn presence verification (trust/presence.py) against a software authenticator.

Every refusal asserts the opaque outward message and the precise local reason.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tabwarden.errors import TabwardenError
from tabwarden.manifests import EXTENSION_ID
from tabwarden.trust import presence as p
from tabwarden.trust.presence import (
    CHALLENGE_TTL,
    RP_ORIGIN,
    AssertionOutcome,
    Challenge,
    ChallengeBook,
    PresenceRefused,
)
from tabwarden.trust.record import Credential
from tests.trust.softauthn import SoftAuthenticator, b64u, unb64u

NOW = 1_700_000_000
OPAQUE = "presence refused"


def refused(reason_part: str, kind: str | None = None) -> Any:
    """Context manager: PresenceRefused whose local reason names the failed check, and whose
    person-facing kind (``reason_code``) is one of the fixed set (``kind``, when given)."""
    return _Refused(reason_part, kind)


class _Refused:
    def __init__(self, part: str, kind: str | None) -> None:
        self.part = part
        self.kind = kind

    def __enter__(self) -> None:
        self._cm = pytest.raises(PresenceRefused)
        self.info = self._cm.__enter__()

    def __exit__(self, *exc: Any) -> bool:
        handled = self._cm.__exit__(*exc)
        err = self.info.value
        assert self.part in err.reason, err.reason
        assert str(err) == OPAQUE
        assert err.code == "presence_refused"
        assert isinstance(err, TabwardenError)
        assert err.reason_code in p.REASON_CODES, err.reason_code
        assert self.kind is None or err.reason_code == self.kind, (err.reason_code, self.kind)
        return bool(handled)


def enrol(auth: SoftAuthenticator, label: str = "chrome") -> Credential:
    options, challenge = p.begin_registration(label, user_name="me", now=NOW)
    return p.complete_registration(challenge, auth.create(options), now=NOW + 1)


class Setup:
    def __init__(self, *, uv_required: bool = False, action: str = "policy.widen") -> None:
        self.a = SoftAuthenticator()
        self.b = SoftAuthenticator()
        self.cred_a = enrol(self.a, "chrome")
        self.cred_b = enrol(self.b, "chromium")
        self.action = action
        self.detail = "sha256:abc"
        self.uv_required = uv_required
        self.options, self.challenge = p.begin_assertion(
            action, self.detail, "chrome", [self.cred_a], now=NOW + 10, uv_required=uv_required
        )

    def complete(self, response: dict[str, Any], **over: Any) -> AssertionOutcome:
        kw: dict[str, Any] = {
            "action": self.action,
            "detail": self.detail,
            "browser_label": "chrome",
            "credentials": [self.cred_a],
            "now": NOW + 11,
            "uv_required": self.uv_required,
        }
        kw.update(over)
        challenge = kw.pop("challenge", self.challenge)
        return p.complete_assertion(challenge, response, **kw)


@pytest.fixture
def s() -> Setup:
    return Setup()


# --- constants and options ------------------------------------------------------------------


def test_origin_and_rp_id_hash_are_the_full_extension_origin() -> None:
    assert RP_ORIGIN == f"chrome-extension://{EXTENSION_ID}"
    assert not RP_ORIGIN.endswith("/")
    assert CHALLENGE_TTL == 120


def test_registration_options_are_ready_for_the_page() -> None:
    options, ch = p.begin_registration("chrome", user_name="me", now=NOW)
    assert options["rp"]["id"] == EXTENSION_ID
    assert options["authenticatorSelection"]["userVerification"] == "preferred"
    assert options["authenticatorSelection"]["residentKey"] == "discouraged"
    assert options["attestation"] == "none"
    assert len(unb64u(options["challenge"])) == 32
    json.dumps(options)
    json.dumps(ch.to_json())  # the state is JSON-serialisable
    assert ch.kind == "register" and ch.browser_label == "chrome" and not ch.used
    assert ch.expires_at == NOW + CHALLENGE_TTL


def test_assertion_options_name_exactly_that_browsers_credentials(s: Setup) -> None:
    assert s.options["rpId"] == EXTENSION_ID
    assert [c["id"] for c in s.options["allowCredentials"]] == [s.cred_a.credential_id]
    # cred_a verified the user at enrolment, so the browser is told to insist on UV too.
    assert s.cred_a.uv is True
    assert s.options["userVerification"] == "required"
    no_uv = enrol(SoftAuthenticator(uv=False))
    assert no_uv.uv is False
    opts, _ = p.begin_assertion("unkill", "", "chrome", [no_uv], now=NOW)
    assert opts["userVerification"] == "preferred"
    opts, _ = p.begin_assertion("unkill", "", "chrome", [no_uv], now=NOW, uv_required=True)
    assert opts["userVerification"] == "required"
    opts, _ = p.begin_assertion("unkill", "", "chrome", [no_uv, s.cred_a], now=NOW)
    assert opts["userVerification"] == "preferred"  # mixed: enforced per credential on return


def test_injected_rng_makes_challenges_deterministic() -> None:
    counter = iter(range(1000))

    def rng(n: int) -> bytes:
        return bytes([next(counter) % 256]) * n

    _, c1 = p.begin_registration("chrome", user_name="me", now=NOW, rng=rng)
    assert c1.state["challenge"] == b64u(b"\0" * 32)


# --- registration ---------------------------------------------------------------------------


def test_registration_happy_path_stores_the_credential() -> None:
    auth = SoftAuthenticator()
    auth.counter = 7
    options, ch = p.begin_registration("chrome", user_name="me", now=NOW)
    cred = p.complete_registration(ch, auth.create(options), now=NOW + 5)
    assert cred.credential_id == b64u(auth.credential_id)
    assert cred.sign_count == 7
    assert cred.enrolled_at == NOW + 5
    assert cred.path == "webauthn"
    from fido2 import cbor
    from fido2.cose import CoseKey

    cose = cbor.decode(unb64u(cred.public_key))
    assert isinstance(cose, Mapping)  # a COSE key is a CBOR map
    key = CoseKey.parse(cose)
    assert key[3] == -7


@pytest.mark.parametrize(
    ("bend", "reason"),
    [
        ({"origin": RP_ORIGIN + "/"}, "origin mismatch"),
        ({"rp_id_hash": hashlib.sha256(EXTENSION_ID.encode()).digest()}, "rpIdHash"),
        ({"kind": "webauthn.get"}, "type mismatch"),
        ({"up": False}, "user presence"),
        ({"challenge": b"x" * 32}, "challenge mismatch"),
        ({"fmt": "packed", "att_stmt": {"alg": -7, "sig": b"\0"}}, "bad attestation"),
        ({"att_stmt": {"x": 1}}, "bad attestation"),
        ({"cross_origin": True}, "crossOrigin"),
        ({"credential_id": b"other-credential"}, "credential id differs"),
    ],
)
def test_registration_refusals(bend: dict[str, Any], reason: str) -> None:
    options, ch = p.begin_registration("chrome", user_name="me", now=NOW)
    with refused(reason):
        p.complete_registration(ch, SoftAuthenticator().create(options, **bend), now=NOW + 1)


def test_registration_refuses_expired_used_wrong_kind_and_excluded(s: Setup) -> None:
    options, ch = p.begin_registration("chrome", user_name="me", now=NOW)
    resp = SoftAuthenticator().create(options)
    with refused("expired", "challenge_stale"):
        p.complete_registration(ch, resp, now=NOW + CHALLENGE_TTL)
    with refused("already used", "challenge_stale"):
        p.complete_registration(ch.mark_used(), resp, now=NOW + 1)
    with refused("wrong kind"):
        p.complete_registration(s.challenge, resp, now=NOW + 11)
    options, ch = p.begin_registration("chrome", user_name="me", exclude=[s.cred_a], now=NOW)
    assert options["excludeCredentials"] == [{"type": "public-key", "id": s.cred_a.credential_id}]
    with refused("already enrolled"):
        p.complete_registration(ch, s.a.create(options), now=NOW + 1)


def test_registration_refuses_wrong_outer_type_and_garbage() -> None:
    options, ch = p.begin_registration("chrome", user_name="me", now=NOW)
    resp = SoftAuthenticator().create(options)
    with refused("credential type mismatch"):
        p.complete_registration(ch, {**resp, "type": "password"}, now=NOW + 1)
    with refused("id or rawId missing"):
        p.complete_registration(ch, {"id": "x"}, now=NOW + 1)
    with refused("malformed"):
        p.complete_registration(ch, {"id": "AAAA", "rawId": "AAAA"}, now=NOW + 1)
    with refused("not an object"):
        p.complete_registration(ch, [], now=NOW + 1)  # type: ignore[arg-type]


# --- assertion ------------------------------------------------------------------------------


def test_assertion_happy_path_counter_increases(s: Setup) -> None:
    out = s.complete(s.a.get(s.options))
    assert out == AssertionOutcome(
        credential_id=s.cred_a.credential_id, new_sign_count=1, user_verified=True
    )
    stored = Credential(**{**_fields(s.cred_a), "sign_count": out.new_sign_count})
    opts, ch = p.begin_assertion(s.action, s.detail, "chrome", [stored], now=NOW + 20)
    out2 = s.complete(s.a.get(opts), challenge=ch, credentials=[stored], now=NOW + 21)
    assert out2.new_sign_count == 2


def _fields(c: Credential) -> dict[str, Any]:
    return {
        "credential_id": c.credential_id,
        "public_key": c.public_key,
        "sign_count": c.sign_count,
        "enrolled_at": c.enrolled_at,
        "path": c.path,
        "uv": c.uv,
    }


def test_counter_zero_stays_zero_is_accepted(s: Setup) -> None:
    """Some authenticators (synced passkeys) always send 0; 0 -> 0 is allowed."""
    out = s.complete(s.a.get(s.options, counter=0))
    assert out.new_sign_count == 0


def test_uv_absent_is_fine_for_a_credential_enrolled_without_uv() -> None:
    auth = SoftAuthenticator(uv=False)
    cred = enrol(auth)
    opts, ch = p.begin_assertion("unkill", "", "chrome", [cred], now=NOW + 10)
    out = p.complete_assertion(
        ch,
        auth.get(opts),
        action="unkill",
        detail="",
        browser_label="chrome",
        credentials=[cred],
        now=NOW + 11,
    )
    assert out.user_verified is False


@pytest.mark.promise("BP-12")
def test_uv_absent_is_refused_for_a_credential_enrolled_with_uv(s: Setup) -> None:
    """The authenticator verified the person at enrolment: presence alone no longer suffices,
    even when the challenge itself only said "preferred" (minted for a stale copy)."""
    stale = Credential(**{**_fields(s.cred_a), "uv": False})
    opts, ch = p.begin_assertion(s.action, s.detail, "chrome", [stale], now=NOW + 10)
    assert opts["userVerification"] == "preferred"
    with refused("user verification", "not_verified"):
        s.complete(s.a.get(opts, uv=False), challenge=ch, credentials=[s.cred_a])
    # the same tap with UV verifies
    assert s.complete(s.a.get(opts), challenge=ch, credentials=[s.cred_a]).user_verified


@pytest.mark.parametrize(("stored", "new"), [(5, 5), (5, 4), (5, 0), (1, 0)])
def test_non_increasing_counter_is_refused(s: Setup, stored: int, new: int) -> None:
    cred = Credential(**{**_fields(s.cred_a), "sign_count": stored})
    with refused("sign counter", "counter_not_increased"):
        s.complete(s.a.get(s.options, counter=new), credentials=[cred])


def test_expired_challenge(s: Setup) -> None:
    with refused("expired", "challenge_stale"):
        s.complete(s.a.get(s.options), now=NOW + 10 + CHALLENGE_TTL)


def test_reused_challenge(s: Setup) -> None:
    resp = s.a.get(s.options)
    s.complete(resp)
    with refused("already used", "challenge_stale"):
        s.complete(resp, challenge=s.challenge.mark_used())


def test_wrong_kind(s: Setup) -> None:
    _, reg = p.begin_registration("chrome", user_name="me", now=NOW + 10)
    with refused("wrong kind"):
        s.complete(s.a.get(s.options), challenge=reg)


def test_assertion_for_another_action(s: Setup) -> None:
    with refused("action mismatch", "wrong_request"):
        s.complete(s.a.get(s.options), action="unkill")


def test_assertion_for_another_detail(s: Setup) -> None:
    with refused("detail mismatch"):
        s.complete(s.a.get(s.options), detail="sha256:def")


def test_challenge_for_browser_b_presented_for_browser_a(s: Setup) -> None:
    opts, ch_b = p.begin_assertion(s.action, s.detail, "chromium", [s.cred_b], now=NOW + 10)
    with refused("browser mismatch"):
        s.complete(s.b.get(opts), challenge=ch_b)


def test_credential_of_browser_b_for_browser_a(s: Setup) -> None:
    with refused("not enrolled for this browser"):
        s.complete(s.b.get(s.options))
    # even if the caller wrongly passes B's credential too, A's challenge did not allow it
    with refused("not enrolled for this browser"):
        s.complete(s.b.get(s.options), credentials=[s.cred_a, s.cred_b])


def test_unknown_credential(s: Setup) -> None:
    with refused("not enrolled"):
        s.complete(SoftAuthenticator().get(s.options))


def test_up_absent(s: Setup) -> None:
    with refused("user presence"):
        s.complete(s.a.get(s.options, up=False))


def test_uv_absent_when_required() -> None:
    s = Setup(uv_required=True)
    with refused("user verification", "not_verified"):
        s.complete(s.a.get(s.options, uv=False))


def test_uv_required_by_caller_even_if_challenge_said_preferred(s: Setup) -> None:
    with refused("user verification", "not_verified"):
        s.complete(s.a.get(s.options, uv=False), uv_required=True)


def test_tampered_signature(s: Setup) -> None:
    resp = s.a.get(s.options)
    sig = bytearray(unb64u(resp["response"]["signature"]))
    sig[-1] ^= 1
    resp["response"]["signature"] = b64u(bytes(sig))
    with refused("signature invalid", "signature_invalid"):
        s.complete(resp)


def test_signature_by_another_key_over_the_same_data(s: Setup) -> None:
    resp = s.a.get(s.options)
    other = SoftAuthenticator()
    other.credential_id = s.a.credential_id
    other.counter = s.a.counter - 1
    resp["response"] = other.get(s.options)["response"]
    with refused("signature invalid", "signature_invalid"):
        s.complete(resp)


def test_tampered_client_data_origin(s: Setup) -> None:
    resp = s.a.get(s.options)
    body = json.loads(unb64u(resp["response"]["clientDataJSON"]))
    body["origin"] = "https://evil.example"
    resp["response"]["clientDataJSON"] = b64u(json.dumps(body).encode())
    with refused("origin mismatch"):
        s.complete(resp)


@pytest.mark.parametrize("origin", [RP_ORIGIN + "/", EXTENSION_ID, "chrome-extension://other"])
def test_signed_but_wrong_origin(s: Setup, origin: str) -> None:
    with refused("origin mismatch"):
        s.complete(s.a.get(s.options, origin=origin))


def test_rp_id_hash_of_the_bare_id_is_refused(s: Setup) -> None:
    """The documented pitfall: rpIdHash must be SHA-256 of the full origin, not of the ID."""
    bare = hashlib.sha256(EXTENSION_ID.encode()).digest()
    with refused("rpIdHash"):
        s.complete(s.a.get(s.options, rp_id_hash=bare))


def test_wrong_client_data_type(s: Setup) -> None:
    with refused("type mismatch"):
        s.complete(s.a.get(s.options, kind="webauthn.create"))


def test_cross_origin(s: Setup) -> None:
    with refused("crossOrigin"):
        s.complete(s.a.get(s.options, cross_origin=True))


def test_wrong_challenge_bytes(s: Setup) -> None:
    with refused("challenge mismatch"):
        s.complete(s.a.get(s.options, challenge=b"\1" * 32))


def test_answer_to_another_challenge_is_refused(s: Setup) -> None:
    opts2, _ = p.begin_assertion(s.action, s.detail, "chrome", [s.cred_a], now=NOW + 10)
    with refused("challenge mismatch"):
        s.complete(s.a.get(opts2))


def test_outer_type_and_id_mismatch(s: Setup) -> None:
    resp = s.a.get(s.options)
    with refused("credential type mismatch"):
        s.complete({**resp, "type": "nope"})
    with refused("id and rawId differ"):
        s.complete({**resp, "id": b64u(b"other")})
    with refused("id or rawId missing"):
        s.complete({"response": {}})
    with refused("malformed"):
        s.complete({**resp, "response": {}})


# --- ChallengeBook --------------------------------------------------------------------------


def _ch(i: int, expires_at: float) -> Challenge:
    return Challenge(
        id=f"c{i}",
        kind="assert",
        action="unkill",
        detail="",
        browser_label="chrome",
        expires_at=expires_at,
        state={"challenge": "AA"},
    )


def test_book_take_is_single_use() -> None:
    book = ChallengeBook()
    book.add(_ch(1, NOW + 100), NOW)
    assert book.take("c1", NOW + 1) == _ch(1, NOW + 100)
    assert book.take("c1", NOW + 1) is None
    assert book.take("nope", NOW + 1) is None
    with pytest.raises(ValueError):
        book.add(_ch(2, NOW + 100).mark_used(), NOW)


def test_book_expires_and_purges() -> None:
    book = ChallengeBook()
    book.add(_ch(1, NOW + 100), NOW)
    book.add(_ch(2, NOW + 200), NOW)
    assert book.take("c1", NOW + 100) is None
    assert len(book) == 1
    assert book.take("c2", NOW + 199) is not None


def test_book_cap_drops_the_oldest() -> None:
    book = ChallengeBook(cap=3)
    for i in range(5):
        book.add(_ch(i, NOW + 100 + i), NOW)
    assert len(book) == 3
    assert book.take("c0", NOW) is None and book.take("c1", NOW) is None
    assert all(book.take(f"c{i}", NOW) is not None for i in (2, 3, 4))
    assert p.MAX_OUTSTANDING == ChallengeBook().cap == 64


def test_book_with_real_ceremony(s: Setup) -> None:
    book = ChallengeBook()
    book.add(s.challenge, NOW + 10)
    resp = s.a.get(s.options)
    taken = book.take(s.challenge.id, NOW + 11)
    assert taken is not None
    s.complete(resp, challenge=taken)
    assert book.take(s.challenge.id, NOW + 11) is None  # a replay finds nothing


# --- fuzz: flipped bytes never verify -------------------------------------------------------

_FIXED = Setup()
_FIXED_RESPONSE = _FIXED.a.get(_FIXED.options)
_FIELDS = ("authenticatorData", "signature", "clientDataJSON")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(_FIELDS), data=st.data())
def test_random_byte_flips_never_verify(field: str, data: st.DataObject) -> None:
    resp = copy.deepcopy(_FIXED_RESPONSE)
    raw = bytearray(unb64u(resp["response"][field]))
    flips = data.draw(
        st.lists(
            st.tuples(st.integers(0, len(raw) - 1), st.integers(1, 255)), min_size=1, max_size=4
        )
    )
    for index, mask in flips:
        raw[index] ^= mask
    if bytes(raw) == unb64u(resp["response"][field]):
        return  # flips cancelled out
    resp["response"][field] = b64u(bytes(raw))
    with pytest.raises(PresenceRefused) as info:
        _FIXED.complete(resp)
    assert str(info.value) == OPAQUE


def test_unflipped_fixture_verifies() -> None:
    assert _FIXED.complete(copy.deepcopy(_FIXED_RESPONSE)).new_sign_count == 1
