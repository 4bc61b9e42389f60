"""The person's focus and ears: opening agent tabs and acting in them never moves the focus away
from the window the person uses, and every tab an agent opens is muted (unless the policy says
``agentTabsAudible``) while the person's own tab is never touched.

Focus is a desktop's, so Chromium runs as a person's does: headful on a private Xvfb display with
a window manager (openbox focuses a new window as a desktop does, unless Chrome shows it
inactive), started with its own command line and reached over CDP with
``connect_over_cdp(no_defaults=True)`` (Playwright's own launch emulates focus in every page).
What Chrome thinks is asked of Chrome itself, from the extension's worker:
``chrome.windows.getLastFocused`` and ``chrome.windows.get(id).focused`` for the window,
``chrome.tabs.get(id).mutedInfo`` for a tab."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client
from playwright.async_api import BrowserContext, Page, Worker

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import launched, ok, trust_this_process, widen
from tests.browser.own_launch import extension_worker, own_launch
from tests.deadline import until

pytestmark = pytest.mark.browser

PERSON = "/?who=person"


@pytest.fixture
async def context(trusted: ThrowawayBrowser, window_manager: str) -> AsyncIterator[BrowserContext]:
    """The person's Chromium, headful on ``window_manager``'s display, its first window the
    person's; replaces the conftest's Playwright launch for this module."""
    async with own_launch(trusted, window_manager) as launched:
        yield launched


async def _chrome(worker: Worker, expression: str, arg: Any = None) -> Any:
    """``expression`` (an async function of ``arg``) run in the extension's worker."""
    return await worker.evaluate(expression, arg)


FOCUS = """async (personWindow) => {
    const last = await chrome.windows.getLastFocused();
    const win = await chrome.windows.get(personWindow);
    return { last: last.id, focused: win.focused };
}"""
TAB = """async (id) => {
    const t = await chrome.tabs.get(id);
    return { muted: t.mutedInfo.muted, windowId: t.windowId };
}"""


async def _person(context: BrowserContext, worker: Worker, site: str) -> tuple[Page, int, int]:
    """The person's tab on ``site`` in the first window, that window focused: page, tab, window."""
    [person] = context.pages
    await person.goto(f"{site}{PERSON}")
    [tab] = await _chrome(
        worker, "async (url) => (await chrome.tabs.query({url})).map((t) => [t.id, t.windowId])",
        f"{site}{PERSON}",
    )  # fmt: skip
    tab_id, window_id = tab
    await person.bring_to_front()
    await until("the person's window has the focus", lambda: _focused_on(worker, window_id))
    return person, tab_id, window_id


async def _focused_on(worker: Worker, window_id: int) -> bool:
    state = await _chrome(worker, FOCUS, window_id)
    return bool(state["focused"] and state["last"] == window_id)


@pytest.mark.promise("H4-83")
async def test_agent_tabs_open_and_act_without_taking_the_persons_focus_and_are_muted(
    agent: Client, context: BrowserContext, site: str
) -> None:
    worker = await extension_worker(context)
    person, person_tab, person_window = await _person(context, worker, site)

    first = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
    second = (await ok(agent, "tab_open", {"url": f"{site}/refs"}))["tab"]["id"]
    await ok(agent, "page_click", {"tabId": first, "selector": "#plain"})
    await ok(agent, "page_text", {"tabId": second})
    assert await _focused_on(worker, person_window), await _chrome(worker, FOCUS, person_window)
    assert await person.evaluate("document.hasFocus()") is True

    agent_tabs = [await _chrome(worker, TAB, t) for t in (first, second)]
    assert all(t["windowId"] != person_window for t in agent_tabs), agent_tabs
    assert [t["muted"] for t in agent_tabs] == [True, True]
    assert (await _chrome(worker, TAB, person_tab))["muted"] is False


@pytest.mark.promise("H4-83")
async def test_with_agent_tabs_audible_an_agent_tab_is_left_unmuted(
    browser: ThrowawayBrowser, window_manager: str, site: str
) -> None:
    trust_this_process(browser, [site])
    widen(browser, agentTabsAudible=True)
    async with launched(browser, display=window_manager) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
        worker = await extension_worker(context)
        assert (await _chrome(worker, TAB, tab))["muted"] is False
