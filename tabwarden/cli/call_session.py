"""``tabwarden call --session NAME``: one MCP session kept across shell commands (ADR 0015).

A one-shot ``tabwarden call`` is its own MCP session: the tab it opens is not the next call's.
With ``--session NAME`` the first call starts a **session keeper** — ``python -I -m tabwarden
session-keeper NAME``, in a new process session, without the terminal — that spawns ``tabwarden
mcp`` over stdio exactly as the one-shot call does and holds it; hop 1 measures the keeper as the
client (the same identity as ``tabwarden call``: ``python -m tabwarden``), and the server's own
bridge client attests the host and runs the run-secret handshake as for any client. Each call of
the session talks to its keeper over a private Unix socket, ``<runtime>/sessions/NAME.sock``
(the directory 0700 and verified, the socket 0600), admitted in hop 2's order
(``tabwarden.bridge.admission``), both ways:

1. the kernel's peer credentials: same UID, the peer's process pinned (pidfd, image inode);
2. executable attestation: the keeper accepts only ``python -I -m tabwarden call`` (our
   interpreter, our installed package, unchanged); the call accepts only ``python -I -m
   tabwarden session-keeper``;
3. the mutual HMAC handshake (``protocol.handshake``) keyed by the keeper's per-run secret
   (32 random bytes in ``NAME.secret``, 0600, written at its start and removed at its end).

Every call still needs its own real terminal (``require_real_terminal``, in the attested call
process), so a program without one cannot drive a session any more than a one-shot call.

The session ends on ``--close``, after ``--idle-timeout`` seconds without a call (default
``DEFAULT_IDLE_S``), or when the keeper dies. Its ``tabwarden mcp`` ends with it (stdin closes),
so the host releases its tabs as it does for any ended session (orphaned; ``tabwarden tabs``).
An idle end leaves ``NAME.ended``; a dead keeper leaves its info file with nothing listening:
either way the next call of that name says ``session_gone`` (once: the stale files go), never
silently starting a new session whose tabs would not be the ones the caller means.
Nothing here logs or prints an argument's value, a secret, a nonce or a MAC.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tabwarden import osapi
from tabwarden.errors import TabwardenError, UsageError, cli_only_table
from tabwarden.protocol.codes import SESSION_GONE, SESSION_REFUSED

__all__ = [
    "DEFAULT_IDLE_S",
    "KEEPER_ROLE",
    "Outcome",
    "SessionGone",
    "SessionRefused",
    "call_in_session",
    "live_sessions",
    "run_keeper",
    "sessions_dir",
]

log = logging.getLogger("tabwarden.session")

#: The keeper's subcommand (``tabwarden session-keeper``): what the call attests it runs.
KEEPER_ROLE = "session-keeper"
#: What the keeper accepts on its socket: our own ``tabwarden call``.
CALLER_ROLE = "call"
#: A session without a call for this long ends (``--idle-timeout``).
DEFAULT_IDLE_S = 600
#: How long a call waits for a new keeper to be ready (its MCP server started).
START_TIMEOUT_S = 60.0
#: How long one admission (attestation and handshake) and one request frame may take.
ADMIT_TIMEOUT_S = 20.0
#: The longest one relayed tool call may take (tools keep their own, shorter deadlines).
CALL_TIMEOUT_S = 900.0
READY = b"ready\n"


class SessionGone(TabwardenError):
    """That terminal session ended: its tabs were released."""

    code = SESSION_GONE
    exit_status = 1
    hint = cli_only_table()[SESSION_GONE][1]


class SessionRefused(TabwardenError):
    """The session's socket failed its checks: nothing was sent."""

    code = SESSION_REFUSED
    exit_status = 3
    hint = cli_only_table()[SESSION_REFUSED][1]


@dataclass
class Outcome:
    """One tool call's result, from the SDK directly or relayed by a keeper."""

    is_error: bool
    error: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    structured: Any = None
    images: list[tuple[str, str]] = field(default_factory=list)  # (mime type, base64)

    @classmethod
    def of(cls, result: Any) -> Outcome:
        """From the SDK's ``CallToolResult``."""
        error = (result.meta or {}).get("dev.tabwarden/error") or {}
        return cls(
            is_error=bool(result.is_error),
            error=error if isinstance(error, dict) else {},
            text=" ".join(c.text for c in result.content if getattr(c, "type", "") == "text"),
            structured=result.structured_content,
            images=[
                (c.mime_type, c.data) for c in result.content if getattr(c, "type", "") == "image"
            ],
        )

    def as_frame(self) -> dict[str, Any]:
        return {
            "type": "reply",
            "isError": self.is_error,
            "error": self.error,
            "text": self.text,
            "structured": self.structured,
            "images": [{"mimeType": m, "data": d} for m, d in self.images],
        }

    @classmethod
    def from_frame(cls, frame: dict[str, Any]) -> Outcome:
        images = frame.get("images")
        error = frame.get("error")
        return cls(
            is_error=frame.get("isError") is True,
            error=error if isinstance(error, dict) else {},
            text=str(frame.get("text") or ""),
            structured=frame.get("structured"),
            images=[
                (str(i.get("mimeType")), str(i.get("data")))
                for i in (images if isinstance(images, list) else [])
                if isinstance(i, dict)
            ],
        )


