"""The trust document (schema version 1): strict parsing and serialisation, nothing else.

``parse`` accepts exactly the shape in ``docs/trust-record.md`` and raises ``TrustUnreadable`` for
anything else: bytes that are not UTF-8, invalid or truncated JSON, trailing garbage, duplicate
keys, floats/NaN, missing or unknown fields, wrong types, an unknown ``version``. It checks shape
only; signatures and policy semantics are ``verify``'s job. Every record is a frozen, keyword-only
dataclass whose ``to_json()`` reproduces the parsed object exactly, so a grant's signature can be
checked over ``canonical(record.to_json() without "sig")``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn, TypeVar

from tabwarden.errors import TabwardenError
from tabwarden.protocol.codes import TRUST_UNREADABLE
from tabwarden.trust.canonical import NotCanonical, canonical
from tabwarden.trust.keys import HostPublicKey

__all__ = [
    "SCHEMA_VERSION",
    "BaselineRecord",
    "BrowserRecord",
    "CodeBinding",
    "ClientRecord",
    "Credential",
    "HostKeyInfo",
    "KillEvent",
    "KillState",
    "PairingCode",
    "PolicySection",
    "ReleaseRecord",
    "Restriction",
    "Revocation",
    "TrustDocument",
    "TwoFactorLatch",
    "TrustUnreadable",
    "empty_document",
    "parse",
    "serialise",
]

SCHEMA_VERSION = 1
#: A record with hundreds of grants is tens of KiB; anything this large is not ours.
MAX_DOCUMENT_BYTES = 4 * 1024 * 1024
#: Integers are JSON-safe (exactly representable in JavaScript) and non-negative.
MAX_INT = 2**53 - 1
_MAX_STR = 4096
_MAX_DEPTH = 32
KEY_STORES = ("keyring", "file")
REVOCABLE = ("client", "browser")

JsonValue = Any
PolicyScalar = bool | int | str | tuple[str, ...]


class TrustUnreadable(TabwardenError):
    """The trust record cannot be read or trusted; everything is denied until it is fixed."""

    code = TRUST_UNREADABLE
    exit_status = 3
    hint = (
        "Run `tabwarden status` to see why; a damaged or tampered trust record is never repaired "
        "silently — restore it, or pair again."
    )

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"trust record refused: {reason}")


# --- records ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class HostKeyInfo:
    public: str
    fingerprint: str
    store: str

    def to_json(self) -> dict[str, Any]:
        return {"public": self.public, "fingerprint": self.fingerprint, "store": self.store}


@dataclass(frozen=True, kw_only=True, slots=True)
class ClientRecord:
    """A paired MCP client harness (a grant). ``path`` = what authorised it (audit path)."""

    label: str
    exe: str
    sha256: str
    paired_at: int
    path: str
    epoch: int
    kill_serial: int
    sig: str
    kind: str = field(default="client", init=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "label": self.label,
            "exe": self.exe,
            "sha256": self.sha256,
            "pairedAt": self.paired_at,
            "path": self.path,
            "epoch": self.epoch,
            "killSerial": self.kill_serial,
            "sig": self.sig,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class Credential:
    """One enrolled WebAuthn credential (inside a browser grant)."""

    credential_id: str
    public_key: str
    sign_count: int
    enrolled_at: int
    path: str
    uv: bool = False
    """The authenticator verified the user (PIN, biometric) at enrolment: every tap with this
    credential must then carry the UV flag too. Written only when true, so grants signed before
    the field existed keep verifying."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "credentialId": self.credential_id,
            "publicKey": self.public_key,
            "signCount": self.sign_count,
            "enrolledAt": self.enrolled_at,
            "path": self.path,
        }
        if self.uv:
            out["uv"] = True
        return out


