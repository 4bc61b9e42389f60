"""Hop 2, host side: accept bridge connections, guard them, and relay requests to the extension.

Connection order (``tabwarden.bridge.admission``; each step can only refuse): kernel peer UID ==
ours, checked right after ``accept`` and before reading a byte, and the connection pinned to that
process → executable attestation (``attest``) → mutual HMAC handshake keyed by the run secret →
admission. From accept to close, every chunk must come from the pinned process
(``FrameStream``: ``SO_PASSCRED``); a handed-off socket is refused (``SpeakerChanged``). A
connection that fails any step gets one opaque refusal where possible and is closed; the precise
reason goes to the host's log. One bad connection never blocks or crashes the others.

Every request is then checked against the trust record, re-read (stat-cached) each time: kill
latch engaged or record unreadable → refused; clients paired and this connection's client not
among them → refused and the connection closed. ``watch_trust`` cuts a revoked client's live
connection as soon as the record's epoch moves, without waiting for its next request.

Sessions (``host.sessions``): an MCP connection speaks for the session the host names from the
pinned peer process, never from anything it sends; the session ends (``session_end``) when that
process exits — watched through a pidfd once its last connection closes — not when a socket does.
A terminal (role ``cli``) may send only the terminal requests (``host.sessions.TERMINAL_ACTIONS``:
the agent tabs, closing orphans, and the tap a terminal widening asks for), relayed under the
reserved terminal session; no MCP server may send them.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import re
import secrets
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tabwarden import osapi
from tabwarden.bridge.admission import check_peer, handshake, measure_client
from tabwarden.bridge.framestream import ConnectionClosed, FrameStream, SpeakerChanged
from tabwarden.bridge.peer import PeerAttestor, PeerRefused, Speaker
from tabwarden.bridge.spawner import SpawnerUnmeasurable
from tabwarden.errors import TabwardenError
from tabwarden.host.host_calls import HOST_CALLS, HostCalls
from tabwarden.host.sessions import (
    TERMINAL_ACTIONS,
    TERMINAL_SESSION,
    UNGATED_TERMINAL_ACTIONS,
    SessionUnmeasurable,
    closes_tabs,
    measure_session,
    parse_session,
    session_alive,
)
from tabwarden.protocol.chunking import ChunkError, Reassembler
from tabwarden.protocol.codes import (
    BAD_REQUEST,
    BUSY,
    CLIENT_NOT_PAIRED,
    CLIENT_REVOKED,
    EXTENSION_NOT_CONNECTED,
    INTERNAL_ERROR,
    MESSAGE_TOO_LARGE,
    NOT_PAIRED,
    UNKNOWN_ACTION,
)
from tabwarden.protocol.framing import FrameTooLarge, FramingError, dumps_object
from tabwarden.protocol.handshake import (
    NONCE_SIZE,
    PROTOCOL_VERSION,
    REFUSED,
    Admitted,
    HandshakeFailed,
    HostHandshake,
)
from tabwarden.trust.presence import PresenceRefused
from tabwarden.trust.refusal import MeasuredClient, refusal
from tabwarden.trust.verify import Effective

log = logging.getLogger("tabwarden.host")

HANDSHAKE_TIMEOUT = 5.0
ACTION_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
#: A command id as the MCP server mints it (``bridge_client.new_command_id``); the extension's
#: journal (extension/worker/journal.js ``COMMAND_ID_RE``) checks the same shape.
COMMAND_ID_RE = re.compile(r"^[A-Za-z0-9_-]{8,64}$")


def _command(raw: Any) -> dict[str, Any] | None:
    """The request's ``command`` (id, retry, readOnly) as relayed, or None when malformed."""
    if not isinstance(raw, dict) or set(raw) != {"id", "retry", "readOnly"}:
        return None
    if not isinstance(raw["id"], str) or not COMMAND_ID_RE.fullmatch(raw["id"]):
        return None
    if type(raw["retry"]) is not bool or type(raw["readOnly"]) is not bool:
        return None
    return {"id": raw["id"], "retry": raw["retry"], "readOnly": raw["readOnly"]}


def error_reply(request_id: Any, code: str, message: str) -> dict[str, Any]:
    return {
        "type": "reply",
        "id": request_id,
        "ok": False,
        "error": {"code": code, "message": message},
    }


