"""Trusted input through Chrome's debugger, in real Chromium through the real chain:
a button that only honours `event.isTrusted` is reached by page_mouse and page_click alike; a
CSS `:hover` menu opens under page_hover; a button under an overlay is reported covered (with
what is on top and its ref) and not clicked, as the page's own counter proves; and when the
debugger is taken off the tab, the next call says so and the one after re-attaches."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from playwright.async_api import BrowserContext

from tests.browser.harness import ok, served_pages
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

INPUT = b"""<!doctype html><html><head><title>input</title><style>
#menu .items { display: none; }
#menu:hover .items { display: block; }
#box { position: relative; width: 200px; height: 40px; }
#overlay { position: absolute; inset: 0; background: transparent; }
</style></head><body>
<button type="button" id="trusted">Trusted only</button>
<p id="out">none</p>
<div id="menu">Menu<div class="items"><span id="item">Settings</span></div></div>
<div id="box"><button type="button" id="under">Under</button>
<div id="overlay" role="dialog" aria-label="Cookie banner"></div></div>
<p id="count">0</p>
<script>
  document.getElementById('trusted').addEventListener('click', (e) => {
    const out = document.getElementById('out');
    out.textContent = (e.isTrusted ? 'trusted ' : 'untrusted ') + (Number(out.dataset.n || 0) + 1);
    out.dataset.n = String(Number(out.dataset.n || 0) + 1);
  });
  let n = 0;
  document.getElementById('under').addEventListener('click', () => {
    document.getElementById('count').textContent = String(++n);
  });
  document.getElementById('overlay').addEventListener('click', (e) => e.target.remove());
</script>
</body></html>"""


@pytest.fixture
def site() -> Iterator[str]:
    with served_pages(fallback=INPUT) as served:
        yield served.origin


async def text_of(agent: Any, tab: int, selector: str) -> str:
    return str((await ok(agent, "page_get_state", {"tabId": tab, "selector": selector}))["text"])


@pytest.mark.promise("H4-46", "H4-47")
async def test_trusted_clicks_hover_and_covered_targets(
    agent: Client, context: BrowserContext, site: str
) -> None:
    tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]

    # page_click and page_mouse both click as a person does: trusted input.
    await ok(agent, "page_click", {"tabId": tab, "selector": "#trusted"})
    assert await text_of(agent, tab, "#out") == "trusted 1"
    clicked = await ok(agent, "page_mouse", {"tabId": tab, "selector": "#trusted"})
    assert clicked["clicked"] is True and clicked["covered"] is False
    assert await text_of(agent, tab, "#out") == "trusted 2"
    # The same point given as viewport coordinates reaches the same button.
    point = {"x": clicked["x"], "y": clicked["y"]}
    by_point = await ok(agent, "page_mouse", {"tabId": tab, **point})
    assert by_point["clicked"] is True and 'button "Trusted only"' in by_point["hitTarget"]
    assert await text_of(agent, tab, "#out") == "trusted 3"

    # A :hover-only menu opens under the real pointer.
    item = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#item"})
    assert item["visible"] is False
    hovered = await ok(agent, "page_hover", {"tabId": tab, "text": "Menu"})
    assert hovered["hovered"] is True and hovered["covered"] is False
    item = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#item"})
    assert item["visible"] is True

    # A covered button: reported, with what is on top and its ref, and not clicked.
    covered = await ok(agent, "page_mouse", {"tabId": tab, "selector": "#under"})
    assert covered["clicked"] is False and covered["covered"] is True, covered
    assert "Cookie banner" in covered["hitTarget"]
    assert covered["hitRef"].startswith("@e")
    assert await text_of(agent, tab, "#count") == "0"
    # The agent deals with what is on top (by its ref), then the button is reachable.
    away = await ok(agent, "page_mouse", {"tabId": tab, "ref": covered["hitRef"]})
    assert away["clicked"] is True and away["covered"] is False
    assert await text_of(agent, tab, "#count") == "0"
    under = await ok(agent, "page_mouse", {"tabId": tab, "selector": "#under"})
    assert under["clicked"] is True and under["covered"] is False
    assert await text_of(agent, tab, "#count") == "1"
    # A double click is two trusted clicks on the same point.
    await ok(agent, "page_mouse", {"tabId": tab, "selector": "#under", "clickCount": 2})
    assert await text_of(agent, tab, "#count") == "3"

    # The debugger taken off the tab (as when the person closes Chrome's bar): the next
    # call says so, clearly, and nothing is clicked; the call after re-attaches.
    worker = context.service_workers[0] if context.service_workers else None
    if worker is None:
        worker = await context.wait_for_event("serviceworker", timeout=30_000)
    await worker.evaluate("(tabId) => chrome.debugger.detach({tabId})", tab)
    lost = tool_error(await agent.call_tool("page_mouse", {"tabId": tab, "selector": "#under"}))
    assert lost is not None and lost["code"] == "debugger_detached", lost
    assert "call again" in lost["message"]
    assert await text_of(agent, tab, "#count") == "3"
    again = await ok(agent, "page_mouse", {"tabId": tab, "selector": "#under"})
    assert again["clicked"] is True
    assert await text_of(agent, tab, "#count") == "4"
