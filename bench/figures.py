"""Each figure's measurement, for one session (or one server) at a time; ``run.py`` interleaves
them. A measurement returns milliseconds (``time.perf_counter``, client side, around the calls
alone) and checks the answer after the clock stops; an answer without the expected content
raises ``CallFailed`` like an error would. Nothing here retries or discards a sample.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

from mcp_types import CallToolResult

from bench.servers import CallFailed, Launcher, Session, one_line, png_size
from bench.site import LINE, REVEALED

#: The large-text page: this many characters of ``innerText`` (whole lines of ``site.LINE``).
TEXT_CHARS = (10_000_000 // len(LINE)) * len(LINE)
#: The screenshot page: a canvas of noise this size, whose PNG is about 10 MB.
IMAGE_WIDTH, IMAGE_HEIGHT = 1280, 4200
SESSIONS = 8


@dataclass
class Sample:
    ms: float
    notes: dict[str, Any] = field(default_factory=dict)


def check_listed(session: Session, result: CallToolResult) -> None:
    """A tab list must show the session's own page (on the bench's origin)."""
    if session.origin not in session.everything(result):
        raise CallFailed(f"the tab list does not show {session.origin}")


async def light(session: Session) -> Sample:
    start = time.perf_counter()
    result = await session.call("light")
    ms = (time.perf_counter() - start) * 1000
    check_listed(session, result)
    return Sample(ms)


async def read_text(session: Session) -> list[CallToolResult]:
    """The replies holding all of the page's text: one call for the peers, tabwarden's slices
    followed to the end. Join them with ``page_text`` once the clock has stopped."""
    replies: list[CallToolResult] = []
    offset = 0
    while True:
        replies.append(await session.call("text", offset=offset))
        next_offset = session.next_offset(replies[-1])
        if next_offset is None or next_offset <= offset:
            return replies
        offset = next_offset


def page_text(session: Session, replies: list[CallToolResult]) -> str:
    return "".join(session.text_of(reply) for reply in replies)


async def flow(session: Session, origin: str) -> Sample:
    """navigate → snapshot → click the button by its ref → read the page's text."""
    start = time.perf_counter()
    await session.call("navigate", url=f"{origin}/flow")
    snapshot = await session.call("snapshot")
    ref = session.ref_named(snapshot, "Reveal")
    await session.call("click", ref=ref)
    replies = await read_text(session)
    ms = (time.perf_counter() - start) * 1000
    text = page_text(session, replies)
    if REVEALED not in text:
        raise CallFailed(f"after the click the page text lacks {REVEALED!r}: {text[:200]!r}")
    return Sample(ms)


async def open_text_page(session: Session, origin: str) -> None:
    await session.call("navigate", url=f"{origin}/text?chars={TEXT_CHARS}")


async def large_text(session: Session) -> Sample:
    start = time.perf_counter()
    replies = await read_text(session)
    ms = (time.perf_counter() - start) * 1000
    text = page_text(session, replies)
    if len(text) < TEXT_CHARS * 0.99:
        raise CallFailed(f"read {len(text):,} characters of {TEXT_CHARS:,}")
    return Sample(ms, {"chars": len(text)})


async def open_image_page(session: Session, origin: str) -> None:
    await session.call("navigate", url=f"{origin}/image?width={IMAGE_WIDTH}&height={IMAGE_HEIGHT}")


async def screenshot(session: Session) -> Sample:
    """A full-page PNG; ``notes["inline"]`` says whether the result carried it."""
    start = time.perf_counter()
    result = await session.call("screenshot")
    ms = (time.perf_counter() - start) * 1000
    png = session.image_of(result)
    if png is None:
        return Sample(ms, {"inline": False})
    size = png_size(png)
    if size is None or size[1] < IMAGE_HEIGHT:
        raise CallFailed(f"the screenshot is not a full-page PNG (size {size})")
    return Sample(ms, {"inline": True, "bytes": len(png), "width": size[0], "height": size[1]})


async def cold_start(launcher: Launcher, server: str) -> Sample:
    """Spawn → ``initialize`` answered (the client's handshake done); then close, untimed."""
    client = launcher.client(server)
    start = time.perf_counter()
    async with client:
        ms = (time.perf_counter() - start) * 1000
    return Sample(ms)


@dataclass
class Concurrent:
    latencies_ms: list[float]
    lost: list[str]
    wall_ms: float


async def sessions(main: Session, launcher: Launcher, calls: int) -> Concurrent:
    """``SESSIONS`` sessions of one server (``main`` and fresh ones), each making ``calls``
    light calls back to back, all at once. A session that cannot start loses all its calls."""
    latencies: list[float] = []
    lost: list[str] = []
    async with AsyncExitStack() as stack:
        members = [main]
        for _ in range(SESSIONS - 1):
            try:
                members.append(await stack.enter_async_context(launcher.session(main.server)))
            except Exception as exc:  # counted: every call it would have made is lost
                lost += ["session did not start: " + one_line(exc)] * calls

        async def worker(session: Session) -> None:
            for _ in range(calls):
                start = time.perf_counter()
                try:
                    result = await session.call("light")
                    ms = (time.perf_counter() - start) * 1000
                    check_listed(session, result)
                except CallFailed as exc:
                    lost.append(one_line(exc))
                else:
                    latencies.append(ms)

        start = time.perf_counter()
        await asyncio.gather(*(worker(s) for s in members))
        wall = (time.perf_counter() - start) * 1000
    return Concurrent(latencies, lost, wall)
