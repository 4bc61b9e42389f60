"""What a trust document actually grants: pure verification, no I/O.

``effective(document, public_key, now)`` is the only judge. ``public_key`` is the host key from the
key store — never the one written in the file. Rules (``docs/trust-record.md``):

* the file's ``hostKey.public`` (and its fingerprint) must be that key; otherwise the file has been
  tampered with: every grant is ignored and the kill switch counts as engaged;
* a grant counts only if its signature verifies (and it was not signed at an epoch later than the
  document's own); anything else is ignored and reported in ``Effective.ignored``;
* revocations (unsigned) remove the client/browser grants with that label signed at or before
  the revocation's epoch (every one, for a revocation without an epoch): the label paired again
  later is a new grant, a re-inserted copy of a revoked one stays revoked;
* killed = max(kill.serial, event serials, killSerial of every validly signed grant) > the highest
  serial over validly signed releases;
* policy = ``restrict(signed baseline or DEFAULT_POLICY, restrictions)``.

Reasons never contain key material or signatures.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tabwarden.trust.grants import grant_is_valid
from tabwarden.trust.keys import HostKeyInvalid, HostPublicKey
from tabwarden.trust.policy import (
    DEFAULT_POLICY,
    DENY_POLICY,
    Policy,
    PolicyError,
    restrict_explained,
    validate_values,
)
from tabwarden.trust.record import (
    BaselineRecord,
    BrowserRecord,
    ClientRecord,
    Credential,
    ReleaseRecord,
    TrustDocument,
)

__all__ = [
    "BrowserGrant",
    "ClientGrant",
    "Effective",
    "RevokedClient",
    "effective",
    "host_key_mismatch",
]

_Grant = ClientRecord | BrowserRecord | ReleaseRecord | BaselineRecord


@dataclass(frozen=True, kw_only=True, slots=True)
class ClientGrant:
    """A paired MCP client harness whose grant verified and is not revoked."""

    label: str
    exe: str
    sha256: str
    paired_at: int
    path: str = "terminal"


@dataclass(frozen=True, kw_only=True, slots=True)
class RevokedClient:
    """A client a revocation removed, named by the grant it kept (whose signature verified):
    the label it was paired under, its identity hash, and when it was revoked."""

    label: str
    sha256: str
    revoked_at: int


@dataclass(frozen=True, kw_only=True, slots=True)
class BrowserGrant:
    """A paired browser whose grant verified and is not revoked."""

    label: str
    credentials: tuple[Credential, ...]
    window_only: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class Effective:
    """What the record grants right now.

    ``kill_serial`` is the kill level the verdict was computed from (readers keep it monotonic);
    ``refused`` is set when the whole record was refused (``deny_all``).
    """

    paired_clients: tuple[ClientGrant, ...]
    browsers: tuple[BrowserGrant, ...]
    killed: bool
    policy: Policy
    epoch: int
    ignored: tuple[str, ...] = ()
    kill_serial: int = 0
    refused: str | None = None
    #: True once any MCP client was ever paired or revoked: from then on only paired clients are
    #: served, so revoking the last client never falls back to serving any client.
    clients_pinned: bool = False
    #: True once an authenticator was enrolled under this host key (``twoFactor`` in the record,
    #: validly signed): the phrase typed at a terminal never grants alone again.
    two_factor: bool = False
    #: Clients revoked by a revocation that kept their validly signed grant. Words only: a
    #: client is served only by a grant in ``paired_clients``.
    revoked_clients: tuple[RevokedClient, ...] = ()

    @classmethod
    def deny_all(cls, reason: str) -> Effective:
        """Deny everything: killed, nothing paired, the narrowest policy."""
        return cls(
            paired_clients=(),
            browsers=(),
            killed=True,
            policy=DENY_POLICY,
            epoch=-1,
            ignored=(reason,),
            refused=reason,
            clients_pinned=True,
        )

    @classmethod
    def unpaired(cls) -> Effective:
        """No host key and no record: nothing paired, not killed, the default policy."""
        return cls(paired_clients=(), browsers=(), killed=False, policy=DEFAULT_POLICY, epoch=0)

    def revoked_matching(self, sha256: str) -> RevokedClient | None:
        """The latest revocation of the client whose identity hash is ``sha256``, or None."""
        found = [r for r in self.revoked_clients if r.sha256 == sha256]
        return max(found, key=lambda r: r.revoked_at) if found else None

    def client_matching(self, sha256: str) -> ClientGrant | None:
        """The paired client whose executable hash is ``sha256`` (None when killed or absent)."""
        if self.killed:
            return None
        for client in self.paired_clients:
            if client.sha256 == sha256:
                return client
        return None


def host_key_mismatch(doc: TrustDocument, public: HostPublicKey) -> str | None:
    """Why the file's ``hostKey`` is not ``public`` (tampering), or None when it is."""
    try:
        in_file = HostPublicKey.from_b64(doc.host_key.public)
    except HostKeyInvalid:
        return "hostKey.public in the record is not a valid P-256 key (tampering)"
    if in_file != public:
        return "hostKey.public in the record is not the host key in the key store (tampering)"
    if doc.host_key.fingerprint != public.fingerprint:
        return "hostKey.fingerprint does not match the host key (tampering)"
    return None


def _all_grants(doc: TrustDocument) -> Iterable[tuple[str, _Grant]]:
    for i, c in enumerate(doc.clients):
        yield f"clients[{i}] ({c.label!r})", c
    for i, b in enumerate(doc.browsers):
        yield f"browsers[{i}] ({b.label!r})", b
    for i, r in enumerate(doc.releases):
        yield f"releases[{i}] (serial {r.serial})", r
    if doc.policy.baseline is not None:
        yield "policy.baseline", doc.policy.baseline
    for i, h in enumerate(doc.policy.history):
        yield f"policy.history[{i}]", h


