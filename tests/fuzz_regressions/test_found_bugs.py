"""The bugs the fuzzers found, each as the attack that found it (fuzz/README.md lists
them). The minimised inputs also replay through their harnesses in ``test_replay.py``."""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from fido2 import cbor

from fuzz.fuzz_canonical import Peer
from tabwarden.trust.canonical import MAX_DEPTH, NotCanonical, canonical
from tabwarden.trust.grants import sign_grant
from tabwarden.trust.keys import HostKey
from tabwarden.trust.policy import DEFAULT_POLICY
from tabwarden.trust.presence import Challenge, PresenceRefused, complete_registration
from tabwarden.trust.record import (
    BaselineRecord,
    PolicySection,
    empty_document,
    parse,
    serialise,
)
from tabwarden.trust.verify import effective

FIXTURE = Path(__file__).resolve().parents[1] / "trust" / "fixtures" / "webauthn-chromium.json"


def _b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _recorded_registration() -> tuple[Challenge, dict[str, Any], int]:
    entry = json.loads(FIXTURE.read_text("utf-8"))["uv"]["registration"]
    challenge = Challenge.from_json(entry["challenge"])
    return challenge, entry["response"], entry["now"]


@pytest.mark.parametrize("statement", [0, "none", [], b""])
def test_registration_whose_attestation_statement_is_not_a_map_is_refused(statement: Any) -> None:
    # fuzz_webauthn: attStmt = 0 in an otherwise real Chromium registration made
    # complete_registration raise TypeError (dict(0)) instead of the opaque refusal.
    challenge, response, now = _recorded_registration()
    assert complete_registration(challenge, response, now=now).path == "webauthn"  # unbent: ok
    decoded = cbor.decode(_unb64u(response["response"]["attestationObject"]))
    assert isinstance(decoded, Mapping)
    attestation = dict(decoded)
    attestation["attStmt"] = statement
    response["response"]["attestationObject"] = _b64u(cbor.encode(attestation))
    with pytest.raises(PresenceRefused) as info:
        complete_registration(challenge, response, now=now)
    assert str(info.value) == "presence refused"  # the page learns nothing about which check
    assert "bad attestation" in info.value.reason


def _tower(height: int) -> Any:
    value: Any = 1
    for level in range(height):
        value = [value] if level % 2 else {"k": value}
    return value


def test_canonical_json_refuses_the_same_nesting_in_python_and_javascript() -> None:
    # fuzz_canonical: a value nested 33 deep had no canonical form in Python but one in the
    # extension's canonical-json.js, so the two ends could disagree on what a tap signs.
    peer = Peer()
    try:
        fits = _tower(MAX_DEPTH)
        assert peer.canonical(fits) == canonical(fits)
        too_deep = _tower(MAX_DEPTH + 1)
        with pytest.raises(NotCanonical):
            canonical(too_deep)
        assert peer.canonical(too_deep) is None
    finally:
        peer.close()


def _baseline(key: HostKey, values: dict[str, Any], epoch: int) -> BaselineRecord:
    signed = sign_grant(key, {"kind": "baseline", "values": values}, epoch=epoch, kill_serial=0)
    return BaselineRecord(
        values=tuple(
            sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in values.items())
        ),
        epoch=epoch,
        kill_serial=0,
        sig=signed["sig"],
    )


def test_an_older_wider_baseline_swapped_in_from_history_grants_nothing() -> None:
    # Seen while checking fuzz_trust_record's bound (grants spliced between records): the bound
    # holds (every grant is validly signed), but the swap is a widening no person approved.
    key = HostKey.generate()
    wide = DEFAULT_POLICY.to_json() | {"eval": True}
    narrow = DEFAULT_POLICY.to_json()
    current, older = _baseline(key, narrow, 5), _baseline(key, wide, 3)
    honest = empty_document(key.public, "file").with_(
        epoch=6, policy=PolicySection(baseline=current, history=(older,))
    )
    assert effective(honest, key.public, 0).policy.eval is False
    swapped = honest.with_(policy=PolicySection(baseline=older, history=(current,)))
    swapped = parse(serialise(swapped))  # what a same-user writer can put in trust.json
    assert effective(swapped, key.public, 0).policy.eval is False
    # ...nor removing the current baseline, nor spoiling its signature.
    removed = parse(
        serialise(honest.with_(policy=PolicySection(baseline=None, history=(current,))))
    )
    assert effective(removed, key.public, 0).policy.eval is False
    spoiled = honest.with_(
        policy=PolicySection(
            baseline=dataclasses.replace(older, sig=current.sig), history=(current,)
        )
    )
    assert effective(parse(serialise(spoiled)), key.public, 0).policy.eval is False
