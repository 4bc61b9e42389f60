"""Every page tool at least once, through the real chain in real headless Chromium: a real MCP
client, `tabwarden mcp`, the host Chrome launched, the extension, a local fixture site. The
confirm window is clicked through CDP (Playwright) where a tool needs the person."""

from __future__ import annotations

import asyncio
import base64
from urllib.parse import urlparse

import pytest
from mcp import Client
from playwright.async_api import BrowserContext

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    chromium,
    code,
    confirm_page,
    extension_connected,
    launched,
    mcp_client,
    ok,
    press,
    shows,
    trust_this_process,
    widen,
)
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]


@pytest.mark.promise("H4-15", "H4-16", "H4-18", "H4-19")
async def test_every_page_tool_in_a_real_browser(
    browser: ThrowawayBrowser, agent: Client, context: BrowserContext, site: str
) -> None:
    tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
    assert (await ok(agent, "browser_list", {}))["browsers"] == [
        {"label": "chromium", "current": True}
    ]

    snap = await ok(agent, "page_snapshot", {"format": "json", "tabId": tab})
    by_name = {item["name"]: item for item in snap["snapshot"]}
    assert "hunter2" not in str(snap)  # password values never appear
    plain_ref = next(i["ref"] for i in snap["snapshot"] if i["name"] == "Plain")
    assert plain_ref.startswith("@e") and "Sign in" in by_name

    # Plain click: no confirmation. By ref, then by text.
    await ok(agent, "page_click", {"tabId": tab, "ref": plain_ref})
    await ok(agent, "page_click", {"tabId": tab, "text": "Plain"})
    state = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#out"})
    assert state["text"] == "clicked:2"

    await ok(agent, "page_fill", {"tabId": tab, "selector": "#user", "value": "alice"})
    assert (await ok(agent, "page_get_state", {"tabId": tab, "selector": "#user"}))[
        "value"
    ] == "alice"
    assert (
        await code(agent, "page_fill", {"tabId": tab, "selector": "#pw", "value": "x"})
        == "policy_denied"
    )
    pw_state = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#pw"})
    assert "hunter2" not in str(pw_state)

    await ok(agent, "page_check", {"tabId": tab, "selector": "#keep", "checked": True})
    assert (await ok(agent, "page_get_state", {"tabId": tab, "selector": "#keep"}))[
        "checked"
    ] is True
    await ok(agent, "page_hover", {"tabId": tab, "selector": "#hov"})
    assert (await ok(agent, "page_get_state", {"tabId": tab, "selector": "#hov"}))[
        "text"
    ] == "hovered"
    scrolled = await ok(agent, "page_scroll", {"tabId": tab, "to": "bottom"})
    assert scrolled["scrollY"] > 0
    assert (
        await ok(agent, "page_wait_for", {"tabId": tab, "selector": "#late", "timeoutMs": 5000})
    )["matched"]
    assert (
        await code(agent, "page_wait_for", {"tabId": tab, "selector": "#never", "timeoutMs": 300})
        == "wait_not_met"
    )
    # A ref from a snapshot names what is waited for as well.
    rows = (await ok(agent, "page_snapshot", {"format": "json", "tabId": tab, "mode": "dom"}))[
        "snapshot"
    ]
    shown = rows[0]["ref"]
    assert (await ok(agent, "page_wait_for", {"tabId": tab, "ref": shown, "timeoutMs": 5000}))[
        "matched"
    ]

    # select and press need the person; select is denied, then allowed. With no grace each asks
    # (what one allow covers is test_grace.py's).
    widen(browser, clickGraceSeconds=0)
    selecting = asyncio.create_task(
        agent.call_tool("page_select", {"tabId": tab, "selector": "#color", "value": "g"})
    )
    await press(await confirm_page(context), "#deny")
    assert (tool_error(await selecting) or {}).get("code") == "confirm_denied"
    selecting = asyncio.create_task(
        agent.call_tool("page_select", {"tabId": tab, "selector": "#color", "value": "g"})
    )
    await press(await confirm_page(context), "#allow")
    assert not (await selecting).is_error
    pressing = asyncio.create_task(
        agent.call_tool("page_press", {"tabId": tab, "selector": "#user", "key": "a"})
    )
    await press(await confirm_page(context), "#allow")
    assert not (await pressing).is_error

    # Reads: masked cookies and storage, markdown, scrape, screenshot.
    cookies = (await ok(agent, "cookie_get", {"tabId": tab}))["cookies"]
    session = next(c for c in cookies if c["name"] == "session")
    assert "eyJ" not in session["value"] and "masked" in session["value"]
    items = (await ok(agent, "storage_get", {"tabId": tab, "area": "local"}))["items"]
    token = next(i for i in items if i["key"] == "token")
    assert "0123456789abcdef" not in token["value"] and "masked" in token["value"]
    markdown = (await ok(agent, "page_markdown", {"tabId": tab}))["text"]
    assert "# Sign in" in markdown and "hunter2" not in markdown
    scraped = (await ok(agent, "page_scrape", {"tabId": tab, "selector": "a", "attrs": ["href"]}))[
        "items"
    ]
    assert scraped[0]["text"] == "next page" and scraped[0]["attrs"]["href"].endswith("/page2")
    shot = await agent.call_tool("page_screenshot", {"tabId": tab})
    assert not shot.is_error, shot.content
    image = shot.content[0]
    assert image.type == "image" and image.mime_type == "image/png"
    assert base64.b64decode(image.data)[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.structured_content["bytes"] > 1000

    # A submit click needs the person; one approval covers a repeat within the grace.
    widen(browser, clickGraceSeconds=30)
    stale_ref = by_name["Sign in"]["ref"]
    clicking = asyncio.create_task(agent.call_tool("page_click", {"tabId": tab, "selector": "#go"}))
    window = await confirm_page(context)
    await shows(window, "Sign in")
    await press(window, "#allow")
    clicked = await clicking
    assert not clicked.is_error, clicked.content
    assert "/done" in clicked.structured_content["url"]
    # After a cross-document navigation an old ref is bad_ref, never another element.
    assert await code(agent, "page_click", {"tabId": tab, "ref": stale_ref}) == "bad_ref"
    back = await ok(agent, "page_history", {"tabId": tab})
    assert urlparse(back["url"]).path == "/"
    again = await agent.call_tool(
        "page_click", {"tabId": tab, "selector": "#go"}
    )  # grace: no window
    assert not again.is_error, again.content
    await ok(agent, "page_history", {"tabId": tab})
    forward = await ok(agent, "page_history", {"tabId": tab, "steps": 1})
    assert "/done" in forward["url"]
    await ok(agent, "page_reload", {"tabId": tab})
    # A navigation that never happens (204) is reported honestly, not as success.
    assert (
        await code(agent, "page_navigate", {"tabId": tab, "url": f"{site}/nocontent"})
        == "navigation_cancelled"
    )
    assert (await ok(agent, "tab_focus", {"tabId": tab}))["tab"]["id"] == tab

    # eval: off by default; enabled by signed policy, then confirmed showing the code.
    assert await code(agent, "page_eval", {"tabId": tab, "code": "1+1"}) == "policy_denied"
    widen(browser, eval=True)
    evaluating = asyncio.create_task(agent.call_tool("page_eval", {"tabId": tab, "code": "6*7"}))
    window = await confirm_page(context)
    await shows(window, "6*7")
    await press(window, "#allow")
    result = await evaluating
    assert not result.is_error, result.content
    assert result.structured_content["result"] == 42

    closed = await ok(agent, "tab_close_all", {})
    assert closed["closed"] == 1
    assert (await ok(agent, "tab_list", {}))["tabs"] == []


@pytest.mark.promise("H4-27")
async def test_eight_concurrent_sessions_never_lose_or_misroute_a_reply(
    browser: ThrowawayBrowser, site: str
) -> None:
    trust_this_process(browser, [site])

    async def session(n: int) -> None:
        async with mcp_client(browser) as agent:
            await extension_connected(agent, timeout_s=90)
            tab = (await ok(agent, "tab_open", {"url": f"{site}/page2?s={n}"}))["tab"]["id"]
            for _ in range(3):
                tabs = (await ok(agent, "tab_list", {}))["tabs"]
                assert [(t["id"], t["url"]) for t in tabs] == [(tab, f"{site}/page2?s={n}")]
                text = await ok(agent, "page_text", {"tabId": tab})
                assert "second page" in text["text"] and text["url"].endswith(f"s={n}")

    async with chromium(browser):
        await asyncio.gather(*(session(n) for n in range(8)))


@pytest.mark.promise("H4-16", "H4-17")
async def test_upload_is_off_then_confirmed_showing_the_path_and_sandboxed(
    browser: ThrowawayBrowser, site: str
) -> None:
    config = browser.root / "config"
    trust_this_process(browser, [site])
    sandbox = config / "uploads"
    sandbox.mkdir(mode=0o700)
    (sandbox / "report.txt").write_bytes(b"quarterly numbers\n")
    (browser.root / "secret.txt").write_text("not for the agent")

    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{site}/upload"}))["tab"]["id"]
        args = {"tabId": tab, "selector": "#file", "path": "report.txt"}
        assert await code(agent, "page_upload", args) == "policy_denied"  # off by default
        widen(browser, upload=True)
        for escape in ("../secret.txt", str(browser.root / "secret.txt")):
            assert await code(agent, "page_upload", {**args, "path": escape}) == "policy_denied"
        assert (
            await code(agent, "page_upload", {**args, "selector": "#text"}) == "bad_request"
        )  # not a file input
        uploading = asyncio.create_task(agent.call_tool("page_upload", args))
        window = await confirm_page(context)
        await shows(window, "report.txt")
        await press(window, "#allow")
        result = await uploading
        assert not result.is_error, result.content
        got = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#got"})
        assert got["text"] == "report.txt:18"
