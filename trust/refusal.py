"""The one refusal rule: may this client act at all, given what the trust record grants now?

Hop 1 (``tabwarden mcp`` before every tool call) and hop 2 (the host before every relayed
request) ask exactly this, in this order, and nothing else decides it:

1. the record is unreadable or refused → ``trust_unreadable`` (everything is refused);
2. the kill switch is engaged → ``killed``;
3. no client is paired yet → ``client_not_paired`` (there is no unpinned posture: nothing is
   served until the person pins the client they use; ``tabwarden mcp`` remembers its spawner so
   ``pair-client`` finds it);
4. clients are paired (or were, and one was revoked) and this client's measured identity
   (``tabwarden.bridge.client_identity``: the image hash of a plain executable, or the interpreter
   and what it runs) is not one of them, or it could not be measured → ``client_not_paired``. When a
   paired client has the same description but another hash, the message says it changed since
   it was paired (it probably updated itself) and how to re-pair it;
5. ...unless a revocation kept the grant that pinned this very client (its hash, under a
   signature that verifies: ``Effective.revoked_clients``) → ``client_revoked``, naming the label
   it was paired under and when it was revoked, and that only ``tabwarden pair-client`` at a
   terminal brings it back. It names only the grant of the client that asks, never another's.

Pure: no I/O, no clock. It must never turn a state it cannot decide into a grant; the
description only ever chooses the words of a refusal, never whether to refuse.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from tabwarden.protocol.codes import CLIENT_NOT_PAIRED, CLIENT_REVOKED, KILLED, TRUST_UNREADABLE
from tabwarden.trust.policy import Policy, is_narrowing
from tabwarden.trust.verify import ClientGrant, Effective, RevokedClient

__all__ = ["SWITCH_ON", "MeasuredClient", "Refusal", "refusal", "switch_off"]

_REPAIR = "re-pair it with `tabwarden pair-client`"
#: With no client paired nothing is served: there is no posture in which any program that can
#: start `tabwarden mcp` may use the browser. The spawner is remembered, so pair-client finds it.
_NONE_PAIRED = (
    "{name} is not a paired MCP client: no client is paired yet, and nothing may use the browser "
    "until one is; pin the client you use with `tabwarden setup --client claude` (or codex, "
    "json), or with `tabwarden pair-client` once `tabwarden pair` has run"
)

#: The policy switches a host refusal can name as off, each with the value that turns it on (what
#: ``tabwarden policy set KEY=VALUE`` takes, written as the CLI parses it). The host's words for a
#: refusal because a switch is off come from ``switch_off`` and nowhere else; the extension's
#: from extension/shared/policy-words.js ``SWITCH_REFUSALS`` (a test parses both tables'
#: commands with the real CLI and the policy's validation).
SWITCH_ON: dict[str, bool | str] = {
    "eval": True,
    "upload": True,
    "presenceConfirm": True,
    "provenance": "confirm",
}


def switch_off(key: str, what: str, policy: Policy) -> str:
    """A refusal's words because ``policy``'s ``key`` does not allow ``what``: the key, and the
    exact command that allows it — ``policy restrict`` when that value narrows ``policy`` (free),
    else ``policy set`` (a signed widening: the person types the phrase at a terminal)."""
    value = SWITCH_ON[key]
    shown = value if isinstance(value, str) else ("true" if value else "false")
    verb = "restrict" if is_narrowing(policy, key, value) else "set"
    return (
        f"{what} is off (policy {key}); a person can turn it on with "
        f"`tabwarden policy {verb} {key}={shown}` at a terminal"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """A stable machine ``code`` from the shared table and a message safe to show the client."""

    code: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasuredClient:
    """A client as measured: its identity hash (what a pairing pins), its description (what a
    pairing of it records as ``exe``), and the executable it runs. ``hosted``: an interpreter
    runs it, so its identity is not that executable's image hash."""

    sha256: str
    description: str
    image: str = ""
    hosted: bool = False


def refusal(
    eff: Effective,
    client: MeasuredClient | None,
    *,
    who: str | None = None,
) -> Refusal | None:
    """Why ``eff`` refuses ``client`` (``None``, or an empty hash: it could not be measured), or
    ``None`` when it may act. ``who`` names the client in the message (never a secret); a
    changed client is named by its description."""
    if eff.refused:
        return Refusal(
            code=TRUST_UNREADABLE,
            message="the trust record cannot be trusted; everything is refused "
            "(see `tabwarden status`)",
        )
    if eff.killed:
        return Refusal(code=KILLED, message="the kill switch is engaged")
    name = who or "this client"
    if not (eff.clients_pinned or eff.paired_clients):
        return Refusal(code=CLIENT_NOT_PAIRED, message=_NONE_PAIRED.format(name=name))
    if client is None or not client.sha256:
        return Refusal(code=CLIENT_NOT_PAIRED, message=f"{name} is not a paired MCP client")
    if eff.client_matching(client.sha256) is not None:
        return None
    revoked = eff.revoked_matching(client.sha256)
    if revoked is not None:
        return Refusal(code=CLIENT_REVOKED, message=_revoked(revoked, name))
    return Refusal(code=CLIENT_NOT_PAIRED, message=_not_paired(eff.paired_clients, client, name))


def _revoked(revoked: RevokedClient, name: str) -> str:
    when = datetime.datetime.fromtimestamp(revoked.revoked_at, datetime.UTC)
    return (
        f"{name} was revoked: it was paired as {revoked.label!r} and revoked on "
        f"{when:%Y-%m-%d %H:%M} UTC; only a person can bring it back, with "
        "`tabwarden pair-client` at a terminal"
    )


def _not_paired(paired: tuple[ClientGrant, ...], client: MeasuredClient, name: str) -> str:
    for grant in paired:
        if grant.exe == client.description:
            return (
                f"the client {client.description} changed since it was paired as "
                f"{grant.label!r} (sha256 {grant.sha256[:12]}… → {client.sha256[:12]}…): it "
                f"probably updated itself; {_REPAIR}"
            )
    if client.hosted and client.image:
        for grant in paired:
            if grant.exe == client.image:
                return (
                    f"{name} is not a paired MCP client: its interpreter {client.image} was "
                    f"paired as {grant.label!r} by its image alone, which no longer admits "
                    "every script it runs; start the client you meant and "
                    f"{_REPAIR}"
                )
    return f"{name} is not a paired MCP client"