TRUST_WATCH_INTERVAL = 0.5
#: At most this many browser calls in flight across every session; the rest queue...
MAX_IN_FLIGHT = 8
#: ...and fail with ``busy`` (safe to retry) when no slot frees up within this many seconds.
QUEUE_DEADLINE = 30.0


@dataclass(eq=False)
class _Client:
    number: int
    role: str
    stream: FrameStream
    #: The client as the host measured it (``admission.measure_client``); an empty hash: not
    #: measurable, or not an MCP server's connection — never served as an MCP client.
    measured: MeasuredClient | None = None
    #: Its admission frame claimed a client the host's own measurement disagrees with: every
    #: request is refused (``client_not_paired``) and the connection closed.
    impostor: bool = False
    pending: set[str] = field(default_factory=set)
    #: Names this connection's MCP server to the extension; the tabs it opens belong to it. Set
    #: by the host from its own measurement of the peer (``host.sessions``), never from a claim;
    #: a random name (not surviving a restart) only when the peer could not be measured.
    session: str = field(default_factory=lambda: f"s-{secrets.token_hex(8)}")


#: Records a person's origin approval (made in the extension's confirm window) as a signed grant;
#: raises ``TabwardenError`` when it cannot.
OriginGranter = Callable[[str], Awaitable[None]]


class GrantUnavailable(TabwardenError):
    """The host cannot record that grant (nothing is paired, so there is no key to sign it)."""

    code = NOT_PAIRED


async def _no_granter(origin: str) -> None:
    raise GrantUnavailable()


_HOST_CALL_ID_MAX = 128


async def _no_host_calls(action: str, args: dict[str, Any]) -> dict[str, Any]:
    raise GrantUnavailable("this host cannot answer host calls")


#: Refusals that close the connection: the client itself is refused, not this one request.
CUT_OFF = frozenset({CLIENT_NOT_PAIRED, CLIENT_REVOKED})


def trust_refusal(eff: Effective, client: _Client) -> tuple[str, str] | None:
    """(code, message) if the record refuses this connection's requests, else None. Pure: the
    one rule (``tabwarden.trust.refusal``), after hop 2's own rule that only an MCP server may
    drive the browser."""
    if client.impostor:
        return CLIENT_NOT_PAIRED, "the client it claims to be is not the program that spawned it"
    found = refusal(eff, client.measured)
    if found is None and client.role != "mcp":
        return "client_not_paired", "only an MCP server may drive the browser"
    return None if found is None else (found.code, found.message)


def terminal_refusal(eff: Effective) -> tuple[str, str] | None:
    """(code, message) if the record refuses the terminal's own requests (``TERMINAL_ACTIONS``):
    the one rule's first two steps — a refused record, the kill switch. Its client pin does not
    apply: the connection was attested as our own ``tabwarden tabs``, which no pairing names."""
    found = refusal(eff, None)
    if found is None or found.code == CLIENT_NOT_PAIRED:
        return None
    return found.code, found.message


