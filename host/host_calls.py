"""The host-call catalogue: every ``host_call`` action the extension may name, as data.

Each entry names its handler (in ``pairing``, ``taps`` or ``free_calls``) and whether it spends
a WebAuthn tap (those run one at a time, so a sign counter is checked and stored without
interleaving). The
bridge refuses any other action (``unknown_action``) before a handler runs; the dispatcher is
this mapping, never an if-chain. Registration and assertion challenges live in memory for the
host's life and are taken once; blocking I/O (key store, trust record, audit) runs in a worker
thread. Nothing here decides a grant: the trust operations do.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from tabwarden.host import calls, free_calls, pairing, taps
from tabwarden.host.extension_log import ExtensionErrorLog
from tabwarden.trust.gate import TrustGate
from tabwarden.trust.operations import TrustContext
from tabwarden.trust.presence import CHALLENGE_TTL, Challenge, ChallengeBook

__all__ = ["HOST_CALLS", "HostCall", "HostCalls", "challenge_ttl", "host_calls"]

#: ``(action, args) -> result``; raises ``TabwardenError`` to refuse.
HostCalls = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


class _Session:
    """What the handlers share for one host: the context, the challenge book, the tap lock."""

    def __init__(self, ctx: calls.HostCallContext) -> None:
        self.ctx = ctx
        self.book = ChallengeBook()
        self.taps = asyncio.Lock()
        #: The extension's own errors, into the host's log (masked, capped, rate-limited).
        self.extension_errors = ExtensionErrorLog()

    def challenge_from(self, args: Mapping[str, Any], now: int) -> Challenge | None:
        challenge_id = args.get("challengeId")
        if not isinstance(challenge_id, str) or len(challenge_id) > calls.MAX_ID_CHARS:
            raise calls.BadHostCall("challengeId must be a string")
        return self.book.take(challenge_id, now)  # single use, whatever happens next


Handler = Callable[[_Session, dict[str, Any], int], Awaitable[dict[str, Any]]]


@dataclass(frozen=True, slots=True, kw_only=True)
class HostCall:
    name: str
    handler: Handler
    #: Spends a WebAuthn tap: runs under the one-tap-at-a-time lock.
    tap: bool = False


async def _pair_begin(s: _Session, args: dict[str, Any], now: int) -> dict[str, Any]:
    result, challenges = await asyncio.to_thread(pairing.pair_begin, s.ctx, args, now)
    for challenge in challenges:
        s.book.add(challenge, now)
    return result


async def _pair_complete(s: _Session, args: dict[str, Any], now: int) -> dict[str, Any]:
    challenge = s.challenge_from(args, now)
    window_only = args.get("windowOnly", False)
    if not isinstance(window_only, bool):
        raise calls.BadHostCall("windowOnly must be true or false")
    approval = args.get("approval")
    approval_challenge = approval_response = None
    if approval is not None:
        if not isinstance(approval, dict):
            raise calls.BadHostCall("approval must be an object")
        approval_challenge = s.challenge_from(approval, now)
        approval_response = approval.get("response")
    call = functools.partial(
        pairing.pair_complete, s.ctx, challenge, args.get("response"), now,
        window_only=window_only, approval=approval_challenge, approval_response=approval_response,
    )  # fmt: skip
    return await asyncio.to_thread(call)


async def _presence_begin(s: _Session, args: dict[str, Any], now: int) -> dict[str, Any]:
    result, challenge = await asyncio.to_thread(taps.presence_begin, s.ctx, args, now)
    s.book.add(challenge, now)
    return result


async def _presence_complete(s: _Session, args: dict[str, Any], now: int) -> dict[str, Any]:
    challenge = s.challenge_from(args, now)
    return await asyncio.to_thread(taps.presence_complete, s.ctx, challenge, args, now)


async def _extension_error(s: _Session, args: dict[str, Any], now: int) -> dict[str, Any]:
    return s.extension_errors.record(args)


def _reader(fn: Callable[[calls.HostCallContext, dict[str, Any]], dict[str, Any]]) -> Handler:
    async def handler(s: _Session, args: dict[str, Any], now: int) -> dict[str, Any]:
        return await asyncio.to_thread(fn, s.ctx, args)

    return handler


def _writer(
    fn: Callable[[calls.HostCallContext, dict[str, Any], int], dict[str, Any]],
) -> Handler:
    async def handler(s: _Session, args: dict[str, Any], now: int) -> dict[str, Any]:
        return await asyncio.to_thread(fn, s.ctx, args, now)

    return handler


HOST_CALLS: Mapping[str, HostCall] = MappingProxyType(
    {
        call.name: call
        for call in (
            HostCall(name="pair_begin", handler=_pair_begin),
            # The approving credential's counter is spent like any tap.
            HostCall(name="pair_complete", handler=_pair_complete, tap=True),
            HostCall(name="host_proof", handler=_reader(pairing.host_proof)),
            HostCall(name="policy_get", handler=_reader(free_calls.policy_get)),
            HostCall(name="origin_decide", handler=_reader(free_calls.origin_decide)),
            HostCall(name="presence_begin", handler=_presence_begin),
            HostCall(name="presence_complete", handler=_presence_complete, tap=True),
            HostCall(name="policy_restrict", handler=_writer(free_calls.policy_restrict)),
            HostCall(name="kill", handler=_writer(free_calls.kill)),
            HostCall(name="clients_recent", handler=_reader(free_calls.clients_recent)),
            HostCall(name="client_revoke", handler=_writer(free_calls.client_revoke)),
            HostCall(name="audit_tail", handler=_reader(free_calls.audit_tail)),
            HostCall(name="sessions_alive", handler=_reader(free_calls.sessions_alive)),
            HostCall(name="extension_error", handler=_extension_error),
        )
    }
)


def challenge_ttl(env: Mapping[str, str]) -> int:
    """Seconds a WebAuthn ceremony stays answerable: ``TABWARDEN_CHALLENGE_TTL`` may shorten the
    default (``trust.presence.CHALLENGE_TTL``), never lengthen it; anything else is ignored."""
    raw = env.get("TABWARDEN_CHALLENGE_TTL")
    if raw is None:
        return CHALLENGE_TTL
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 0 < value <= CHALLENGE_TTL:
        calls.log.warning(
            "TABWARDEN_CHALLENGE_TTL must be 1..%d seconds; using %d", CHALLENGE_TTL, CHALLENGE_TTL
        )
        return CHALLENGE_TTL
    return value


def host_calls(gate: TrustGate, browser_label: str) -> HostCalls:
    """The dispatcher for this host's browser: ``HOST_CALLS`` bound to one challenge book."""
    ctx = calls.HostCallContext(
        trust=TrustContext.for_gate(gate),
        browser_label=browser_label,
        config_dir=gate.config,
        challenge_ttl=challenge_ttl(os.environ),
    )
    session = _Session(ctx)

    async def call(action: str, args: dict[str, Any]) -> dict[str, Any]:
        entry = HOST_CALLS.get(action)
        if entry is None:
            raise calls.UnknownHostAction(f"unknown host action {action!r}")
        now = int(time.time())
        if entry.tap:
            async with session.taps:
                return await entry.handler(session, args, now)
        return await entry.handler(session, args, now)

    return call
