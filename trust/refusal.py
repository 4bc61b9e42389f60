"""The one refusal rule: may this client act at all, given what the trust record grants now?

Hop 1 (``tabwarden mcp`` before every tool call) and hop 2 (the host before every relayed
request) ask exactly this, in this order, and nothing else decides it:

1. the record is unreadable or refused → ``trust_unreadable`` (everything is refused);
2. the kill switch is engaged → ``killed``;
3. clients are paired (or were, and one was revoked) and this client's executable hash is not
   one of them, or it could not be measured → ``client_not_paired``.

Pure: no I/O, no clock. It must never turn a state it cannot decide into a grant.
"""

from __future__ import annotations

from dataclasses import dataclass

from tabwarden.protocol.codes import CLIENT_NOT_PAIRED, KILLED, TRUST_UNREADABLE
from tabwarden.trust.verify import Effective

__all__ = ["Refusal", "refusal"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """A stable machine ``code`` from the shared table and a message safe to show the client."""

    code: str
    message: str


def refusal(
    eff: Effective, client_sha256: str | None, *, who: str = "this client"
) -> Refusal | None:
    """Why ``eff`` refuses the client whose executable hashes to ``client_sha256`` (``None``:
    it could not be measured), or ``None`` when it may act. ``who`` names the client in the
    message (never a secret)."""
    if eff.refused:
        return Refusal(
            code=TRUST_UNREADABLE,
            message="the trust record cannot be trusted; everything is refused "
            "(see `tabwarden status`)",
        )
    if eff.killed:
        return Refusal(code=KILLED, message="the kill switch is engaged")
    if eff.clients_pinned or eff.paired_clients:
        if not client_sha256 or eff.client_matching(client_sha256) is None:
            return Refusal(code=CLIENT_NOT_PAIRED, message=f"{who} is not a paired MCP client")
    return None