@dataclass(frozen=True, kw_only=True, slots=True)
class BrowserRecord:
    """A paired browser and its enrolled credentials (a grant)."""

    label: str
    credentials: tuple[Credential, ...]
    epoch: int
    kill_serial: int
    sig: str
    window_only: bool = False
    """Paired without an authenticator: confirmations happen in the extension's window (software
    confirmation) and it holds no credential. Written only when true."""
    kind: str = field(default="browser", init=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "label": self.label,
            "credentials": [c.to_json() for c in self.credentials],
        }
        if self.window_only:
            out["windowOnly"] = True
        out.update(epoch=self.epoch, killSerial=self.kill_serial, sig=self.sig)
        return out


@dataclass(frozen=True, kw_only=True, slots=True)
class KillEvent:
    serial: int
    at: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"serial": self.serial, "at": self.at, "reason": self.reason}


@dataclass(frozen=True, kw_only=True, slots=True)
class KillState:
    serial: int
    events: tuple[KillEvent, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"serial": self.serial, "events": [e.to_json() for e in self.events]}


@dataclass(frozen=True, kw_only=True, slots=True)
class ReleaseRecord:
    """Releases the kill latch up to ``serial`` (a grant)."""

    serial: int
    epoch: int
    kill_serial: int
    sig: str
    kind: str = field(default="release", init=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "serial": self.serial,
            "epoch": self.epoch,
            "killSerial": self.kill_serial,
            "sig": self.sig,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class BaselineRecord:
    """The signed policy baseline (a grant). ``values`` as signed: sorted (key, value) pairs."""

    values: tuple[tuple[str, PolicyScalar], ...]
    epoch: int
    kill_serial: int
    sig: str
    kind: str = field(default="baseline", init=False)

    def values_json(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.values}

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "values": self.values_json(),
            "epoch": self.epoch,
            "killSerial": self.kill_serial,
            "sig": self.sig,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class Restriction:
    """A narrowing record (unsigned). ``value`` is checked against the policy when read."""

    key: str
    value: PolicyScalar
    at: int

    def to_json(self) -> dict[str, Any]:
        value = list(self.value) if isinstance(self.value, tuple) else self.value
        return {"key": self.key, "value": value, "at": self.at}


@dataclass(frozen=True, kw_only=True, slots=True)
class PolicySection:
    baseline: BaselineRecord | None = None
    restrictions: tuple[Restriction, ...] = ()
    history: tuple[BaselineRecord, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "baseline": None if self.baseline is None else self.baseline.to_json(),
            "restrictions": [r.to_json() for r in self.restrictions],
            "history": [h.to_json() for h in self.history],
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class Revocation:
    """A narrowing record (unsigned): removes the client/browser grants with this label that
    were signed at or before ``epoch`` — the epoch of the write that revoked them, so a grant
    signed later (the label paired again, e.g. ``pair --browser LABEL``) is not revoked, and a
    re-inserted copy of an old one still is. Without ``epoch`` (records written before the field
    existed) it removes every grant with the label.

    ``client`` (a client revocation only, optional): the revoked client grant exactly as it was
    signed, so the client it pinned can be told it was revoked. Its own signature covers its
    hash, so the name it gives is only believed when that verifies (``verify``); whether the
    revocation revokes never depends on it. Records without it load and verify unchanged."""

    kind: str
    label: str
    at: int
    epoch: int | None = None
    client: ClientRecord | None = None

    def revokes(self, kind: str, label: str, grant_epoch: int) -> bool:
        """Whether this revocation removes a ``kind`` grant for ``label`` signed at
        ``grant_epoch``."""
        if self.kind != kind or self.label != label:
            return False
        return self.epoch is None or grant_epoch <= self.epoch

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "label": self.label, "at": self.at}
        if self.epoch is not None:
            out["epoch"] = self.epoch
        if self.client is not None:  # written only when kept: older records read unchanged
            out["client"] = self.client.to_json()
        return out


@dataclass(frozen=True, kw_only=True, slots=True)
class CodeBinding:
    """A grant inside the pairing code (``tabwarden pair --browser LABEL``): the code pairs only
    browser ``browser``, and a person approved that at the terminal. Its signature covers the
    code's ``sha256`` and ``expiresAt`` too (``PairingCode.binding_grant``), so it cannot be moved
    onto another code; the file alone (unsigned) can never bind a code."""

    browser: str
    epoch: int
    kill_serial: int
    sig: str
    kind: str = field(default="codeBinding", init=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "browser": self.browser,
            "epoch": self.epoch,
            "killSerial": self.kill_serial,
            "sig": self.sig,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class TwoFactorLatch:
    """An authenticator was enrolled under this host key (a grant, signed when the first
    credential was enrolled). While it is in the record the phrase typed at a terminal never
    grants alone again, even after every authenticator was revoked; only ``pair --reset`` (a new
    record) drops it. A record without it (written before it existed) is not latched."""

    epoch: int
    kill_serial: int
    sig: str
    kind: str = field(default="twoFactor", init=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "epoch": self.epoch,
            "killSerial": self.kill_serial,
            "sig": self.sig,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class PairingCode:
    """The one-time pairing code, stored only as its SHA-256 (hex); ``binding`` (signed), when
    set, names the only browser label it may pair."""

    sha256: str
    expires_at: int
    attempts: int = 0
    binding: CodeBinding | None = None

    def binding_grant(self) -> dict[str, Any] | None:
        """The binding as the grant its signature covers (with this code's hash and expiry)."""
        if self.binding is None:
            return None
        return {**self.binding.to_json(), "sha256": self.sha256, "expiresAt": self.expires_at}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "sha256": self.sha256,
            "expiresAt": self.expires_at,
            "attempts": self.attempts,
        }
        if self.binding is not None:
            out["binding"] = self.binding.to_json()
        return out


@dataclass(frozen=True, kw_only=True, slots=True)
class TrustDocument:
    version: int
    epoch: int
    host_key: HostKeyInfo
    clients: tuple[ClientRecord, ...] = ()
    browsers: tuple[BrowserRecord, ...] = ()
    kill: KillState = KillState(serial=0)
    releases: tuple[ReleaseRecord, ...] = ()
    policy: PolicySection = PolicySection()
    revocations: tuple[Revocation, ...] = ()
    pairing_code: PairingCode | None = None
    two_factor: TwoFactorLatch | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "version": self.version,
            "epoch": self.epoch,
            "hostKey": self.host_key.to_json(),
            "clients": [c.to_json() for c in self.clients],
            "browsers": [b.to_json() for b in self.browsers],
            "kill": self.kill.to_json(),
            "releases": [r.to_json() for r in self.releases],
            "policy": self.policy.to_json(),
            "revocations": [r.to_json() for r in self.revocations],
            "pairingCode": None if self.pairing_code is None else self.pairing_code.to_json(),
        }
        if self.two_factor is not None:  # written only once latched: older records unchanged
            out["twoFactor"] = self.two_factor.to_json()
        return out

    def with_(self, **changes: Any) -> TrustDocument:
        """``dataclasses.replace`` spelled as a method (documents are immutable)."""
        return replace(self, **changes)


def empty_document(host_public: HostPublicKey, store: str) -> TrustDocument:
    """A fresh record for ``host_public`` at epoch 0: nothing paired, no baseline, not killed."""
    if store not in KEY_STORES:
        raise ValueError(f"unknown host key store {store!r}")
    return TrustDocument(
        version=SCHEMA_VERSION,
        epoch=0,
        host_key=HostKeyInfo(
            public=host_public.b64, fingerprint=host_public.fingerprint, store=store
        ),
    )


def serialise(doc: TrustDocument) -> bytes:
    """The file's bytes: indented UTF-8 JSON plus a newline (parse(serialise(d)) == d)."""
    obj = doc.to_json()
    canonical(obj)  # refuses anything without an exact JSON form (floats, bad strings)
    return (json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


# --- parsing ---------------------------------------------------------------------------------


class _Bad(Exception):
    pass


def _fail(reason: str) -> NoReturn:
    raise _Bad(reason)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            _fail(f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_float(text: str) -> NoReturn:
    _fail(f"non-integer number {text[:20]!r}")


def _bounded_int(text: str) -> int:
    if len(text) > 20:
        _fail("integer too long")
    return int(text)


def _depth_ok(value: Any, depth: int = 0) -> None:
    if depth > _MAX_DEPTH:
        _fail("nested too deeply")
    if isinstance(value, dict):
        for item in value.values():
            _depth_ok(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _depth_ok(item, depth + 1)


def _obj(
    value: Any, where: str, keys: tuple[str, ...], optional: tuple[str, ...] = ()
) -> dict[str, Any]:
    if not isinstance(value, dict):
        _fail(f"{where}: expected an object")
    missing = [k for k in keys if k not in value]
    if missing:
        _fail(f"{where}: missing field {missing[0]!r}")
    unknown = sorted(k for k in value if k not in keys and k not in optional)
    if unknown:
        _fail(f"{where}: unknown field {unknown[0]!r}")
    return value


def _int(value: Any, where: str) -> int:
    if type(value) is not int:
        _fail(f"{where}: expected an integer")
    if not 0 <= value <= MAX_INT:
        _fail(f"{where}: integer out of range")
    return value


def _str(value: Any, where: str, max_len: int = _MAX_STR) -> str:
    if not isinstance(value, str):
        _fail(f"{where}: expected a string")
    if len(value) > max_len:
        _fail(f"{where}: string too long")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        _fail(f"{where}: string is not valid Unicode")
    return value


def _one_of(value: Any, where: str, allowed: tuple[str, ...]) -> str:
    text = _str(value, where)
    if text not in allowed:
        _fail(f"{where}: expected one of {', '.join(allowed)}")
    return text


def _kind(value: dict[str, Any], where: str, kind: str) -> None:
    if value.get("kind") != kind:
        _fail(f"{where}: kind must be {kind!r}")


_T = TypeVar("_T")


def _list(value: Any, where: str, item: Callable[[Any, str], _T]) -> tuple[_T, ...]:
    if not isinstance(value, list):
        _fail(f"{where}: expected a list")
    return tuple(item(v, f"{where}[{i}]") for i, v in enumerate(value))


#: Longest word a choice-valued policy key may hold.
_MAX_POLICY_WORD = 32


def _policy_scalar(value: Any, where: str) -> PolicyScalar:
    if isinstance(value, bool) or type(value) is int:
        if type(value) is int:
            _int(value, where)
        return value
    if isinstance(value, list):
        return tuple(_str(v, f"{where}[{i}]") for i, v in enumerate(value))
    if isinstance(value, str):  # one word of a choice (policy ``provenance``)
        return _str(value, where, _MAX_POLICY_WORD)
    _fail(f"{where}: expected true/false, an integer, a word or a list of strings")


_GRANT = ("kind", "epoch", "killSerial", "sig")


def _client(value: Any, where: str) -> ClientRecord:
    o = _obj(value, where, (*_GRANT, "label", "exe", "sha256", "pairedAt", "path"))
    _kind(o, where, "client")
    return ClientRecord(
        label=_str(o["label"], f"{where}.label", 64),
        exe=_str(o["exe"], f"{where}.exe"),
        sha256=_str(o["sha256"], f"{where}.sha256", 64),
        paired_at=_int(o["pairedAt"], f"{where}.pairedAt"),
        path=_str(o["path"], f"{where}.path", 32),
        epoch=_int(o["epoch"], f"{where}.epoch"),
        kill_serial=_int(o["killSerial"], f"{where}.killSerial"),
        sig=_str(o["sig"], f"{where}.sig", 256),
    )


def _credential(value: Any, where: str) -> Credential:
    o = _obj(
        value, where, ("credentialId", "publicKey", "signCount", "enrolledAt", "path"), ("uv",)
    )
    if "uv" in o and o["uv"] is not True:
        _fail(f"{where}.uv: expected true (omit the field otherwise)")
    return Credential(
        credential_id=_str(o["credentialId"], f"{where}.credentialId", 1024),
        public_key=_str(o["publicKey"], f"{where}.publicKey"),
        sign_count=_int(o["signCount"], f"{where}.signCount"),
        enrolled_at=_int(o["enrolledAt"], f"{where}.enrolledAt"),
        path=_str(o["path"], f"{where}.path", 32),
        uv="uv" in o,
    )


def _browser(value: Any, where: str) -> BrowserRecord:
    o = _obj(value, where, (*_GRANT, "label", "credentials"), ("windowOnly",))
    _kind(o, where, "browser")
    if "windowOnly" in o and o["windowOnly"] is not True:
        _fail(f"{where}.windowOnly: expected true (omit the field otherwise)")
    credentials = _list(o["credentials"], f"{where}.credentials", _credential)
    if "windowOnly" in o and credentials:
        _fail(f"{where}: a window-only browser holds no credential")
    return BrowserRecord(
        label=_str(o["label"], f"{where}.label", 64),
        credentials=credentials,
        window_only="windowOnly" in o,
        epoch=_int(o["epoch"], f"{where}.epoch"),
        kill_serial=_int(o["killSerial"], f"{where}.killSerial"),
        sig=_str(o["sig"], f"{where}.sig", 256),
    )


def _kill_event(value: Any, where: str) -> KillEvent:
    o = _obj(value, where, ("serial", "at", "reason"))
    return KillEvent(
        serial=_int(o["serial"], f"{where}.serial"),
        at=_int(o["at"], f"{where}.at"),
        reason=_str(o["reason"], f"{where}.reason", 256),
    )


def _release(value: Any, where: str) -> ReleaseRecord:
    o = _obj(value, where, (*_GRANT, "serial"))
    _kind(o, where, "release")
    return ReleaseRecord(
        serial=_int(o["serial"], f"{where}.serial"),
        epoch=_int(o["epoch"], f"{where}.epoch"),
        kill_serial=_int(o["killSerial"], f"{where}.killSerial"),
        sig=_str(o["sig"], f"{where}.sig", 256),
    )


def _baseline(value: Any, where: str) -> BaselineRecord:
    o = _obj(value, where, (*_GRANT, "values"))
    _kind(o, where, "baseline")
    values = o["values"]
    if not isinstance(values, dict):
        _fail(f"{where}.values: expected an object")
    pairs = tuple(
        (_str(k, f"{where}.values key", 64), _policy_scalar(v, f"{where}.values.{k}"))
        for k, v in sorted(values.items())
    )
    return BaselineRecord(
        values=pairs,
        epoch=_int(o["epoch"], f"{where}.epoch"),
        kill_serial=_int(o["killSerial"], f"{where}.killSerial"),
        sig=_str(o["sig"], f"{where}.sig", 256),
    )


def _restriction(value: Any, where: str) -> Restriction:
    o = _obj(value, where, ("key", "value", "at"))
    return Restriction(
        key=_str(o["key"], f"{where}.key", 64),
        value=_policy_scalar(o["value"], f"{where}.value"),
        at=_int(o["at"], f"{where}.at"),
    )


def _code_binding(value: Any, where: str) -> CodeBinding:
    o = _obj(value, where, (*_GRANT, "browser"))
    _kind(o, where, "codeBinding")
    return CodeBinding(
        browser=_str(o["browser"], f"{where}.browser", 64),
        epoch=_int(o["epoch"], f"{where}.epoch"),
        kill_serial=_int(o["killSerial"], f"{where}.killSerial"),
        sig=_str(o["sig"], f"{where}.sig", 256),
    )


def _two_factor(value: Any, where: str) -> TwoFactorLatch:
    o = _obj(value, where, _GRANT)
    _kind(o, where, "twoFactor")
    return TwoFactorLatch(
        epoch=_int(o["epoch"], f"{where}.epoch"),
        kill_serial=_int(o["killSerial"], f"{where}.killSerial"),
        sig=_str(o["sig"], f"{where}.sig", 256),
    )


def _revocation(value: Any, where: str) -> Revocation:
    o = _obj(value, where, ("kind", "label", "at"), ("epoch", "client"))
    kind = _one_of(o["kind"], f"{where}.kind", REVOCABLE)
    if "client" in o and kind != "client":
        _fail(f"{where}.client: only a client revocation keeps the revoked client")
    return Revocation(
        kind=kind,
        label=_str(o["label"], f"{where}.label", 64),
        at=_int(o["at"], f"{where}.at"),
        epoch=_int(o["epoch"], f"{where}.epoch") if "epoch" in o else None,
        client=_client(o["client"], f"{where}.client") if "client" in o else None,
    )


def _document(top: Any) -> TrustDocument:
    if not isinstance(top, dict):
        _fail("top level: expected an object")
    if "version" not in top:
        _fail("top level: missing field 'version'")
    if type(top["version"]) is not int or top["version"] != SCHEMA_VERSION:
        _fail(f"unknown version {str(top['version'])[:20]!r} (this tabwarden reads version 1)")
    o = _obj(
        top,
        "top level",
        (
            "version",
            "epoch",
            "hostKey",
            "clients",
            "browsers",
            "kill",
            "releases",
            "policy",
            "revocations",
            "pairingCode",
        ),
        ("twoFactor",),
    )
    hk = _obj(o["hostKey"], "hostKey", ("public", "fingerprint", "store"))
    kill = _obj(o["kill"], "kill", ("serial", "events"))
    pol = _obj(o["policy"], "policy", ("baseline", "restrictions", "history"))
    pairing: PairingCode | None = None
    if o["pairingCode"] is not None:
        pc = _obj(
            o["pairingCode"], "pairingCode", ("sha256", "expiresAt", "attempts"), ("binding",)
        )
        pairing = PairingCode(
            sha256=_str(pc["sha256"], "pairingCode.sha256", 64),
            expires_at=_int(pc["expiresAt"], "pairingCode.expiresAt"),
            attempts=_int(pc["attempts"], "pairingCode.attempts"),
            binding=_code_binding(pc["binding"], "pairingCode.binding")
            if "binding" in pc
            else None,
        )
    return TrustDocument(
        version=SCHEMA_VERSION,
        epoch=_int(o["epoch"], "epoch"),
        host_key=HostKeyInfo(
            public=_str(hk["public"], "hostKey.public", 1024),
            fingerprint=_str(hk["fingerprint"], "hostKey.fingerprint", 128),
            store=_one_of(hk["store"], "hostKey.store", KEY_STORES),
        ),
        clients=_list(o["clients"], "clients", _client),
        browsers=_list(o["browsers"], "browsers", _browser),
        kill=KillState(
            serial=_int(kill["serial"], "kill.serial"),
            events=_list(kill["events"], "kill.events", _kill_event),
        ),
        releases=_list(o["releases"], "releases", _release),
        policy=PolicySection(
            baseline=None if pol["baseline"] is None else _baseline(pol["baseline"], "baseline"),
            restrictions=_list(pol["restrictions"], "policy.restrictions", _restriction),
            history=_list(pol["history"], "policy.history", _baseline),
        ),
        revocations=_list(o["revocations"], "revocations", _revocation),
        pairing_code=pairing,
        two_factor=_two_factor(o["twoFactor"], "twoFactor") if "twoFactor" in o else None,
    )


def parse(raw: bytes) -> TrustDocument:
    """The document in ``raw``, or ``TrustUnreadable(reason)``. Raises nothing else."""
    if not isinstance(raw, (bytes, bytearray)):
        raise TrustUnreadable("not bytes")
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise TrustUnreadable("file is too large")
    try:
        text = bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        raise TrustUnreadable("not UTF-8") from None
    try:
        top = json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_float=_no_float,
            parse_constant=_no_float,
            parse_int=_bounded_int,
        )
        _depth_ok(top)
        doc = _document(top)
    except _Bad as exc:
        raise TrustUnreadable(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise TrustUnreadable(f"invalid JSON at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise TrustUnreadable("nested too deeply") from None
    except (ValueError, NotCanonical) as exc:
        raise TrustUnreadable(f"invalid value ({type(exc).__name__})") from None
    return doc
