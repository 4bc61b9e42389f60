"""Async frame I/O over a connected bridge socket — the thin shell around ``protocol.frames``.

Used by both the host and the MCP server so neither re-implements framing. Reads never buffer past
``MAX_BRIDGE_FRAME`` (the sans-IO decoder checks every header first).
"""

from __future__ import annotations

import asyncio
from typing import Any

from tabwarden.protocol import frames
from tabwarden.protocol.framing import FramingError

_READ_SIZE = 65536


class ConnectionClosed(Exception):
    """The peer closed the bridge connection (cleanly or mid-frame)."""


class FrameStream:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._decoder = frames.decoder()
        self._write_lock = asyncio.Lock()

    async def receive(self) -> dict[str, Any]:
        """The next frame; raises ``ConnectionClosed`` at EOF, ``FramingError`` on garbage."""
        while True:
            frame = self._decoder.next_frame()
            if frame is not None:
                return frame
            if self._decoder.eof:
                raise ConnectionClosed("peer closed the connection")
            try:
                data = await self._reader.read(_READ_SIZE)
            except (ConnectionError, OSError) as exc:
                raise ConnectionClosed(str(exc)) from None
            try:
                self._decoder.receive_data(data)
            except FramingError:
                raise

    async def send(self, message: dict[str, Any]) -> None:
        data = frames.encode_frame(message)
        async with self._write_lock:
            try:
                self._writer.write(data)
                await self._writer.drain()
            except (ConnectionError, OSError) as exc:
                raise ConnectionClosed(str(exc)) from None

    def close(self) -> None:
        try:
            self._writer.close()
        except Exception:  # noqa: S110 — closing a dead transport is best-effort
            pass
