"""Frames in what a tool renders or saves (docs/adr/0007-frames-in-rendered-output.md),
in real Chromium through the real chain. The attacker's page: an approved page on 127.0.0.1
embedding a frame from localhost (another site, so out of process) whose text holds a secret and
a card number. page_screenshot and page_pdf render every frame, so each asks the person about the
frame's origin first; denied, each is refused naming that origin, no image comes back, nothing is
written into the download sandbox, and the secret is nowhere in the result. A card number on the
approved page itself refuses both too (pixels and PDF text cannot be masked). A download the
frame starts is withheld from page_wait_download, whatever its filters say."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from playwright.async_api import BrowserContext

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.trust.gate import TrustGate
from tests.browser.harness import (
    Answer,
    Reply,
    Request,
    ServedSite,
    confirm_page,
    launched,
    ok,
    page_at,
    press,
    served_pages,
    shows,
    shows_card,
    trust_this_process,
)
from tests.deadline import until
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

SECRET = "frame-secret-8c2d"
CARD = "4111 1111 1111 1111"


def _page(request: Request) -> bytes | None:
    if request.host == "localhost" and request.path == "/frame":
        return (
            "<!doctype html><html><body style='background:#fdd'>"
            f"<h1>{SECRET}</h1><p>Card on file: {CARD}</p></body></html>"
        ).encode()
    if request.host == "127.0.0.1" and request.path == "/":
        port = request.port
        return (
            "<!doctype html><html><head><title>approved</title></head><body>"
            "<h1>Approved page</h1>"
            f"<iframe id=cross src='http://localhost:{port}/frame' width=600 height=300></iframe>"
            # Frames that inherit the page's origin: rendered with it, never refused for it.
            "<iframe id=blank></iframe><iframe id=inline srcdoc='<p>inline words</p>'></iframe>"
            "</body></html>"
        ).encode()
    return None


@pytest.fixture
def site_port() -> Iterator[int]:
    with served_pages(hook=_page) as served:
        yield served.port


def _text(result: Any) -> str:
    return json.dumps(result.structured_content) + " ".join(
        getattr(c, "text", "") for c in result.content
    )


async def _frame_loaded(agent: Any, tab: int, origin: str) -> None:
    """Until page_frames lists the cross frame at its own origin (it starts as about:blank)."""

    async def listed() -> bool:
        frames = (await ok(agent, "page_frames", {"tabId": tab}))["frames"]
        return any(f["origin"] == origin for f in frames)

    await until(f"page_frames lists a frame of {origin}", listed)


@pytest.mark.promise("H4-36")
async def test_an_unapproved_frame_is_never_rendered_into_a_screenshot_or_a_pdf(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    a, b = f"http://127.0.0.1:{site_port}", f"http://localhost:{site_port}"
    trust_this_process(browser, [a])
    sandbox = browser.root / "config" / "downloads"

    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
        await _frame_loaded(agent, tab, b)
        for tool, args in (
            ("page_screenshot", {}),
            ("page_screenshot", {"fullPage": True}),
            ("page_pdf", {"name": "report"}),
        ):
            attempt = asyncio.create_task(agent.call_tool(tool, {"tabId": tab, **args}))
            window = await confirm_page(context)
            await shows(window, b)
            await press(window, "#deny")
            result = await attempt
            error = tool_error(result)
            assert error is not None and error["code"] == "origin_not_approved", result
            assert all(getattr(c, "type", "") == "text" for c in result.content)
            text = _text(result)
            assert b in text, text
            assert SECRET not in text and CARD not in text and "JVBERi0" not in text
            assert not sandbox.exists() or list(sandbox.iterdir()) == []
        policy = TrustGate({"TABWARDEN_CONFIG_DIR": str(browser.root / "config")}).current()
        assert policy.policy.origins == (a,)
        # Control: the tab renders once the frame is gone (the frame, not the tab, refused).
        page = await page_at(context, "Playwright lists the tab", lambda url: url == f"{a}/")
        await page.evaluate("document.getElementById('cross').remove()")
        pdf = await ok(agent, "page_pdf", {"tabId": tab, "name": "report"})
        assert Path(pdf["path"]).parent == sandbox.resolve()
        # The approved page itself shows a card number: a PDF or a picture cannot be masked,
        # so both are refused and nothing more is written.
        await page.evaluate(f"document.body.append('Card on file: {CARD}')")
        for tool in ("page_pdf", "page_screenshot"):
            result = await agent.call_tool(tool, {"tabId": tab})
            error = tool_error(result)
            assert error is not None and error["code"] == "policy_denied", result
            assert all(getattr(c, "type", "") == "text" for c in result.content)
            assert CARD not in _text(result) and not shows_card(_text(result))
        assert list(sandbox.iterdir()) == [Path(pdf["path"])]


MINE = b"the approved page's own file\n" * 8
THEIRS = b"what the unapproved frame downloads\n" * 8
OCTET = "application/octet-stream"


@pytest.fixture
def theirs() -> Iterator[ServedSite]:
    """The unapproved frame's origin (127.0.0.1 on another port): a page whose link downloads a
    file whose URL holds a token."""
    frame_page = (
        "<!doctype html><html><body>"
        f"<a id=dl href='/files/token-7f3a.bin' download>{SECRET}</a></body></html>"
    )
    pages: dict[str, Answer] = {
        "/frame": frame_page,
        "/files/token-7f3a.bin": Reply(THEIRS, OCTET),
    }
    with served_pages(pages) as served:
        yield served


@pytest.fixture
def mine(theirs: ServedSite) -> Iterator[ServedSite]:
    """The approved page: a download of its own, and ``theirs``'s page in a frame."""
    top = (
        # The page's own download goes through a hidden iframe, as many sites do: a frame
        # that never holds a document of its own, so it counts as the page's.
        '<!doctype html><html><body><button id=mine type=button onclick="const f = '
        "document.createElement('iframe'); f.hidden = true; f.src = '/files/mine.bin'; "
        'document.body.append(f)">Get mine</button>'
        f"<iframe id=ad src='{theirs.origin}/frame'></iframe></body></html>"
    )
    attachment = {"Content-Disposition": 'attachment; filename="mine.bin"'}
    mine_file = Reply(MINE, OCTET, headers=attachment)
    with served_pages({"/": top, "/files/mine.bin": mine_file}) as served:
        yield served


