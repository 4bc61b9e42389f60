"""page_screenshot of one element, in real Chromium through the real chain: the image is the
element's border box and nothing around it (its pixels are the element's colour, its size the
box's), taken after the element was scrolled into view as the actions do, named by ref, selector
or text, and the result names it (`target`). An element in a same-origin frame is captured from
the tab's viewport; an element in a frame of an unapproved site is asked about and, denied,
refused (`origin_not_approved`) with no image and nothing of the frame's text. Another session
cannot capture an element of the agent's tab (`tab_not_owned`); an element with no box, or an
element given with a region, is refused before anything is captured."""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from playwright.async_api import BrowserContext

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    Request,
    code,
    confirm_page,
    mcp_client,
    ok,
    press,
    served_pages,
    shows,
)
from tests.deadline import until
from tests.fakes import tool_error

pytestmark = pytest.mark.browser

SECRET = "frame-secret-51ab"
RED = (255, 0, 0)
BLUE = (0, 0, 255)
GREEN = (0, 128, 0)


def _page(request: Request) -> bytes | None:
    port = request.port
    if request.host == "127.0.0.1" and request.path == "/":
        return (
            b"<!doctype html><html><head><title>shots</title><style>body{margin:0}"
            b"#badge{width:120px;height:40px;background:rgb(255,0,0);margin-left:30px}"
            b"#buy{width:200px;height:50px;background:rgb(0,0,255);color:rgb(0,0,255);border:0;"
            b"display:block;margin-top:40px}</style></head><body>"
            b"<h1>Element shots</h1><div style='height:2400px'></div>"
            b"<div id=badge role=img aria-label=Badge></div>"
            b"<button id=buy type=button>Buy now</button>"
            b"<div id=gone style='display:none'>gone</div>"
            b"<div style='height:2400px'></div></body></html>"
        )
    if request.host == "127.0.0.1" and request.path == "/framed":
        return (
            b"<!doctype html><html><head><title>framed</title></head><body style='margin:0'>"
            b"<div style='height:50px'></div>"
            b"<iframe id=same src='/inner' width=400 height=200 style='border:0'></iframe>"
            b"</body></html>"
        )
    if request.host == "127.0.0.1" and request.path == "/inner":
        return (
            b"<!doctype html><html><body style='margin:0;background:#fff'>"
            b"<div style='height:60px'></div>"
            b"<div id=inside style='width:90px;height:30px;background:rgb(0,128,0);margin:0 9px'>"
            b"</div></body></html>"
        )
    if request.host == "127.0.0.1" and request.path == "/cross":
        return (
            "<!doctype html><html><head><title>cross</title></head><body>"
            f"<iframe id=cross src='http://localhost:{port}/frame' width=400 height=200></iframe>"
            "</body></html>"
        ).encode()
    if request.host == "localhost" and request.path == "/frame":
        return (
            "<!doctype html><html><body>"
            f"<div id=secret style='width:90px;height:30px;background:#fdd'>{SECRET}</div>"
            "</body></html>"
        ).encode()
    return None


@pytest.fixture(scope="module")
def origins(site_port: int) -> list[str]:
    return [f"http://127.0.0.1:{site_port}"]


@pytest.fixture(scope="module")
def site_port() -> Iterator[int]:
    with served_pages(hook=_page) as served:
        yield served.port


