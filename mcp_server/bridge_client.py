"""Hop 2, client side: find the host's socket, prove ourselves, and carry requests.

Before trusting a host we check, in order: the runtime directory is private (ours, 0700, not a
symlink) → the socket's peer is our UID (kernel credentials), pinned as the connection's only
speaker → (attestation seam) → the host proves knowledge of the run secret in the mutual
handshake. Every chunk the host sends must come from the process that listened (``SO_PASSCRED``
set before ``connect``; ``FrameStream`` refuses another writer with ``SpeakerChanged``). The run
secret file must be a regular 0600 file we own. Every failure becomes a ``BridgeError`` carrying
a stable code; nothing here blocks a tool call forever: connects, handshakes and calls all have
deadlines.

Exactly once across transport failures (docs/protocol.md "The command journal"): every call
carries one command id (``new_command_id``), the same on every attempt. When the connection is
lost mid-call — the host killed (Chrome starts a new one, with a new run secret), the bridge
socket dropped, the extension gone — ``call`` reconnects from scratch (endpoint and secret read
again) and sends the command again with ``retry: true``, until the call's own deadline and never
past it; the extension's journal answers a retry from its record and never runs it twice. A
call whose request went out and whose connection never came back ends ``command_lost``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import secrets
import socket
import time
from dataclasses import dataclass
from typing import Any

from tabwarden import osapi
from tabwarden.bridge.admission import check_peer, handshake
from tabwarden.bridge.away import (
    REASONS,
    Away,
    LastSeen,
    judge,
    labels_with_records,
    process_alive,
    read_last_seen,
)
from tabwarden.bridge.framestream import ConnectionClosed, FrameStream, SpeakerChanged
from tabwarden.bridge.peer import PeerAttestor, PeerRefused
from tabwarden.errors import TabwardenError
from tabwarden.paths import (
    HostEndpoint,
    UnsafeRuntimeDir,
    endpoint,
    live_endpoints,
    private_file_problem,
    runtime_dir,
    verify_private_dir,
)
from tabwarden.protocol.codes import (
    BAD_REQUEST,
    BRIDGE_REFUSED,
    COMMAND_LOST,
    EXTENSION_AWAY,
    EXTENSION_NOT_CONNECTED,
    INTERNAL_ERROR,
    TIMEOUT,
)
from tabwarden.protocol.framing import FramingError
from tabwarden.protocol.handshake import NONCE_SIZE, SECRET_SIZE, ClientHandshake, HandshakeFailed

log = logging.getLogger("tabwarden.mcp")

CONNECT_TIMEOUT = 5.0
CALL_TIMEOUT = 30.0
#: How long ``status`` waits for the extension event (its version) after connecting.
VERSION_WAIT = 2.0
#: First and longest pause between attempts while the host or the extension comes back.
RETRY_PAUSE = 0.1
RETRY_PAUSE_MAX = 1.0


def new_command_id() -> str:
    """A fresh command id: 128 random bits, 22 characters of ``[A-Za-z0-9_-]``."""
    return secrets.token_urlsafe(16)


class BridgeError(TabwardenError):
    """The bridge could not carry the call, or the far end answered it with an error.

    ``code`` is the stable machine code from the shared table, set per instance.
    """

    def __init__(self, code: str, message: str) -> None:
        self.code = code  # type: ignore[misc]
        super().__init__(message)


class _TransportLost(Exception):
    """One attempt of a call lost its transport; ``delivered``: its request had gone out."""

    def __init__(self, error: BridgeError, *, delivered: bool) -> None:
        super().__init__(str(error))
        self.error = error
        self.delivered = delivered


@dataclass
class BridgeStatus:
    host_reachable: bool
    extension_connected: bool
    protocol_version: int | None
    browser: str | None
    socket: str | None
    last_handshake_error: str | None
    #: From the host's last-seen record (tabwarden/bridge/away.py): wording only, never the live
    #: state.
    seen: LastSeen | None = None
    away: Away | None = None
    #: The connected extension's manifest version, as the host relays its hello ("" unknown).
    extension_version: str = ""

    def as_dict(self) -> dict[str, Any]:
        seen, away = self.seen, self.away
        live = seen is not None and self.extension_connected and seen.state == "connected"
        return {
            "hostReachable": self.host_reachable,
            "extensionConnected": self.extension_connected,
            "extensionVersion": self.extension_version or None,
            "protocolVersion": self.protocol_version,
            "browser": self.browser,
            "socket": self.socket,
            "lastHandshakeError": self.last_handshake_error,
            "connectedSince": seen.connected_since if live and seen is not None else None,
            "lastDisconnectAt": seen.last_disconnect_at if seen is not None else None,
            "lastDisconnectReason": REASONS.get(seen.last_reason or "")
            if seen is not None
            else None,
            "extensionAway": away is not None and away.verdict == "away",
            "expectedBackWithinS": away.expected_back_s if away is not None else None,
        }


def _read_secret(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if private_file_problem(os.fstat(fd), path) is not None:
            raise BridgeError(BRIDGE_REFUSED, "the run secret file is not a private regular file")
        data = os.read(fd, SECRET_SIZE + 1)
    finally:
        os.close(fd)
    if len(data) != SECRET_SIZE:
        raise BridgeError(BRIDGE_REFUSED, "the run secret file has the wrong size")
    return data


class BridgeClient:
    """One lazily (re)connected bridge connection, shared by every tool call of this server."""

    def __init__(
        self,
        *,
        label: str | None = None,
        env: dict[str, str] | None = None,
        role: str = "mcp",
        attest: PeerAttestor | None = None,
        client_sha256: str = "",
        call_timeout: float = CALL_TIMEOUT,
    ) -> None:
        self._label = label
        self._env = env
        self._role = role
        self._attest = attest
        self._client_sha256 = client_sha256
        self._call_timeout = call_timeout
        self._stream: FrameStream | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._connect_lock = asyncio.Lock()
        self._extension_connected = False
        self._extension_version = ""
        #: Set once the host's first extension event on this connection arrived (it follows the
        #: admission whenever the extension is connected, and carries its version).
        self._extension_told = asyncio.Event()
        #: Set while the host says the extension is connected (``call`` waits on it on a retry).
        self._extension_ready = asyncio.Event()
        self._browser: str | None = None
        self._socket: str | None = None
        self._protocol: int | None = None
        self.last_handshake_error: str | None = None
        #: The verdict on the last-seen record when no host answered (None once connected).
        self.last_away: Away | None = None

    # -- finding and connecting ---------------------------------------------------------------

    def _label_setting(self) -> str | None:
        return self._label or (self._env or os.environ).get("TABWARDEN_BROWSER") or None

    def _no_host(self, text: str, label: str | None) -> BridgeError:
        """No host answers: ``extension_away`` when the last-seen record (tabwarden/bridge/away.py)
        says the extension is expected back, else ``extension_not_connected`` (with when it was
        last seen, if known). The record only chooses the words: it is read after connecting
        failed."""
        self.last_away = None
        directory = runtime_dir(self._env)
        labels = [label] if label else labels_with_records(directory)
        verdicts: list[Away] = []
        for name in labels:
            record = read_last_seen(directory, name)
            if record is not None:
                verdicts.append(judge(record, time.time(), process_alive))
        away = [v for v in verdicts if v.verdict == "away"]
        if len(away) == 1 or len(verdicts) == 1:
            self.last_away = (away or verdicts)[0]
        if self.last_away is not None and self.last_away.verdict == "away":
            return BridgeError(EXTENSION_AWAY, self.last_away.wording())
        if self.last_away is not None:
            return BridgeError(EXTENSION_NOT_CONNECTED, f"{text}; {self.last_away.wording()}")
        return BridgeError(EXTENSION_NOT_CONNECTED, text)

    def _endpoint(self) -> HostEndpoint:
        directory = runtime_dir(self._env)
        label = self._label_setting()
        try:
            verify_private_dir(directory)
        except UnsafeRuntimeDir as exc:
            if not directory.exists():
                raise BridgeError(EXTENSION_NOT_CONNECTED, "no tabwarden host is running") from None
            raise BridgeError(BRIDGE_REFUSED, str(exc)) from None
        if label:
            return endpoint(label, directory)
        live = live_endpoints(directory)
        if not live:
            raise self._no_host("no tabwarden host is running", None)
        if len(live) > 1:
            names = ", ".join(e.label for e in live)
            raise BridgeError(
                BAD_REQUEST, f"several browsers are connected ({names}); set TABWARDEN_BROWSER"
            )
        return live[0]

    @property
    def env(self) -> dict[str, str] | None:
        return self._env

    @property
    def connected(self) -> bool:
        return self._stream is not None

    async def ensure_connected(self) -> None:
        async with self._connect_lock:
            if self._stream is not None:
                return
            try:
                await asyncio.wait_for(self._connect(), CONNECT_TIMEOUT)
            except asyncio.TimeoutError:
                self.last_handshake_error = "timed out connecting to the host"
                raise BridgeError(TIMEOUT, self.last_handshake_error) from None

    async def _connect(self) -> None:
        ep = self._endpoint()
        self._socket = str(ep.socket)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        # Before connect, so that the host's very first bytes carry its PID (speaker binding).
        osapi.pass_credentials(sock)
        try:
            await asyncio.get_running_loop().sock_connect(sock, str(ep.socket))
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            raise self._no_host("no tabwarden host is listening", ep.label) from None
        except OSError as exc:
            sock.close()
            raise BridgeError(
                EXTENSION_NOT_CONNECTED, f"cannot reach the host: {exc.strerror}"
            ) from None
        try:
            speaker = check_peer(sock, self._attest)
        except PeerRefused as exc:
            sock.close()
            self.last_handshake_error = str(exc)
            raise BridgeError(BRIDGE_REFUSED, str(exc)) from None
        stream = FrameStream(sock, speaker)  # owns sock and speaker from here
        try:
            secret = _read_secret(str(ep.secret))
        except BridgeError as exc:
            stream.close()
            self.last_handshake_error = str(exc)
            raise BridgeError(BRIDGE_REFUSED, str(exc)) from None
        except OSError:
            stream.close()
            self.last_handshake_error = "cannot read the run secret"
            raise BridgeError(BRIDGE_REFUSED, self.last_handshake_error) from None
        machine = ClientHandshake(
            secret,
            secrets.token_bytes(NONCE_SIZE),
            role=self._role,
            client_sha256=self._client_sha256,
        )
        try:
            admitted = await handshake(stream, machine)
        except (HandshakeFailed, FramingError, ConnectionClosed) as exc:
            stream.close()
            reason = exc.reason if isinstance(exc, HandshakeFailed) else str(exc)
            self.last_handshake_error = reason
            log.warning("bridge handshake failed: %s", reason)
            raise BridgeError(BRIDGE_REFUSED, f"bridge handshake failed: {reason}") from None
        self.last_handshake_error = None
        self.last_away = None
        self._stream = stream
        self._browser = admitted.browser
        self._protocol = admitted.protocol
        self._set_extension(admitted.extension_connected)
        self._extension_version = ""
        self._extension_told.clear()
        self._reader_task = asyncio.create_task(self._read_loop(stream))

    async def _read_loop(self, stream: FrameStream) -> None:
        try:
            while True:
                message = await stream.receive()
                kind = message.get("type")
                if kind == "reply":
                    future = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
                    if future is not None and not future.done():
                        future.set_result(message)
                elif kind == "event" and message.get("event") == "extension":
                    self._set_extension(message.get("connected") is True)
                    version = message.get("version")
                    self._extension_version = (
                        version if isinstance(version, str) and len(version) <= 40 else ""
                    )
                    self._extension_told.set()
        except SpeakerChanged as exc:
            log.warning("bridge connection refused: %s", exc.reason)
        except (ConnectionClosed, FramingError) as exc:
            log.info("bridge connection ended: %s", exc)
        finally:
            self._drop(stream)

    def _set_extension(self, connected: bool) -> None:
        self._extension_connected = connected
        if connected:
            self._extension_ready.set()
        else:
            self._extension_ready.clear()

    def _drop(self, stream: FrameStream) -> None:
        if self._stream is stream:
            self._stream = None
            self._set_extension(False)
        stream.close()
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(
                    BridgeError(EXTENSION_NOT_CONNECTED, "the host went away during the call")
                )

    # -- calls and status ---------------------------------------------------------------------

    async def call(
        self,
        action: str,
        args: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        command: str | None = None,
        read_only: bool = False,
    ) -> dict[str, Any]:
        """Send one command; return its result or raise ``BridgeError``. ``command``: its id
        (one per tool call; minted here when not given), sent on every attempt. ``read_only``:
        the extension need not journal it (a repeat is harmless)."""
        limit = timeout or self._call_timeout
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        command_id = command or new_command_id()
        delivered = False  # an earlier attempt's request went out: the browser may have acted
        retrying = False
        pause = RETRY_PAUSE
        while True:
            try:
                reply = await self._attempt(
                    action,
                    args or {},
                    {"id": command_id, "retry": delivered, "readOnly": read_only},
                    deadline=deadline,
                    retrying=retrying,
                )
            except _TransportLost as lost:
                delivered = delivered or lost.delivered
                retrying = True
                remaining = deadline - loop.time()
                if remaining <= 0:
                    if delivered:
                        raise BridgeError(
                            COMMAND_LOST,
                            f"the connection to the browser was lost mid-call and did not come "
                            f"back within {limit:g} s; the outcome is unknown",
                        ) from None
                    raise lost.error from None
                log.info("bridge call %s: %s; trying again", action, lost.error)
                await asyncio.sleep(min(pause, remaining))  # a backoff between reconnects
                pause = min(pause * 2, RETRY_PAUSE_MAX)
                continue
            return _result(reply)

    async def _attempt(
        self,
        action: str,
        args: dict[str, Any],
        command: dict[str, Any],
        *,
        deadline: float,
        retrying: bool,
    ) -> dict[str, Any]:
        """One attempt. Raises ``_TransportLost`` for what a retry may cure (on a retry, also
        a host not there yet), ``BridgeError`` for the rest (and for the call's deadline)."""
        loop = asyncio.get_running_loop()

        def absent(error: BridgeError) -> Exception:
            return _TransportLost(error, delivered=False) if retrying else error

        try:
            await self.ensure_connected()
        except BridgeError as exc:
            # A new host may be half up (a stale socket, its secret not yet written).
            transient = {EXTENSION_NOT_CONNECTED, EXTENSION_AWAY, TIMEOUT, BRIDGE_REFUSED}
            raise (absent(exc) if exc.code in transient else exc) from None
        stream = self._stream
        if stream is None:
            raise absent(BridgeError(EXTENSION_NOT_CONNECTED, "the host went away"))
        if not self._extension_connected:
            not_yet = BridgeError(
                EXTENSION_NOT_CONNECTED, "the host runs but the extension has not connected"
            )
            if not retrying:
                raise not_yet
            try:
                await asyncio.wait_for(self._extension_ready.wait(), deadline - loop.time())
            except asyncio.TimeoutError:
                raise _TransportLost(not_yet, delivered=False) from None
            if self._stream is not stream:
                raise _TransportLost(not_yet, delivered=False)
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._pending[request_id] = future
        request = {
            "type": "request",
            "id": request_id,
            "action": action,
            "args": args,
            "command": command,
        }
        try:
            try:
                await stream.send(request)
            except ConnectionClosed:  # nothing went out whole: the host cannot have read it
                raise _TransportLost(
                    BridgeError(EXTENSION_NOT_CONNECTED, "the host went away"), delivered=False
                ) from None
            try:
                reply = await asyncio.wait_for(future, max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                raise BridgeError(TIMEOUT, "no answer from the browser in time") from None
            except BridgeError as exc:  # the connection dropped with the call in flight
                raise _TransportLost(exc, delivered=True) from None
        finally:
            self._pending.pop(request_id, None)
        error = reply.get("error")
        if reply.get("ok") is not True and isinstance(error, dict):
            if error.get("code") in (EXTENSION_NOT_CONNECTED, EXTENSION_AWAY):
                text = BridgeError(str(error["code"]), str(error.get("message", "")))
                if reply.get("relayed") is True:  # the browser had it, then went away
                    raise _TransportLost(text, delivered=True)
                raise absent(text)
        return reply

    async def status(self) -> BridgeStatus:
        """Local status: connects if needed (no browser round trip)."""
        with contextlib.suppress(BridgeError):
            await self.ensure_connected()
        if self._stream is not None and self._extension_connected:
            # The version comes in the event that follows the admission: wait for it, briefly.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._extension_told.wait(), VERSION_WAIT)
        label = self._browser if self._stream is not None else self._label_setting()
        if label is None and self.last_away is not None:
            label = self.last_away.label
        seen = read_last_seen(runtime_dir(self._env), label) if label else None
        return BridgeStatus(
            host_reachable=self._stream is not None,
            extension_connected=self._stream is not None and self._extension_connected,
            protocol_version=self._protocol if self._stream is not None else None,
            browser=self._browser if self._stream is not None else None,
            socket=self._socket,
            last_handshake_error=self.last_handshake_error,
            seen=seen,
            away=self.last_away if self._stream is None else None,
            extension_version=self._extension_version
            if self._stream is not None and self._extension_connected
            else "",
        )

    async def close(self) -> None:
        if self._stream is not None:
            self._drop(self._stream)
        if self._reader_task is not None:
            self._reader_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader_task


def _result(reply: dict[str, Any]) -> dict[str, Any]:
    """A reply's result, or its error raised as ``BridgeError``."""
    if reply.get("ok") is True and isinstance(reply.get("result"), dict):
        result: dict[str, Any] = reply["result"]
        return result
    raw_error = reply.get("error")
    error: dict[str, Any] = raw_error if isinstance(raw_error, dict) else {}
    raise BridgeError(str(error.get("code", INTERNAL_ERROR)), str(error.get("message", "")))
