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
import logging
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from tabwarden.paths import HostEndpoint, endpoint, ensure_runtime_dir

if TYPE_CHECKING:
    from tabwarden.bridge.away import State
    from tabwarden.bridge.peer import PeerAttestor
    from tabwarden.host.bridge import OriginGranter
    from tabwarden.trust.gate import TrustGate

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


class _RealAttestor:
    """The default of ``run(attest=...)``: measure peers for real."""


_REAL_ATTESTOR = _RealAttestor()


def run(
    args: argparse.Namespace, *, attest: PeerAttestor | None | _RealAttestor = _REAL_ATTESTOR
) -> int:
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
    attestor = _attestor() if isinstance(attest, _RealAttestor) else attest
    return asyncio.run(_serve(ep, attestor))


def _origin_granter(gate: TrustGate, browser_label: str) -> OriginGranter:
    """Record an origin the person approved in the extension's confirm window: the trust
    operation ``approve_origin`` with a ``WindowClick`` proof (refused for an enrolled browser,
    which approves with a tap)."""
    from tabwarden.trust import operations

    ctx = operations.TrustContext.for_gate(gate)
    click = operations.WindowClick(browser=browser_label)

    async def grant(origin: str) -> None:
        await asyncio.to_thread(operations.approve_origin, ctx, click, origin, int(time.time()))

    return grant


def _epoch_witness(gate: TrustGate, browser_label: str) -> Callable[[int], Awaitable[None]]:
    """The extension's ``epochSeen`` (over the native-messaging channel Chrome opened for our
    pinned extension ID) raises the ratchet's floor: ``operations.witness_epoch``. It can only
    narrow, so a failure is logged and never stops the host."""
    from tabwarden.trust import operations

    ctx = operations.TrustContext.for_gate(gate)
    source = f"extension ({browser_label})"

    async def witness(epoch: int) -> None:
        try:
            rolled = await asyncio.to_thread(
                operations.witness_epoch, ctx, epoch, int(time.time()), source=source
            )
        except Exception as exc:  # narrowing only; the readers still judge the record
            log.warning("could not record the extension's epoch %d (%s)", epoch, exc)
            return
        if rolled:
            log.error("the extension saw epoch %d, later than the trust record: rolled back", epoch)

    return witness


def _stated_epoch(gate: TrustGate) -> Callable[[], int]:
    """The epoch the welcome states: the record's when it is served; while a rolled-back record
    is refused, that record's own (older) epoch, so the extension's ratchet flags it and shows
    "Trust record rolled back"; otherwise -1 (refused, nothing to compare). Never an epoch the
    ratchet has not vouched for: an edited record's (possibly raised) epoch is never stated."""

    def stated() -> int:
        reading = gate.read()
        if reading.effective.refused is None:
            return reading.effective.epoch
        tamper = reading.tamper or gate.latch_note()
        if tamper is not None and tamper.kind == "rolled_back" and tamper.epoch is not None:
            return tamper.epoch
        return -1

    return stated


def _attestor() -> PeerAttestor:
    """Hop 2 attestation of connecting peers: only our own MCP server or CLI (the granting
    commands connect to ask the extension's window for the tap a widening needs:
    ``tabwarden.cli.terminal_tap``)."""
    from tabwarden.bridge.attest import make_attestor

    return make_attestor(
        {"mcp", "status", "doctor", "tabs", "unkill", "policy", "pair-client", "pair"}
    )


