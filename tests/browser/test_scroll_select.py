"""Scroll, reveal, select, clear and history in real headless Chromium through the real chain:
page_reveal finds row 3000 of a virtualised list of 10,000 (only ~30 rows exist at a time) and
hands back a ref that works, stops at maxSteps, and stops when a short list stops growing;
page_scroll moves a container or the page by dx/dy or to an end and says atBottom; page_select
by value, label, index and several values of a <select multiple>, and wrong_element for a custom
combobox (nobody is asked); page_clear under fill's password rule; page_history by steps and
page_reload with bypassCache, and a history entry on a site nobody approved is refused without
naming it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.trust import store
from tests.browser.harness import (
    Request,
    ServedSite,
    code,
    confirm_page,
    launched,
    ok,
    press,
    served_pages,
    trust_this_process,
    widen,
)
from tests.deadline import until
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

#: 10,000 rows of 20 px in a 600 px box; only the rows in view (and a few around) exist.
VIRTUAL = b"""<!doctype html><html><head><title>virtual</title></head><body>
<div id="list" style="height:600px; overflow:auto; position:relative">
  <div id="spacer" style="height:200000px"></div>
</div>
<p id="picked">none</p>
<script>
  const list = document.getElementById('list');
  const rows = new Map(); // row index -> its element, kept while in range (as keyed rendering does)
  const render = () => {
    const first = Math.max(0, Math.floor(list.scrollTop / 20) - 5);
    const last = Math.min(10000, first + 40);
    for (const [i, row] of rows) if (i < first || i >= last) { row.remove(); rows.delete(i); }
    for (let i = first; i < last; i++) {
      if (rows.has(i)) continue;
      const row = document.createElement('button');
      row.className = 'row';
      row.type = 'button';
      row.textContent = 'Row ' + (i + 1);
      row.style.cssText = 'position:absolute; left:0; height:20px; top:' + (i * 20) + 'px';
      row.onclick = () => { document.getElementById('picked').textContent = row.textContent; };
      list.append(row);
      rows.set(i, row);
    }
  };
  list.addEventListener('scroll', render);
  render();
</script></body></html>"""

SHORT = (
    b"""<!doctype html><html><head><title>short</title></head><body>
<div id="list" style="height:200px; overflow:auto">
"""
    + b"".join(b"<p>Item %d</p>" % i for i in range(1, 51))
    + b"""
</div><div style="height:3000px"></div></body></html>"""
)

FORM = b"""<!doctype html><html><head><title>choose</title></head><body>
<select id="fruit"><option value="a">Apple</option><option value="b">Banana</option>
<option value="c">Cherry</option></select>
<select id="many" multiple><option value="r">Red</option><option value="g">Green</option>
<option value="u">Blue</option></select>
<div id="combo" role="combobox" tabindex="0" aria-expanded="false">Pick a colour</div>
<input id="name" value="alice">
<input id="pw" type="password" value="hunter2">
</body></html>"""


def history_page(name: str, elsewhere: str) -> bytes:
    return f"""<!doctype html><html><head><title>{name}</title></head><body>
<p id="where">{name}</p>
<button type="button" id="next" onclick="location.href='/h' + ({name[1:]} + 1)">Next</button>
<button type="button" id="away"
  onclick="setTimeout(() => {{ location.href = '{elsewhere}/'; }}, 0)">Away</button>
