"""Chrome's debugging bar never hides the confirm window's question or its buttons.

While the debugger is attached to an agent's tab (ADR 0005: from ``tab_open`` on), Chrome shows
'"tabwarden" started debugging this browser' [Cancel] [x] at the top of *every* window, the
confirm window included, where it takes ~56 px of the height the window was sized for
(measured headful on Xvfb, Chromium 156). The bar exists only in a headful browser, so this test
runs on a private X display. The window grows itself until every row and both buttons show.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import Answer, confirm_page, launched, ok, press, served_pages, shows
from tests.deadline import until
from tests.fakes import tool_error

#: A form sent by GET with a long button label and many fields: the longest question the window
#: asks for a click (the detail and the field list at their own maximum heights, the GET warning).
FIELDS = [f"field_{i:02d}" for i in range(14)]
LABEL = "Send this application form with every one of the answers given above " * 3
LONG_FORM = (
    "<!doctype html><title>long form</title><form action=/done method=get>"
    + "".join(f'<label>{n} <input name="{n}" value="x"></label>' for n in FIELDS)
    + f'<button id="go" type="submit">{LABEL}</button></form>'
).encode()


@pytest.fixture
def site() -> Any:
    pages: dict[str, Answer] = {"/": LONG_FORM, "/done": b"<!doctype html><title>done</title>"}
    with served_pages(pages) as served:
        yield served.origin


async def _fits(window: Any) -> dict[str, float] | None:
    """The window's sizes once the page shows whole (no scrolling, both buttons inside), else
    None."""
    got: dict[str, float] = await window.evaluate(
        """() => {
          const bottom = (id) => document.getElementById(id).getBoundingClientRect().bottom;
          return {inner: innerHeight, outer: outerHeight,
                  content: document.documentElement.scrollHeight,
                  deny: bottom('deny'), allow: bottom('allow')};
        }"""
    )
    inside = max(got["deny"], got["allow"]) <= got["inner"] and got["content"] <= got["inner"]
    return got if inside else None


async def test_the_confirm_window_grows_past_chromes_debugging_bar(
    trusted: ThrowawayBrowser, site: str, x_display: str
) -> None:
    async with launched(trusted, x_display) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
        asking = asyncio.create_task(confirm_page(context))
        click = asyncio.create_task(
            agent.call_tool("page_click", {"tabId": tab, "selector": "#go"})
        )
        window = await asking
        await shows(window, f"{FIELDS[0]} = •••")
        sizes = await until(
            "the confirm window shows its question and both buttons whole",
            lambda: _fits(window),
        )
        # The bar really is there, above the page (measured: 56 px; on Xvfb without a window
        # manager a popup has no other frame).
        assert sizes["outer"] - sizes["inner"] >= 40, sizes
        await press(window, "#deny")
        assert (tool_error(await click) or {}).get("code") == "confirm_denied"
