"""JavaScript dialogs never freeze a tab (issues 11 and 12), in real Chromium through the real
chain: alert(), confirm(), prompt() and a beforeunload on an owned tab make the call that opened
them and every next call on that tab answer `dialog_open` at once, with the dialog's type and its
text masked; page_dialog answers it (OK on a confirm() or prompt() only after the person allowed
it in the confirm window) and the call after works. A dialog on a tab the session does not own
(the person's own tab) is never touched."""

from __future__ import annotations

import asyncio
import http.server
import os
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest
from playwright.async_api import Dialog

from tabwarden.browser import ThrowawayBrowser
from tabwarden.demo import provision_throwaway_trust, serve_http, wait_for_extension
from tests.browser.harness import chromium, confirm_page, mcp_client, press, shows
from tests.fakes import tool_error

pytestmark = pytest.mark.browser

DIALOGS = b"""<!doctype html><html><head><title>dialogs</title></head><body>
<p id="state">ready</p>
<input id="field" aria-label="Notes">
<button type="button" id="alert">Alert</button>
<button type="button" id="confirm">Confirm</button>
<button type="button" id="prompt">Prompt</button>
<script>
  const state = (t) => { document.getElementById('state').textContent = t; };
  const on = (id, f) => document.getElementById(id).addEventListener('click', f);
  on('alert', () => { alert('card 4111 1111 1111 1111 is on file'); state('after alert'); });
  on('confirm', () => state(confirm('Delete everything?') ? 'confirmed' : 'kept'));
  on('prompt', () => state('name=' + prompt('Your name?', 'x')));
  window.addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = ''; });
</script>
</body></html>"""


#: A page that greets with an alert while it is still loading (its image is slow to come).
GREETING = b"""<!doctype html><title>greeting</title><p id="state">loading</p>
<img src="/slow.png" alt="">
<script>setTimeout(() => { alert('Welcome back'); \
document.getElementById('state').textContent = 'greeted'; }, 500);</script>"""


#: A page that alerts while its first HTML is parsed: before any script of ours could run in it.
INLINE = b"""<!doctype html><title>inline</title>
<script>alert('Hello from the parser');</script>
<p id="state">parsed</p>"""


