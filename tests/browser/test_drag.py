"""page_drag in real Chromium through the real chain: trusted press, moves and release through
Chrome's debugger reorder a pointer-event sortable list and drop an HTML5 draggable card on its
drop zone, on the top page and inside a cross-origin iframe (the frame's points placed in the
tab's viewport), and a point-to-point drag lands where it was asked. Each page reads back what
moved (its own order, its drop, where the button went down and up), trusted events only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.drag_pages import board_site, cross_frame
from tests.browser.harness import launched, ok, trust_this_process
from tests.deadline import until

pytestmark = [pytest.mark.browser, pytest.mark.pooled]


@pytest.fixture
def site_port() -> Iterator[int]:
    with board_site() as port:
        yield port


async def text(agent: Any, tab: int, frame: int, selector: str) -> str:
    state = await ok(agent, "page_get_state", {"tabId": tab, "frame": frame, "selector": selector})
    return str(state["text"])


async def shows(agent: Any, tab: int, frame: int, selector: str, want: str) -> None:
    async def there() -> bool:
        return await text(agent, tab, frame, selector) == want

    await until(f"{selector} reads {want!r} in frame {frame}", there)


@pytest.mark.promise("H4-69")
async def test_drag_reorders_a_sortable_list_and_drops_on_a_zone_in_the_page_and_a_cross_frame(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    a, b = f"http://127.0.0.1:{site_port}", f"http://localhost:{site_port}"
    trust_this_process(browser, [a, b])

    async with launched(browser) as (_context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
        cross = await cross_frame(agent, tab)
        for frame in (0, cross):
            at = {"tabId": tab, "frame": frame}
            # The sortable list, by pointer events: Alpha dropped on Gamma's place.
            moved = await ok(
                agent, "page_drag", {**at, "text": "Alpha", "to": {"text": "Gamma"}}
            )  # fmt: skip
            assert moved["dragged"] is True, moved
            assert "Alpha" in moved["start"]["element"] and "Gamma" in moved["end"]["element"]
            assert moved["start"]["frame"] == frame and moved["end"]["frame"] == frame, moved
            assert moved["start"]["covered"] is False and moved["end"]["covered"] is False
            await shows(agent, tab, frame, "#order", "B,C,A")
            # Back up by ref: Alpha (now last) onto Beta (now first).
            snap = await ok(agent, "page_find", {**at, "name": "Beta"})
            beta = next(m["ref"] for m in snap["matches"] if m["name"] == "Beta")
            await ok(agent, "page_drag", {**at, "text": "Alpha", "to": {"ref": beta}})
            await shows(agent, tab, frame, "#order", "A,B,C")
            # The HTML5 drop zone: Chrome's own drag, from a draggable element.
            dropped = await ok(agent, "page_drag", {**at, "selector": "#card",
                                                   "to": {"selector": "#zone"}})  # fmt: skip
            assert dropped["dragged"] is True, dropped
            await shows(agent, tab, frame, "#dropped", "dropped card")
            if frame:
                # The answered points are the tab's viewport: past the iframe's border and padding.
                assert dropped["start"]["y"] > 200 + 9 + 6, dropped


async def test_a_point_to_point_drag_presses_and_releases_where_it_was_asked(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    a = f"http://127.0.0.1:{site_port}"
    trust_this_process(browser, [a])

    async with launched(browser) as (_context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
        # The pad spans x 310-410, y 10-110 of the top page's viewport.
        done = await ok(agent, "page_drag", {"tabId": tab, "x": 320, "y": 20,
                                             "to": {"x": 395, "y": 90}, "steps": 4})  # fmt: skip
        assert done["dragged"] is True and done["navigated"] is False, done
        assert (done["start"]["x"], done["start"]["y"]) == (320, 20), done
        assert (done["end"]["x"], done["end"]["y"]) == (395, 90), done
        assert done["start"].get("element") is None and "Pad" in done["start"]["hitTarget"], done
        await shows(agent, tab, 0, "#padlog", "down 320,20 up 395,90")