class _LastSeenWriter:
    """This host's ``<label>.seen`` record (tabwarden/bridge/away.py): ``connected`` at the
    extension's hello, ``away`` with the reason when the port closes or the host stops. Wording
    for the MCP server and ``tabwarden status`` while no host answers; nothing secret; never
    raises."""

    def __init__(self, ep: HostEndpoint) -> None:
        from tabwarden import osapi

        self._ep = ep
        me = os.getpid()
        self._host = (me, osapi.create_time(me))
        try:  # Chrome launches the host as its direct child (the sh wrapper execs)
            parent = osapi.parent_pid(me)
            self._browser = (parent, osapi.create_time(parent)) if parent else (1, 0.0)
        except OSError:
            self._browser = (1, 0.0)
        self._since: float | None = None
        self._back = 0
        from tabwarden.bridge.away import read_last_seen

        # The disconnect before this host: a predecessor's "away", or (its record still says
        # "connected") a predecessor that died without writing one, e.g. SIGKILL.
        previous = read_last_seen(ep.directory, ep.label)
        self._previous: tuple[float | None, str | None] = (None, None)
        if previous is not None and previous.state == "away":
            self._previous = (previous.disconnected_at, previous.reason)
        elif previous is not None:
            self._previous = (time.time(), "host_vanished")

    def _write(self, state: State, reason: str | None) -> None:
        from tabwarden.bridge.away import LastSeen, RecordInvalid, write_last_seen

        last_at, last_reason = self._previous
        if state == "away":
            last_at, last_reason = time.time(), reason
        try:
            record = LastSeen(
                label=self._ep.label,
                state=state,
                connected_since=self._since,
                disconnected_at=last_at if state == "away" else None,
                reason=reason,
                expected_back_s=self._back,
                host_pid=self._host[0],
                host_started=self._host[1],
                browser_pid=self._browser[0],
                browser_started=self._browser[1],
                last_disconnect_at=last_at,
                last_reason=last_reason,
            )
        except RecordInvalid as exc:
            log.warning("not leaving a last-seen record: %s", exc)
            return
        write_last_seen(self._ep.directory, record)

    def last_disconnect(self) -> dict[str, object]:
        """The disconnect before this host, for the welcome (the extension's popup shows it when
        its worker was stopped and so never saw the disconnect itself): times and a reason from
        the record's fixed set, nothing else."""
        at, reason = self._previous
        if at is None or reason is None:
            return {}
        return {"lastDisconnect": {"at": int(at * 1000), "reason": reason}}

    def connected(self, expected_back_ms: object) -> None:
        from tabwarden.bridge.away import clamp_expected_back

        self._since = time.time()
        self._back = clamp_expected_back(expected_back_ms)
        self._write("connected", None)

    def away(self, reason: str) -> None:
        from tabwarden.bridge.away import DEFAULT_EXPECTED_BACK_S

        self._back = self._back or DEFAULT_EXPECTED_BACK_S
        self._write("away", reason)


async def _serve(ep: HostEndpoint, attestor: PeerAttestor | None) -> int:
    from tabwarden.host.bridge import BridgeServer, Relay
    from tabwarden.host.host_calls import host_calls
    from tabwarden.host.native import NativePipe
    from tabwarden.host.notices import ChangeWatch, push_trust_changes, watched_paths
    from tabwarden.host.runtime import host_files
    from tabwarden.trust.gate import TrustGate

    pipe = NativePipe()
    gate = TrustGate()
    with host_files(ep) as files:
        calls = host_calls(gate, ep.label)
        granter = _origin_granter(gate, ep.label)
        seen = _LastSeenWriter(ep)
        relay = Relay(
            pipe.send,
            gate.current,
            granter,
            host_calls=calls,
            witness_epoch=_epoch_witness(gate, ep.label),
            stated_epoch=_stated_epoch(gate),
            welcome_extra=seen.last_disconnect,
        )
        server = BridgeServer(
            files.listener, files.secret, relay, browser=ep.label, attest=attestor
        )
        serving = asyncio.create_task(server.serve())
        watching = asyncio.create_task(relay.watch_trust())
        # Open extension pages show a change made elsewhere without a reload, and the
        # extension's rollback witness learns the epoch of a kill nobody's request followed
        # (host/notices.py).
        noticing = asyncio.create_task(
            push_trust_changes(
                ChangeWatch(watched_paths(gate)),
                pipe.send,
                lambda: relay.extension_connected,
                _stated_epoch(gate),
            )
        )
        log.info("serving %s for browser %r", ep.socket, ep.label)

        async def on_message(message: dict[str, object]) -> None:
            await relay.on_native_message(message, browser=ep.label)
            if message.get("type") == "hello" and relay.extension_connected:
                seen.connected(message.get("expectedBackMs"))

        loop = asyncio.get_running_loop()
        reading = asyncio.create_task(pipe.read_messages(on_message))
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(signum, reading.cancel)
        why = "host_error"
        try:
            reason = await reading
            why = "host_error" if reason else "port_closed"
        except asyncio.CancelledError:
            log.info("stopped by a signal")
            reason = None
            why = "host_stopped"
        finally:
            seen.away(why)
            await relay.browser_gone()
            for task in (serving, watching, noticing):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await server.close()
    if reason:
        log.error("%s; shutting down", reason)
        return 1
    log.info("shut down; socket and run secret removed")
    return 0