class Relay:
    """Routes admitted clients' requests to the extension and replies back, by rewritten id."""

    def __init__(
        self,
        send_native: Any,
        trust: Callable[[], Effective],
        grant_origin: OriginGranter = _no_granter,
        *,
        host_calls: HostCalls = _no_host_calls,
        max_in_flight: int = MAX_IN_FLIGHT,
        queue_deadline: float = QUEUE_DEADLINE,
        witness_epoch: Callable[[int], Awaitable[None]] | None = None,
        stated_epoch: Callable[[], int] | None = None,
        welcome_extra: Callable[[], dict[str, object]] | None = None,
    ) -> None:
        self._send_native = send_native
        #: More welcome fields (``host.main._LastSeenWriter.last_disconnect``: the disconnect
        #: before this host, which a stopped worker never saw).
        self._welcome_extra = welcome_extra
        self._trust = trust
        #: The epoch the welcome states (``host.main._stated_epoch``): the served record's, or a
        #: rolled-back record's own while it is refused, so the extension can say so.
        self._stated_epoch = stated_epoch
        #: The extension's ``hello`` says the highest record epoch it has seen
        #: (``trust.operations.witness_epoch``: later than the record on disk = rolled back).
        self._witness_epoch = witness_epoch
        self._grant_origin = grant_origin
        self._host_calls = host_calls
        self._chunks = Reassembler()
        self._slot_freed = asyncio.Event()
        self.max_in_flight = max_in_flight
        self.queue_deadline = queue_deadline
        self._pending: dict[str, tuple[_Client, Any]] = {}
        self._clients: set[_Client] = set()
        self._ids = itertools.count(1)
        #: Sessions whose last connection closed while their process still ran: name → pidfd.
        self._exit_watches: dict[str, int] = {}
        self._background: set[asyncio.Task[None]] = set()
        self.extension_connected = False
        self.extension_version = ""

    def _take(self, native_id: str) -> tuple[_Client, Any] | None:
        """Forget one in-flight request (answered, failed or abandoned) and free its slot."""
        entry = self._pending.pop(native_id, None)
        if entry is not None:
            self._slot_freed.set()
        return entry

    async def _wait_for_slot(self) -> bool:
        """Queue until fewer than ``max_in_flight`` browser calls are pending, or the deadline."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.queue_deadline
        while len(self._pending) >= self.max_in_flight:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            self._slot_freed.clear()
            try:
                await asyncio.wait_for(self._slot_freed.wait(), remaining)
            except asyncio.TimeoutError:
                return False
        return True

    # -- browser side -------------------------------------------------------------------------

    async def on_native_message(self, message: dict[str, Any], *, browser: str) -> None:
        kind = message.get("type")
        if kind == "hello":
            protocol = message.get("protocol")
            if self._witness_epoch is not None and type(message.get("epochSeen")) is int:
                await self._witness_epoch(message["epochSeen"])
            extra = self._welcome_extra() if self._welcome_extra is not None else {}
            await self._send_native(
                {
                    **extra,
                    "type": "welcome",
                    "protocol": PROTOCOL_VERSION,
                    "browser": browser,
                    "hostVersion": _version(),
                    # The record this host serves; the extension's epoch ratchet compares it.
                    "epoch": (self._stated_epoch() if self._stated_epoch else self._trust().epoch),
                }
            )
            if type(protocol) is not int or protocol != PROTOCOL_VERSION:
                log.error(
                    "extension speaks protocol %r; this host speaks %d", protocol, PROTOCOL_VERSION
                )
                return
            version = message.get("extensionVersion")
            self.extension_version = version if isinstance(version, str) else ""
            await self._set_connected(True)
        elif kind == "chunk":
            try:
                whole = self._chunks.add_passing(message)
            except ChunkError as exc:
                log.warning("extension sent a malformed chunked reply: %s", exc)
                await self._fail_pending(
                    exc.reply_id, "the extension sent a malformed chunked reply"
                )
                return
            if whole is None:
                return
            if whole.result_json is not None and whole.reply.get("type") == "reply":
                await self._pass_result(str(whole.reply["id"]), whole.result_json)
            else:
                await self.on_native_message(whole.reply, browser=browser)
        elif kind == "grant":
            await self._on_grant(message)
        elif kind == "host_call":
            await self._on_host_call(message)
        elif kind == "reply":
            entry = self._take(str(message.get("id")))
            if entry is None:
                log.warning("extension replied to an unknown request id; dropped")
                return
            client, client_id = entry
            client.pending.discard(str(message.get("id")))
            reply = _sanitise_reply(message, client_id)
            try:
                await client.stream.send(reply)
            except FrameTooLarge:
                await client.stream.send(
                    error_reply(client_id, MESSAGE_TOO_LARGE, "reply exceeds the bridge limit")
                )
            except ConnectionClosed:
                pass
        else:
            log.warning("extension sent an unknown message type %r; dropped", kind)

    async def _pass_result(self, native_id: str, result_json: bytes) -> None:
        """Relay a reassembled successful reply with its result's JSON as the extension wrote it
        (checked whole by the reassembler): the same reply frame ``_sanitise_reply`` gives, with
        no second encode of a result that may be tens of megabytes."""
        entry = self._take(native_id)
        if entry is None:
            log.warning("extension replied to an unknown request id; dropped")
            return
        client, client_id = entry
        client.pending.discard(native_id)
        head = dumps_object({"type": "reply", "id": client_id, "ok": True})[:-1]
        try:
            await client.stream.send_body(head + b',"result":' + result_json + b"}")
        except FrameTooLarge:
            await client.stream.send(
                error_reply(client_id, MESSAGE_TOO_LARGE, "reply exceeds the bridge limit")
            )
        except ConnectionClosed:
            pass

    async def _fail_pending(self, native_id: str, text: str) -> None:
        entry = self._take(native_id)
        if entry is None:
            return
        client, client_id = entry
        client.pending.discard(native_id)
        try:
            await client.stream.send(error_reply(client_id, INTERNAL_ERROR, text))
        except ConnectionClosed:
            pass

    async def _on_grant(self, message: dict[str, Any]) -> None:
        grant_id, origin = message.get("id"), message.get("origin")
        if (
            not isinstance(grant_id, str)
            or message.get("kind") != "origin"
            or not isinstance(origin, str)
        ):
            log.warning("extension sent a malformed grant; dropped")
            return
        result: dict[str, Any] = {"type": "grant_result", "id": grant_id, "ok": True}
        try:
            await self._grant_origin(origin)
        except TabwardenError as exc:
            log.warning("origin grant for %r not recorded: %s", origin, exc)
            result = {
                "type": "grant_result",
                "id": grant_id,
                "ok": False,
                "error": {"code": exc.code, "message": str(exc)[:500]},
            }
        await self._send_native(result)

    async def _on_host_call(self, message: dict[str, Any]) -> None:
        call_id, action, args = message.get("id"), message.get("action"), message.get("args", {})
        if (
            not isinstance(call_id, str)
            or not call_id
            or len(call_id) > _HOST_CALL_ID_MAX
            or not isinstance(action, str)
            or not ACTION_RE.match(action)
            or not isinstance(args, dict)
        ):
            log.warning("extension sent a malformed host_call; dropped")
            return

        def refused(code: str, text: str) -> dict[str, Any]:
            return {
                "type": "host_reply",
                "id": call_id,
                "ok": False,
                "error": {"code": code, "message": text[:500]},
            }

        if action not in HOST_CALLS:
            log.warning("extension asked for unknown host action %r", action)
            await self._send_native(refused(UNKNOWN_ACTION, f"unknown host action {action!r}"))
            return
        try:
            result = await self._host_calls(action, args)
        except TabwardenError as exc:
            log.warning("host_call %s refused (%s)", action, exc.code)
            reply = refused(exc.code, str(exc))
            if isinstance(exc, PresenceRefused):  # its coarse kind, for the person's own page
                reply["error"]["reason"] = exc.reason_code
        except Exception as exc:  # never let one call kill the host; never echo internals
            log.error("host_call %s failed: %s", action, type(exc).__name__)
            reply = refused(INTERNAL_ERROR, "the host could not answer that call")
        else:
            if not isinstance(result, dict):
                log.error("host_call %s produced a non-object result", action)
                reply = refused(INTERNAL_ERROR, "the host could not answer that call")
            else:
                reply = {"type": "host_reply", "id": call_id, "ok": True, "result": result}
        await self._send_native(reply)
        if action == "sessions_alive" and reply["ok"]:
            # The extension holds tabs of these live sessions, whose servers may never connect
            # to this host: watch their processes too, so their end is not missed.
            gone = set(reply["result"].get("gone", ()))
            for name in args.get("sessions", ()):
                if name not in gone and parse_session(name) is not None:
                    await self._watch_session(name)

    async def browser_gone(self) -> None:
        await self._set_connected(False)
        for native_id, (client, client_id) in list(self._pending.items()):
            self._take(native_id)
            # ``relayed``: the request reached the browser, which may have acted on it; the
            # server retries it as such (the extension's journal decides).
            gone = error_reply(client_id, EXTENSION_NOT_CONNECTED, "the browser disconnected")
            try:
                await client.stream.send(gone | {"relayed": True})
            except ConnectionClosed:
                pass

    async def _set_connected(self, connected: bool) -> None:
        if self.extension_connected == connected:
            return
        self.extension_connected = connected
        event = self.extension_event()
        for client in list(self._clients):
            try:
                await client.stream.send(event)
            except ConnectionClosed:
                pass

    def extension_event(self) -> dict[str, Any]:
        """The extension's state as clients are told it: connected, and its manifest version
        (what its hello said; "" while none is connected)."""
        version = self.extension_version if self.extension_connected else ""
        return {"type": "event", "event": "extension", "connected": self.extension_connected,
                "version": version}  # fmt: skip

    # -- client side --------------------------------------------------------------------------

    def add(self, client: _Client) -> None:
        self._clients.add(client)

    async def watch_trust(self, interval: float = TRUST_WATCH_INTERVAL) -> None:
        """Cut MCP connections the record no longer pairs as soon as its epoch moves."""
        last_epoch: int | None = None
        while True:
            eff = self._trust()
            if eff.epoch != last_epoch:
                last_epoch = eff.epoch
                for client in list(self._clients):
                    if client.role != "mcp":
                        # A terminal is held by no pairing (attested as our own CLI): the
                        # record moving says nothing of it, and its requests answer to
                        # ``terminal_refusal``, which cuts nothing.
                        continue
                    refusal = trust_refusal(eff, client)
                    if refusal is not None and refusal[0] in CUT_OFF:
                        log.warning("connection #%d cut: %s", client.number, refusal[1])
                        client.stream.close()
            await asyncio.sleep(interval)

    async def remove(self, client: _Client) -> None:
        self._clients.discard(client)
        for native_id in client.pending:
            self._take(native_id)
        client.pending.clear()
        await self._session_left(client)

    # -- sessions (host.sessions) --------------------------------------------------------------

    def _holds(self, session: str) -> bool:
        return any(c.session == session for c in self._clients)

    async def _session_left(self, client: _Client) -> None:
        """The last connection of an MCP session closed. The session ends when its process does
        (it may reconnect until then: a dropped socket, a restarted host)."""
        if client.role == "mcp":
            await self._watch_session(client.session)

    async def _watch_session(self, name: str) -> None:
        """Unless a connection holds it: watch the session's process (its pidfd) and announce
        ``session_end`` once it exits; at once when it is gone already, or its name carries no
        PID (the peer was unmeasurable)."""
        if self._holds(name) or name in self._exit_watches:
            return
        pid = parse_session(name)
        fd = -1
        if pid is not None:
            try:
                fd = osapi.pin_process(pid)
            except OSError:
                fd = -1
        if fd >= 0 and session_alive(name):  # the pidfd names the very process (not recycled)
            loop = asyncio.get_running_loop()
            loop.add_reader(fd, self._process_exited, name, fd)
            self._exit_watches[name] = fd
            return
        if fd >= 0:
            os.close(fd)
        await self.end_session(name)

    def _process_exited(self, name: str, fd: int) -> None:
        asyncio.get_running_loop().remove_reader(fd)
        os.close(fd)
        self._exit_watches.pop(name, None)
        if self._holds(name):
            return
        task = asyncio.create_task(self.end_session(name))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def end_session(self, name: str) -> None:
        """Tell the extension the session ended: its tabs become orphans (or close, by policy).
        Undelivered (no extension): the extension's next ``sessions_alive`` sweep finds it."""
        if not self.extension_connected:
            log.info("session %s ended while the extension is away; it will sweep it", name)
            return
        message = {
            "type": "session_end",
            "session": name,
            "closeTabs": closes_tabs(self._trust()),
        }
        try:
            await self._send_native(message)
        except Exception as exc:  # the browser may be gone already
            log.info("session_end not delivered: %s", exc)

    def stop_watching(self) -> None:
        loop = asyncio.get_running_loop()
        for fd in self._exit_watches.values():
            loop.remove_reader(fd)
            os.close(fd)
        self._exit_watches.clear()

    async def on_client_request(self, client: _Client, message: dict[str, Any]) -> bool:
        """Handle one frame from an admitted client; False means: close this connection."""
        request_id = message.get("id")
        if message.get("type") != "request" or type(request_id) is not int:
            log.warning("client #%d sent a malformed frame; closing", client.number)
            return False
        action = message.get("action")
        args = message.get("args", {})
        command = _command(message["command"]) if "command" in message else None
        if (
            not isinstance(action, str)
            or not ACTION_RE.match(action)
            or not isinstance(args, dict)
            or ("command" in message and command is None)
        ):
            await client.stream.send(error_reply(request_id, BAD_REQUEST, "malformed request"))
            return True
        eff = self._trust()
        terminal = action in TERMINAL_ACTIONS
        if terminal and client.role != "cli":
            # Another session's tabs are not an MCP server's business: as if no such action.
            await client.stream.send(
                error_reply(request_id, UNKNOWN_ACTION, f"unknown action {action!r}")
            )
            return True
        # A terminal asks only for the agent tabs, for closing orphans and for a tap the terminal
        # verifies itself (none of them grants anything). The tabs obey the kill switch and a
        # refused record like every other request (no client pin: the host attested our own
        # `tabwarden tabs`); the tap is served whatever the record says, so `unkill` can ask for
        # it while killed and a person can recover from a rolled-back record.
        if not terminal:
            refusal = trust_refusal(eff, client)
        elif action in UNGATED_TERMINAL_ACTIONS:
            refusal = None
        else:
            refusal = terminal_refusal(eff)
        if refusal is not None:
            code, text = refusal
            log.warning(
                "request from connection #%d refused: %s%s",
                client.number,
                text,
                f" ({eff.refused})" if eff.refused else "",
            )
            await client.stream.send(error_reply(request_id, code, text))
            return code not in CUT_OFF  # an unpaired or revoked client is cut off
        if not self.extension_connected:
            await client.stream.send(
                error_reply(request_id, EXTENSION_NOT_CONNECTED, "the extension has not connected")
            )
            return True
        if not await self._wait_for_slot():
            await client.stream.send(
                error_reply(request_id, BUSY, f"{self.max_in_flight} browser calls are in flight")
            )
            return True
        native_id = f"r{next(self._ids)}"
        self._pending[native_id] = (client, request_id)
        client.pending.add(native_id)
        request = {
            "type": "request",
            "id": native_id,
            "action": action,
            "args": args,
            "session": client.session,
            "policy": eff.policy.to_json(),
            "epoch": eff.epoch,
        }
        if command is not None:
            request["command"] = command  # journaled under this session (docs/protocol.md)
        label = _client_label(eff, client)
        if label is not None:
            request["client"] = label  # shown to the person (confirm window, popup), never a grant
        try:
            await self._send_native(request)
        except FrameTooLarge:
            self._take(native_id)
            client.pending.discard(native_id)
            await client.stream.send(
                error_reply(request_id, MESSAGE_TOO_LARGE, "request exceeds 1 MiB")
            )
        return True