# ------------------------------------------------------------------------------------ files


def sessions_dir(env: dict[str, str] | None = None) -> Path:
    """``<runtime>/sessions``: created 0700 if missing, then verified (ours, 0700, no link)."""
    from tabwarden.paths import ensure_runtime_dir, verify_private_dir

    path = ensure_runtime_dir(env) / "sessions"
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    verify_private_dir(path)
    return path


def _endpoint(name: str, directory: Path) -> Any:
    from tabwarden.paths import BadLabel, endpoint

    try:
        return endpoint(name, directory)
    except BadLabel:
        raise UsageError(
            f"{name[:40]!r} is not a session name: letters, digits, '-' and '_', "
            "starting with a letter or digit"
        ) from None


def _info_path(directory: Path, name: str) -> Path:
    return directory / f"{name}.json"


def _ended_path(directory: Path, name: str) -> Path:
    return directory / f"{name}.ended"


def _read_private_json(path: Path) -> dict[str, Any] | None:
    """A small private JSON file of ours, or None (missing, not ours, not private, not JSON)."""
    from tabwarden.paths import private_file_problem

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if private_file_problem(os.fstat(fd), path) is not None:
            return None
        raw = os.read(fd, 65536)
    finally:
        os.close(fd)
    try:
        doc = json.loads(raw)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def _write_private_json(path: Path, doc: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)
    os.replace(tmp, path)


