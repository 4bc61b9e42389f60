"""Pipe descriptors on the event loop, for both ends of tabwarden that speak over pipes: the
native host's stdin/stdout to Chrome (``host/native.py``) and ``tabwarden mcp``'s stdin/stdout to
its client (``mcp_server/stdio.py``). Waiting on a descriptor and widening a pipe, nothing more:
no framing, no parsing, and nothing here ever reads or writes a byte itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl

#: The pipe capacity asked for: one whole host->browser message plus its header.
PIPE_BYTES = 1 << 20


def widen_pipe(fd: int) -> None:
    """Best effort: let a pipe hold a whole 1 MiB message (Linux ``F_SETPIPE_SZ``), so one
    message moves in one write and one wake-up instead of sixteen 64 KiB rounds."""
    setsize = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setsize is None:
        return
    with contextlib.suppress(OSError):  # not a pipe, or above the system's pipe-max-size
        fcntl.fcntl(fd, setsize, PIPE_BYTES)


async def wait_ready(fd: int, *, writing: bool) -> None:
    """Wait until ``fd`` is readable (or, ``writing``, writable) on the running loop."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    if writing:
        loop.add_writer(fd, wake)
    else:
        loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        if writing:
            loop.remove_writer(fd)
        else:
            loop.remove_reader(fd)