def _client_label(eff: Effective, client: _Client) -> str | None:
    """The label the person paired this connection's client under, from the host's own
    measurement (None while nothing is paired or it matches no grant)."""
    if client.measured is None or not client.measured.sha256:
        return None
    grant = eff.client_matching(client.measured.sha256)
    return None if grant is None else grant.label


def _sanitise_reply(message: dict[str, Any], client_id: Any) -> dict[str, Any]:
    if message.get("ok") is True and isinstance(message.get("result"), dict):
        return {"type": "reply", "id": client_id, "ok": True, "result": message["result"]}
    error = message.get("error")
    if isinstance(error, dict) and isinstance(error.get("code"), str):
        return error_reply(client_id, error["code"], str(error.get("message", ""))[:2000])
    return error_reply(client_id, INTERNAL_ERROR, "the extension sent a malformed reply")


def _version() -> str:
    from tabwarden import __version__

    return __version__


class BridgeServer:
    def __init__(
        self,
        listener: socket.socket,
        secret: bytes,
        relay: Relay,
        *,
        browser: str,
        attest: PeerAttestor | None = None,
    ) -> None:
        self._listener = listener
        self._secret = secret
        self._relay = relay
        self._browser = browser
        self._attest = attest
        self._numbers = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        # Accepted sockets inherit it: every chunk a client writes carries its real PID.
        osapi.pass_credentials(self._listener)
        while True:
            conn, _ = await loop.sock_accept(self._listener)
            task = asyncio.create_task(self._handle(conn, next(self._numbers)))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        self._relay.stop_watching()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _handle(self, conn: socket.socket, number: int) -> None:
        try:
            speaker = check_peer(conn, self._attest)  # before reading a single byte
        except PeerRefused as exc:
            log.warning("bridge connection #%d refused: %s", number, exc)
            conn.close()
            return
        stream = FrameStream(conn, speaker)
        try:
            admitted = await asyncio.wait_for(self._handshake(stream, number), HANDSHAKE_TIMEOUT)
        except SpeakerChanged as exc:
            log.warning("bridge connection #%d refused: %s", number, exc.reason)
            stream.close()
            return
        except (HandshakeFailed, FramingError, asyncio.TimeoutError, ConnectionClosed) as exc:
            reason = exc.reason if isinstance(exc, HandshakeFailed) else type(exc).__name__
            log.warning("bridge connection #%d failed the handshake: %s", number, reason)
            if not isinstance(exc, ConnectionClosed):
                try:
                    await asyncio.wait_for(stream.send(REFUSED), 1.0)
                except (ConnectionClosed, asyncio.TimeoutError):
                    pass
            stream.close()
            return
        identity = await self._measured_client(number, admitted, speaker.pid)
        client = _Client(
            number=number,
            role=admitted.role,
            stream=stream,
            measured=identity,
            impostor=identity is None,
        )
        session = self._session_of(number, admitted.role, speaker)
        if session is not None:
            client.session = session
        self._relay.add(client)
        log.info("bridge connection #%d admitted (role %s)", number, admitted.role)
        if self._relay.extension_connected or admitted.extension_connected:
            # The extension's state and version now: it may have changed while this client was
            # mid-handshake (not yet on the list that state events go to), and the admission
            # frame carries no version.
            try:
                await stream.send(self._relay.extension_event())
            except ConnectionClosed:
                pass
        try:
            while True:
                message = await stream.receive()
                if not await self._relay.on_client_request(client, message):
                    break
        except SpeakerChanged as exc:
            log.warning("bridge connection #%d refused: %s", number, exc.reason)
        except (ConnectionClosed, FramingError) as exc:
            if isinstance(exc, FramingError):
                log.warning("bridge connection #%d sent a bad frame: %s", number, exc)
        finally:
            await self._relay.remove(client)
            stream.close()

    def _session_of(self, number: int, role: str, speaker: Speaker) -> str | None:
        """The session this connection speaks for, measured (``host.sessions``); None keeps the
        random one (the peer could not be measured: its tabs will not survive a restart, and its
        commands' journal not a reconnect)."""
        if role != "mcp":
            return TERMINAL_SESSION
        if speaker.pid is None:
            return None
        try:
            name = measure_session(speaker.pid)
        except SessionUnmeasurable as exc:
            log.warning("bridge connection #%d: session not measurable (%s)", number, exc)
            return None
        if speaker.changed() is not None:  # the PID was recycled while we read it
            log.warning("bridge connection #%d: its process changed while being named", number)
            return None
        log.info("bridge connection #%d: session %s", number, name)
        return name

    async def _measured_client(
        self, number: int, admitted: Admitted, pid: int | None
    ) -> MeasuredClient | None:
        """The client to serve this connection as: measured by us from the process that spawned
        the peer (through wrappers; an interpreter with what it runs), never the admission
        frame's claim. An unmeasurable client has an empty hash (never served: no pairing names
        it); ``None`` (refuse) when the claim disagrees with the measurement."""
        if admitted.role != "mcp":
            return MeasuredClient(sha256="", description="this connection")
        try:
            if pid is None:
                raise SpawnerUnmeasurable("the kernel gave no peer process id")
            identity = await asyncio.to_thread(measure_client, pid)
        except SpawnerUnmeasurable as exc:
            log.warning("bridge connection #%d: its client cannot be measured (%s)", number, exc)
            measured = MeasuredClient(
                sha256="",
                description=f"the program that started MCP server pid {pid} (not measurable)",
            )
        else:
            measured = identity.measured()
            log.info(
                "bridge connection #%d: client %s (sha256 %s…)%s",
                number,
                measured.description,
                measured.sha256[:16],
                f", through {', '.join(identity.wrappers)}" if identity.wrappers else "",
            )
        claimed = admitted.client_sha256
        if claimed and claimed != measured.sha256:
            log.warning(
                "bridge connection #%d refused: it claims client %s… but the process that "
                "spawned it measures %s",
                number,
                claimed[:16],
                f"{measured.sha256[:16]}…" if measured.sha256 else "as unmeasurable",
            )
            return None
        return measured

    async def _handshake(self, stream: FrameStream, number: int) -> Admitted:
        machine = HostHandshake(
            self._secret,
            secrets.token_bytes(NONCE_SIZE),
            browser=self._browser,
            extension_connected=self._relay.extension_connected,
        )
        return await handshake(stream, machine, machine.start())