def _forget(directory: Path, name: str) -> None:
    """Remove a dead session's leftovers (never its lock: a new keeper may hold it)."""
    for suffix in (".json", ".ended", ".sock", ".secret"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(directory / f"{name}{suffix}")


@dataclass(frozen=True)
class LiveSession:
    name: str
    keeper_pid: int
    mcp_pid: int | None
    started: float
    idle_timeout_s: int


def live_sessions(env: dict[str, str] | None = None) -> list[LiveSession]:
    """The sessions whose keeper still runs (by its info file: pid and start time), for
    ``tabwarden tabs``. Display only: nothing is granted on what these files say."""
    try:
        directory = sessions_dir(env)
        names = sorted(p.name[: -len(".json")] for p in directory.glob("*.json"))
    except (OSError, TabwardenError):
        return []
    found: list[LiveSession] = []
    for name in names:
        doc = _read_private_json(_info_path(directory, name))
        if doc is None or type(doc.get("pid")) is not int:
            continue
        try:
            alive = osapi.create_time(doc["pid"]) == doc.get("created")
        except (OSError, ValueError):
            alive = False
        if alive:
            mcp = doc.get("mcpPid")
            found.append(
                LiveSession(
                    name=name,
                    keeper_pid=doc["pid"],
                    mcp_pid=mcp if type(mcp) is int else None,
                    started=float(doc.get("started") or 0),
                    idle_timeout_s=int(doc.get("idleTimeoutS") or 0),
                )
            )
    return found


# ------------------------------------------------------------------------------- the caller


async def _connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setblocking(False)
    osapi.pass_credentials(sock)
    try:
        await asyncio.get_running_loop().sock_connect(sock, str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    return sock


def _start_keeper(name: str, idle_s: int, directory: Path) -> None:
    """Start the keeper (a new process session, no terminal) and wait for its ready line."""
    logfile = directory / f"{name}.log"
    log_fd = os.open(
        logfile, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
    )
    try:
        proc = subprocess.Popen(  # noqa: S603 - our own interpreter and package
            [sys.executable, "-I", "-m", "tabwarden", KEEPER_ROLE, name,
             "--idle-timeout", str(idle_s)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log_fd,
            start_new_session=True,
            close_fds=True,
            env=dict(os.environ),
        )  # fmt: skip
    finally:
        os.close(log_fd)
    assert proc.stdout is not None
    try:
        line = _read_line(proc.stdout.fileno(), START_TIMEOUT_S)
    finally:
        proc.stdout.close()
    if line != READY:
        if proc.poll() is None and not line:
            proc.terminate()
        raise TabwardenError(
            f"the session keeper for {name!r} did not start",
            hint=f"its log is {logfile}; `tabwarden status` says whether the browser is there",
        )


def _read_line(fd: int, timeout: float) -> bytes:
    import select

    deadline = time.monotonic() + timeout
    got = b""
    while not got.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            return got
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return got
        chunk = os.read(fd, 64)
        if not chunk:
            return got
        got += chunk
    return got


async def _exchange(
    sock: socket.socket, secret_path: Path, request: dict[str, Any]
) -> dict[str, Any]:
    """Admit the keeper (attested, then the handshake) and make one request."""
    from tabwarden.bridge.admission import check_peer, handshake
    from tabwarden.bridge.attest import make_attestor
    from tabwarden.bridge.framestream import ConnectionClosed, FrameStream
    from tabwarden.bridge.peer import PeerRefused
    from tabwarden.mcp_server.bridge_client import BridgeError, _read_secret
    from tabwarden.protocol.framing import FramingError
    from tabwarden.protocol.handshake import NONCE_SIZE, ClientHandshake, HandshakeFailed

    try:
        speaker = await asyncio.to_thread(check_peer, sock, make_attestor({KEEPER_ROLE}))
    except PeerRefused as exc:
        sock.close()
        raise SessionRefused(f"the session socket is not our keeper: {exc}") from None
    stream = FrameStream(sock, speaker)
    try:
        try:
            secret = _read_secret(str(secret_path))
        except (BridgeError, OSError):
            raise SessionRefused("the session's secret is missing or not private") from None
        machine = ClientHandshake(secret, secrets.token_bytes(NONCE_SIZE), role="cli")
        try:
            await asyncio.wait_for(handshake(stream, machine), ADMIT_TIMEOUT_S)
            await stream.send(request)
            reply = await asyncio.wait_for(stream.receive(), CALL_TIMEOUT_S)
        except HandshakeFailed as exc:
            raise SessionRefused(f"the session handshake failed: {exc.reason}") from None
        except (ConnectionClosed, FramingError, asyncio.TimeoutError) as exc:
            raise SessionRefused(
                f"the session keeper closed the connection ({exc or 'timed out'})"
            ) from None
    finally:
        stream.close()
    return reply


async def call_in_session(
    name: str,
    tool: str | None,
    arguments: dict[str, Any],
    *,
    close: bool = False,
    idle_s: int = DEFAULT_IDLE_S,
) -> Outcome | None:
    """Call ``tool`` in the session ``name`` (starting it if none of that name ran), or close it
    (``close``: returns None). Raises ``SessionGone`` for a session that ended by itself."""
    directory = sessions_dir()
    ep = _endpoint(name, directory)
    ended = _read_private_json(_ended_path(directory, name))
    if ended is not None or _ended_path(directory, name).exists():
        _forget(directory, name)
        why = str((ended or {}).get("reason") or "ended")
        raise SessionGone(f"the session {name!r} ended ({why}); its tabs were released")
    sock = await _connect(ep.socket)
    if sock is None:
        if _info_path(directory, name).exists():
            _forget(directory, name)
            raise SessionGone(
                f"the session {name!r} is gone: its keeper stopped; its tabs were released"
            )
        if close:
            raise SessionGone(f"no session {name!r} is open")
        await asyncio.to_thread(_start_keeper, name, idle_s, directory)
        sock = await _connect(ep.socket)
        if sock is None:
            raise SessionGone(f"the session {name!r} stopped as it started")
    request: dict[str, Any] = (
        {"type": "close"} if close else {"type": "call", "tool": tool, "arguments": arguments}
    )
    reply = await _exchange(sock, ep.secret, request)
    if reply.get("type") == "closed":
        return None
    if reply.get("type") != "reply":
        raise SessionRefused("the session keeper answered something that is not a reply")
    return Outcome.from_frame(reply)


# ------------------------------------------------------------------------------- the keeper


class _Keeper:
    def __init__(self, name: str, client: Any, secret: bytes, idle_s: int) -> None:
        from tabwarden.bridge.attest import make_attestor

        self.name = name
        self.client = client
        self.secret = secret
        self.idle_s = idle_s
        self.attest = make_attestor({CALLER_ROLE})
        self.last = time.monotonic()
        self.in_flight = 0
        self.stop = asyncio.Event()
        self.reason = "stopped"
        self.calls = asyncio.Lock()

    def end(self, reason: str) -> None:
        if not self.stop.is_set():
            self.reason = reason
            self.stop.set()

    async def idle_watch(self) -> None:
        while not self.stop.is_set():
            left = self.last + self.idle_s - time.monotonic()
            if left <= 0 and self.in_flight == 0:
                log.info("session %s idle for %d s: ending", self.name, self.idle_s)
                self.end("idle")
                return
            await asyncio.sleep(max(left, 0.2))  # a timer, not a wait for a condition

    async def serve(self, listener: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        running: set[asyncio.Task[None]] = set()
        while True:
            conn, _ = await loop.sock_accept(listener)
            task = asyncio.create_task(self.one(conn))
            running.add(task)  # held until done (the loop keeps only weak references)
            task.add_done_callback(running.discard)

    async def one(self, conn: socket.socket) -> None:
        from tabwarden.bridge.admission import check_peer, handshake
        from tabwarden.bridge.framestream import ConnectionClosed, FrameStream
        from tabwarden.bridge.peer import PeerRefused
        from tabwarden.protocol.framing import FramingError
        from tabwarden.protocol.handshake import NONCE_SIZE, HandshakeFailed, HostHandshake

        try:
            speaker = await asyncio.to_thread(check_peer, conn, self.attest)
        except PeerRefused as exc:
            log.warning("session %s refused a peer: %s", self.name, exc)
            conn.close()
            return
        stream = FrameStream(conn, speaker)
        try:
            machine = HostHandshake(
                self.secret,
                secrets.token_bytes(NONCE_SIZE),
                browser=f"session {self.name}",
                extension_connected=False,
            )
            await asyncio.wait_for(handshake(stream, machine, machine.start()), ADMIT_TIMEOUT_S)
            request = await asyncio.wait_for(stream.receive(), ADMIT_TIMEOUT_S)
            kind = request.get("type")
            if kind == "close":
                await stream.send({"type": "closed"})
                self.end("closed")
                return
            tool, arguments = request.get("tool"), request.get("arguments")
            if kind != "call" or not isinstance(tool, str) or not isinstance(arguments, dict):
                log.warning("session %s: a malformed request", self.name)
                return
            self.in_flight += 1
            self.last = time.monotonic()
            try:
                async with self.calls:
                    result = await self.client.call_tool(tool, arguments)
            finally:
                self.in_flight -= 1
                self.last = time.monotonic()
            await stream.send(Outcome.of(result).as_frame())
        except HandshakeFailed as exc:
            log.warning("session %s: handshake failed: %s", self.name, exc.reason)
            with contextlib.suppress(ConnectionClosed):
                await stream.send({"t": "refused"})
        except (ConnectionClosed, FramingError, asyncio.TimeoutError) as exc:
            log.info("session %s: connection ended: %s", self.name, exc or "timed out")
        finally:
            stream.close()


def _mcp_child_pid() -> int | None:
    for pid, argv in osapi.child_processes(os.getpid()):
        if argv[-2:] == ["tabwarden", "mcp"]:
            return pid
    return None


async def _keep(name: str, idle_s: int) -> int:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from tabwarden.host.runtime import host_files

    directory = sessions_dir()
    ep = _endpoint(name, directory)
    with host_files(ep, lock_wait=0) as files:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(_ended_path(directory, name))
        params = StdioServerParameters(
            command=sys.executable,
            args=["-I", "-m", "tabwarden", "mcp"],
            # The session's name labels its audit lines (mcp_server/server.py SESSION_LABEL_ENV).
            env={**os.environ, "TABWARDEN_SESSION_LABEL": name},
        )
        async with Client(params) as client:
            keeper = _Keeper(name, client, files.secret, idle_s)
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                loop.add_signal_handler(sig, keeper.end, "stopped")
            _write_private_json(
                _info_path(directory, name),
                {
                    "name": name,
                    "pid": os.getpid(),
                    "created": osapi.create_time(os.getpid()),
                    "mcpPid": _mcp_child_pid(),
                    "started": time.time(),
                    "idleTimeoutS": idle_s,
                },
            )
            os.write(1, READY)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)  # the starting call reads to here: release its pipe
            os.close(devnull)
            log.info("session %s kept (idle timeout %d s)", name, idle_s)
            tasks = [
                asyncio.create_task(keeper.serve(files.listener)),
                asyncio.create_task(keeper.idle_watch()),
            ]
            await keeper.stop.wait()
            for task in tasks:
                task.cancel()
            if keeper.reason == "closed":
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(_info_path(directory, name))
            else:
                _write_private_json(
                    _ended_path(directory, name), {"reason": keeper.reason, "at": time.time()}
                )
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(_info_path(directory, name))
        log.info("session %s ended (%s)", name, keeper.reason)
    return 0


def run_keeper(name: str, idle_s: int) -> int:
    """``tabwarden session-keeper NAME``: only as ``tabwarden call --session`` starts it."""
    if not sys.flags.isolated or sys.stdin.isatty():
        raise UsageError(
            "the session keeper is started by `tabwarden call --session NAME`, not by hand"
        )
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    return asyncio.run(_keep(name, idle_s))
