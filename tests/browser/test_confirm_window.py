"""Page tools through the real chain in real headless Chromium, with the confirm window clicked by
the test through CDP (Playwright drives Debian's Chromium; the host is still launched by Chrome
through the manifest our `install` wrote). Two origins: http://127.0.0.1:P and http://localhost:P.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from mcp_types import ImageContent
from playwright.async_api import Page

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    Reply,
    Request,
    approved_origins,
    confirm_page,
    launched,
    mcp_client,
    press,
    served_pages,
    shows,
    shows_card,
    trust_this_process,
)
from tests.deadline import within
from tests.fakes import tool_error
from tests.fixtures import audit_entries

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

BIG_CHARS = 5_000_000  # 10 MB of UTF-8 in one page_text reply


#: Random pixels compress to nothing: a full-page PNG of this is well over 10 MB.
NOISE = (
    b"<!doctype html><title>noise</title><style>body{margin:0}</style>"
    b"<canvas id=c width=1200 height=3200></canvas><script>"
    b"const c=document.getElementById('c'),x=c.getContext('2d'),"
    b"d=x.createImageData(1200,3200);"
    b"crypto.getRandomValues(new Uint8Array(65536));"
    b"for(let i=0;i<d.data.length;i+=65536)"
    b"{crypto.getRandomValues(d.data.subarray(i,Math.min(i+65536,d.data.length)))}"
    b"for(let i=3;i<d.data.length;i+=4)d.data[i]=255;x.putImageData(d,0,0);"
    b"document.title='noise ready'"
    b"</script>"
)
PAGES = {
    "/big": ("<!doctype html><title>big</title><body><p>" + "é" * BIG_CHARS + "</p>").encode(),
    "/noise": NOISE,
    "/secrets": (
        b"<!doctype html><title>secrets</title><body><p>card 4111 1111 1111 1111 here</p>"
        b"<input type=password value=hunter2></body>"
    ),
}


def _redirect(request: Request) -> Reply | None:
    if request.path != "/redirect":
        return None
    return Reply(status=302, content_type=None, headers={"Location": request.query("to")})


@pytest.fixture
def site_port() -> Iterator[int]:
    fallback = b"<!doctype html><title>fixture</title><body><p>Hello fixture</p></body>"
    with served_pages(PAGES, fallback=fallback, hook=_redirect) as served:
        yield served.port


def _err(result: Any) -> str | None:
    return (tool_error(result) or {}).get("code")


def _audit(browser: ThrowawayBrowser) -> list[dict[str, Any]]:
    path = browser.root / "config" / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.promise("PR-07", "H4-02", "H4-09", "H4-10", "H4-11", "H4-12")
async def test_origin_approval_tab_ownership_and_confirmed_actions(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    a, b = f"http://127.0.0.1:{site_port}", f"http://localhost:{site_port}"
    trust_this_process(browser, [])

    async with launched(browser) as (context, agent):
        # 1. A new origin: the person allows it in the confirm window.
        opening = asyncio.create_task(agent.call_tool("tab_open", {"url": f"{a}/"}))
        window = await confirm_page(context)
        await shows(window, a)
        await press(window, "#allow")
        opened = await opening
        assert _err(opened) is None, opened.content
        tab = opened.structured_content["tab"]["id"]
        assert approved_origins(browser) == (a,)
        grants = [e for e in _audit(browser) if e["event"] == "origin_grant"]
        assert grants and grants[-1]["path"] == "window" and grants[-1]["origin"] == a
        text = await agent.call_tool("page_text", {"tabId": tab})
        assert "Hello fixture" in text.structured_content["text"]

        # 2. Another origin, denied: nothing recorded. 3. Window closed: also a denial.
        for how in ("deny", "close"):
            attempt = asyncio.create_task(agent.call_tool("tab_open", {"url": f"{b}/"}))
            window = await confirm_page(context)
            if how == "deny":
                await press(window, "#deny")
            else:
                await window.close()
            assert _err(await attempt) == "origin_not_approved"
            assert approved_origins(browser) == (a,)

        # 4. A redirect to an unapproved origin stops the tool.
        bounce = await agent.call_tool(
            "page_navigate", {"tabId": tab, "url": f"{a}/redirect?to={b}/"}
        )
        assert _err(bounce) == "origin_not_approved"
        back = await agent.call_tool("page_navigate", {"tabId": tab, "url": f"{a}/secrets"})
        assert _err(back) is None, back.content

        # 5. Redaction: card-like numbers masked, password values never present.
        text = (await agent.call_tool("page_text", {"tabId": tab})).structured_content["text"]
        assert not shows_card(text) and "hunter2" not in text and "card" in text

        # 6. A second MCP session sees none of the first's tabs and cannot touch them.
        async with mcp_client(browser) as other:
            assert (await other.call_tool("tab_list", {})).structured_content["tabs"] == []
            assert _err(await other.call_tool("page_text", {"tabId": tab})) == "tab_not_owned"
            assert _err(await other.call_tool("tab_close", {"tabId": tab})) == "tab_not_owned"

        # 7. Closing a tab needs confirmation (default policy): denied, then allowed.
        closing = asyncio.create_task(agent.call_tool("tab_close", {"tabId": tab}))
        await press(await confirm_page(context), "#deny")
        assert _err(await closing) == "confirm_denied"
        assert [
            t["id"] for t in (await agent.call_tool("tab_list", {})).structured_content["tabs"]
        ] == [tab]
        closing = asyncio.create_task(agent.call_tool("tab_close", {"tabId": tab}))
        await press(await confirm_page(context), "#allow")
        assert _err(await closing) is None
        assert (await agent.call_tool("tab_list", {})).structured_content["tabs"] == []


@pytest.mark.promise("PR-07", "H4-03")
async def test_a_page_cannot_answer_the_confirm_window(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    a, b = f"http://127.0.0.1:{site_port}", f"http://localhost:{site_port}"
    trust_this_process(browser, [a])

    async with launched(browser) as (context, agent):
        attacker = await context.new_page()
        await attacker.goto(f"{a}/")
        attempt = asyncio.create_task(agent.call_tool("tab_open", {"url": f"{b}/"}))
        window = await confirm_page(context)
        confirm_url = window.url
        # The page has no channel to the extension, and cannot load or script its window.
        probe = await attacker.evaluate(
            """async (url) => {
                const out = {runtime: typeof (globalThis.chrome && chrome.runtime && \
chrome.runtime.sendMessage)};
                try { await fetch(url); out.fetch = "loaded"; } \
catch (e) { out.fetch = "blocked"; }
                const w = window.open(url);
                out.opened = w === null ? "null" : "window";
                return out;
            }""",
            confirm_url,
        )
        assert probe["runtime"] == "undefined" and probe["fetch"] == "blocked"
        assert not attempt.done()  # still waiting for the person
        await press(window, "#deny")
        assert _err(await attempt) == "origin_not_approved"
        assert approved_origins(browser) == (a,)


@pytest.mark.promise("PR-07", "H4-29")
async def test_a_ten_megabyte_page_text_arrives_intact(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    a = f"http://127.0.0.1:{site_port}"
    trust_this_process(browser, [a])

    async with launched(browser) as (_, agent):
        opened = await agent.call_tool("tab_open", {"url": f"{a}/big"})
        assert _err(opened) is None, opened.content
        result = await agent.call_tool(
            "page_text",
            {"tabId": opened.structured_content["tab"]["id"], "maxChars": 5_000_000},
        )
        assert _err(result) is None, result.content
        text = result.structured_content["text"]
        assert text == "é" * BIG_CHARS  # 10 MB of UTF-8: chunked on hop 3, reassembled intact
        assert result.structured_content["nextOffset"] is None


@pytest.mark.promise("PR-07", "H4-02")
async def test_an_unanswered_confirm_window_times_out_as_confirm_timeout_and_is_audited(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    from tabwarden.trust import store

    a, b = f"http://127.0.0.1:{site_port}", f"http://localhost:{site_port}"
    config = browser.root / "config"
    trust_this_process(browser, [a])
    store.add_restriction(
        config / "trust.json", "confirmTimeoutSeconds", 12, 1_800_000_000
    )  # narrowing: free; long enough for the server's progress (every 5 s) to be seen
    messages: list[str | None] = []

    async def on_progress(  # the SDK's ProgressFnT: these parameter names
        progress: float, total: float | None, message: str | None
    ) -> None:
        messages.append(message)

    async with launched(browser) as (context, agent):
        attempt = asyncio.create_task(
            agent.call_tool("tab_open", {"url": f"{b}/"}, progress_callback=on_progress)
        )
        window = await confirm_page(context)
        closed = asyncio.get_running_loop().create_future()

        def on_close(_page: Page) -> None:
            if not closed.done():
                closed.set_result(True)

        window.on("close", on_close)
        assert _err(await attempt) == "confirm_timeout"  # nobody answered: said so
        # Meanwhile the client heard that the call still waits (a client's own request
        # timeout would otherwise end it with no tabwarden code).
        assert messages and all(m and "confirmation may be waiting" in m for m in messages)
        await within("the window went away with the request", closed)
        assert approved_origins(browser) == (a,)  # nothing recorded
        timed_out = [
            e
            for e in audit_entries(config)
            if e.get("event") == "tool_call" and e.get("decision") == "timed_out"
        ]
        assert [(e["tool"], e["refusal"]) for e in timed_out] == [("tab_open", "confirm_timeout")]


@pytest.mark.promise("PR-07", "H4-29")
async def test_a_ten_megabyte_full_page_screenshot_arrives_intact(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    import base64
    import struct

    a = f"http://127.0.0.1:{site_port}"
    trust_this_process(browser, [a])

    async with launched(browser) as (_, agent):
        opened = await agent.call_tool("tab_open", {"url": f"{a}/noise"})
        assert _err(opened) is None, opened.content
        tab = opened.structured_content["tab"]["id"]
        ready = await agent.call_tool(
            "page_wait_for", {"tabId": tab, "selector": "canvas", "timeoutMs": 10_000}
        )
        assert _err(ready) is None, ready.content
        shot = await agent.call_tool("page_screenshot", {"tabId": tab, "fullPage": True})
        assert _err(shot) is None, shot.content
        image = shot.content[0]
        assert isinstance(image, ImageContent), image
        png = base64.b64decode(image.data, validate=True)
        assert (
            png[:8] == b"\x89PNG\r\n\x1a\n" and png[-12:-4] == b"\x00\x00\x00\x00IEND"
        )  # complete
        width, height = struct.unpack(">II", png[16:24])
        assert width >= 1200 and height >= 3200  # the whole page, not the viewport
        assert len(png) >= 10 * 1024 * 1024  # chunked on hop 3 and reassembled byte for byte
        assert shot.structured_content["bytes"] == len(png)
