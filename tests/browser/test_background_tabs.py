"""Agent tabs keep working behind the person's window: an owned tab in a minimised window behind
the person's focused one, or not the active tab of its window, runs its timers and animation
frames about as fast as the person's foreground tab and answers a click whose effect waits for a
timer and a frame; the person's own background tab stays as Chrome left it (hidden, throttled).

Chromium here is launched as a person's Chrome is: headful on a private Xvfb display with a
window manager (openbox: without one nothing can be minimised), none of Playwright's launch
switches, and none of its per-page overrides. Playwright's own launch turns on focus emulation
in every page it attaches to (which keeps every tab "visible" and hides exactly what these tests
are about), so the test connects to the running browser with ``connect_over_cdp(no_defaults=
True)``, which leaves pages alone. docs/platform-facts-background-tabs.md has the figures
(among them: in a minimised window focus emulation alone keeps the timers at pace but lets the
frames drop to about one a second; the extension's screencast on owned tabs keeps them at pace)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from mcp import Client
from playwright.async_api import BrowserContext, Page

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import ServedSite, ok, served_pages
from tests.browser.own_launch import own_launch
from tests.deadline import until

pytestmark = pytest.mark.browser

# Timer ticks (setTimeout every 20 ms: ~50 a second in front) and animation frames (~60 a second
# in front), shown as text; a button whose effect waits 300 ms, then paints in the next frame
# (as a UI library that batches its DOM writes into requestAnimationFrame does).
COUNTERS = b"""<!doctype html><html><head><title>counters</title></head><body>
<p>timer ticks: <span id="ticks">0</span></p>
<p>frames: <span id="frames">0</span></p>
<button id="later">Later</button>
<p id="out">waiting</p>
<script>
let ticks = 0, frames = 0;
const show = (id, n) => { document.getElementById(id).textContent = n; };
function tick() { ticks += 1; show("ticks", ticks); setTimeout(tick, 20); }
function frame() { frames += 1; show("frames", frames); requestAnimationFrame(frame); }
tick();
requestAnimationFrame(frame);
document.getElementById("later").addEventListener("click", () => {
  setTimeout(() => requestAnimationFrame(() => show("out", "reacted")), 300);
});
</script></body></html>"""

# What the person's foreground tab draws while the others are measured: about 5 s at 60 a second.
REFERENCE_FRAMES = 300


@dataclass(frozen=True)
class Counts:
    ticks: int
    frames: int


@pytest.fixture
def counter_site() -> Iterator[ServedSite]:
    with served_pages({"/": COUNTERS}) as served:
        yield served


@pytest.fixture
def origins(counter_site: ServedSite) -> list[str]:
    return [counter_site.origin]


@pytest.fixture
async def context(
    trusted: ThrowawayBrowser, window_manager: str, counter_site: ServedSite
) -> AsyncIterator[BrowserContext]:
    """The person's Chromium, showing the counter page in its first window (the person's tab);
    the agent's tabs come later. Replaces the conftest's Playwright launch for this module."""
    async with own_launch(trusted, window_manager) as launched:
        [person] = launched.pages
        await person.goto(f"{counter_site.origin}/?who=person")
        yield launched


async def page_showing(context: BrowserContext, url: str) -> Page:
    """The tab at ``url`` (each tab of these tests has its own query)."""

    def find() -> Page | None:
        return next((p for p in context.pages if p.url == url), None)

    found: Page = await until(f"a tab shows {url}", find)
    await found.wait_for_selector("#frames", state="attached")
    return found


async def counts(page: Page) -> Counts:
    """What the page shows: its timer ticks and animation frames so far."""
    ticks = await page.text_content("#ticks")
    frames = await page.text_content("#frames")
    return Counts(int(ticks or 0), int(frames or 0))


async def state(page: Page) -> dict[str, Any]:
    got: dict[str, Any] = await page.evaluate(
        "({visibility: document.visibilityState, focus: document.hasFocus()})"
    )
    return got


async def progress(reference: Page, others: list[Page]) -> tuple[Counts, list[Counts]]:
    """How far ``reference`` and each of ``others`` got while ``reference`` drew
    ``REFERENCE_FRAMES`` frames."""
    ref0 = await counts(reference)
    starts = [await counts(p) for p in others]

    async def drawn() -> Counts | None:
        now = await counts(reference)
        return now if now.frames - ref0.frames >= REFERENCE_FRAMES else None

    ref1 = await until(f"the person's tab drew {REFERENCE_FRAMES} frames", drawn)
    ends = [await counts(p) for p in others]
    moved = [
        Counts(e.ticks - s.ticks, e.frames - s.frames) for s, e in zip(starts, ends, strict=True)
    ]
    return Counts(ref1.ticks - ref0.ticks, ref1.frames - ref0.frames), moved


async def open_agent_tab(
    agent: Client, context: BrowserContext, origin: str, who: str
) -> tuple[int, Page]:
    url = f"{origin}/?who={who}"
    tab: int = (await ok(agent, "tab_open", {"url": url}))["tab"]["id"]
    return tab, await page_showing(context, url)


async def person_in_front(person: Page) -> None:
    """The person's window is the focused one, in front of the agent's."""
    await person.bring_to_front()
    await until("the person's window has the focus", lambda: _focused(person))


async def _focused(page: Page) -> bool:
    return bool((await state(page))["focus"])


async def minimise(context: BrowserContext, page: Page) -> None:
    """Minimise ``page``'s window through Chrome (the window manager does it) and wait until
    Chrome says so."""
    tab = await context.new_cdp_session(page)
    try:
        target = (await tab.send("Target.getTargetInfo"))["targetInfo"]["targetId"]
    finally:
        await tab.detach()
    assert context.browser is not None
    cdp = await context.browser.new_browser_cdp_session()
    try:
        window = (await cdp.send("Browser.getWindowForTarget", {"targetId": target}))["windowId"]
        await cdp.send(
            "Browser.setWindowBounds", {"windowId": window, "bounds": {"windowState": "minimized"}}
        )

        async def minimised() -> bool:
            bounds = (await cdp.send("Browser.getWindowBounds", {"windowId": window}))["bounds"]
            return bool(bounds.get("windowState") == "minimized")

        await until("the agent's window is minimised", minimised)
    finally:
        await cdp.detach()


#: A held tab must keep at least this share of the foreground tab's ticks and frames. A hidden
#: tab runs about 1 tick a second and draws none (1/50 and 0 of the foreground's), so a quarter
#: tells the two apart with room to spare on a busy 2-core machine, where a held tab was seen
#: drawing 144 frames beside the foreground's 301 (rates, not wall-clock durations, compared).
SHARE = 4


def assert_comparable(name: str, moved: Counts, reference: Counts) -> None:
    assert moved.ticks * SHARE >= reference.ticks, (
        f"{name} ran {moved.ticks} timer ticks beside the person's tab's {reference.ticks}"
    )
    assert moved.frames * SHARE >= reference.frames, (
        f"{name} drew {moved.frames} frames beside the person's tab's {reference.frames}"
    )


@pytest.mark.promise("H4-65")
async def test_an_agent_tab_in_a_minimised_window_behind_the_persons_runs_as_in_front(
    agent: Client, context: BrowserContext, counter_site: ServedSite
) -> None:
    person = await page_showing(context, f"{counter_site.origin}/?who=person")
    _, mine = await open_agent_tab(agent, context, counter_site.origin, "agent")
    await person_in_front(person)
    await minimise(context, mine)

    reference, [moved] = await progress(person, [mine])

    # Hidden, it would run 1 tick and 0 frames a second; with focus emulation alone, 1 frame a
    # second (its window draws nothing); held as the extension holds it, both keep pace.
    assert_comparable("the agent's tab in a minimised window", moved, reference)
    assert (await state(mine))["visibility"] == "visible"


@pytest.mark.promise("H4-65")
async def test_an_agent_tab_that_is_not_the_active_tab_of_its_window_runs_as_in_front(
    agent: Client, context: BrowserContext, counter_site: ServedSite
) -> None:
    person = await page_showing(context, f"{counter_site.origin}/?who=person")
    first, _ = await open_agent_tab(agent, context, counter_site.origin, "first")
    await open_agent_tab(agent, context, counter_site.origin, "second")  # takes the front
    # A new document in the tab behind: what holds it in front survives a navigation.
    again = f"{counter_site.origin}/?who=first-again"
    await ok(agent, "page_navigate", {"tabId": first, "url": again})
    behind = await page_showing(context, again)
    await person_in_front(person)
    listed = {t["id"]: t for t in (await ok(agent, "tab_list", {}))["tabs"]}
    assert listed[first]["active"] is False

    reference, [moved] = await progress(person, [behind])

    assert_comparable("the agent's tab behind its window's active tab", moved, reference)


@pytest.mark.promise("H4-65")
async def test_a_click_whose_effect_waits_for_a_timer_and_a_frame_works_in_a_minimised_window(
    agent: Client, context: BrowserContext, counter_site: ServedSite
) -> None:
    person = await page_showing(context, f"{counter_site.origin}/?who=person")
    tab, mine = await open_agent_tab(agent, context, counter_site.origin, "agent")
    await person_in_front(person)
    await minimise(context, mine)

    await ok(agent, "page_click", {"tabId": tab, "selector": "#later"})

    async def reacted() -> bool:
        return "reacted" in (await ok(agent, "page_text", {"tabId": tab}))["text"]

    await until("the page reacted to the click", reacted)


@pytest.mark.promise("H4-65")
async def test_the_persons_own_background_tab_is_left_hidden_and_throttled(
    agent: Client, context: BrowserContext, counter_site: ServedSite
) -> None:
    # The person's window: a second tab of theirs, then the first one back in front.
    person = await page_showing(context, f"{counter_site.origin}/?who=person")
    theirs = await context.new_page()
    await theirs.goto(f"{counter_site.origin}/?who=person-behind")
    # The agent's owned tab, also behind its window's active tab: emulated, for contrast.
    await open_agent_tab(agent, context, counter_site.origin, "first")
    _, front = await open_agent_tab(agent, context, counter_site.origin, "second")
    mine = await page_showing(context, f"{counter_site.origin}/?who=first")
    await person_in_front(person)
    await until("the person's second tab is behind", lambda: _hidden(theirs))

    reference, [their_moved, my_moved] = await progress(person, [theirs, mine])

    assert (await state(theirs))["visibility"] == "hidden"
    assert their_moved.frames == 0, f"the person's background tab drew {their_moved.frames} frames"
    assert their_moved.ticks * 4 < reference.ticks, (
        f"the person's background tab ran {their_moved.ticks} ticks beside {reference.ticks}"
    )
    assert_comparable("the agent's tab behind its window's active tab", my_moved, reference)
    assert front.url.endswith("who=second")


async def _hidden(page: Page) -> bool:
    return bool((await state(page))["visibility"] == "hidden")