class _Site(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        path = urlparse(self.path).path
        if path == "/slow.png":
            time.sleep(3)  # a slow resource: the page is still loading when it greets
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        pages = {"/": DIALOGS, "/greeting": GREETING, "/inline": INLINE}
        body = pages.get(path, b"<!doctype html><p>elsewhere</p>")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return


@pytest.fixture
def site() -> Iterator[str]:
    with serve_http(_Site) as origin:
        yield origin


async def ok(agent: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await agent.call_tool(tool, args)
    assert not result.is_error, (tool, result.content)
    content: dict[str, Any] = result.structured_content
    return content


async def refused(agent: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    error = tool_error(await agent.call_tool(tool, args))
    assert error is not None, (tool, args)
    return error


async def state_of(agent: Any, tab: int) -> str:
    return str((await ok(agent, "page_get_state", {"tabId": tab, "selector": "#state"}))["text"])


def keep_dialogs_open(context: Any) -> list[Dialog]:
    """Playwright (our window into the browser) dismisses dialogs unless someone listens: listen
    and leave them open, as a person who has not looked yet would."""
    seen: list[Dialog] = []

    def keep(dialog: Dialog) -> None:
        seen.append(dialog)

    context.on("dialog", keep)
    return seen


def test_dialogs_answer_dialog_open_until_page_dialog_handles_them(
    browser: ThrowawayBrowser, site: str
) -> None:
    provision_throwaway_trust(
        browser.root / "config", client_exe=os.path.realpath("/proc/self/exe"), origins=[site]
    )

    async def scenario() -> None:
        async with chromium(browser) as context, mcp_client(browser) as agent:
            keep_dialogs_open(context)
            await wait_for_extension(agent, asyncio.get_running_loop().time() + 60)
            tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
            other = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]

            # alert(): the click that opened it says so; every next call answers at once.
            opened = await refused(agent, "page_click", {"tabId": tab, "selector": "#alert"})
            assert opened["code"] == "dialog_open", opened
            assert "alert()" in opened["message"] and "[card] is on file" in opened["message"]
            assert "4111" not in opened["message"]
            for tool, args in (
                ("page_text", {"tabId": tab}),
                ("page_get_state", {"tabId": tab, "selector": "#state"}),
                ("page_mouse", {"tabId": tab, "selector": "#confirm"}),
            ):
                blocked = await refused(agent, tool, args)
                assert blocked["code"] == "dialog_open" and "alert()" in blocked["message"], tool
                assert "4111" not in blocked["message"]
                assert "page_dialog" in blocked["message"]
            # Other tabs are not held up.
            assert await state_of(agent, other) == "ready"
            answered = await ok(agent, "page_dialog", {"tabId": tab, "action": "dismiss"})
            assert answered == {
                "handled": True,
                "type": "alert",
                "accepted": False,
                "message": "card [card] is on file",
            }
            assert await state_of(agent, tab) == "after alert"
            nothing = await refused(agent, "page_dialog", {"tabId": tab, "action": "dismiss"})
            assert nothing["code"] == "bad_request" and "no JavaScript dialog" in nothing["message"]

            # confirm(): OK is the second half of an action, so the person allows it first.
            opened = await refused(agent, "page_click", {"tabId": tab, "selector": "#confirm"})
            assert opened["code"] == "dialog_open" and "confirm()" in opened["message"]
            accept = asyncio.ensure_future(
                agent.call_tool("page_dialog", {"tabId": tab, "action": "accept"})
            )
            window = await confirm_page(context)
            await shows(window, "Delete everything?")
            await press(window, "#allow")
            result = await accept
            assert not result.is_error, result.content
            assert result.structured_content["type"] == "confirm"
            assert await state_of(agent, tab) == "confirmed"
            # Saying no is free: no window.
            await refused(agent, "page_click", {"tabId": tab, "selector": "#confirm"})
            await ok(agent, "page_dialog", {"tabId": tab, "action": "dismiss"})
            assert await state_of(agent, tab) == "kept"

            # prompt(): answered with promptText once the person allowed it; never echoed.
            opened = await refused(agent, "page_click", {"tabId": tab, "selector": "#prompt"})
            assert opened["code"] == "dialog_open" and "prompt()" in opened["message"]
            accept = asyncio.ensure_future(
                agent.call_tool(
                    "page_dialog", {"tabId": tab, "action": "accept", "promptText": "Ada"}
                )
            )
            window = await confirm_page(context)
            await shows(window, "3 typed characters")
            await press(window, "#allow")
            result = await accept
            assert not result.is_error, result.content
            assert "Ada" not in str(result.content)
            assert await state_of(agent, tab) == "name=Ada"

            # beforeunload: the page asks once it had a real (trusted) gesture; leaving is
            # gated like the navigation it lets through (no window).
            await ok(agent, "page_mouse", {"tabId": tab, "selector": "#field"})
            leaving = await refused(
                agent, "page_navigate", {"tabId": tab, "url": f"{site}/elsewhere"}
            )
            assert leaving["code"] == "dialog_open" and "beforeunload" in leaving["message"]
            left = await ok(agent, "page_dialog", {"tabId": tab, "action": "accept"})
            assert left["type"] == "beforeunload" and left["accepted"] is True
            deadline = asyncio.get_running_loop().time() + 30
            while True:
                read = await agent.call_tool("page_text", {"tabId": tab})
                if not read.is_error and "elsewhere" in read.structured_content["text"]:
                    break
                assert asyncio.get_running_loop().time() < deadline, read.content
                await asyncio.sleep(0.1)

    asyncio.run(asyncio.wait_for(scenario(), 240))


def test_a_dialog_on_a_tab_the_session_does_not_own_is_never_touched(
    browser: ThrowawayBrowser, site: str
) -> None:
    provision_throwaway_trust(
        browser.root / "config", client_exe=os.path.realpath("/proc/self/exe"), origins=[site]
    )

    async def scenario() -> None:
        async with chromium(browser) as context, mcp_client(browser) as agent:
            seen = keep_dialogs_open(context)
            await wait_for_extension(agent, asyncio.get_running_loop().time() + 60)
            mine = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
            # The person's own tab, on the same approved site, with an alert open.
            person = await context.new_page()
            await person.goto(f"{site}/")
            await person.evaluate("setTimeout(() => alert('the person reads this'), 0)")
            deadline = asyncio.get_running_loop().time() + 30
            while not seen:
                assert asyncio.get_running_loop().time() < deadline, "the alert never opened"
                await asyncio.sleep(0.05)
            worker = context.service_workers[0] if context.service_workers else None
            if worker is None:
                worker = await context.wait_for_event("serviceworker", timeout=30_000)
            theirs = await worker.evaluate(
                "async ([url, mine]) => (await chrome.tabs.query({})).filter((t) => t.url === url "
                "&& t.id !== mine).map((t) => t.id)",
                [f"{site}/", mine],
            )
            assert len(theirs) == 1, theirs
            for tab in theirs:
                for tool, args in (
                    ("page_dialog", {"tabId": tab, "action": "accept"}),
                    ("page_text", {"tabId": tab}),
                ):
                    error = await refused(agent, tool, args)
                    # Not dialog_open: nothing about another tab's dialog leaks.
                    assert error["code"] == "tab_not_owned", (tool, error)
                    assert "the person reads this" not in error["message"]
            # Still open, for the person: answering it now works (Playwright's accept fails on a
            # dialog someone else already answered).
            await seen[0].accept()
            assert await person.evaluate("1 + 1") == 2
            assert await ok(agent, "page_get_state", {"tabId": mine, "selector": "#state"})

    asyncio.run(asyncio.wait_for(scenario(), 240))


def test_a_dialog_while_tab_open_loads_ends_the_call_with_dialog_open(
    browser: ThrowawayBrowser, site: str
) -> None:
    provision_throwaway_trust(
        browser.root / "config", client_exe=os.path.realpath("/proc/self/exe"), origins=[site]
    )

    async def scenario() -> None:
        async with chromium(browser) as context, mcp_client(browser) as agent:
            keep_dialogs_open(context)
            await wait_for_extension(agent, asyncio.get_running_loop().time() + 60)
            opened = await refused(agent, "tab_open", {"url": f"{site}/greeting"})
            assert opened["code"] == "dialog_open", opened
            assert "while tab_open ran" in opened["message"] and "Welcome back" in opened["message"]
            tabs = (await ok(agent, "tab_list", {}))["tabs"]
            assert len(tabs) == 1
            tab = tabs[0]["id"]
            assert f"tab {tab}" in opened["message"]
            await ok(
                agent, "page_dialog", {"tabId": tab, "action": "accept"}
            )  # an alert: no window
            assert await state_of(agent, tab) == "greeted"

    asyncio.run(asyncio.wait_for(scenario(), 240))


def test_an_inline_alert_while_the_page_is_parsed_answers_dialog_open_not_timeout(
    browser: ThrowawayBrowser, site: str
) -> None:
    """Issue 11: tab_open attaches the debugger to the empty tab before it navigates, so even a
    dialog from the page's first parse is seen."""
    provision_throwaway_trust(
        browser.root / "config", client_exe=os.path.realpath("/proc/self/exe"), origins=[site]
    )

    async def scenario() -> None:
        async with chromium(browser) as context, mcp_client(browser) as agent:
            keep_dialogs_open(context)
            await wait_for_extension(agent, asyncio.get_running_loop().time() + 60)
            opened = await refused(agent, "tab_open", {"url": f"{site}/inline"})
            assert opened["code"] == "dialog_open", opened
            assert "Hello from the parser" in opened["message"]
            tab = (await ok(agent, "tab_list", {}))["tabs"][0]["id"]
            blocked = await refused(agent, "page_text", {"tabId": tab})
            assert blocked["code"] == "dialog_open", blocked
            assert "alert()" in blocked["message"]
            answered = await ok(agent, "page_dialog", {"tabId": tab, "action": "accept"})
            assert answered["type"] == "alert" and answered["message"] == "Hello from the parser"
            assert await state_of(agent, tab) == "parsed"

    asyncio.run(asyncio.wait_for(scenario(), 240))
