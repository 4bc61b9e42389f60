# Invariant: any WebAuthn response the options page could forward, built by bending a ceremony recorded from real Chromium (clientDataJSON, authenticatorData, the signature, the CBOR attestation object, id/rawId, or the JSON around them), makes trust.presence's complete_registration / complete_assertion return a verified result or raise PresenceRefused — never another exception; a refusal's public text never says which check failed; a bent assertion never verifies unless the bytes the signature covers, the signature and the credential id are exactly the recorded ones; and a verified registration is a credential the trust record can store.  # noqa: E501
"""Atheris harness for the WebAuthn verifiers (tabwarden.trust.presence, python-fido2 underneath).

Seeds are the ceremonies in ``tests/trust/fixtures/webauthn-chromium.json`` (two registrations
and three taps recorded from Chromium's virtual authenticator). Input: byte 0 chooses the
ceremony, byte 1 what to bend, the rest is a ``seed_edits`` recipe for the bend. Each ceremony is
checked to verify unbent at import, so a harness that refuses everything cannot pass silently.

Run: ``python fuzz/fuzz_webauthn.py -runs=100000 -max_len=4096`` (or ``python -m fuzz.run``).
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives.asymmetric import ec
from fido2 import cbor

if TYPE_CHECKING:
    from fuzz.preamble import instrumented, run_libfuzzer
    from fuzz.seed_edits import Recipe, edit_bytes, edit_json, subtrees
else:
    try:  # `python -m fuzz.run`, pytest
        from fuzz.preamble import instrumented, run_libfuzzer
        from fuzz.seed_edits import Recipe, edit_bytes, edit_json, subtrees
    except ImportError:  # `python fuzz/fuzz_webauthn.py`: this directory is sys.path[0]
        from preamble import instrumented, run_libfuzzer
        from seed_edits import Recipe, edit_bytes, edit_json, subtrees

with instrumented(__name__):
    from tabwarden.trust import presence
    from tabwarden.trust.keys import HostKey
    from tabwarden.trust.record import (
        BrowserRecord,
        Credential,
        TrustUnreadable,
        empty_document,
        parse,
        serialise,
    )

FIXTURE = Path(__file__).resolve().parent.parent / "tests/trust/fixtures/webauthn-chromium.json"
RECORDING: dict[str, Any] = json.loads(FIXTURE.read_text("utf-8"))
PresenceRefused = presence.PresenceRefused
#: Any key will do: the record only has to hold the credential (no signature is checked here).
HOLDER = HostKey(ec.derive_private_key(0xF1D0, ec.SECP256R1())).public


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64u(text: Any) -> bytes | None:
    """The bytes a base64url field names (padding optional), or None when it names none."""
    if not isinstance(text, str):
        return None
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None


def _challenge(data: dict[str, Any]) -> presence.Challenge:
    return presence.Challenge.from_json(data)


@dataclass(frozen=True, kw_only=True, slots=True)
class Ceremony:
    name: str
    challenge: presence.Challenge
    response: dict[str, Any]
    now: float
    stored: Credential | None  # for a tap: the credential as the host holds it just before


def _ceremonies() -> list[Ceremony]:
    out: list[Ceremony] = []
    for group in ("uv", "noUv"):
        reg = RECORDING[group]["registration"]
        credential = presence.complete_registration(
            _challenge(reg["challenge"]), reg["response"], now=reg["now"]
        )
        out.append(
            Ceremony(
                name=f"{group}/registration",
                challenge=_challenge(reg["challenge"]),
                response=reg["response"],
                now=reg["now"],
                stored=None,
            )
        )
        for tap in ("unkill", "policyWiden"):
            if tap not in RECORDING[group]:
                continue
            e = RECORDING[group][tap]
            ceremony = Ceremony(
                name=f"{group}/{tap}",
                challenge=_challenge(e["challenge"]),
                response=e["response"],
                now=e["now"],
                stored=credential,
            )
            outcome = _assert(ceremony, ceremony.response)  # must verify unbent
            credential = Credential(
                credential_id=credential.credential_id,
                public_key=credential.public_key,
                sign_count=outcome.new_sign_count,
                enrolled_at=credential.enrolled_at,
                path=credential.path,
                uv=credential.uv,
            )
            out.append(ceremony)
    return out


def _assert(ceremony: Ceremony, response: Any) -> presence.AssertionOutcome:
    assert ceremony.stored is not None
    return presence.complete_assertion(
        ceremony.challenge,
        response,
        action=ceremony.challenge.action,
        detail=ceremony.challenge.detail,
        browser_label=ceremony.challenge.browser_label,
        credentials=[ceremony.stored],
        now=ceremony.now,
    )


CEREMONIES = _ceremonies()
DONORS: list[Any] = [n for c in CEREMONIES for n in subtrees(c.response)]
FIELDS = ("clientDataJSON", "authenticatorData", "signature", "attestationObject")


def _signed_parts(response: Any) -> tuple[bytes | None, ...] | None:
    """What an assertion's signature covers plus the signature and credential id, decoded."""
    if not isinstance(response, dict) or not isinstance(response.get("response"), dict):
        return None
    inner = response["response"]
    return (
        unb64u(inner.get("clientDataJSON")),
        unb64u(inner.get("authenticatorData")),
        unb64u(inner.get("signature")),
        unb64u(response.get("rawId")),
    )


