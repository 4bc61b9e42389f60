"""WebAuthn presence, host side: mint challenges, verify what the options page sends back.

Shape copied from python-fido2: ``begin_*`` returns ``(options_json, Challenge)`` and
``complete_*(challenge, response_json, ...)`` verifies; the caller owns persistence (the
``ChallengeBook`` here is a small in-memory helper for it). Pure: no file or network I/O, no
clock (``now`` is an argument, seconds), randomness only through ``rng`` (default
``secrets.token_bytes``).

Facts this module encodes (``../shared/PLATFORM-FACTS.md``, "WebAuthn from the extension's
options page"):

* The page's origin is ``chrome-extension://<id>`` (no trailing slash) and the authenticator's
  ``rpIdHash`` is SHA-256 of that whole string, **not** of the bare ID. So ``Fido2Server`` is
  built with ``rp.id = RP_ORIGIN`` and an exact-match origin check, and the options handed to the
  page carry the bare extension ID as ``rp.id`` / ``rpId`` (anything else is a SecurityError in
  Chrome).
* python-fido2 checks neither the sign counter, nor single use of a challenge, nor its expiry.
  This module does all three (single use via ``Challenge.used`` / ``ChallengeBook.take``).

Every check has its own precise reason; outward there is one opaque ``PresenceRefused``
(``code = "presence_refused"``) whose ``str()`` never says which check failed. Log ``.reason``
locally only. Its ``.reason_code`` (one of ``REASON_CODES``) is the coarse kind of check that
failed, for the *person* on their own options page or confirm window (the host puts it only into
the host_reply to the extension, which shows it only on those pages of its own: never to an
agent, never in a tool result): e.g. ``counter_not_increased`` ("a cloned key?"). It names no
counter value, origin, credential id or key material, and it is the same for every check of its
kind.

Sign counter rule: authenticators that do not implement a counter always send 0 (passkeys synced
across devices do this), so ``stored == 0 and new == 0`` is accepted; otherwise the new counter
must be strictly greater than the stored one. A decrease, or an equal non-zero value, is refused
(a cloned authenticator or a replayed assertion).

User verification: enrolment asks for it (``preferred``) and records on the credential whether
the authenticator did it (``Credential.uv``). From then on every assertion with that credential
must carry the UV flag: an authenticator that can verify the person (PIN, fingerprint) is never
let off with presence alone. A credential enrolled without UV needs presence (UP) only.

Registration accepts attestation format ``"none"`` only (we ask for ``attestation: "none"`` and
Chrome then anonymises whatever the authenticator produced): which authenticator the person uses
is their business; what a tap proves is that *this* enrolled key signed *this* challenge.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, NoReturn

from fido2 import cbor
from fido2.cose import CoseKey
from fido2.server import Fido2Server
from fido2.utils import websafe_decode, websafe_encode
from fido2.webauthn import (
    AttestedCredentialData,
    AuthenticationResponse,
    AuthenticatorData,
    CollectedClientData,
    PublicKeyCredentialDescriptor,
    PublicKeyCredentialParameters,
    PublicKeyCredentialRpEntity,
    PublicKeyCredentialType,
    PublicKeyCredentialUserEntity,
    RegistrationResponse,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from tabwarden.errors import TabwardenError
from tabwarden.manifests import EXTENSION_ID
from tabwarden.protocol.codes import PRESENCE_REFUSED
from tabwarden.trust.record import Credential

__all__ = [
    "ACTIONS",
    "CHALLENGE_TTL",
    "MAX_OUTSTANDING",
    "RP_ID",
    "RP_ORIGIN",
    "AssertionOutcome",
    "Challenge",
    "ChallengeBook",
    "PresenceRefused",
    "REASON_CODES",
    "begin_assertion",
    "begin_registration",
    "complete_assertion",
    "complete_registration",
]

RP_ID = EXTENSION_ID
"""What the page sees as ``rp.id`` / ``rpId`` (the bare extension ID)."""
RP_ORIGIN = "chrome-extension://" + EXTENSION_ID
"""``clientDataJSON.origin`` exactly, and what ``rpIdHash`` is the SHA-256 of."""
RP_NAME = "tabwarden"
CHALLENGE_TTL = 120
"""Seconds a challenge stays answerable (at most; ``ttl=`` may only shorten it)."""
MAX_OUTSTANDING = 64
"""How many unanswered challenges a ``ChallengeBook`` holds; the oldest is dropped first."""
ACTIONS = (
    "enrol",
    "policy.widen",
    "unkill",
    "pair_client",
    "confirm.eval",
    "confirm.upload",
    "confirm.provenance",
    # A terminal grant's second factor (tabwarden/cli/terminal_tap.py): minted and verified by the
    # terminal itself, its detail the canonical JSON of the command and its parameters.
    "terminal",
)
_CHALLENGE_BYTES = 32
_ID_BYTES = 16
#: COSE algorithms offered at enrolment: ES256, EdDSA, RS256 (what Chrome's authenticators make).
_ALGORITHMS = (-7, -8, -257)
#: trust.record limits: credentialId <= 1024 chars, publicKey <= 4096 chars.
_MAX_CRED_ID_B64 = 1024
_MAX_PUBLIC_KEY_B64 = 4096
_RP_ID_HASH = hashlib.sha256(RP_ORIGIN.encode("ascii")).digest()

Kind = Literal["register", "assert"]
Rng = Callable[[int], bytes]


#: The kinds of refused tap a person may be told about (extension/shared/presence-reasons.js has the
#: words for each; a test holds the two equal). Append only: the page keys its text on them.
REASON_CODES = frozenset(
    {
        "unspecified",  # no finer kind (a defensive check)
        "challenge_stale",  # unknown, already used or expired challenge: start again
        "wrong_request",  # the answer was made for another request, action or change
        "wrong_origin",  # not made for this extension's page (origin, rpIdHash, embedding)
        "malformed",  # not a well-formed WebAuthn answer
        "not_enrolled",  # this authenticator (or none) is enrolled for this browser
        "no_presence",  # the authenticator did not report a touch
        "not_verified",  # PIN / fingerprint required (enrolled with it) but not done
        "signature_invalid",  # the signature does not verify with the enrolled key
        "counter_not_increased",  # sign counter did not go up: a cloned key or a replay
        "stored_key_unusable",  # the enrolled key in the record cannot be used
        "attestation_refused",  # enrolment: an attestation other than "none"
        "unsupported_key",  # enrolment: a key algorithm tabwarden does not accept
        "already_enrolled",  # enrolment: this credential is enrolled already
        "code_refused",  # pairing: wrong, used, expired or another browser's code
        "approval_needed",  # pairing: another browser is enrolled and must approve
        "downgrade_refused",  # pairing: an enrolled browser is never made window-only
    }
)


class PresenceRefused(TabwardenError):
    """The browser confirmation was not accepted."""

    code = PRESENCE_REFUSED
    exit_status = 1
    hint = "Confirm again from the tabwarden options page in the browser you paired."

    def __init__(self, reason: str, reason_code: str = "unspecified") -> None:
        #: The precise failed check — for the local log only, never sent to a peer.
        self.reason = reason
        #: Its coarse kind (``REASON_CODES``), for the person's own options page only.
        self.reason_code = reason_code if reason_code in REASON_CODES else "unspecified"
        super().__init__("presence refused")


def _refuse(reason: str, reason_code: str) -> NoReturn:
    raise PresenceRefused(reason, reason_code)


@dataclass(frozen=True, kw_only=True, slots=True)
class Challenge:
    """One outstanding ceremony. ``state`` is JSON-serialisable (fido2's state plus our own)."""

    id: str
    kind: Kind
    action: str
    detail: str
    browser_label: str
    expires_at: float
    state: Mapping[str, Any]
    used: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "action": self.action,
            "detail": self.detail,
            "browserLabel": self.browser_label,
            "expiresAt": self.expires_at,
            "state": dict(self.state),
            "used": self.used,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Challenge:
        """The challenge ``to_json`` wrote (recorded fixtures, their tools and harnesses)."""
        return cls(
            id=data["id"],
            kind=data["kind"],
            action=data["action"],
            detail=data["detail"],
            browser_label=data["browserLabel"],
            expires_at=data["expiresAt"],
            state=data["state"],
            used=data["used"],
        )

    def mark_used(self) -> Challenge:
        return replace(self, used=True)


@dataclass(frozen=True, kw_only=True, slots=True)
class AssertionOutcome:
    """A verified tap: store ``new_sign_count`` for ``credential_id`` before acting on it."""

    credential_id: str
    new_sign_count: int
    user_verified: bool


# --- helpers ----------------------------------------------------------------------------------


def _server() -> Fido2Server:
    server = Fido2Server(
        PublicKeyCredentialRpEntity(id=RP_ORIGIN, name=RP_NAME),
        verify_origin=lambda origin: hmac.compare_digest(
            origin.encode("utf-8", "surrogatepass"), RP_ORIGIN.encode("ascii")
        ),
    )
    server.allowed_algorithms = [
        PublicKeyCredentialParameters(type=PublicKeyCredentialType.PUBLIC_KEY, alg=alg)
        for alg in _ALGORITHMS
    ]
    return server


def _decode_id(text: str) -> bytes:
    return websafe_decode(text)


def _descriptors(credentials: Iterable[Credential]) -> list[PublicKeyCredentialDescriptor]:
    return [
        PublicKeyCredentialDescriptor(
            type=PublicKeyCredentialType.PUBLIC_KEY, id=_decode_id(c.credential_id)
        )
        for c in credentials
    ]


def _canonical_id(text: str) -> str:
    """Credential ids compare by their bytes, whatever padding the string carried."""
    return websafe_encode(_decode_id(text))


def _check_now(now: float) -> None:
    if isinstance(now, bool) or not isinstance(now, (int, float)) or now != now or now < 0:
        raise ValueError("now must be a non-negative number of seconds")


def _check_challenge(challenge: Challenge, kind: Kind, now: float) -> None:
    if not isinstance(challenge, Challenge):
        _refuse("not a challenge", "malformed")
    if challenge.kind != kind:
        _refuse(f"wrong kind: challenge is for {challenge.kind!r}, not {kind!r}", "wrong_request")
    if challenge.used:
        _refuse("challenge already used", "challenge_stale")
    if now >= challenge.expires_at:
        _refuse("challenge expired", "challenge_stale")


def _check_client_data(
    client_data: CollectedClientData, expected_type: str, state: Mapping[str, Any]
) -> None:
    try:
        body = json.loads(bytes(client_data).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        _refuse("clientDataJSON is not JSON", "malformed")
    if not isinstance(body, dict):
        _refuse("clientDataJSON is not an object", "malformed")
    kind, origin, chal = body.get("type"), body.get("origin"), body.get("challenge")
    if not (isinstance(kind, str) and isinstance(origin, str) and isinstance(chal, str)):
        _refuse("clientDataJSON lacks type, origin or challenge", "malformed")
    if kind != expected_type:
        _refuse(
            f"clientData type mismatch ({kind[:40]!r}, wanted {expected_type!r})", "wrong_request"
        )
    if not hmac.compare_digest(origin.encode("utf-8", "surrogatepass"), RP_ORIGIN.encode("ascii")):
        _refuse(f"clientData origin mismatch ({origin[:100]!r})", "wrong_origin")
    if body.get("crossOrigin", False) is not False:
        _refuse("clientData crossOrigin is not false", "wrong_origin")
    if body.get("topOrigin") is not None:
        _refuse("clientData has a topOrigin (embedded)", "wrong_origin")
    if not hmac.compare_digest(websafe_decode(state["challenge"]), client_data.challenge):
        _refuse("challenge mismatch", "wrong_request")


def _check_auth_data(auth_data: AuthenticatorData, uv_required: bool) -> None:
    if not hmac.compare_digest(auth_data.rp_id_hash, _RP_ID_HASH):
        _refuse("rpIdHash mismatch (not SHA-256 of the extension origin)", "wrong_origin")
    if not auth_data.is_user_present():
        _refuse("user presence (UP) flag missing", "no_presence")
    if uv_required and not auth_data.is_user_verified():
        _refuse("user verification (UV) required but flag missing", "not_verified")


def _check_ids(raw: Any) -> None:
    """Before fido2 parses: an object whose ``id`` and ``rawId`` name the same bytes."""
    if not isinstance(raw, Mapping):
        _refuse("response is not an object", "malformed")
    ident, raw_id = raw.get("id"), raw.get("rawId")
    if not (isinstance(ident, str) and isinstance(raw_id, str)):
        _refuse("id or rawId missing", "malformed")
    try:
        same = _decode_id(ident) == _decode_id(raw_id)
    except ValueError:
        same = False
    if not same:
        _refuse("id and rawId differ", "malformed")


def _check_type(response: RegistrationResponse | AuthenticationResponse) -> None:
    if response.type != PublicKeyCredentialType.PUBLIC_KEY:
        _refuse(f"credential type mismatch ({response.type!r})", "malformed")


def _new_challenge(
    kind: Kind,
    action: str,
    detail: str,
    browser_label: str,
    state: dict[str, Any],
    now: float,
    rng: Rng,
    ttl: float,
) -> Challenge:
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not 0 < ttl <= CHALLENGE_TTL:
        raise ValueError(f"ttl must be more than 0 and at most {CHALLENGE_TTL} seconds")
    json.dumps(state)  # the state must survive a round trip through JSON
    return Challenge(
        id=websafe_encode(rng(_ID_BYTES)),
        kind=kind,
        action=action,
        detail=detail,
        browser_label=browser_label,
        expires_at=now + ttl,
        state=state,
    )


def _fido2_state(state: Mapping[str, Any]) -> dict[str, Any]:
    uv = state.get("user_verification")
    return {
        "challenge": state["challenge"],
        "user_verification": None if uv is None else UserVerificationRequirement(uv),
    }


# --- registration -----------------------------------------------------------------------------


def begin_registration(
    browser_label: str,
    *,
    user_name: str,
    exclude: Sequence[Credential] = (),
    now: float,
    rng: Rng = secrets.token_bytes,
    ttl: float = CHALLENGE_TTL,
) -> tuple[dict[str, Any], Challenge]:
    """Options for ``PublicKeyCredential.parseCreationOptionsFromJSON`` and the challenge to keep.

    ``exclude``: credentials already enrolled for this browser (the authenticator will not
    enrol the same one twice; ``complete_registration`` refuses it too)."""
    _check_now(now)
    challenge_bytes = rng(_CHALLENGE_BYTES)
    options, fido_state = _server().register_begin(
        PublicKeyCredentialUserEntity(id=rng(_ID_BYTES), name=user_name, display_name=user_name),
        _descriptors(exclude),
        resident_key_requirement=ResidentKeyRequirement.DISCOURAGED,
        user_verification=UserVerificationRequirement.PREFERRED,
        challenge=challenge_bytes,
    )
    public = json.loads(json.dumps(dict(options.public_key)))
    public["rp"]["id"] = RP_ID  # the page may only name the bare ID (see module docstring)
    public["attestation"] = "none"
    state = {
        "challenge": fido_state["challenge"],
        "user_verification": str(fido_state["user_verification"].value),
        "exclude": [_canonical_id(c.credential_id) for c in exclude],
    }
    return public, _new_challenge("register", "enrol", "", browser_label, state, now, rng, ttl)


def complete_registration(
    challenge: Challenge, response_json: Mapping[str, Any], *, now: float
) -> Credential:
    """The verified credential (path ``webauthn``, sign count from authData), else refused.

    The caller marks ``challenge`` used (or took it from a ``ChallengeBook``) and stores the
    credential under ``challenge.browser_label``."""
    _check_now(now)
    _check_challenge(challenge, "register", now)
    state = challenge.state
    _check_ids(response_json)
    try:
        registration = RegistrationResponse.from_dict(response_json)
        client_data = registration.response.client_data
        attestation = registration.response.attestation_object
        auth_data = attestation.auth_data
    except Exception as exc:  # fido2 raises many kinds on bad input; all mean "malformed"
        _refuse(f"malformed registration response ({type(exc).__name__})", "malformed")
    _check_type(registration)
    _check_client_data(client_data, CollectedClientData.TYPE.CREATE, state)
    statement = attestation.att_stmt  # fido2 keeps whatever CBOR value the page sent
    if attestation.fmt != "none" or not isinstance(statement, Mapping) or dict(statement) != {}:
        _refuse(
            f"bad attestation (format {attestation.fmt!r}, only an empty 'none' accepted)",
            "attestation_refused",
        )
    _check_auth_data(auth_data, state.get("user_verification") == "required")
    cred = auth_data.credential_data
    if not auth_data.is_attested() or cred is None:
        _refuse("no attested credential data", "malformed")
    if cred.credential_id != registration.raw_id:
        _refuse("credential id differs from rawId", "malformed")
    alg = cred.public_key.get(3)
    if alg not in _ALGORITHMS:
        _refuse(f"unsupported public key algorithm {alg!r}", "unsupported_key")
    credential_id = websafe_encode(cred.credential_id)
    if credential_id in state.get("exclude", ()):
        _refuse("credential already enrolled", "already_enrolled")
    public_key = websafe_encode(cbor.encode(dict(cred.public_key)))
    if len(credential_id) > _MAX_CRED_ID_B64 or len(public_key) > _MAX_PUBLIC_KEY_B64:
        _refuse("credential id or public key too long", "malformed")
    try:  # fido2 re-runs the ceremony checks: defence in depth, never the only check
        _server().register_complete(_fido2_state(state), response_json)
    except Exception as exc:
        _refuse(f"fido2 refused the registration ({exc})", "malformed")
    return Credential(
        credential_id=credential_id,
        public_key=public_key,
        sign_count=auth_data.counter,
        enrolled_at=int(now),
        path="webauthn",
        uv=auth_data.is_user_verified(),
    )


# --- assertion --------------------------------------------------------------------------------


def begin_assertion(
    action: str,
    detail: str,
    browser_label: str,
    credentials: Sequence[Credential],
    *,
    now: float,
    uv_required: bool = False,
    rng: Rng = secrets.token_bytes,
    ttl: float = CHALLENGE_TTL,
) -> tuple[dict[str, Any], Challenge]:
    """Options for ``PublicKeyCredential.parseRequestOptionsFromJSON`` naming exactly this
    browser's credentials, and the challenge bound to ``action`` / ``detail`` / browser.

    User verification is asked as ``required`` when ``uv_required`` or when every allowed
    credential verified the user at enrolment (so the browser itself insists too); otherwise
    ``preferred``. ``complete_assertion`` enforces it per credential either way."""
    _check_now(now)
    if action not in ACTIONS:
        raise ValueError(f"unknown presence action {action!r}")
    if not credentials:
        raise ValueError("this browser has no enrolled credential")
    uv = (
        UserVerificationRequirement.REQUIRED
        if uv_required or all(c.uv for c in credentials)
        else UserVerificationRequirement.PREFERRED
    )
    options, fido_state = _server().authenticate_begin(
        _descriptors(credentials), user_verification=uv, challenge=rng(_CHALLENGE_BYTES)
    )
    public = json.loads(json.dumps(dict(options.public_key)))
    public["rpId"] = RP_ID
    state = {
        "challenge": fido_state["challenge"],
        "user_verification": uv.value,
        "allow": [_canonical_id(c.credential_id) for c in credentials],
    }
    return public, _new_challenge("assert", action, detail, browser_label, state, now, rng, ttl)


def complete_assertion(
    challenge: Challenge,
    response_json: Mapping[str, Any],
    *,
    action: str,
    detail: str,
    browser_label: str,
    credentials: Sequence[Credential],
    now: float,
    uv_required: bool = False,
) -> AssertionOutcome:
    """Verify a tap for exactly (``action``, ``detail``, ``browser_label``).

    ``credentials`` are the ones enrolled for ``browser_label`` (from the trust record). The
    caller must mark the challenge used whatever the outcome, and store ``new_sign_count``."""
    _check_now(now)
    _check_challenge(challenge, "assert", now)
    if challenge.action != action:
        _refuse(
            f"action mismatch (challenge for {challenge.action!r}, presented for {action!r})",
            "wrong_request",
        )
    if challenge.detail != detail:
        _refuse("detail mismatch (the challenge names a different change)", "wrong_request")
    if challenge.browser_label != browser_label:
        _refuse(
            f"browser mismatch (challenge for {challenge.browser_label!r}, "
            f"presented for {browser_label!r})",
            "wrong_request",
        )
    state = challenge.state
    _check_ids(response_json)
    try:
        authentication = AuthenticationResponse.from_dict(response_json)
        client_data = authentication.response.client_data
        auth_data = authentication.response.authenticator_data
    except Exception as exc:
        _refuse(f"malformed assertion response ({type(exc).__name__})", "malformed")
    _check_type(authentication)
    presented = websafe_encode(authentication.raw_id)
    stored = None
    for cred in credentials:
        if _canonical_id(cred.credential_id) == presented:
            stored = cred
    if stored is None or presented not in state.get("allow", ()):
        _refuse("credential not enrolled for this browser", "not_enrolled")
    _check_client_data(client_data, CollectedClientData.TYPE.GET, state)
    # UV is required when the caller or the challenge says so, and always for a credential that
    # verified the user at enrolment: an authenticator that can verify must not be let off.
    required = uv_required or stored.uv or state.get("user_verification") == "required"
    _check_auth_data(auth_data, required)
    try:
        decoded = cbor.decode(websafe_decode(stored.public_key))
        if not isinstance(decoded, Mapping):
            raise PresenceRefused("stored credential key is not a COSE map", "stored_key_unusable")
        cose = CoseKey.parse(decoded)
        attested = AttestedCredentialData.create(b"\0" * 16, authentication.raw_id, cose)
    except Exception as exc:
        _refuse(f"stored public key unusable ({type(exc).__name__})", "stored_key_unusable")
    try:  # fido2 verifies the signature (and re-runs the ceremony checks)
        _server().authenticate_complete(_fido2_state(state), [attested], response_json)
    except Exception:
        _refuse("signature invalid", "signature_invalid")
    new = auth_data.counter
    old = stored.sign_count
    if not (new > old or (new == 0 and old == 0)):
        _refuse(
            f"sign counter did not increase (stored {old}, presented {new})",
            "counter_not_increased",
        )
    return AssertionOutcome(
        credential_id=stored.credential_id,
        new_sign_count=new,
        user_verified=auth_data.is_user_verified(),
    )


# --- the single-use book ----------------------------------------------------------------------


@dataclass(slots=True)
class ChallengeBook:
    """Outstanding challenges by id, in memory: each can be taken once, until it expires.

    At most ``cap`` are held; adding one more drops the one closest to expiry. Not thread-safe:
    the host's single event loop owns it."""

    cap: int = MAX_OUTSTANDING
    _items: dict[str, Challenge] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self._items)

    def purge(self, now: float) -> None:
        for key in [k for k, c in self._items.items() if now >= c.expires_at]:
            del self._items[key]

    def add(self, challenge: Challenge, now: float) -> None:
        self.purge(now)
        if challenge.used or challenge.id in self._items:
            raise ValueError("challenge already used or already in the book")
        while len(self._items) >= self.cap:
            oldest = min(self._items.values(), key=lambda c: c.expires_at)
            del self._items[oldest.id]
        self._items[challenge.id] = challenge

    def take(self, challenge_id: str, now: float) -> Challenge | None:
        """The challenge, once; ``None`` if unknown, already taken, expired or dropped."""
        self.purge(now)
        return self._items.pop(challenge_id, None)