</body></html>""".encode()


@pytest.fixture
def elsewhere_site() -> Iterator[ServedSite]:
    """Another site: its page goes back to where it came from 1.5 s after it loads. Every
    request it receives is recorded."""
    page = (
        b"<!doctype html><title>elsewhere</title><p>elsewhere</p>"
        b"<script>setTimeout(() => history.back(), 1500)</script>"
    )
    with served_pages(fallback=page) as served:
        yield served


@pytest.fixture
def elsewhere(elsewhere_site: ServedSite) -> str:
    return elsewhere_site.origin


@pytest.fixture
def scroll_site(elsewhere: str) -> Iterator[ServedSite]:
    """The site; it records every request (the reloads of /h1, with or without the cache)."""

    def history(request: Request) -> bytes | None:
        path = request.path
        if path.startswith("/h") and path[2:].isdigit():
            return history_page(path[1:], elsewhere)
        return None

    pages = {"/virtual": VIRTUAL, "/short": SHORT}
    with served_pages(pages, fallback=FORM, hook=history) as served:
        yield served


def trust(browser: ThrowawayBrowser, *origins: str) -> None:
    trust_this_process(browser, [*origins])


async def test_reveal_and_scroll_a_virtualised_list(
    browser: ThrowawayBrowser, scroll_site: ServedSite
) -> None:
    site = scroll_site.origin
    trust(browser, site)

    async with launched(browser) as (_, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{site}/virtual"}))["tab"]["id"]
        # Not rendered until scrolled to (get_state answers that, not an error).
        absent = await ok(agent, "page_get_state", {"tabId": tab, "text": "Row 3000"})
        assert absent["exists"] is False, absent
        box = {"selector": "#list"}
        found = await ok(
            agent,
            "page_reveal",
            {
                "tabId": tab,
                "text": "Row 3000",
                "container": box,
                "maxSteps": 1000,
                "timeoutMs": 120_000,
            },
        )
        assert found["found"] is True and found["steps"] > 1 and found["ref"].startswith("@e")
        await ok(agent, "page_click", {"tabId": tab, "ref": found["ref"]})
        picked = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#picked"})
        assert picked["text"] == "Row 3000"

        # Bounded: a row past the steps allowed is not found, and it says why.
        capped = await ok(
            agent,
            "page_reveal",
            {"tabId": tab, "text": "Row 9999", "container": box, "maxSteps": 3},
        )
        assert capped == {
            "found": False,
            "steps": 3,
            "scrollY": capped["scrollY"],
            "atBottom": False,
            "stopped": "maxSteps",
        }

        # page_scroll: the container by dy, then to its ends, answering where it is.
        top = await ok(agent, "page_scroll", {"tabId": tab, "container": box, "to": "top"})
        assert top["scrollY"] == 0 and top["atTop"] is True and top["atBottom"] is False
        moved = await ok(agent, "page_scroll", {"tabId": tab, "container": box, "dy": 500})
        assert moved["scrollY"] == 500 and moved["atBottom"] is False
        point = {"x": 0, "y": 1000}
        placed = await ok(agent, "page_scroll", {"tabId": tab, "container": box, "to": point})
        assert placed["scrollY"] == 1000
        end = await ok(agent, "page_scroll", {"tabId": tab, "container": box, "to": "bottom"})
        assert end["atBottom"] is True and end["scrollY"] > 190_000

        # The list renders the rows of where it is from its own scroll event, which on a busy
        # machine can come after page_scroll answered: wait for the row, then check it is shown.
        async def rendered() -> dict[str, Any] | None:
            state = await ok(agent, "page_get_state", {"tabId": tab, "text": "Row 10000"})
            return state if state.get("exists") else None

        last = await until("the list rendered its last row", rendered)
        assert last["visible"] is True
        both = await agent.call_tool("page_scroll", {"tabId": tab, "selector": "#picked", "dy": 5})
        assert tool_error(both) is not None  # an element to scroll to, or a move: not both

        # A short list stops growing: reveal stops at its end, long before maxSteps.
        await ok(agent, "page_navigate", {"tabId": tab, "url": f"{site}/short"})
        short = await ok(
            agent,
            "page_reveal",
            {"tabId": tab, "text": "Item 999", "container": box, "maxSteps": 500},
        )
        assert short["found"] is False and short["stopped"] == "end" and short["steps"] < 500
        assert short["atBottom"] is True
        # The page itself scrolls by dy and reports its own position.
        page = await ok(agent, "page_scroll", {"tabId": tab, "dy": 300})
        assert page["scrollY"] == 300 and page["atTop"] is False


@pytest.mark.promise("H4-34")
async def test_select_clear_and_a_custom_combobox(
    browser: ThrowawayBrowser, scroll_site: ServedSite
) -> None:
    site = scroll_site.origin
    trust(browser, site)
    widen(browser, clickGraceSeconds=0)  # each select asks (one allow's grace: test_grace.py)

    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]

        async def select(**how: Any) -> dict[str, Any]:
            """page_select, which the default policy confirms: the person allows it."""
            call = asyncio.create_task(agent.call_tool("page_select", {"tabId": tab, **how}))
            await press(await confirm_page(context), "#allow")
            result = await call
            assert not result.is_error, (how, result.content)
            content: dict[str, Any] = result.structured_content
            return content

        fruit = await select(selector="#fruit", value="b")
        assert fruit.pop("target")["role"] == "combobox"  # what it acted on (exact targets)
        assert fruit.pop("waitedMs") >= 0  # how long it waited to act
        assert fruit == {"selected": ["b"], "labels": ["Banana"]}
        assert (await select(selector="#fruit", label="Cherry"))["selected"] == ["c"]
        assert (await select(selector="#fruit", optionIndex=0))["labels"] == ["Apple"]
        many = await select(selector="#many", values=["r", "Blue"])
        assert many.pop("target")["role"] == "listbox"
        assert many.pop("waitedMs") >= 0  # how long it waited to act
        assert many == {"selected": ["r", "u"], "labels": ["Red", "Blue"]}
        state = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#fruit"})
        assert state["value"] == "a"

        # A custom combobox: wrong_element at once, without a confirm window.
        combo = await agent.call_tool(
            "page_select", {"tabId": tab, "selector": "#combo", "value": "Red"}
        )
        error = tool_error(combo) or {}
        assert error.get("code") == "wrong_element" and "combobox" in error["message"]
        assert not any("/confirm.html" in p.url for p in context.pages)
        # Neither the arguments' shape nor one select's single value is stretched.
        two = await agent.call_tool(
            "page_select", {"tabId": tab, "selector": "#fruit", "value": "a", "label": "B"}
        )
        assert (tool_error(two) or {}).get("code") == "bad_request"

        # page_clear empties a field, and a password field is refused (and kept).
        cleared = await ok(agent, "page_clear", {"tabId": tab, "selector": "#name"})
        assert cleared.pop("target")["role"] == "textbox"
        assert cleared.pop("waitedMs") >= 0  # how long it waited to act
        assert cleared == {"cleared": True}
        name = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#name"})
        assert name["value"] == ""
        assert await code(agent, "page_clear", {"tabId": tab, "selector": "#pw"}) == (
            "policy_denied"
        )
        assert await code(agent, "page_clear", {"tabId": tab, "selector": "#fruit"}) == (
            "wrong_element"
        )
        pw = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#pw"})
        assert pw["type"] == "password" and "hunter2" not in str(pw)


@pytest.mark.promise("H4-34")
async def test_history_by_steps_reload_and_an_unapproved_entry(
    browser: ThrowawayBrowser,
    scroll_site: ServedSite,
    elsewhere: str,
    elsewhere_site: ServedSite,
) -> None:
    site = scroll_site.origin
    # The other site is approved at first, so the page can take the tab there (an unapproved
    # one is stopped before its request leaves); the person withdraws it further down.
    trust(browser, site, elsewhere)

    async with launched(browser) as (_, agent):
        loop = asyncio.get_running_loop()
        tab = (await ok(agent, "tab_open", {"url": f"{site}/h1"}))["tab"]["id"]
        for _ in range(2):  # h1 -> h2 -> h3
            await ok(agent, "page_click", {"tabId": tab, "selector": "#next"})
        assert (await ok(agent, "page_text", {"tabId": tab}))["text"].startswith("h3")

        # Two steps back in one jump, then one forward: where it landed, each time.
        back = await ok(agent, "page_history", {"tabId": tab, "steps": -2})
        assert urlparse(back["url"]).path == "/h1" and back["steps"] == -2
        assert back["title"] == "h1"
        forward = await ok(agent, "page_history", {"tabId": tab, "steps": 1})
        assert urlparse(forward["url"]).path == "/h2"
        too_far = await code(agent, "page_history", {"tabId": tab, "steps": -5})
        assert too_far == "bad_request"

        # page_reload: the normal one may revalidate; bypassCache asks past every cache.
        await ok(agent, "page_history", {"tabId": tab, "steps": -1})
        before = len(scroll_site.requests("/h1"))
        reloaded = await ok(agent, "page_reload", {"tabId": tab, "bypassCache": True})
        assert urlparse(reloaded["url"]).path == "/h1"
        h1_requests = scroll_site.requests("/h1")
        assert len(h1_requests) > before
        assert h1_requests[-1].headers.get("cache-control") == "no-cache"

        # The other site enters the history: from h1 the page goes there by itself, and
        # from there back to h1 (tab_list shows where the tab is without reading it).
        await ok(agent, "page_click", {"tabId": tab, "selector": "#away"})

        async def until(netloc: str, path: str) -> None:
            deadline = loop.time() + 60
            while loop.time() < deadline:
                tabs = (await ok(agent, "tab_list", {}))["tabs"]
                url = urlparse(next(t["url"] for t in tabs if t["id"] == tab))
                if url.netloc == netloc and url.path == path:
                    return
                await asyncio.sleep(0.1)  # polling a condition, with a deadline
            raise AssertionError(f"the tab never reached {netloc}{path}")

        await until(urlparse(elsewhere).netloc, "/")
        await until(urlparse(site).netloc, "/h1")
        # The person withdraws the other site (a free restriction). One step forward would
        # land on it: refused before the tab moves (no request reaches the site), and the
        # refusal does not say where.
        store.add_restrictions(
            browser.root / "config" / "trust.json", {"origins": [site]}, int(time.time())
        )
        asked = len(elsewhere_site.requests())
        refused = await agent.call_tool("page_history", {"tabId": tab, "steps": 1})
        error = tool_error(refused) or {}
        assert error.get("code") == "origin_not_approved"
        everything = str(refused.content) + str(error)
        assert urlparse(elsewhere).netloc not in everything and "elsewhere" not in everything
        assert len(elsewhere_site.requests()) == asked
        landed = (await ok(agent, "page_text", {"tabId": tab}))["text"]
        assert landed.startswith("h1")
