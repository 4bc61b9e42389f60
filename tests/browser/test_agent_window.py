"""An agent's window opens at a desktop size, so pages render their desktop layout (issue: a
narrow agent window gave pages their small-screen layout, hiding navigation the peers' agents
saw). Headful on Xvfb (a 1600×1000 screen), where window sizes are Chrome's own: headless
Playwright would emulate a 1280-wide viewport in every page and prove nothing."""

from __future__ import annotations

from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import launched, ok, trust_this_process
from tests.deadline import until

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

#: extension/handlers/tabs.js AGENT_WINDOW: the documented desktop size of an agent's window.
DESKTOP = (1280, 800)


async def _inner_width(context: Any, url: str) -> int:
    page = await until(
        f"a page at {url}", lambda: next((p for p in context.pages if p.url == url), None)
    )
    width = await page.evaluate("innerWidth")
    assert isinstance(width, int)
    return width


async def test_an_agent_window_opens_at_a_desktop_size(
    browser: ThrowawayBrowser, site: str, x_display: str
) -> None:
    trust_this_process(browser, [site])
    async with launched(browser, display=x_display) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{site}/form"}))["tab"]
        width = await _inner_width(context, tab["url"])
        # the window is 1280 wide; its page a scrollbar and a border narrower at most
        assert DESKTOP[0] - 40 <= width <= DESKTOP[0], width
        # a second tab of the same session opens in the same window: the same width
        second = (await ok(agent, "tab_open", {"url": f"{site}/?second=1"}))["tab"]
        assert abs(await _inner_width(context, second["url"]) - width) <= 20
