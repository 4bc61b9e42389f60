"""``tabwarden host`` — the native-messaging host Chrome launches through the pinned manifest.

Order at start: refuse a wrong caller origin (before touching anything) → harden the process →
verify the private runtime directory → take this label's lock, create the run secret and the
socket → serve the bridge until Chrome closes stdin. At EOF (the port disconnected or the browser
exited) the host shuts down cleanly and removes its socket and run secret.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import logging
import os
import signal
import sys
import time
from collections.abc import Mapping

from tabwarden.paths import endpoint, ensure_runtime_dir

log = logging.getLogger("tabwarden.host")


def build_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "--browser",
        default="chromium",
        metavar="LABEL",
        help="browser label: names this host's socket so several browsers can coexist",
    )
    parser.add_argument(
        "origin",
        nargs="*",
        help="the caller origin Chrome passes (chrome-extension://<id>/); must be the pinned one",
    )
    return parser


_REAL_ATTESTOR: object = object()


def run(args: argparse.Namespace, *, attest: object = _REAL_ATTESTOR) -> int:
    """Run the host. ``attest`` is for in-repo test harnesses only (an object, not a flag or an
    environment variable: nothing outside this process can turn attestation off)."""
    from tabwarden.host.hardening import harden_process
    from tabwarden.host.native import check_origin

    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="tabwarden-host[%(process)d] %(levelname)s: %(message)s",
    )
    check_origin(list(args.origin))  # raises OriginRefused: the CLI prints it and exits 4
    applied = harden_process()
    log.info("hardening: %s", ", ".join(k for k, v in applied.items() if v) or "none available")
    ep = endpoint(args.browser, ensure_runtime_dir())
    attestor = _attestor() if attest is _REAL_ATTESTOR else attest
    return asyncio.run(_serve(ep, attestor))


def _origin_granter(gate: object, browser_label: str) -> object:
    """Record an origin the person approved in the extension's confirm window: a new signed
    baseline with that origin (authorising path ``window``), audited. Needs the host key.
    Refused (``presence_refused``) when this host's browser is enrolled with a credential: an
    enrolled browser approves new origins with a tap (``policy.widen``), never a click."""
    from tabwarden.host.bridge import GrantUnavailable
    from tabwarden.host.pairing import TapRequired, enrolled
    from tabwarden.trust import store
    from tabwarden.trust.audit import AuditLog
    from tabwarden.trust.gate import TrustGate, host_key_store
    from tabwarden.trust.policy import apply_set, normalise_origin

    assert isinstance(gate, TrustGate)

    def record(origin: str) -> None:
        exact = normalise_origin(origin)  # PolicyError for anything but an exact origin
        if not gate.path.exists():
            raise GrantUnavailable("nothing is paired, so an approval cannot be recorded")
        key = host_key_store(gate.config).load()
        if key is None:
            raise GrantUnavailable("nothing is paired, so an approval cannot be recorded")
        eff = gate.current()
        if eff.refused or eff.killed:
            raise GrantUnavailable(
                "the trust record refuses grants right now (killed or unreadable)"
            )
        if enrolled(eff, browser_label):
            log.warning("window grant refused: browser %r is enrolled", browser_label)
            raise TapRequired("this browser is enrolled: approve with a tap")
        if exact not in eff.policy.origins:
            widened = apply_set(eff.policy, {"origins": [*eff.policy.origins, exact]})
            store.set_baseline(
                gate.path, key, widened.to_json(), int(time.time()), set_keys=("origins",)
            )
        AuditLog.default().append("origin_grant", decision="granted", path="window", origin=exact)

    async def grant(origin: str) -> None:
        await asyncio.to_thread(record, origin)

    return grant


def challenge_ttl(env: Mapping[str, str]) -> int:
    """Seconds a WebAuthn ceremony stays answerable: ``TABWARDEN_CHALLENGE_TTL`` may shorten the
    default (``trust.presence.CHALLENGE_TTL``), never lengthen it; anything else is ignored."""
    from tabwarden.trust.presence import CHALLENGE_TTL

    raw = env.get("TABWARDEN_CHALLENGE_TTL")
    if raw is None:
        return CHALLENGE_TTL
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 0 < value <= CHALLENGE_TTL:
        log.warning(
            "TABWARDEN_CHALLENGE_TTL must be 1..%d seconds; using %d", CHALLENGE_TTL, CHALLENGE_TTL
        )
        return CHALLENGE_TTL
    return value


def _host_calls(gate: object, browser_label: str) -> object:
    """Answer the extension's ``host_call`` actions (browser pairing, host-key proof, and what a
    tap authorises; see ``tabwarden.host.pairing``). Registration and assertion challenges live
    in memory for the host's life and are taken once; blocking I/O (key store, trust record,
    audit) runs in a worker thread."""
    from tabwarden.host import pairing
    from tabwarden.trust.audit import AuditLog
    from tabwarden.trust.gate import TrustGate, host_key_store
    from tabwarden.trust.presence import Challenge, ChallengeBook

    assert isinstance(gate, TrustGate)
    ttl = challenge_ttl(os.environ)
    ctx = pairing.PairingContext(
        trust_path=gate.path,
        browser_label=browser_label,
        load_key=lambda: host_key_store(gate.config).load(),
        effective=gate.current,
        audit=AuditLog.default,
        kill_latch=gate.kill_latch,
        config_dir=gate.config,
        challenge_ttl=ttl,
    )
    book = ChallengeBook()
    # One tap at a time: the sign counter is checked and stored without interleaving.
    taps = asyncio.Lock()

    def challenge_from(args: dict[str, object], now: int) -> Challenge | None:
        challenge_id = args.get("challengeId")
        if not isinstance(challenge_id, str) or len(challenge_id) > pairing.MAX_ID_CHARS:
            raise pairing.BadHostCall("challengeId must be a string")
        return book.take(challenge_id, now)  # single use, whatever happens next

    async def call(action: str, args: dict[str, object]) -> dict[str, object]:
        now = int(time.time())
        if action == "pair_begin":
            result, challenges = await asyncio.to_thread(pairing.pair_begin, ctx, args, now)
            for challenge in challenges:
                book.add(challenge, now)
            return result
        if action == "pair_complete":
            challenge = challenge_from(args, now)
            window_only = args.get("windowOnly", False)
            if not isinstance(window_only, bool):
                raise pairing.BadHostCall("windowOnly must be true or false")
            approval = args.get("approval")
            approval_challenge = approval_response = None
            if approval is not None:
                if not isinstance(approval, dict):
                    raise pairing.BadHostCall("approval must be an object")
                approval_challenge = challenge_from(approval, now)
                approval_response = approval.get("response")
            async with taps:  # the approving credential's counter, like any tap
                return await asyncio.to_thread(
                    functools.partial(
                        pairing.pair_complete,
                        ctx,
                        challenge,
                        args.get("response"),
                        now,
                        window_only=window_only,
                        approval=approval_challenge,
                        approval_response=approval_response,
                    )
                )
        if action == "host_proof":
            return await asyncio.to_thread(pairing.host_proof, ctx, args)
        if action == "policy_get":
            return await asyncio.to_thread(pairing.policy_get, ctx, args)
        if action == "presence_begin":
            result, challenge = await asyncio.to_thread(pairing.presence_begin, ctx, args, now)
            book.add(challenge, now)
            return result
        if action == "presence_complete":
            challenge = challenge_from(args, now)
            async with taps:
                return await asyncio.to_thread(pairing.presence_complete, ctx, challenge, args, now)
        if action == "policy_restrict":
            return await asyncio.to_thread(pairing.policy_restrict, ctx, args, now)
        if action == "kill":
            return await asyncio.to_thread(pairing.kill, ctx, args, now)
        if action == "clients_recent":
            return await asyncio.to_thread(pairing.clients_recent, ctx, args)
        if action == "client_revoke":
            return await asyncio.to_thread(pairing.client_revoke, ctx, args, now)
        if action == "audit_tail":
            return await asyncio.to_thread(pairing.audit_tail, ctx, args)
        raise pairing.UnknownHostAction(f"unknown host action {action!r}")

    return call


def _attestor() -> object:
    """Hop 2 attestation of connecting peers: only our own MCP server or CLI."""
    from tabwarden.attest import make_attestor

    return make_attestor({"mcp", "status", "doctor"})


async def _serve(ep: object, attestor: object) -> int:
    from tabwarden.host.bridge import BridgeServer, Relay
    from tabwarden.host.native import NativePipe
    from tabwarden.host.runtime import host_files
    from tabwarden.paths import HostEndpoint

    assert isinstance(ep, HostEndpoint)
    pipe = NativePipe()
    from tabwarden.trust.gate import TrustGate

    gate = TrustGate()
    with host_files(ep) as files:
        host_calls = _host_calls(gate, ep.label)
        granter = _origin_granter(gate, ep.label)
        relay = Relay(pipe.send, gate.current, granter, host_calls=host_calls)  # type: ignore[arg-type]
        server = BridgeServer(
            files.listener, files.secret, relay, browser=ep.label, attest=attestor
        )  # type: ignore[arg-type]
        serving = asyncio.create_task(server.serve())
        watching = asyncio.create_task(relay.watch_trust())
        log.info("serving %s for browser %r", ep.socket, ep.label)

        async def on_message(message: dict[str, object]) -> None:
            await relay.on_native_message(message, browser=ep.label)

        loop = asyncio.get_running_loop()
        reading = asyncio.create_task(pipe.read_messages(on_message))
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(signum, reading.cancel)
        try:
            reason = await reading
        except asyncio.CancelledError:
            log.info("stopped by a signal")
            reason = None
        finally:
            await relay.browser_gone()
            for task in (serving, watching):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await server.close()
    if reason:
        log.error("%s; shutting down", reason)
        return 1
    log.info("shut down; socket and run secret removed")
    return 0
