# Invariant: any bytes read as trust.json (record.parse, and record_file.load from a real private file) yield a TrustDocument or TrustUnreadable — never another exception; a parsed record re-serialises to itself; and verify.effective never raises and never grants more than the record's valid signatures do: its policy is never wider than the newest validly signed baseline, current or in the history (else the default), every paired client and browser is a validly signed, unrevoked grant, the kill switch is never released without a valid release, and a record naming another host key grants nothing.  # noqa: E501
"""Atheris harness for the trust-record loader (tabwarden.trust.record / record_file / verify).

Seeds are real records signed by a fixed P-256 host key (``KEY``): a fresh pairing, one with a
client, a browser credential, a wider signed baseline, history, restrictions, revocations, kill
events and a release, and one whose grants another key signed. The fuzzer cannot forge a
signature, so every validly signed grant a fuzzed record holds was copied from a seed.

Input: the first byte chooses the mode. Even: the rest is the file's bytes (whole), every fourth
such input also written to a 0600 file in a 0700 directory and read through
``record_file.load``. Odd: the rest is a recipe (``seed_edits``) that edits one seed's JSON —
grants spliced between records, fields renamed, numbers nudged — and the result is parsed.

The oracle checks signatures itself (``cryptography`` over the documented bytes, not
``trust.grants``) and computes the bound from the seed's signed parts; it shares only the policy
lattice (``trust.policy``, fuzzed on its own by ``fuzz_policy``).

Run: ``python fuzz/fuzz_trust_record.py -runs=100000 -max_len=65536`` (or ``python -m fuzz.run``).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

if TYPE_CHECKING:
    from fuzz.preamble import instrumented, run_libfuzzer
    from fuzz.seed_edits import Recipe, edit_json, subtrees
else:
    try:  # `python -m fuzz.run`, pytest
        from fuzz.preamble import instrumented, run_libfuzzer
        from fuzz.seed_edits import Recipe, edit_json, subtrees
    except ImportError:  # `python fuzz/fuzz_trust_record.py`: this directory is sys.path[0]
        from preamble import instrumented, run_libfuzzer
        from seed_edits import Recipe, edit_json, subtrees

with instrumented(__name__):
    from tabwarden.trust import record_file
    from tabwarden.trust.grants import sign_grant
    from tabwarden.trust.keys import HostKey
    from tabwarden.trust.policy import (
        DEFAULT_POLICY,
        Policy,
        PolicyError,
        is_wider,
        validate_values,
    )
    from tabwarden.trust.record import TrustDocument, TrustUnreadable, parse, serialise
    from tabwarden.trust.verify import effective

#: Fixed keys, so a failing input replays against the same signatures (test keys, not secrets).
KEY = HostKey(ec.derive_private_key(0x7AB0_C0DE_F00D_5EED, ec.SECP256R1()))
OTHER = HostKey(ec.derive_private_key(0x0BAD_BAD_BAD_BAD, ec.SECP256R1()))
PUBLIC = KEY.public
NOW = 1_800_000_000
#: The seed files are a few KiB; leave the fuzzer room to grow them.
MAX_LEN = 16384
GRANT_DOMAIN = b"tabwarden/trust-grant/v1\n"  # docs/trust-record.md, written out again here
SHA = "ab" * 32

#: The same public key, held by cryptography directly (the oracle does not use HostPublicKey).
_verifier = ec.derive_private_key(0x7AB0_C0DE_F00D_5EED, ec.SECP256R1()).public_key()


def _grant(key: HostKey, body: dict[str, Any], epoch: int, kill_serial: int = 0) -> dict[str, Any]:
    return sign_grant(key, body, epoch=epoch, kill_serial=kill_serial)


def _document(key: HostKey, **parts: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "version": 1,
        "epoch": 1,
        "hostKey": {"public": PUBLIC.b64, "fingerprint": PUBLIC.fingerprint, "store": "file"},
        "clients": [],
        "browsers": [],
        "kill": {"serial": 0, "events": []},
        "releases": [],
        "policy": {
            "baseline": _grant(key, {"kind": "baseline", "values": DEFAULT_POLICY.to_json()}, 1),
            "restrictions": [],
            "history": [],
        },
        "revocations": [],
        "pairingCode": None,
    }
    doc.update(parts)
    return doc


def _seed_documents() -> list[dict[str, Any]]:
    wide = DEFAULT_POLICY.to_json() | {
        "origins": ["https://example.com", "http://127.0.0.1:8080"],
        "eval": True,
        "confirm": ["submit"],
        "clickGraceSeconds": 600,
    }
    client = {
        "kind": "client",
        "label": "claude",
        "exe": "/usr/bin/claude",
        "sha256": SHA,
        "pairedAt": NOW,
        "path": "terminal",
    }
    credential = {
        "credentialId": "AAECAwQFBgcICQoLDA0ODw",
        "publicKey": "pQECAyYgASFYIA",
        "signCount": 3,
        "enrolledAt": NOW,
        "path": "webauthn",
        "uv": True,
    }
    browser = {"kind": "browser", "label": "chromium", "credentials": [credential]}
    window = {"kind": "browser", "label": "brave", "credentials": [], "windowOnly": True}
    full = _document(
        KEY,
        epoch=9,
        clients=[_grant(KEY, client, 4, 1), _grant(KEY, client | {"label": "codex"}, 5, 1)],
        browsers=[_grant(KEY, browser, 3, 1), _grant(KEY, window, 6, 1)],
        kill={"serial": 1, "events": [{"serial": 1, "at": NOW, "reason": "cli"}]},
        releases=[_grant(KEY, {"kind": "release", "serial": 1}, 7, 1)],
        policy={
            "baseline": _grant(KEY, {"kind": "baseline", "values": wide}, 8, 1),
            "restrictions": [
                {"key": "eval", "value": False, "at": NOW},
                {"key": "origins", "value": ["https://example.com"], "at": NOW},
                {"key": "upload", "value": True, "at": NOW},  # would widen: ignored
            ],
            "history": [
                _grant(KEY, {"kind": "baseline", "values": DEFAULT_POLICY.to_json()}, 1),
                _grant(KEY, {"kind": "baseline", "values": wide | {"upload": True}}, 2, 1),
            ],
        },
        revocations=[{"kind": "client", "label": "codex", "at": NOW}],
        pairingCode={"sha256": SHA, "expiresAt": NOW + 300, "attempts": 1},
    )
    killed = _document(
        KEY,
        epoch=4,
        clients=[_grant(KEY, client, 2)],
        kill={"serial": 2, "events": [{"serial": 2, "at": NOW, "reason": "panic"}]},
        releases=[_grant(KEY, {"kind": "release", "serial": 1}, 3, 1)],
    )
    foreign = _document(
        OTHER,
        epoch=3,
        clients=[_grant(OTHER, client, 2)],
        browsers=[_grant(OTHER, browser, 2)],
    )
    other_host = _document(KEY, hostKey=full["hostKey"] | {"public": OTHER.public.b64})
    return [_document(KEY), full, killed, foreign, other_host]


DOCUMENTS = _seed_documents()
DONORS: list[Any] = [node for doc in DOCUMENTS for node in subtrees(doc)]


# --- the oracle -------------------------------------------------------------------------------


def signed_by_us(grant: dict[str, Any]) -> bool:
    """The documented signature rule, checked with cryptography directly."""
    sig = grant.get("sig")
    if not isinstance(sig, str):
        return False
    try:
        raw = base64.b64decode(sig, validate=True)
    except (binascii.Error, ValueError):
        return False
    if base64.b64encode(raw).decode() != sig:
        return False
    body = {k: v for k, v in grant.items() if k != "sig"}
    data = GRANT_DOMAIN + json.dumps(
        body, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode("utf-8")
    try:
        _verifier.verify(raw, data, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True


def _usable(grant: dict[str, Any], epoch: int) -> bool:
    return signed_by_us(grant) and grant["epoch"] <= epoch


def check_effective(doc: TrustDocument) -> None:
    eff = effective(doc, PUBLIC, NOW)
    raw = doc.to_json()
    ours = (raw["hostKey"]["public"], raw["hostKey"]["fingerprint"]) == (
        PUBLIC.b64,
        PUBLIC.fingerprint,
    )
    if not ours:
        assert eff.killed and not eff.paired_clients and not eff.browsers, eff
        assert not is_wider(eff.policy, DEFAULT_POLICY), eff.policy
        return
    bound: Policy = DEFAULT_POLICY
    baseline = raw["policy"]["baseline"]
    if baseline is not None and not _usable(baseline, raw["epoch"]):
        baseline = None
    # The newest validly signed policy stands (a newer signed history entry beats an older,
    # swapped-in or spoiled baseline: trust/verify.py since the baseline-swap fix).
    newer = [
        h
        for h in raw["policy"]["history"]
        if _usable(h, raw["epoch"]) and h["epoch"] > (-1 if baseline is None else baseline["epoch"])
    ]
    if newer:
        baseline = max(newer, key=lambda h: h["epoch"])
    if baseline is not None:
        try:
            bound = validate_values(baseline["values"])
        except PolicyError:
            bound = DEFAULT_POLICY
    assert not is_wider(eff.policy, bound), (eff.policy, bound)

    revoked = {(r["kind"], r["label"]) for r in raw["revocations"]}
    clients = [
        c
        for c in raw["clients"]
        if _usable(c, raw["epoch"]) and ("client", c["label"]) not in revoked
    ]
    for got in eff.paired_clients:
        assert any(
            (c["label"], c["exe"], c["sha256"], c["pairedAt"], c["path"])
            == (got.label, got.exe, got.sha256, got.paired_at, got.path)
            for c in clients
        ), got
    browsers = [
        b
        for b in raw["browsers"]
        if _usable(b, raw["epoch"]) and ("browser", b["label"]) not in revoked
    ]
    for got_b in eff.browsers:
        assert any(
            b["label"] == got_b.label
            and b["credentials"] == [c.to_json() for c in got_b.credentials]
            and b.get("windowOnly", False) == got_b.window_only
            for b in browsers
        ), got_b

    floor = max([raw["kill"]["serial"], *(e["serial"] for e in raw["kill"]["events"])])
    released = max([0, *(r["serial"] for r in raw["releases"] if _usable(r, raw["epoch"]))])
    if floor > released:
        assert eff.killed, (floor, released)
    if eff.killed:
        assert eff.client_matching(SHA) is None


def check_document(doc: TrustDocument) -> None:
    assert type(doc) is TrustDocument
    assert parse(serialise(doc)) == doc  # the writer can always write what the reader accepted
    check_effective(doc)


def _load_from_file(raw: bytes) -> TrustDocument:
    """``record_file.load`` on a real 0600 file in a fresh 0700 directory, removed afterwards
    (libFuzzer ends the process without running ``atexit``, so nothing may be left for it)."""
    directory = Path(tempfile.mkdtemp(prefix="tabwarden-fuzz-trust-"))  # 0700
    path = directory / record_file.FILE_NAME
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, raw)
        finally:
            os.close(fd)
        doc = record_file.load(path, expect_paired=True)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    assert doc is not None
    return doc


def test_one_input(data: bytes) -> None:
    if not data:
        return
    if data[0] & 1 == 0:
        raw = data[1:]
        via_file = data[0] & 6 == 0
    else:
        recipe = Recipe(data[1:])
        seed = DOCUMENTS[recipe.below(len(DOCUMENTS))]
        edited = edit_json(seed, recipe, DONORS)
        raw = json.dumps(edited, indent=recipe.byte() % 3 or None).encode("utf-8", "surrogatepass")
        via_file = False
    try:
        doc = _load_from_file(raw) if via_file else parse(raw)
    except TrustUnreadable as exc:
        assert exc.reason and isinstance(exc.reason, str)
        return
    check_document(doc)


SEEDS: list[bytes] = [
    *(b"\x00" + json.dumps(doc, indent=2).encode() + b"\n" for doc in DOCUMENTS),
    *(b"\x02" + json.dumps(doc, separators=(",", ":")).encode() for doc in DOCUMENTS),
    *(bytes([1, 0, i, 0, 0, 0, 3, 0, 7]) for i in range(len(DOCUMENTS))),
    b"\x01\x00\x01\x00\x01\x00\x03\x00\x05\x01",
    b"\x00{}",
    b"\x00",
]


def main() -> None:
    run_libfuzzer(test_one_input)


if __name__ == "__main__":
    main()
