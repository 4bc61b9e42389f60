"""Popups and new tabs, in real Chromium through the real chain: a tab an agent's tab
opens — a link with target=_blank, window.open, a window.open popup window — joins the agent's
session, is reported by the click (`newTab`, waited for with `newTab: true`) and is driven like
any tab of the session; one on an unapproved site is owned but gated (the person is asked, and
a denial refuses). The attacker's case: a popup a person's own tab opens never joins, so the
agent cannot reach it even knowing its id."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    Request,
    ServedSite,
    confirm_page,
    launched,
    ok,
    press,
    served_pages,
    shows,
    trust_this_process,
)
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]


def _opener(port: int) -> bytes:
    return (
        "<!doctype html><html><head><title>opener</title></head><body>"
        "<a id=blank href='/child?via=blank' target=_blank>New tab link</a>"
        "<button type=button id=open onclick=\"window.open('/child?via=open')\">Open</button>"
        "<button type=button id=popup onclick=\"window.open('/child?via=popup', 'w', "
        "'width=320,height=240')\">Popup</button>"
        f"<button type=button id=away onclick=\"window.open('http://localhost:{port}/child?via=away')\">"
        "Away</button>"
        f"<button type=button id=awaynoopener onclick=\"window.open('http://localhost:{port}/child?via="
        "noopener', '_blank', 'noopener')\">Away, no opener</button>"
        f"<a id=blankaway href='http://localhost:{port}/child?via=blankaway' target=_blank>"
        "Elsewhere</a>"
        f"<a id=inplace href='http://localhost:{port}/child?via=inplace'>Elsewhere here</a>"
        "<button type=button id=nothing>Nothing</button>"
        "</body></html>"
    ).encode()


def _page(request: Request) -> bytes:
    if request.path == "/child":
        via = request.query("via", "?")
        return f"<!doctype html><title>child {via}</title><p id=via>{via}</p>".encode()
    return _opener(request.port or 80)


@pytest.fixture
def site() -> Iterator[ServedSite]:
    with served_pages(hook=_page) as served:
        yield served


@pytest.fixture
def site_port(site: ServedSite) -> int:
    return site.port


def seen_on(site: ServedSite, host: str) -> list[str]:
    """The request targets the site received for ``host`` (as the browser named it)."""
    return [r.target for r in site.requests() if r.host == host]


async def text_of(agent: Any, tab: int) -> str:
    return str((await ok(agent, "page_get_state", {"tabId": tab, "selector": "#via"}))["text"])


async def my_tabs(agent: Any) -> set[int]:
    return {t["id"] for t in (await ok(agent, "tab_list", {}))["tabs"]}


async def allowed_click(context: Any, agent: Any, args: dict[str, Any]) -> dict[str, Any]:
    """page_click on a link: the person allows it in the confirm window."""
    clicking = asyncio.create_task(agent.call_tool("page_click", args))
    window = await confirm_page(context)
    await press(window, "#allow")
    result = await clicking
    assert not result.is_error, result.content
    content: dict[str, Any] = result.structured_content
    return content


@pytest.mark.promise("H4-40")
async def test_tabs_an_agent_tab_opens_join_its_session_and_are_gated(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    a, b = f"http://127.0.0.1:{site_port}", f"http://localhost:{site_port}"
    trust_this_process(browser, [a])

    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]

        # A click that opens nothing reports no newTab.
        plain = await ok(agent, "page_click", {"tabId": tab, "selector": "#nothing"})
        assert "newTab" not in plain and await my_tabs(agent) == {tab}

        # window.open: waited for, reported, loaded, and the session's own.
        opened = await ok(agent, "page_click", {"tabId": tab, "selector": "#open", "newTab": True})
        new = opened["newTab"]
        assert new["url"] == f"{a}/child?via=open" and new["id"] != tab, opened
        assert await my_tabs(agent) == {tab, new["id"]}
        assert await text_of(agent, new["id"]) == "open"

        # A link with target=_blank (a link click: the person allows it).
        linked = await allowed_click(
            context, agent, {"tabId": tab, "selector": "#blank", "newTab": True}
        )
        blank = linked["newTab"]
        assert blank["url"] == f"{a}/child?via=blank" and linked["navigated"] is False
        assert await text_of(agent, blank["id"]) == "blank"

        # A popup window (window.open with features).
        popped = await ok(agent, "page_click", {"tabId": tab, "selector": "#popup", "newTab": True})
        popup = popped["newTab"]
        assert await text_of(agent, popup["id"]) == "popup"
        assert await my_tabs(agent) == {tab, new["id"], blank["id"], popup["id"]}
        # The opener is unchanged by all this.
        assert (await ok(agent, "page_get_state", {"tabId": tab, "selector": "#open"}))[
            "text"
        ] == "Open"

        # A new tab on a site the policy does not approve: owned, but gated like any tab.
        sent = {"tabId": tab, "selector": "#away", "newTab": True}
        away = (await ok(agent, "page_click", sent))["newTab"]
        assert away["id"] in await my_tabs(agent)
        reading = asyncio.create_task(
            agent.call_tool("page_get_state", {"tabId": away["id"], "selector": "#via"})
        )
        # Stopped before it leaves: once the popup has joined, its top frame cannot leave for b;
        # its first request races the rule update, and when stopped the tab is left at
        # about:blank (refused without a question). Landed on b, the read asks the person.
        asking = asyncio.create_task(confirm_page(context))
        await asyncio.wait({reading, asking}, return_when=asyncio.FIRST_COMPLETED)
        if asking.done():
            window = asking.result()
            await shows(window, b)
            await press(window, "#deny")
        else:
            asking.cancel()
        denied = tool_error(await reading)
        assert denied is not None and denied["code"] == "origin_not_approved", denied

        # Tabs the session got this way close with it like its own.
        closed = await ok(agent, "tab_close_all", {})
        assert closed["closed"] == 5
        assert await my_tabs(agent) == set()


@pytest.mark.promise("H4-40")
async def test_a_popup_a_persons_tab_opens_never_joins(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    a = f"http://127.0.0.1:{site_port}"
    trust_this_process(browser, [a])

    async with launched(browser) as (context, agent):
        mine = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]

        # The person's own tab (opened outside the bridge) opens a popup.
        person = await context.new_page()
        await person.goto(f"{a}/")
        async with context.expect_page() as popup_info:
            await person.click("#open")
        popup = await popup_info.value
        await popup.wait_for_load_state()
        assert (await popup.text_content("#via")) == "open"

        # Find its tab id as the agent might (ids are small integers): from the worker.
        worker = context.service_workers[0] if context.service_workers else None
        if worker is None:
            worker = await context.wait_for_event("serviceworker", timeout=30_000)
        ids = await worker.evaluate(
            "async () => (await chrome.tabs.query({})).filter((t) => "
            "(t.url || '').includes('/child?via=open')).map((t) => t.id)"
        )
        assert len(ids) == 1, ids
        # An agent tab's popup joins within a deadline; the person's has had as long by then.
        await ok(agent, "page_click", {"tabId": mine, "selector": "#open", "newTab": True})
        assert ids[0] not in await my_tabs(agent)
        for tool, args in (
            ("page_get_state", {"selector": "#via"}),
            ("page_snapshot", {}),
            ("tab_close", {}),
        ):
            refused = tool_error(await agent.call_tool(tool, {"tabId": ids[0], **args}))
            assert refused is not None and refused["code"] == "tab_not_owned", (tool, refused)
        assert not popup.is_closed() and (await popup.text_content("#via")) == "open"


@pytest.mark.promise("H4-57")
async def test_an_agent_tabs_popup_to_an_unapproved_site_sends_nothing_the_persons_new_tabs_still_open(  # noqa: E501 - the name says the whole scenario
    browser: ThrowawayBrowser, site: ServedSite, site_port: int
) -> None:
    """Stopped before it leaves: the attacker's page on an approved site opens popups to its own
    server (the address carries what it wants to leak). The opened-tab rules exist before any popup,
    so not one request reaches that server, however fast Chrome starts the popup's navigation
    (measured before them: 1 popup in 12 got its first request out). The person's own tabs on the
    same approved site still open a link to that server in a new tab and in place."""
    a, b = f"http://127.0.0.1:{site_port}", f"http://localhost:{site_port}"
    trust_this_process(browser, [a])

    async with launched(browser) as (context, agent):
        worker = context.service_workers[0] if context.service_workers else None
        if worker is None:
            worker = await context.wait_for_event("serviceworker", timeout=30_000)
        tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]

        # What Chrome reports of each tab's top-frame navigations, from the worker.
        await worker.evaluate(
            "() => { const log = self.__popupNav = [];"
            " chrome.webNavigation.onErrorOccurred.addListener((d) => { if (d.frameId === 0)"
            " log.push({tabId: d.tabId, url: d.url, error: d.error}); });"
            " chrome.webNavigation.onCommitted.addListener((d) => { if (d.frameId === 0)"
            " log.push({tabId: d.tabId, url: d.url}); });"
            " chrome.tabs.onCreated.addListener((t) =>"
            " log.push({created: t.id, opener: t.openerTabId, url: t.url})); }"
        )

        async def person_sees(page: Any, via: str) -> None:
            """The person's page ends up showing the child page ``via`` (or the failure
            says what Chrome reported and which rules stood)."""
            try:
                await page.wait_for_function(
                    "(via) => document.getElementById('via')?.textContent === via",
                    arg=via,
                    timeout=60_000,
                )
            except Exception:
                nav = await worker.evaluate("() => self.__popupNav.slice(-9)")
                rules = await worker.evaluate(
                    "() => chrome.declarativeNetRequest.getSessionRules()"
                )
                raise AssertionError((via, page.url, nav, rules)) from None

        async def settled(popup: int) -> dict[str, Any]:
            """Wait until Chrome has reported the popup's navigation to b: stopped (an
            error) or, were it let through, committed."""
            deadline = asyncio.get_running_loop().time() + 60
            while True:
                seen = await worker.evaluate(
                    "(id) => self.__popupNav.filter((n) => n.tabId === id)", popup
                )
                done = [n for n in seen if n["url"].startswith(b)]
                if done:
                    return dict(done[0])
                assert asyncio.get_running_loop().time() < deadline, seen
                await asyncio.sleep(0.05)

        for i in range(24):
            button = "#away" if i % 4 else "#awaynoopener"
            opened = await ok(
                agent, "page_click", {"tabId": tab, "selector": button, "newTab": True}
            )
            popup = opened["newTab"]["id"]
            outcome = await settled(popup)
            assert outcome.get("error") == "net::ERR_BLOCKED_BY_CLIENT", (i, button, outcome)
            assert seen_on(site, "localhost") == [], (i, button, seen_on(site, "localhost"))
            await worker.evaluate("(id) => chrome.tabs.remove(id)", popup)

        # The person's tab on the same approved site, while the agent's tab is open there.
        person = await context.new_page()
        await person.goto(f"{a}/")
        async with context.expect_page() as opened_info:
            await person.click("#blankaway")
        await person_sees(await opened_info.value, "blankaway")
        await person.click("#inplace")
        await person_sees(person, "inplace")
        assert "/child?via=blankaway" in seen_on(site, "localhost")
        assert "/child?via=inplace" in seen_on(site, "localhost")
        assert not any("via=away" in p or "via=noopener" in p for p in seen_on(site, "localhost"))
        # Neither of the person's tabs joined the agent's session.
        assert await my_tabs(agent) == {tab}
