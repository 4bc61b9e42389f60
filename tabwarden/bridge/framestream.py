"""Async frame I/O over a connected bridge socket — the thin shell around ``protocol.frames``.

Used by both the host and the MCP server so neither re-implements framing, and so the speaker
binding (docs/adr/0001, "speaker binding") is enforced in exactly one place: the socket has
``SO_PASSCRED`` on, every chunk is read with one ``recvmsg`` whose ``SCM_CREDENTIALS`` the kernel
fills in with the writer's real PID (and never glues bytes of two writers into one read), and a
chunk that did not come from the pinned ``Speaker`` is refused with ``SpeakerChanged`` before a
byte of it reaches the decoder. Before each frame is handed out, the pinned process must still
be alive and executing the image it was pinned with.

Reads never buffer past ``MAX_BRIDGE_FRAME`` (the sans-IO decoder checks every header first).
asyncio's StreamReader cannot deliver ancillary data, so this reads the raw socket with
``loop.add_reader``; writes go through the same socket under one lock. It must never log or
raise frame content.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from tabwarden import osapi
from tabwarden.bridge.peer import CREDS_ANCILLARY_SIZE, Speaker
from tabwarden.protocol import frames
from tabwarden.protocol.framing import FramingError

__all__ = ["ConnectionClosed", "FrameStream", "FramingError", "SpeakerChanged"]

_READ_SIZE = 65536


class ConnectionClosed(Exception):
    """The peer closed the bridge connection (cleanly or mid-frame)."""


class SpeakerChanged(ConnectionClosed):
    """Bytes on the connection came from a process other than the pinned, attested peer (a
    handed-off socket), or that process exited or exec'd. The connection is finished; ``reason``
    is for the local log (PIDs only, never content)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class FrameStream:
    """Frames in and out of one connected, speaker-pinned bridge socket. Owns the socket and the
    speaker (``close`` releases both)."""

    def __init__(self, sock: socket.socket, speaker: Speaker) -> None:
        sock.setblocking(False)
        self._sock = sock
        self._fd = sock.fileno()
        self._speaker = speaker
        self._decoder = frames.decoder()
        self._write_lock = asyncio.Lock()
        self._waiters: set[asyncio.Future[None]] = set()
        self._refused: SpeakerChanged | None = None
        self._closed = False

    @property
    def speaker_pid(self) -> int:
        return self._speaker.pid

    async def receive(self) -> dict[str, Any]:
        """The next frame; raises ``ConnectionClosed`` at EOF, ``SpeakerChanged`` (a
        ``ConnectionClosed``) when a chunk or frame is not the pinned peer's, ``FramingError`` on
        garbage."""
        while True:
            if self._refused is not None:
                raise self._refused
            frame = self._decoder.next_frame()
            if frame is not None:
                why = self._speaker.changed()
                if why is not None:
                    raise self._refuse(why)
                return frame
            if self._decoder.eof:
                raise ConnectionClosed("peer closed the connection")
            data = await self._read_chunk()
            self._decoder.receive_data(data)

    async def _read_chunk(self) -> bytes:
        """One ``recvmsg``'s bytes, all from the pinned speaker; ``b""`` at EOF."""
        while True:
            if self._closed:
                raise ConnectionClosed("connection closed")
            try:
                data, ancillary, flags, _ = self._sock.recvmsg(
                    _READ_SIZE, CREDS_ANCILLARY_SIZE, osapi.RECVMSG_FLAGS
                )
            except (BlockingIOError, InterruptedError):
                await self._ready(write=False)
                continue
            except OSError as exc:
                raise ConnectionClosed(str(exc)) from None
            if not data:
                return b""
            why = self._speaker.foreign_chunk(ancillary, flags)
            if why is not None:
                raise self._refuse(why)
            return data

    def _refuse(self, why: str) -> SpeakerChanged:
        self._refused = SpeakerChanged(why)
        return self._refused

    async def _ready(self, *, write: bool) -> None:
        """Wait until the socket is readable (or writable); ``close`` wakes every waiter."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not waiter.done():
                waiter.set_result(None)

        add, remove = (
            (loop.add_writer, loop.remove_writer)
            if write
            else (
                loop.add_reader,
                loop.remove_reader,
            )
        )
        add(self._fd, wake)
        self._waiters.add(waiter)
        try:
            await waiter
        finally:
            self._waiters.discard(waiter)
            if not self._closed:
                remove(self._fd)

    async def send(self, message: dict[str, Any]) -> None:
        await self._write(frames.encode_frame(message))

    async def send_body(self, body: bytes) -> None:
        """Send one frame whose body is already one serialised JSON object (the caller checked
        it); the size limit is ``send``'s (``FrameTooLarge`` before anything is written)."""
        await self._write(frames.encode_body_frame(body))

    async def _write(self, frame: bytes) -> None:
        data = memoryview(frame)
        async with self._write_lock:
            while data:
                if self._closed:
                    raise ConnectionClosed("connection closed")
                try:
                    sent = self._sock.send(data)
                except (BlockingIOError, InterruptedError):
                    await self._ready(write=True)
                    continue
                except OSError as exc:
                    raise ConnectionClosed(str(exc)) from None
                data = data[sent:]

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None:
            loop.remove_reader(self._fd)
            loop.remove_writer(self._fd)
        for waiter in list(self._waiters):
            if not waiter.done():
                waiter.set_exception(ConnectionClosed("connection closed"))
        self._waiters.clear()
        try:
            self._sock.close()
        finally:
            self._speaker.close()
