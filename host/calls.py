"""What every ``host_call`` handler shares: the context it runs in, its errors, and the reads
that refuse (``not_paired``, ``trust_unreadable``) before anything else happens.

The handlers (``pairing``, ``taps``, ``free_calls``) are synchronous and do blocking I/O (key
store, trust record, audit log): ``host_calls`` runs them in a worker thread and keeps the
``ChallengeBook`` on the event loop. Nothing here, or in a handler, may put key material, the
one-time code or a nonce into a log line or an error message; a refused ceremony says only
``presence refused`` outward (the precise reason goes to the log).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabwarden.errors import TabwardenError
from tabwarden.protocol.codes import BAD_REQUEST, POLICY_DENIED, UNKNOWN_ACTION
from tabwarden.trust import operations
from tabwarden.trust.keys import HostKey
from tabwarden.trust.operations import NotPaired, TrustContext
from tabwarden.trust.presence import (
    CHALLENGE_TTL,
)
from tabwarden.trust.record import Credential, TrustUnreadable
from tabwarden.trust.verify import Effective

log = logging.getLogger("tabwarden.host")


MAX_ID_CHARS = 256


class BadHostCall(TabwardenError):
    """The host call's arguments are malformed."""

    code = BAD_REQUEST


class PolicyDenied(TabwardenError):
    """The signed policy keeps that off; a tap cannot turn it on."""

    code = POLICY_DENIED


class UnknownHostAction(TabwardenError):
    """The host does not know that action."""

    code = UNKNOWN_ACTION


@dataclass(frozen=True, slots=True, kw_only=True)
class HostCallContext:
    """The trust record this host serves, and the browser label it serves it for."""

    trust: TrustContext
    browser_label: str
    config_dir: Path | None = None  # where spawners.json lives (clients_recent), if any
    challenge_ttl: float = CHALLENGE_TTL  # seconds a ceremony stays answerable (never longer)


def host_key(ctx: HostCallContext) -> HostKey:
    try:
        return operations.require_key(ctx.trust)
    except NotPaired:
        log.warning("host call: no host key is available")
        raise


def paired_key(ctx: HostCallContext) -> tuple[HostKey, Effective]:
    """The host key, with a record that verifies against it (else not_paired / trust_unreadable)."""
    try:
        return operations.require_paired(ctx.trust)
    except TrustUnreadable:
        log.warning("host call: the trust record is refused (%s)", ctx.trust.effective().refused)
        raise


def view(ctx: HostCallContext, what: str) -> Effective:
    """The effective record for a read-only view (``trust_unreadable`` when it is refused)."""
    eff = ctx.trust.effective()
    if eff.refused:
        log.warning("%s: the trust record is refused (%s)", what, eff.refused)
        raise TrustUnreadable("the trust record is refused; see `tabwarden status`")
    return eff


def string_arg(args: dict[str, Any], name: str, limit: int) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value or len(value) > limit:
        raise BadHostCall(f"{name} must be a non-empty string")
    return value


def own_credentials(ctx: HostCallContext, eff: Effective) -> tuple[Credential, ...]:
    return tuple(c for b in eff.browsers if b.label == ctx.browser_label for c in b.credentials)


def all_credentials(eff: Effective) -> list[tuple[str, Credential]]:
    """Every enrolled credential in the record, with the label of the browser holding it."""
    return [(b.label, c) for b in eff.browsers for c in b.credentials]
