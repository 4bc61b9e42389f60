"""The grace after an allowed action, in real headless Chromium through the real chain: with a
signed clickGraceSeconds, the person allows one page_select; a following page_select and
page_keys on the same tab and origin run without a window, while page_eval (asked every call)
still asks within the window, and after the tab goes to another approved origin the next
page_select asks again. The first window says what an allow covers and for how long."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from playwright.async_api import BrowserContext

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    ServedSite,
    confirm_page,
    launched,
    ok,
    press,
    served_pages,
    shows,
    trust_this_process,
    widen,
)

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

FORM = b"""<!doctype html><html><head><title>choose</title></head><body>
<select id="fruit"><option value="a">Apple</option><option value="b">Banana</option>
<option value="c">Cherry</option></select>
<input id="name" value="">
</body></html>"""

#: Longer than any run of this test: the window cannot end by the clock while it runs.
GRACE_S = 600


@pytest.fixture
def first_site() -> Iterator[ServedSite]:
    with served_pages(fallback=FORM) as served:
        yield served


@pytest.fixture
def second_site() -> Iterator[ServedSite]:
    with served_pages(fallback=FORM) as served:
        yield served


def _windows(context: BrowserContext) -> int:
    return sum("/confirm.html" in p.url for p in context.pages)


async def _allowed(context: BrowserContext, agent: Client, tool: str, args: dict[str, Any]) -> Any:
    """``tool`` asks the person in the confirm window; they allow it; it succeeds."""
    call = asyncio.create_task(agent.call_tool(tool, args))
    window = await confirm_page(context)
    await press(window, "#allow")
    result = await call
    assert not result.is_error, (tool, result.content)
    return result.structured_content


@pytest.mark.promise("H4-15")
async def test_one_allow_covers_the_tab_and_origin_and_nothing_else(
    browser: ThrowawayBrowser, first_site: ServedSite, second_site: ServedSite
) -> None:
    a, b = first_site.origin, second_site.origin
    trust_this_process(browser, [a, b])
    widen(browser, clickGraceSeconds=GRACE_S, eval=True)

    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
        select = {"tabId": tab, "selector": "#fruit"}

        # The first select asks; its window says what an allow also covers.
        call = asyncio.create_task(agent.call_tool("page_select", {**select, "value": "b"}))
        window = await confirm_page(context)
        await shows(window, f"no new questions on this site in this tab for {GRACE_S} s")
        title = await window.get_attribute("#grace", "title") or ""
        assert f"on {a} in this tab are not asked again" in title, title
        await window.set_viewport_size({"width": 460, "height": 360 - 64})  # its real size
        whole = "(g) => g.scrollWidth <= g.clientWidth && g.getBoundingClientRect().bottom < 296"
        assert await window.eval_on_selector("#grace", whole), "the line is cut or hidden"
        await press(window, "#allow")
        assert not (await call).is_error

        # Within the window, on the same tab and origin: no window, the actions run. (A window
        # would hold the call until the confirm timeout refused it.)
        assert (await ok(agent, "page_select", {**select, "value": "c"}))["selected"] == ["c"]
        keys = await ok(agent, "page_keys", {"tabId": tab, "selector": "#name", "keys": ["x"]})
        assert keys["pressed"] == 1
        state = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#name"})
        assert state["value"] == "x"
        assert _windows(context) == 0

        # page_eval is asked on every call, grace or not.
        evaluated = await _allowed(context, agent, "page_eval", {"tabId": tab, "code": "6*7"})
        assert evaluated["result"] == 42

        # Another approved origin on the same tab: the window is over; the next select asks.
        await ok(agent, "page_navigate", {"tabId": tab, "url": f"{b}/"})
        chosen = await _allowed(context, agent, "page_select", {**select, "value": "b"})
        assert chosen["selected"] == ["b"]

        # Another tab on the first origin has no window of its own either.
        other = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
        again = {"tabId": other, "selector": "#fruit", "value": "c"}
        assert (await _allowed(context, agent, "page_select", again))["selected"] == ["c"]
