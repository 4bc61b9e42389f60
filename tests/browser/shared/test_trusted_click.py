"""page_click is a person's click, in a Chromium whose popup blocker is on (as in every
person's Chrome; test_person_browser.py checks the switches): trusted input at the element's
point, so a window its handler opens gets through the blocker and joins the session
(test_popups.py), a window Chrome still blocks answers ``popup_blocked`` instead of waiting for a
tab that never comes, and the click never lands on anything but the element asked for.

The attacker's view: the page cannot tell our click from a person's (``event.isTrusted``), and a
page that covers the element with something else gets nothing clicked."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.async_api import BrowserContext

from tests.browser.harness import Request, ServedSite, code, confirm_page, ok, press, served_pages
from tests.deadline import until

pytestmark = pytest.mark.browser

#: Longer than Chrome's transient user activation (5 s): a window opened this long after the
#: click has no gesture left, and the popup blocker stops it.
LATE_MS = 6000

PAGE = f"""<!doctype html><html><head><title>clicks</title>
<style>
  #cover {{ position: fixed; left: 0; top: 200px; width: 400px; height: 100px; z-index: 10;
           background: rgba(0, 0, 0, 0.1); }}
  #under {{ position: absolute; left: 20px; top: 220px; }}
</style></head><body>
<button type=button id=target>Target</button>
<button type=button id=late>Open later</button>
<button type=button id=under>Covered</button>
<button type=button id=opener onclick="window.open('/child?via=press')">Open now</button>
<div id=cover>Cookie banner</div>
<p id=out>none</p><p id=covers>0</p><p id=unders>0</p>
<script>
  const out = document.getElementById('out');
  document.getElementById('target').addEventListener('click', (e) => {{
    out.textContent = 'target trusted=' + e.isTrusted;
  }});
  document.getElementById('late').addEventListener('click', () => {{
    out.textContent = 'late clicked';
    setTimeout(() => {{ out.textContent = 'opened=' + (window.open('/child?via=late') !== null); }},
               {LATE_MS});
  }});
  const count = (id, n) => () => {{
    const p = document.getElementById(n); p.textContent = String(Number(p.textContent) + 1);
  }};
  document.getElementById('cover').addEventListener('click', count('cover', 'covers'));
  document.getElementById('under').addEventListener('click', count('under', 'unders'));
</script></body></html>"""


#: A fixed header over the top of the viewport, and a button the page scrolled half under it.
STICKY = """<!doctype html><html><head><title>sticky</title><style>
  #bar { position: fixed; left: 0; top: 0; width: 100%; height: 90px; z-index: 5; }
  #half { position: absolute; left: 20px; top: 1000px; height: 40px; }
</style></head><body>
<div id=bar>Header</div><button type=button id=half>Half hidden</button>
<p id=halfs>0</p><p id=bars>0</p><div style="height: 3000px"></div>
<script>
  const count = (n) => () => {
    const p = document.getElementById(n); p.textContent = String(Number(p.textContent) + 1);
  };
  document.getElementById('half').addEventListener('click', count('halfs'));
  document.getElementById('bar').addEventListener('click', count('bars'));
  scrollTo(0, 940);
</script></body></html>"""


def _page(request: Request) -> str:
    if request.path == "/sticky":
        return STICKY
    if request.path == "/child":
        return "<!doctype html><title>child</title><p id=via>child</p>"
    return PAGE


@pytest.fixture(scope="module")
def clicks() -> Iterator[ServedSite]:
    with served_pages(hook=_page) as served:
        yield served


@pytest.fixture(scope="module")
def origins(clicks: ServedSite) -> list[str]:
    return [clicks.origin]


async def text(agent: Any, tab: int, selector: str) -> str:
    return str((await ok(agent, "page_get_state", {"tabId": tab, "selector": selector}))["text"])


async def my_tabs(agent: Any) -> set[int]:
    return {t["id"] for t in (await ok(agent, "tab_list", {}))["tabs"]}


@pytest.mark.promise("H4-66")
async def test_the_page_cannot_tell_page_click_from_a_persons_click(
    agent: Any, clicks: ServedSite
) -> None:
    tab = (await ok(agent, "tab_open", {"url": f"{clicks.origin}/"}))["tab"]["id"]
    clicked = await ok(agent, "page_click", {"tabId": tab, "selector": "#target"})
    assert clicked["clicked"] is True and "newTab" not in clicked
    assert await text(agent, tab, "#out") == "target trusted=true"


@pytest.mark.promise("H4-66")
async def test_a_covered_element_is_never_clicked_and_neither_is_what_covers_it(
    agent: Any, clicks: ServedSite
) -> None:
    tab = (await ok(agent, "tab_open", {"url": f"{clicks.origin}/"}))["tab"]["id"]
    assert await code(agent, "page_click", {"tabId": tab, "selector": "#under"}) == (
        "element_covered"
    )
    # Nothing received a click: not the element, not the banner over it.
    assert await text(agent, tab, "#unders") == "0"
    assert await text(agent, tab, "#covers") == "0"
    assert await text(agent, tab, "#out") == "none"


@pytest.mark.promise("H4-66")
async def test_a_window_the_popup_blocker_stops_answers_popup_blocked_and_nothing_opens(
    agent: Any, clicks: ServedSite
) -> None:
    tab = (await ok(agent, "tab_open", {"url": f"{clicks.origin}/"}))["tab"]["id"]
    sent = {"tabId": tab, "selector": "#late", "newTab": True}
    assert await code(agent, "page_click", sent) == "popup_blocked"
    # The page's own view: window.open answered null, nothing opened, nothing was requested.
    assert await text(agent, tab, "#out") == "opened=false"
    assert await my_tabs(agent) == {tab}
    assert clicks.requests("/child") == []


async def test_enter_on_a_button_opens_its_window_through_the_popup_blocker(
    context: BrowserContext, agent: Any, clicks: ServedSite
) -> None:
    tab = (await ok(agent, "tab_open", {"url": f"{clicks.origin}/"}))["tab"]["id"]
    sent = {"tabId": tab, "selector": "#opener", "key": "Enter"}
    pressing = asyncio.create_task(agent.call_tool("page_press", sent))
    await press(await confirm_page(context), "#allow")  # the policy confirms key presses
    result = await pressing
    assert not result.is_error, result.content

    async def joined() -> set[int] | None:
        tabs = await my_tabs(agent)
        return tabs if len(tabs) == 2 else None

    assert tab in await until("the window Enter opened joined the session", joined)
    assert [r.target for r in clicks.requests("/child")] == ["/child?via=press"]


async def test_an_element_half_under_a_fixed_header_is_centred_and_clicked_not_the_header(
    agent: Any, clicks: ServedSite
) -> None:
    tab = (await ok(agent, "tab_open", {"url": f"{clicks.origin}/sticky"}))["tab"]["id"]
    await ok(agent, "page_click", {"tabId": tab, "selector": "#half"})
    assert await text(agent, tab, "#halfs") == "1"
    assert await text(agent, tab, "#bars") == "0"