@pytest.fixture
def origins(mine: ServedSite) -> list[str]:
    return [mine.origin]


@pytest.mark.promise("H4-59")
async def test_a_download_an_unapproved_frame_starts_is_withheld_and_answers_no_filter(
    browser: ThrowawayBrowser,
    context: BrowserContext,
    agent: Client,
    mine: ServedSite,
    theirs: ServedSite,
) -> None:
    """The frame (another local origin, 127.0.0.1 on another port: same site, so in the page's
    process and reported by the tab's own debugger) downloads a file whose URL holds a token.
    page_wait_download never hands it out, with or without a `url` filter matching that URL: each
    wait times out as if it never began, and nothing reaches the sandbox. The page's own download
    still comes through."""
    a = mine.origin
    sandbox = browser.root / "config" / "downloads"
    tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
    await _frame_loaded(agent, tab, theirs.origin)
    # The frame's link is clicked (the person, or a click the page steered into it).
    # Playwright's own view of the tab and its frame may lag the extension's report: wait on it.
    page = await page_at(context, "Playwright lists the tab", lambda url: url == f"{a}/")
    frame = await until(
        "Playwright lists the frame",
        lambda: next((f for f in page.frames if f.url.startswith(theirs.origin)), None),
    )
    await frame.click("#dl")
    await until(
        "the frame downloaded",
        lambda: theirs.requests("/files/token-7f3a.bin"),
        interval_s=0.05,
    )
    for args in ({"url": "token-7f3a"}, {"filename": "token"}, {}):
        result = await agent.call_tool(
            "page_wait_download", {"tabId": tab, "timeoutMs": 5000, **args}
        )
        error = tool_error(result)
        assert error is not None and error["code"] == "timeout", result
        text = _text(result)
        assert theirs.origin not in text and ".bin" not in text, text
        assert not sandbox.exists() or list(sandbox.iterdir()) == []
    # Control: the approved page's own download is found and copied.
    await ok(agent, "page_click", {"tabId": tab, "selector": "#mine"})
    got = await ok(agent, "page_wait_download", {"tabId": tab, "timeoutMs": 30_000})
    assert got["state"] == "complete" and got["url"] == f"{a}/files/mine.bin", got
    assert Path(got["path"]).read_bytes() == MINE
    assert [p.read_bytes() for p in sandbox.iterdir()] == [MINE]
