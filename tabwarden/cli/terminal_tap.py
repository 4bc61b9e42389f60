"""The second factor at the terminal (a program can type the phrase but cannot touch a key): a
tap on an enrolled authenticator, asked in the
extension's own window, for exactly the grant the phrase was typed for.

Once any browser in the record holds an enrolled credential, the trust operations refuse a grant
proved by the phrase alone (``trust.operations``, the two-factor rule). After the phrase,
``grant`` here:

1. mints an assertion challenge (``trust.presence.begin_assertion``, action ``terminal``) whose
   detail is the canonical JSON of the command and its parameters, for the credentials of the
   browser whose host answers — read from the record by its signatures;
2. asks that host, over the bridge as role ``cli`` (the host attested, the mutual handshake, the
   host's own attestation of this process), to relay ``terminal_tap`` to its extension, which
   opens its confirm window, shows what this terminal asks, and asks the person to touch the key
   (``extension/handlers/terminal-tap.js``); the host relays it while killed too, as it relays
   every terminal request — it grants nothing;
3. verifies the assertion that comes back, here (origin, rpIdHash, this challenge, that browser's
   credential, presence and verification as enrolled, a rising counter), and hands the phrase and
   the verified tap together (``TerminalAndTap``) to the operation, which stores the new counter
   before it acts.

The host and the extension only carry the question and the answer: neither can turn it into a
grant. When no tap can be had (no host running, that browser holds no credential, nobody touched
the key in time, the window was closed, the tap refused), the operation is run with the phrase
alone, so the trust rule refuses it and audits the refusal, and the error says why and what to do
next. Nothing here prints or logs an assertion, a challenge or key material.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from tabwarden.errors import TabwardenError
from tabwarden.protocol.codes import (
    CONFIRM_DENIED,
    CONFIRM_TIMEOUT,
    PRESENCE_REFUSED,
    PRESENCE_REQUIRED,
)
from tabwarden.trust import operations
from tabwarden.trust.operations import (
    SecondFactorRequired,
    TerminalAndTap,
    TerminalPhrase,
    TrustContext,
    VerifiedTap,
)

if TYPE_CHECKING:
    from tabwarden.trust.keys import HostKey
    from tabwarden.trust.record import Credential

__all__ = ["TAP_WAIT_SECONDS", "TapNotGiven", "TapRequest", "grant", "tap_refusal"]

log = logging.getLogger("tabwarden.cli.entry")

#: How long the terminal waits for the tap: the window's own 90 s, and a margin for the relay.
TAP_WAIT_SECONDS = 100.0

#: The presence action every terminal tap's challenge names (``trust.presence.ACTIONS``).
TERMINAL_ACTION = "terminal"

#: The next step when the browser cannot be asked.
OPEN_BROWSER_HINT = (
    "Open the browser that holds your security key, with the tabwarden extension, then run the "
    "command again (TABWARDEN_BROWSER=LABEL picks the browser when several run)."
)

T = TypeVar("T")


class TapNotGiven(TabwardenError):
    """A tap on the security key is needed too, and none was verified; nothing was changed."""

    code = PRESENCE_REQUIRED

    def __init__(self, message: str, *, hint: str, code: str = PRESENCE_REQUIRED) -> None:
        self.code = code  # type: ignore[misc]
        super().__init__(f"{message}; nothing was changed", hint=hint)


@dataclass(frozen=True, slots=True, kw_only=True)
class TapRequest:
    """What the tap is for: ``command`` (``"unkill"``, ``"policy set"``, …) and its exact
    ``params`` (both in the challenge's detail), and ``summary``, what the window shows."""

    command: str
    params: Mapping[str, Any]
    summary: str

    def detail(self) -> str:
        from tabwarden.trust.canonical import canonical

        return canonical({"command": self.command, "params": dict(self.params)}).decode("utf-8")


def grant(
    ctx: TrustContext,
    phrase: TerminalPhrase,
    request: TapRequest,
    operation: Callable[[TerminalPhrase | TerminalAndTap], T],
) -> T:
    """Run ``operation`` with the strongest proof this terminal can give: the phrase and a
    verified tap when an authenticator is enrolled, else the phrase alone (the trust rule then
    decides; a refusal says why no tap came)."""
    proof: TerminalPhrase | TerminalAndTap = phrase
    failure: TapNotGiven | None = None
    try:
        key = operations.require_key(ctx)
        enrolled = operations.enrolled_credentials(ctx, key, int(time.time()))
    except TabwardenError:
        enrolled = {}  # the operation refuses it itself (fail closed), with the right words
    if enrolled:
        try:
            tap = asyncio.run(_ask_tap(key, enrolled, request))
        except TapNotGiven as exc:
            failure = exc
        else:
            proof = TerminalAndTap(phrase=phrase, tap=tap)
    try:
        return operation(proof)
    except SecondFactorRequired:
        if failure is None:
            raise
        raise failure from None


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def _ask_tap(
    key: HostKey, enrolled: Mapping[str, tuple[Credential, ...]], request: TapRequest
) -> VerifiedTap:
    from tabwarden.bridge.attest import make_attestor
    from tabwarden.mcp_server.bridge_client import BridgeClient, BridgeError

    client = BridgeClient(role="cli", attest=make_attestor({"host"}))
    try:
        try:
            await client.ensure_connected()
        except BridgeError as exc:
            raise TapNotGiven(
                f"a tap on the security key is needed too, and no browser can ask for it ({exc})",
                hint=OPEN_BROWSER_HINT,
            ) from None
        browser = (await client.status()).browser or ""
        credentials = enrolled.get(browser, ())
        if not credentials:
            holders = ", ".join(sorted(enrolled))
            raise TapNotGiven(
                f"a tap on the security key is needed too, and browser {browser!r} holds no "
                f"enrolled authenticator (held by: {holders})",
                hint=OPEN_BROWSER_HINT,
            )
        return await _tap(client, browser, credentials, request)
    finally:
        await client.close()


async def _tap(
    client: Any, browser: str, credentials: tuple[Credential, ...], request: TapRequest
) -> VerifiedTap:
    from tabwarden.mcp_server.bridge_client import BridgeError
    from tabwarden.trust.presence import PresenceRefused, begin_assertion, complete_assertion

    detail = request.detail()
    options, challenge = begin_assertion(
        TERMINAL_ACTION, detail, browser, credentials, now=time.time()
    )
    _say(f"touch your security key in the tabwarden window of {browser} …")
    args = {
        "challengeId": challenge.id,
        "command": request.command,
        "summary": request.summary,
        "options": options,
    }
    try:
        reply = await client.call("terminal_tap", args, timeout=TAP_WAIT_SECONDS)
    except BridgeError as exc:
        raise tap_refusal(exc.code, str(exc)) from None
    response = reply.get("response")
    try:
        if not isinstance(response, dict):
            raise PresenceRefused("response is not an object", "malformed")
        outcome = complete_assertion(
            challenge,
            response,
            action=TERMINAL_ACTION,
            detail=detail,
            browser_label=browser,
            credentials=credentials,
            now=time.time(),
        )
    except PresenceRefused as exc:
        log.warning("terminal tap refused: %s", exc.reason)
        raise TapNotGiven(
            f"the tap was refused ({exc.reason_code})",
            hint="Touch the security key enrolled for this browser when its tabwarden window "
            "asks; a refused tap changes nothing.",
            code=PRESENCE_REFUSED,
        ) from None
    [stored] = [c for c in credentials if c.credential_id == outcome.credential_id]
    return VerifiedTap(
        browser=browser,
        owner=browser,
        credential=stored,
        new_sign_count=outcome.new_sign_count,
        user_verified=outcome.user_verified,
    )


def tap_refusal(code: str, text: str) -> TapNotGiven:
    """What the window's answer (or the bridge's failure) means for the person."""
    if code == CONFIRM_TIMEOUT:
        return TapNotGiven(
            "nobody touched the security key in time",
            hint="Run the command again and touch the key while the tabwarden window asks.",
            code=CONFIRM_TIMEOUT,
        )
    if code == CONFIRM_DENIED:
        return TapNotGiven(
            "the tabwarden window was denied or closed without a tap",
            hint="Run the command again and touch the key in the window, if you meant it.",
            code=CONFIRM_DENIED,
        )
    return TapNotGiven(
        f"a tap on the security key is needed too, and the browser could not ask for it "
        f"({code}: {text[:200]})",
        hint=OPEN_BROWSER_HINT,
    )