def bend(ceremony: Ceremony, what: int, recipe: Recipe) -> Any:
    response = copy.deepcopy(ceremony.response)
    inner = response["response"]
    target = what % 8
    if target < 4:  # bytes of one binary field
        name = FIELDS[target] if FIELDS[target] in inner else "authenticatorData"
        raw = unb64u(inner[name]) or b""
        inner[name] = b64u(edit_bytes(raw, recipe))
    elif target == 4:  # clientDataJSON as JSON
        body = json.loads(unb64u(inner["clientDataJSON"]) or b"{}")
        edited = edit_json(body, recipe, ["webauthn.get", "webauthn.create", presence.RP_ORIGIN])
        text = (
            json.dumps(edited, separators=(",", ":")) if recipe.byte() & 1 else json.dumps(edited)
        )
        inner["clientDataJSON"] = b64u(text.encode("utf-8", "surrogatepass"))
    elif target == 5 and "attestationObject" in inner:  # the CBOR attestation object as a map
        decoded = cbor.decode(unb64u(inner["attestationObject"]) or b"")
        assert isinstance(decoded, Mapping)  # a recorded attestation object is a CBOR map
        plain = {str(k): v for k, v in decoded.items()}
        op = recipe.below(4)
        if op == 0:
            plain["fmt"] = recipe.pick(("packed", "", "none ", "fido-u2f", b"none"))
        elif op == 1:
            plain["attStmt"] = recipe.pick(({"alg": -7}, {"x": b""}, [], 0, "none"))
        elif op == 2:
            plain["authData"] = edit_bytes(plain["authData"], recipe)
        else:
            del plain[recipe.pick(sorted(plain))]
        inner["attestationObject"] = b64u(cbor.encode(plain))
    elif target == 6:  # the base64 text itself (padding, alphabet, whitespace)
        name = recipe.pick([k for k in (*FIELDS, "id", "rawId") if k in inner or k in response])
        holder = inner if name in inner else response
        text = holder[name]
        holder[name] = recipe.pick(
            (text + "=", text + "==", text.replace("-", "+"), " " + text, text[:-1], text + "A")
        )
    else:  # the JSON around the binary fields
        response = edit_json(response, recipe, DONORS)
    return response


def check_registration(ceremony: Ceremony, response: Any) -> None:
    try:
        credential = presence.complete_registration(ceremony.challenge, response, now=ceremony.now)
    except PresenceRefused as exc:
        assert str(exc) == "presence refused" and exc.reason
        return
    assert isinstance(credential, Credential)
    raw_id = unb64u(response["rawId"])
    assert raw_id is not None and unb64u(credential.credential_id) == raw_id
    # What the verifier accepted must fit the trust record (or the grant could never be written).
    browser = BrowserRecord(
        label="fuzz", credentials=(credential,), epoch=1, kill_serial=0, sig="AA=="
    )
    doc = empty_document(HOLDER, "file").with_(browsers=(browser,))
    try:
        assert parse(serialise(doc)) == doc
    except TrustUnreadable as exc:
        raise AssertionError(f"verified credential does not fit the record: {exc.reason}") from None


def check_assertion(ceremony: Ceremony, response: Any) -> None:
    try:
        outcome = _assert(ceremony, response)
    except PresenceRefused as exc:
        assert str(exc) == "presence refused" and exc.reason
        return
    assert _signed_parts(response) == _signed_parts(ceremony.response), "a bent assertion verified"
    assert ceremony.stored is not None and outcome.credential_id == ceremony.stored.credential_id


def test_one_input(data: bytes) -> None:
    if len(data) < 2:
        return
    ceremony = CEREMONIES[data[0] % len(CEREMONIES)]
    response = bend(ceremony, data[1], Recipe(data[2:]))
    if ceremony.stored is None:
        check_registration(ceremony, response)
    else:
        check_assertion(ceremony, response)


SEEDS: list[bytes] = [
    bytes([c, w]) + bytes([0, 1, 0, 3, 0, 0x20, 7])
    for c in range(len(CEREMONIES))
    for w in range(8)
]


def main() -> None:
    run_libfuzzer(test_one_input)


if __name__ == "__main__":
    main()
