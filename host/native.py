"""Hop 3's guard and pipe: the caller-origin check and Chrome's stdin/stdout framing.

Chrome starts the host as ``<path> chrome-extension://<id>/``. ``check_origin`` refuses anything
but the pinned origin, byte for byte. ``NativePipe`` owns the real stdout file descriptor: it
moves it aside and points fd 1 at stderr, so a stray ``print`` can never corrupt the stream, and it
never writes a message above Chrome's 1 MiB limit (``FrameTooLarge`` is raised instead). Its I/O
runs on the event loop itself (non-blocking descriptors), never in a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable
from typing import Any

from tabwarden.bridge.pipes import wait_ready, widen_pipe
from tabwarden.errors import TabwardenError
from tabwarden.manifests import ALLOWED_ORIGIN
from tabwarden.protocol import nativemsg
from tabwarden.protocol.codes import ORIGIN_REFUSED
from tabwarden.protocol.framing import FramingError

#: How much of stdin one read takes.
READ_CHUNK = 1 << 20


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
    """Chrome's stdin/stdout as async message I/O on the event loop: both descriptors are
    non-blocking and waited on with the loop's reader/writer callbacks — no thread, no executor,
    so a host told to stop (SIGTERM) never waits on a blocked read or write."""

    def __init__(self) -> None:
        self._out_fd = os.dup(1)
        os.dup2(2, 1)  # fd 1 now points at stderr: nothing but framed messages reach Chrome
        os.set_blocking(self._out_fd, False)
        widen_pipe(self._out_fd)
        self._decoder = nativemsg.decoder()
        #: The write still finishing a message (the pipe was full), which the next one follows.
        self._tail: asyncio.Task[None] | None = None

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message. A message once started is always finished, even when the caller
        is cancelled: half a frame would put Chrome's reader out of step for good."""
        data = memoryview(nativemsg.encode(message))  # FrameTooLarge before anything is written
        if self._tail is None or self._tail.done():
            try:
                written = os.write(self._out_fd, data)
            except BlockingIOError:  # Chrome has not read the pipe's buffer yet
                written = 0
            if written == len(data):
                return
            self._tail = asyncio.get_running_loop().create_task(self._finish(data[written:], None))
        else:
            self._tail = asyncio.get_running_loop().create_task(self._finish(data, self._tail))
        self._tail.add_done_callback(_retrieved)
        await asyncio.shield(self._tail)

    async def _finish(self, view: memoryview, after: asyncio.Task[None] | None) -> None:
        if after is not None:
            await asyncio.wait({after})  # in order; its own failure is its sender's to report
        while view:
            try:
                written = os.write(self._out_fd, view)
            except BlockingIOError:
                await wait_ready(self._out_fd, writing=True)
                continue
            view = view[written:]

    async def read_messages(
        self, on_message: Callable[[dict[str, Any]], Awaitable[None]]
    ) -> str | None:
        """Feed each message to ``on_message`` until EOF: None on a clean EOF, else a reason."""
        was_blocking = os.get_blocking(0)
        os.set_blocking(0, False)
        widen_pipe(0)
        try:
            while True:
                try:
                    data = os.read(0, READ_CHUNK)
                except BlockingIOError:
                    await wait_ready(0, writing=False)
                    continue
                except OSError:
                    data = b""
                try:
                    self._decoder.receive_data(data)
                    while (message := self._decoder.next_frame()) is not None:
                        await on_message(message)
                except FramingError as exc:
                    return f"browser sent a bad frame: {exc}"
                if self._decoder.eof:
                    return None
        finally:
            with contextlib.suppress(OSError):
                os.set_blocking(0, was_blocking)  # a terminal's stdin is left as it was found


def _retrieved(task: asyncio.Task[None]) -> None:
    """Mark a write's failure as seen even when its sender was cancelled and cannot hear it."""
    if not task.cancelled():
        task.exception()
