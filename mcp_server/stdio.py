"""Hop 1's pipes on the event loop: ``tabwarden mcp``'s stdin and stdout for the SDK's stdio
transport, read and written with the loop's reader/writer callbacks instead of a worker thread
per line and per write (the SDK's own ``anyio.wrap_file`` path costs a dozen thread hand-offs
per tool call; bench/textpath.py ``--light``).

``serve`` moves the real descriptors aside first, as the SDK's transport does: fd 0 then reads
the null device and fd 1 writes to stderr, so nothing a child or a stray ``print`` does can
reach the JSON-RPC stream; both are put back when serving ends. Only pipes and sockets are
served this way (a terminal or a file is left to the SDK's own transport, which suits them).
Nothing here parses or logs what travels: the SDK's transport does the JSON-RPC.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import AsyncIterator
from typing import Any

from tabwarden.bridge.pipes import wait_ready, widen_pipe

#: How much of stdin one read takes.
READ_BYTES = 1 << 16


def pollable(fd: int) -> bool:
    """A pipe or a socket: what the event loop can wait on without a thread."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class LoopLines:
    """stdin as the SDK's transport reads it: ``async for line in ...``, each line with its
    ``\\n``, decoded as UTF-8 with replacement (the SDK's own choice); the last line without one
    at EOF."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._lines: list[bytes] = []
        self._eof = False

    def __aiter__(self) -> LoopLines:
        return self

    async def __anext__(self) -> str:
        while not self._lines:
            if self._eof:
                if not self._buffer:
                    raise StopAsyncIteration
                self._lines.append(bytes(self._buffer))
                self._buffer.clear()
                break
            try:
                data = os.read(self._fd, READ_BYTES)
            except BlockingIOError:
                await wait_ready(self._fd, writing=False)
                continue
            if not data:
                self._eof = True
                continue
            start = len(self._buffer)
            self._buffer += data
            end = self._buffer.rfind(b"\n", start)
            if end >= 0:
                whole = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                self._lines = whole.splitlines(keepends=True)
                self._lines.reverse()
        return self._lines.pop().decode("utf-8", "replace")


class LoopWriter:
    """stdout as the SDK's transport writes it: ``await write(text)``, ``await flush()``. A
    write once started is finished before the next one starts (the SDK writes from one task)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def write(self, text: str) -> None:
        view = memoryview(text.encode("utf-8"))
        while view:
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                await wait_ready(self._fd, writing=True)
                continue
            view = view[written:]

    async def flush(self) -> None:
        """Nothing is buffered here."""


@contextlib.asynccontextmanager
async def loop_stdio() -> AsyncIterator[tuple[Any, Any] | None]:
    """The SDK's ``stdio_server`` on our loop-driven pipes, as ``(read_stream, write_stream)``;
    None when stdin or stdout is not a pipe or socket (the caller uses the SDK's transport)."""
    if not (pollable(0) and pollable(1)):
        yield None
        return
    from mcp.server.stdio import stdio_server

    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        for fd in (wire_in, wire_out):
            os.set_blocking(fd, False)  # the description is the pipe's: restored below
        widen_pipe(wire_out)
        async with stdio_server(LoopLines(wire_in), LoopWriter(wire_out)) as streams:  # type: ignore[arg-type]
            yield streams
    finally:
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (wire_in, wire_out):
            with contextlib.suppress(OSError):
                os.set_blocking(fd, True)  # the pipes are left as they were found
        for fd in (null, saved_in, saved_out, wire_in, wire_out):
            with contextlib.suppress(OSError):
                os.close(fd)


async def serve(server: Any) -> None:
    """Run ``server`` (an ``MCPServer``) over stdio: our pipes when they are pollable, else the
    SDK's own transport. What ``MCPServer.run_stdio_async`` does, with the streams given."""
    async with loop_stdio() as streams:
        if streams is None:
            await server.run_stdio_async()
            return
        read_stream, write_stream = streams
        lowlevel = server._lowlevel_server  # noqa: SLF001 (the SDK's stdio path does the same)
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
