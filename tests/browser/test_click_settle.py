"""A click settles on what the page did, not on a fixed wait: in real headless Chromium, through
the real chain, a click that starts no navigation answers "navigated: false"; a same-document
one answers with its new url; one that navigates at once answers only once the next document
has loaded (the very next read sees it); one that navigates 300 ms later is not claimed as a
navigation, and when it lands the old document's refs are dead (bad_ref), never re-aimed."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

import pytest
from mcp import Client

from tests.browser.harness import ok
from tests.deadline import until
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]


async def test_a_click_settles_on_the_navigation_it_started(agent: Client, site: str) -> None:
    tab = (await ok(agent, "tab_open", {"url": f"{site}/settle"}))["tab"]["id"]

    def click(selector: str) -> Any:
        return ok(agent, "page_click", {"tabId": tab, "selector": selector})

    # No navigation: answered as such, and the click's effect is already there.
    stay = await click("#stay")
    assert stay.pop("target")["name"] == "Stay"
    assert stay.pop("waitedMs") >= 0  # how long it waited to act
    assert stay == {"clicked": True, "navigated": False, "url": f"{site}/settle"}
    out = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#out"})
    assert out["text"] == "stayed"

    # Same-document navigations: reported with where they went.
    hashed = await click("#hash")
    assert hashed["navigated"] is True and hashed["url"] == f"{site}/settle#part"
    pushed = await click("#push")
    assert pushed["navigated"] is True and urlparse(pushed["url"]).path == "/pushed"

    # A navigation the click started at once: the answer waits for the next document.
    now = await click("#now")
    assert now["navigated"] is True and urlparse(now["url"]).path == "/page2"
    text = await ok(agent, "page_text", {"tabId": tab})
    assert "second page" in str(text)

    # A navigation started 300 ms after the click: not claimed by the click...
    await ok(agent, "page_navigate", {"tabId": tab, "url": f"{site}/settle"})
    snap = await ok(agent, "page_snapshot", {"format": "json", "tabId": tab})
    stay_ref = next(i["ref"] for i in snap["snapshot"] if i["name"] == "Stay")
    late = await click("#late")
    assert late.pop("target")["role"] == "button"
    assert late.pop("waitedMs") >= 0  # how long it waited to act
    assert late == {"clicked": True, "navigated": False, "url": f"{site}/settle"}

    # ...but it lands, and the old document's refs are dead there, never re-aimed.

    async def landed() -> bool:
        tabs = (await ok(agent, "tab_list", {}))["tabs"]
        [mine] = [t for t in tabs if t["id"] == tab]
        return bool(urlparse(mine["url"]).path == "/page2" and mine.get("title") == "page2")

    await until("the late navigation landed on /page2", landed)
    stale = await agent.call_tool("page_click", {"tabId": tab, "ref": stay_ref})
    assert (tool_error(stale) or {}).get("code") == "bad_ref", stale.content