def _pixels(png: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    """(width, height, every pixel's RGB) of an 8-bit non-interlaced RGB or RGBA PNG: an oracle of
    its own, not the extension's."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, data, width, height, kind = 8, b"", 0, 0, 0
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        chunk, body = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        if chunk == b"IHDR":
            width, height, depth, kind, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and kind in (2, 6) and interlace == 0, (depth, kind, interlace)
        elif chunk == b"IDAT":
            data += body
        at += 12 + length
    raw = zlib.decompress(data)
    step = 4 if kind == 6 else 3
    stride = width * step
    rows: list[bytearray] = []
    prior = bytearray(stride)
    for y in range(height):
        kind_of_filter = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - step] if i >= step else 0
            b = prior[i]
            c = prior[i - step] if i >= step else 0
            if kind_of_filter == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind_of_filter == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind_of_filter == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind_of_filter == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 0xFF
        rows.append(line)
        prior = line
    pixels = [tuple(row[x * step : x * step + 3]) for row in rows for x in range(width)]
    return width, height, pixels  # type: ignore[return-value]


async def _shot(
    agent: Any, args: dict[str, Any]
) -> tuple[int, int, set[tuple[int, int, int]], Any]:
    result = await agent.call_tool("page_screenshot", args)
    assert not result.is_error, result.content
    width, height, pixels = _pixels(base64.b64decode(result.content[0].data))
    meta = result.structured_content
    assert (meta["width"], meta["height"]) == (width, height)
    return width, height, set(pixels), meta


def _text(result: Any) -> str:
    return json.dumps(result.structured_content) + " ".join(
        getattr(c, "text", "") for c in result.content
    )


@pytest.mark.promise("H4-77")
async def test_an_element_screenshot_is_its_box_scrolled_into_view(
    browser: ThrowawayBrowser, context: BrowserContext, agent: Client, site_port: int
) -> None:
    a = f"http://127.0.0.1:{site_port}"
    tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
    page = await until(
        "Playwright lists the tab",
        lambda: next((p for p in context.pages if p.url == f"{a}/"), None),
    )
    dpr = await page.evaluate("devicePixelRatio")
    assert await page.evaluate("scrollY") == 0
    # The badge sits 2400 px down, below the fold: scrolled into view, then its box alone.
    width, height, colours, meta = await _shot(agent, {"tabId": tab, "selector": "#badge"})
    assert (width, height) == (round(120 * dpr), round(40 * dpr))
    assert colours == {RED}, colours
    assert meta["target"]["role"] == "img" and meta["target"]["name"] == "Badge"
    assert await page.evaluate("scrollY") > 0
    # By the ref the page gave it, and by its text: the same element, the same image.
    ref = meta["target"]["ref"]
    again = await _shot(agent, {"tabId": tab, "ref": ref})
    assert again[:3] == (width, height, {RED}) and again[3]["target"]["ref"] == ref
    await page.evaluate("scrollTo(0, 0)")
    w, h, colours, meta = await _shot(agent, {"tabId": tab, "text": "Buy now"})
    assert (w, h) == (round(200 * dpr), round(50 * dpr)) and colours == {BLUE}, colours
    assert meta["target"]["role"] == "button" and meta["target"]["name"] == "Buy now"
    # The viewport is not an element's box.
    view = await _shot(agent, {"tabId": tab})
    assert view[:2] != (w, h)

    # Refused before anything is captured: no box, an element with a region, an unknown one.
    for args, expected in (
        ({"selector": "#gone"}, "element_not_found"),
        ({"selector": "#nowhere"}, "element_not_found"),
        ({"selector": "#badge", "region": {"x": 0, "y": 0, "width": 5, "height": 5}}, None),
    ):
        result = await agent.call_tool("page_screenshot", {"tabId": tab, **args})
        error = tool_error(result)
        assert error is not None, (args, result)
        assert expected is None or error["code"] == expected, (args, error)
        assert all(getattr(c, "type", "") == "text" for c in result.content)

    # Another session cannot capture an element of this tab.
    async with mcp_client(browser) as other:
        for args in ({"selector": "#badge"}, {"ref": ref}, {"text": "Buy now"}):
            assert await code(other, "page_screenshot", {"tabId": tab, **args}) == ("tab_not_owned")


@pytest.mark.promise("H4-77")
async def test_an_element_in_a_frame_is_captured_and_an_unapproved_frame_is_refused(
    context: BrowserContext, agent: Client, site_port: int
) -> None:
    a, b = f"http://127.0.0.1:{site_port}", f"http://localhost:{site_port}"
    tab = (await ok(agent, "tab_open", {"url": f"{a}/framed"}))["tab"]["id"]

    async def inner() -> int | None:
        frames = (await ok(agent, "page_frames", {"tabId": tab}))["frames"]
        return next((f["frameId"] for f in frames if f["url"].endswith("/inner")), None)

    frame = await until("page_frames lists the same-origin frame", inner)
    page = await until(
        "Playwright lists the tab",
        lambda: next((p for p in context.pages if p.url == f"{a}/framed"), None),
    )
    dpr = await page.evaluate("devicePixelRatio")
    width, height, colours, meta = await _shot(
        agent, {"tabId": tab, "frame": frame, "selector": "#inside"}
    )
    assert (width, height) == (round(90 * dpr), round(30 * dpr))
    assert colours == {GREEN}, colours
    assert meta["target"]["frame"] == frame

    # A frame of an unapproved site: the person is asked about it; denied, nothing of it.
    await ok(agent, "page_navigate", {"tabId": tab, "url": f"{a}/cross"})

    async def cross() -> int | None:
        frames = (await ok(agent, "page_frames", {"tabId": tab}))["frames"]
        return next((f["frameId"] for f in frames if f["origin"] == b), None)

    frame = await until("page_frames lists the cross-site frame", cross)
    attempt = asyncio.create_task(
        agent.call_tool("page_screenshot", {"tabId": tab, "frame": frame, "selector": "#secret"})
    )
    window = await confirm_page(context)
    await shows(window, b)
    await press(window, "#deny")
    result = await attempt
    error = tool_error(result)
    assert error is not None and error["code"] == "origin_not_approved", result
    assert all(getattr(c, "type", "") == "text" for c in result.content)
    assert SECRET not in _text(result)
