"""page_emulate in real Chromium through the real chain: an owned tab's pages are told another
user agent (navigator and the request header), place, colour scheme, locale and timezone; the
geolocation answers only once the person let the site ask (tabwarden grants nothing); the person's
own tab and another session's ask for it are refused (`tab_not_owned`) and what those tabs show is
unchanged; a zone Chrome does not know and a latitude off the globe are refused naming them; when
the session ends, the tab stays open with none of the overrides. page_viewport given no size reads
the current viewport (the page's own numbers, and the screen it set), changing nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    ServedSite,
    chromium,
    code,
    extension_connected,
    mcp_client,
    ok,
    served_pages,
    trust_this_process,
)
from tests.deadline import until
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

UA = "TabwardenEmulated/1.0 (a test)"
PAGE = "<!doctype html><html><head><title>where am I</title></head><body><p>hello</p></body></html>"
#: What a page is told, read outside the bridge (Playwright in the page's main world).
READ = """() => ({
  userAgent: navigator.userAgent,
  timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  locale: Intl.DateTimeFormat().resolvedOptions().locale,
  dark: matchMedia('(prefers-color-scheme: dark)').matches,
})"""
POSITION = """() => new Promise((resolve) => navigator.geolocation.getCurrentPosition(
  (p) => resolve([p.coords.latitude, p.coords.longitude, p.coords.accuracy]),
  (e) => resolve('error ' + e.code), {timeout: 20000}))"""
WHERE = {"latitude": 48.8584, "longitude": 2.2945, "accuracy": 12}


@pytest.fixture
def served() -> Iterator[ServedSite]:
    with served_pages({"/": PAGE, "/person": PAGE}) as site:
        yield site


async def _tab_page(context: Any, url: str) -> Any:
    return await until(
        f"Playwright lists the tab at {url}",
        lambda: next((p for p in context.pages if p.url == url), None),
    )


@pytest.mark.promise("H4-78")
async def test_emulation_reaches_only_the_owned_tab_and_ends_with_the_session(
    browser: ThrowawayBrowser, served: ServedSite
) -> None:
    site = served.origin
    trust_this_process(browser, [site])
    async with chromium(browser) as context:
        person = await context.new_page()
        await person.goto(f"{site}/person")
        usual = await person.evaluate(READ)
        assert usual["timezone"] != "Asia/Tokyo" and not usual["dark"], usual
        async with mcp_client(browser) as agent:
            await extension_connected(agent)
            tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
            mine = await _tab_page(context, f"{site}/")
            settings = {
                "userAgent": UA,
                "geolocation": WHERE,
                "colorScheme": "dark",
                "locale": "de-DE",
                "timezone": "Asia/Tokyo",
            }
            out = await ok(agent, "page_emulate", {"tabId": tab, **settings})
            assert out["emulating"] == settings
            seen = out["page"]
            assert (seen["userAgent"], seen["timezone"], seen["colorScheme"]) == (
                UA,
                "Asia/Tokyo",
                "dark",
            )
            assert seen["locale"] == "de-DE"
            assert seen["geolocationPermission"] != "granted", seen  # nothing was granted
            # Read outside the bridge, in the page's own world; the header after a reload.
            told = await mine.evaluate(READ)
            assert told == {
                "userAgent": UA,
                "timezone": "Asia/Tokyo",
                "locale": "de-DE",
                "dark": True,
            }
            await ok(agent, "page_reload", {"tabId": tab})
            assert served.requests("/")[-1].headers["user-agent"] == UA
            # The place answers once the person lets the site ask (as a person's allow would).
            await context.grant_permissions(["geolocation"], origin=site)
            assert await mine.evaluate(POSITION) == [48.8584, 2.2945, 12]

            # The attacker's asks: the person's tab, and another session on this one.
            worker = context.service_workers[0] if context.service_workers else None
            if worker is None:
                worker = await context.wait_for_event("serviceworker", timeout=30_000)
            theirs = await worker.evaluate(
                "async (url) => (await chrome.tabs.query({})).filter((t) => t.url === url)"
                ".map((t) => t.id)",
                f"{site}/person",
            )
            assert len(theirs) == 1, theirs
            for args in (
                {"userAgent": "Evil/6.6"},
                {"timezone": "Pacific/Kiritimati"},
                {"colorScheme": "dark"},
                {"reset": True},
            ):
                assert await code(agent, "page_emulate", {"tabId": theirs[0], **args}) == (
                    "tab_not_owned"
                )
            async with mcp_client(browser) as other:
                await extension_connected(other)
                for args in ({"userAgent": "Evil/6.6"}, {"reset": True}):
                    assert await code(other, "page_emulate", {"tabId": tab, **args}) == (
                        "tab_not_owned"
                    )
            assert await person.evaluate(READ) == usual
            assert await mine.evaluate(READ) == told

            # Mistakes named: a zone Chrome has not heard of, a latitude off the globe.
            mistakes: list[tuple[dict[str, Any], str]] = [
                ({"timezone": "Mars/Olympus_Mons"}, "Mars/Olympus_Mons"),
                ({"geolocation": {"latitude": 91, "longitude": 0}}, "latitude"),
            ]
            for args, words in mistakes:
                result = await agent.call_tool("page_emulate", {"tabId": tab, **args})
                error = tool_error(result)
                assert error is not None and error["code"] == "bad_request", result
                said = getattr(result.content[0], "text", "")
                assert words in said, said
            assert await mine.evaluate(READ) == told

        # The session ended (its debugger lets go after): the tab stays open, told nothing.
        async def as_usual() -> bool:
            await mine.reload()
            header = served.requests("/")[-1].headers["user-agent"]
            return bool(await mine.evaluate(READ) == usual and header == usual["userAgent"])

        await until("the ended session's tab is told nothing any more", as_usual)


async def test_page_viewport_given_no_size_reads_the_current_viewport(
    browser: ThrowawayBrowser, context: Any, agent: Any, tab: int, site: str
) -> None:
    page = await _tab_page(context, f"{site}/")
    view = "() => [innerWidth, innerHeight, devicePixelRatio]"
    actual = await page.evaluate(view)
    first = await ok(agent, "page_viewport", {"tabId": tab})
    assert first["emulating"] is None, first
    keys = ("innerWidth", "innerHeight", "devicePixelRatio")
    assert [first["page"][k] for k in keys] == actual
    assert await page.evaluate(view) == actual  # a read changes nothing
    mobile = await ok(agent, "page_viewport", {"tabId": tab, "preset": "mobile"})
    assert await ok(agent, "page_viewport", {"tabId": tab}) == mobile
    # What the page itself says (no <meta name=viewport>: mobile rules make it 980 wide).
    assert await page.evaluate(view) == [mobile["page"][k] for k in keys] != actual
    async with mcp_client(browser) as other:
        assert await code(other, "page_viewport", {"tabId": tab}) == "tab_not_owned"
    await ok(agent, "page_viewport", {"tabId": tab, "reset": True})
    after = await ok(agent, "page_viewport", {"tabId": tab})
    assert after["emulating"] is None, after
    assert [after["page"][k] for k in keys] == await page.evaluate(view), after