def _raw_kill_level(doc: TrustDocument) -> int:
    return max([doc.kill.serial, *(e.serial for e in doc.kill.events)])


def _epoch_of(baseline: BaselineRecord | None) -> int:
    return -1 if baseline is None else baseline.epoch


def effective(doc: TrustDocument, public: HostPublicKey, now: int) -> Effective:
    """What ``doc`` grants when checked against ``public`` (the key store's key). Pure.

    ``now`` is part of the contract so time-bound rules need no signature change; no rule reads
    the clock today.
    """
    del now  # no time-bound rule yet; kept so callers never read the clock themselves
    ignored: list[str] = []

    mismatch = host_key_mismatch(doc, public)
    if mismatch is not None:
        ignored.append(mismatch)
        ignored.extend(
            f"{where}: ignored, the record's host key is not ours" for where, _ in _all_grants(doc)
        )
        policy, dropped = restrict_explained(DEFAULT_POLICY, doc.policy.restrictions)
        ignored.extend(dropped)
        return Effective(
            paired_clients=(),
            browsers=(),
            killed=True,
            policy=policy,
            epoch=doc.epoch,
            ignored=tuple(ignored),
            kill_serial=_raw_kill_level(doc),
            clients_pinned=True,
        )

    if doc.two_factor is not None and not grant_is_valid(public, doc.two_factor.to_json()):
        # Only a forger writes a latch that does not verify: refuse the record (fail closed).
        return Effective.deny_all("twoFactor: signature does not verify (tampering)")

    signed: set[int] = set()  # id() of grants whose signature verifies
    usable: set[int] = set()  # ... and that are not from a later epoch than the document
    for where, grant in _all_grants(doc):
        if not grant_is_valid(public, grant.to_json()):
            ignored.append(f"{where}: signature does not verify; ignored")
            continue
        signed.add(id(grant))
        if grant.epoch > doc.epoch:
            ignored.append(
                f"{where}: signed at epoch {grant.epoch}, later than the record's epoch "
                f"{doc.epoch} (rolled back?); ignored"
            )
            continue
        usable.add(id(grant))

    def revoked(kind: str, label: str, grant_epoch: int) -> bool:
        return any(r.revokes(kind, label, grant_epoch) for r in doc.revocations)

    clients: list[ClientGrant] = []
    for i, c in enumerate(doc.clients):
        if id(c) not in usable:
            continue
        if revoked("client", c.label, c.epoch):
            ignored.append(f"clients[{i}] ({c.label!r}): revoked")
            continue
        clients.append(
            ClientGrant(
                label=c.label, exe=c.exe, sha256=c.sha256, paired_at=c.paired_at, path=c.path
            )
        )

    revoked_clients: list[RevokedClient] = []
    for i, r in enumerate(doc.revocations):
        kept = r.client
        if kept is None:
            continue
        if not grant_is_valid(public, kept.to_json()):
            ignored.append(f"revocations[{i}].client: signature does not verify; not named")
        elif kept.label != r.label or not r.revokes("client", kept.label, kept.epoch):
            ignored.append(f"revocations[{i}].client: not a grant this revocation revokes")
        else:
            revoked_clients.append(
                RevokedClient(label=kept.label, sha256=kept.sha256, revoked_at=r.at)
            )

    browsers: list[BrowserGrant] = []
    for i, b in enumerate(doc.browsers):
        if id(b) not in usable:
            continue
        if revoked("browser", b.label, b.epoch):
            ignored.append(f"browsers[{i}] ({b.label!r}): revoked")
            continue
        browsers.append(
            BrowserGrant(label=b.label, credentials=b.credentials, window_only=b.window_only)
        )

    # A valid signature is a genuine statement of the kill serial at signing time: every signed
    # grant raises the floor, even one that is revoked, historic or otherwise unusable.
    floor = max(
        [_raw_kill_level(doc), *(g.kill_serial for _, g in _all_grants(doc) if id(g) in signed)]
    )
    released = max([0, *(r.serial for r in doc.releases if id(r) in usable)])
    killed = floor > released

    base = DEFAULT_POLICY
    baseline = doc.policy.baseline
    current = baseline if baseline is not None and id(baseline) in usable else None
    newer = [h for h in doc.policy.history if id(h) in usable and h.epoch > _epoch_of(current)]
    if newer:
        # An older signed baseline put in place of a newer one (swapped in from the history), or
        # the current one removed or spoiled: the newest signed policy stands, so a signed
        # narrowing is never undone by editing the file.
        baseline = max(newer, key=lambda h: h.epoch)
        ignored.append(
            "policy.baseline: older than a signed history entry (swapped or removed?); "
            f"using the policy signed at epoch {baseline.epoch}"
        )
    if baseline is not None and id(baseline) in usable:
        try:
            base = validate_values(baseline.values_json())
        except PolicyError as exc:
            ignored.append(f"policy.baseline: invalid values ({exc}); using the default policy")
    elif baseline is not None:
        ignored.append("policy.baseline: not usable; using the default policy")
    policy, dropped = restrict_explained(base, doc.policy.restrictions)
    ignored.extend(dropped)

    return Effective(
        clients_pinned=bool(doc.clients) or any(r.kind == "client" for r in doc.revocations),
        paired_clients=tuple(clients),
        browsers=tuple(browsers),
        killed=killed,
        policy=policy,
        epoch=doc.epoch,
        ignored=tuple(ignored),
        kill_serial=floor,
        two_factor=doc.two_factor is not None,
        revoked_clients=tuple(revoked_clients),
    )
