"""Hop 3's guard and pipe: the caller-origin check and Chrome's stdin/stdout framing.

Chrome starts the host as ``<path> chrome-extension://<id>/``. ``check_origin`` refuses anything
but the pinned origin, byte for byte. ``NativePipe`` owns the real stdout file descriptor: it
moves it aside and points fd 1 at stderr, so a stray ``print`` can never corrupt the stream, and it
never writes a message above Chrome's 1 MiB limit (``FrameTooLarge`` is raised instead).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from tabwarden.errors import TabwardenError
from tabwarden.manifests import ALLOWED_ORIGIN
from tabwarden.protocol import nativemsg
from tabwarden.protocol.codes import ORIGIN_REFUSED
from tabwarden.protocol.framing import FramingError


class OriginRefused(TabwardenError):
    """The host was started by something other than the pinned tabwarden extension."""

    code = ORIGIN_REFUSED
    exit_status = 4
    hint = "Only Chrome may start the host, for the extension pinned by `tabwarden install`."


def check_origin(argv: list[str]) -> str:
    """Return the caller origin if it is exactly the pinned one, else raise ``OriginRefused``."""
    if not argv:
        raise OriginRefused("no caller origin argument (the host is started by Chrome)")
    origin = argv[0]
    if origin != ALLOWED_ORIGIN:
        shown = origin if len(origin) <= 80 else origin[:77] + "..."
        raise OriginRefused(f"caller origin {shown!r} is not {ALLOWED_ORIGIN!r}")
    return origin


class NativePipe:
    """Chrome's stdin/stdout as async message I/O."""

    def __init__(self) -> None:
        self._out_fd = os.dup(1)
        os.dup2(2, 1)  # fd 1 now points at stderr: nothing but framed messages reach Chrome
        self._decoder = nativemsg.decoder()
        self._write_lock = asyncio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        data = nativemsg.encode(message)  # FrameTooLarge before anything is written
        async with self._write_lock:
            await asyncio.get_running_loop().run_in_executor(None, self._write_all, data)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._out_fd, view)
            view = view[written:]

    async def read_messages(
        self, on_message: Callable[[dict[str, Any]], Awaitable[None]]
    ) -> str | None:
        """Feed each message to ``on_message`` until EOF. Returns None on clean EOF, else a reason.

        stdin is read by a daemon thread, so a host told to stop (SIGTERM) never waits on a
        blocked read.
        """
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[bytes] = asyncio.Queue()

        def pump() -> None:
            while True:
                try:
                    data = os.read(0, 65536)
                except OSError:
                    data = b""
                loop.call_soon_threadsafe(chunks.put_nowait, data)
                if not data:
                    return

        threading.Thread(target=pump, name="stdin", daemon=True).start()
        while True:
            data = await chunks.get()
            try:
                self._decoder.receive_data(data)
                while (message := self._decoder.next_frame()) is not None:
                    await on_message(message)
            except FramingError as exc:
                return f"browser sent a bad frame: {exc}"
            if self._decoder.eof:
                return None
