"""page_drag, the attacker's attempts, in real Chromium through the real chain: a drag on a tab
the session does not own, out of and into a cross-origin frame on a site the person has not
approved (and a point over that frame), a covered start, and a drag from a submit button the
person refuses. Each is refused with its code, and each page reads back that nothing moved,
dropped or was even pressed (its trusted pointerdown counter stays 0)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from playwright.async_api import BrowserContext, Frame, Page

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.drag_pages import board_site, cross_frame
from tests.browser.harness import (
    confirm_page,
    mcp_client,
    ok,
    press,
    shows,
)
from tests.fakes import tool_error

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def origins(site_port: int) -> list[str]:
    return [f"http://127.0.0.1:{site_port}"]


@pytest.fixture(scope="module")
def site_port() -> Iterator[int]:
    with board_site() as port:
        yield port


async def code(agent: Any, args: dict[str, Any]) -> str:
    result = await agent.call_tool("page_drag", args)
    error = tool_error(result)
    assert error is not None, (args, result.structured_content)
    return str(error["code"])


async def untouched(doc: Page | Frame) -> None:
    """Read outside the bridge: nothing reordered, dropped or pressed on this board."""
    assert await doc.text_content("#order") == "A,B,C"
    assert await doc.text_content("#dropped") == "nothing dropped"
    assert await doc.text_content("#padlog") == "pad idle"
    assert await doc.text_content("#downs") == "0"


def board(pages: list[Page], url: str) -> Page:
    return next(p for p in pages if p.url == url)


@pytest.mark.promise("H4-69")
async def test_another_sessions_tab_is_not_dragged_on(
    browser: ThrowawayBrowser, context: BrowserContext, agent: Client, site_port: int
) -> None:
    a = f"http://127.0.0.1:{site_port}"

    tab = (await ok(agent, "tab_open", {"url": f"{a}/board"}))["tab"]["id"]
    async with mcp_client(browser) as other:
        for args in (
            {"text": "Alpha", "to": {"text": "Gamma"}},
            {"selector": "#card", "to": {"selector": "#zone"}},
            {"x": 320, "y": 20, "to": {"x": 395, "y": 90}},
        ):
            assert await code(other, {"tabId": tab, **args}) == "tab_not_owned"
    await untouched(board(context.pages, f"{a}/board"))


@pytest.mark.promise("H4-69")
async def test_a_frame_on_an_unapproved_site_is_neither_dragged_in_nor_out_of(
    context: BrowserContext, agent: Client, site_port: int
) -> None:
    a, b = f"http://127.0.0.1:{site_port}", f"http://localhost:{site_port}"

    tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
    cross = await cross_frame(agent, tab)
    attempts: list[dict[str, Any]] = [
        # Out of the frame onto the approved top page's zone.
        {"frame": cross, "selector": "#card", "to": {"frame": 0, "selector": "#zone"}},
        # Within the frame.
        {"frame": cross, "text": "Alpha", "to": {"text": "Gamma"}},
        # From the approved top page into the frame's zone.
        {"selector": "#card", "to": {"frame": cross, "selector": "#zone"}},
    ]
    for args in attempts:
        attempt = asyncio.create_task(agent.call_tool("page_drag", {"tabId": tab, **args}))
        window = await confirm_page(context)
        await shows(window, b)
        await press(window, "#deny")
        error = tool_error(await attempt)
        assert error is not None and error["code"] == "origin_not_approved", (args, error)
    # A point of the top page over the frame: the drop would land in it ungated.
    iframe = await board(context.pages, f"{a}/").eval_on_selector(
        "#cross", "e => { const r = e.getBoundingClientRect(); return [r.left, r.top]; }"
    )
    into = {"x": iframe[0] + 9 + 6 + 200, "y": iframe[1] + 9 + 6 + 90}
    assert await code(agent, {"tabId": tab, "selector": "#card", "to": into}) == "bad_request"
    top = board(context.pages, f"{a}/")
    await untouched(top)
    await untouched(next(f for f in top.frames if f.url.startswith(b)))


@pytest.mark.promise("H4-69")
async def test_a_covered_start_is_not_dragged(
    context: BrowserContext, agent: Client, site_port: int
) -> None:
    a = f"http://127.0.0.1:{site_port}"

    tab = (await ok(agent, "tab_open", {"url": f"{a}/board"}))["tab"]["id"]
    # The veil lies over the hidden card: pressing there would press the veil.
    args = {"tabId": tab, "selector": "#hidden-card", "to": {"selector": "#zone"}}
    assert await code(agent, args) == "element_covered"
    # And dropping on it: the release would land on the veil.
    to_covered = {"tabId": tab, "selector": "#card", "to": {"selector": "#hidden-card"}}
    assert await code(agent, to_covered) == "element_covered"
    await untouched(board(context.pages, f"{a}/board"))


@pytest.mark.promise("H4-69")
async def test_a_drag_from_a_submit_button_the_person_denies_presses_nothing(
    context: BrowserContext, agent: Client, site_port: int
) -> None:
    a = f"http://127.0.0.1:{site_port}"

    tab = (await ok(agent, "tab_open", {"url": f"{a}/board"}))["tab"]["id"]
    attempt = asyncio.create_task(agent.call_tool("page_drag", {
        "tabId": tab, "selector": "#send", "to": {"selector": "#zone"}}))  # fmt: skip
    window = await confirm_page(context)
    # The window names both ends and the site.
    await shows(window, 'button "Send"')
    await shows(window, "Zone")
    await shows(window, a)
    await press(window, "#deny")
    error = tool_error(await attempt)
    assert error is not None and error["code"] == "confirm_denied", error
    page = board(context.pages, f"{a}/board")
    await untouched(page)
    assert page.url == f"{a}/board"
