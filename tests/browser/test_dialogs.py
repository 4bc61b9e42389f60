"""JavaScript dialogs never freeze a tab, in real Chromium through the real
chain: alert(), confirm(), prompt() and a beforeunload on an owned tab make the call that opened
them and every next call on that tab answer `dialog_open` at once, with the dialog's type and its
text masked; page_dialog answers it (OK on a confirm() or prompt() only after the person allowed
it in the confirm window) and the call after works. A dialog on a tab the session does not own
(the person's own tab) is never touched. Even an alert() in the page's first HTML is seen
(tab_open attaches before it navigates). With policy dialogArming on, dialogs never block: each
is dismissed and logged (masked) unless an answer was armed for its page (the person asked at
arming time for an accept), and an arm never outlives its document nor answers another origin;
with it off, arming is refused. And the platform fact all this rests on (why the debugger is
never detached while a tab is an agent's): a session attached after a dialog opened can neither
see nor answer it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from mcp import Client
from playwright.async_api import BrowserContext
from playwright.async_api import Error as PlaywrightError

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    Reply,
    Request,
    chromium,
    confirm_page,
    keep_dialogs_open,
    launched,
    ok,
    press,
    served_pages,
    shows,
    shows_card,
    trust_this_process,
    widen,
)
from tests.deadline import until
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

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


#: Page B of the arming attack: its confirm() must never meet an answer armed on page A.
TRANSFER = b"""<!doctype html><title>transfer</title><p id="state">b</p>
<button type="button" id="confirm">Transfer</button>
<script>document.getElementById('confirm').addEventListener('click', () => {
  document.getElementById('state').textContent = confirm('Transfer all funds?') ? 'sent' : 'kept';
});</script>"""


#: A page of one origin embedding a frame of another (`?other=ORIGIN`) that asks a confirm()
#: when told to; the page's own #own button asks one of its own.
FRAMED = b"""<!doctype html><title>framed</title><p id="state">framed</p>
<button type="button" id="ask">Ask the frame</button>
<button type="button" id="own">Ask here</button>
<iframe id="f" title="other"></iframe>
<script>
  const state = (t) => { document.getElementById('state').textContent = t; };
  const frame = document.getElementById('f');
  frame.src = new URLSearchParams(location.search).get('other') + '/asker';
  window.addEventListener('message', (e) => state('frame said ' + e.data));
  document.getElementById('ask').addEventListener('click',
    () => frame.contentWindow.postMessage('ask', '*'));
  document.getElementById('own').addEventListener('click',
    () => state(confirm('Save here?') ? 'own yes' : 'own no'));
</script>"""
ASKER = b"""<!doctype html><title>asker</title><script>
  window.addEventListener('message',
    () => parent.postMessage(confirm('Frame asks: allow?') ? 'yes' : 'no', '*'));
  parent.postMessage('ready', '*');
</script>"""


PAGES = {
    "/": DIALOGS,
    "/greeting": GREETING,
    "/inline": INLINE,
    "/transfer": TRANSFER,
    "/framed": FRAMED,
    "/asker": ASKER,
}


def _slow(request: Request) -> Reply | None:
    if request.path != "/slow.png":
        return None
    time.sleep(3)  # a slow resource: the page is still loading when it greets
    return Reply(status=404, content_type=None)


@contextlib.contextmanager
def _served() -> Iterator[str]:
    with served_pages(PAGES, fallback=b"<!doctype html><p>elsewhere</p>", hook=_slow) as served:
        yield served.origin


@pytest.fixture
def site() -> Iterator[str]:
    with _served() as origin:
        yield origin


async def refused(agent: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    error = tool_error(await agent.call_tool(tool, args))
    assert error is not None, (tool, args)
    return error


async def state_of(agent: Any, tab: int) -> str:
    return str((await ok(agent, "page_get_state", {"tabId": tab, "selector": "#state"}))["text"])


async def _is_state(agent: Any, tab: int, wanted: Callable[[str], bool]) -> bool:
    return wanted(await state_of(agent, tab))


@pytest.mark.promise("H4-43")
async def test_dialogs_answer_dialog_open_until_page_dialog_handles_them(
    agent: Client, context: BrowserContext, site: str
) -> None:
    keep_dialogs_open(context)
    tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
    other = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]

    # alert(): the click that opened it says so; every next call answers at once.
    opened = await refused(agent, "page_click", {"tabId": tab, "selector": "#alert"})
    assert opened["code"] == "dialog_open", opened
    assert "alert()" in opened["message"] and "[card] is on file" in opened["message"]
    assert not shows_card(opened["message"])
    for tool, args in (
        ("page_text", {"tabId": tab}),
        ("page_get_state", {"tabId": tab, "selector": "#state"}),
        ("page_mouse", {"tabId": tab, "selector": "#confirm"}),
    ):
        blocked = await refused(agent, tool, args)
        assert blocked["code"] == "dialog_open" and "alert()" in blocked["message"], tool
        assert not shows_card(blocked["message"])
        assert "page_dialog" in blocked["message"]
    # Other tabs are not held up.
    assert await state_of(agent, other) == "ready"
    answered = await ok(agent, "page_dialog", {"tabId": tab, "action": "dismiss"})
    assert answered == {
        "handled": True,
        "type": "alert",
        "accepted": False,
        "message": "card [card] is on file",
        "armed": None,
        "recent": [
            {
                "type": "alert",
                "message": "card [card] is on file",
                "origin": site,
                "answered": "dismissed",
                "by": "agent",
            }
        ],
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
        agent.call_tool("page_dialog", {"tabId": tab, "action": "accept", "promptText": "Ada"})
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
    leaving = await refused(agent, "page_navigate", {"tabId": tab, "url": f"{site}/elsewhere"})
    assert leaving["code"] == "dialog_open" and "beforeunload" in leaving["message"]
    left = await ok(agent, "page_dialog", {"tabId": tab, "action": "accept"})
    assert left["type"] == "beforeunload" and left["accepted"] is True
    await until_text(agent, tab, "elsewhere")


@pytest.mark.promise("H4-43")
async def test_a_dialog_on_a_tab_the_session_does_not_own_is_never_touched(
    agent: Client, context: BrowserContext, site: str
) -> None:
    seen = keep_dialogs_open(context)
    mine = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
    # The person's own tab, on the same approved site, with an alert open.
    person = await context.new_page()
    await person.goto(f"{site}/")
    await person.evaluate("setTimeout(() => alert('the person reads this'), 0)")
    await until("the alert opened", lambda: seen, interval_s=0.05)
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


@pytest.mark.promise("H4-43")
async def test_a_dialog_while_tab_open_loads_ends_the_call_with_dialog_open(
    agent: Client, context: BrowserContext, site: str
) -> None:
    keep_dialogs_open(context)
    opened = await refused(agent, "tab_open", {"url": f"{site}/greeting"})
    assert opened["code"] == "dialog_open", opened
    assert "while tab_open ran" in opened["message"] and "Welcome back" in opened["message"]
    tabs = (await ok(agent, "tab_list", {}))["tabs"]
    assert len(tabs) == 1
    tab = tabs[0]["id"]
    assert f"tab {tab}" in opened["message"]
    await ok(agent, "page_dialog", {"tabId": tab, "action": "accept"})  # an alert: no window
    assert await state_of(agent, tab) == "greeted"


@pytest.mark.promise("H4-44")
async def test_an_inline_alert_while_the_page_is_parsed_answers_dialog_open_not_timeout(
    browser: ThrowawayBrowser, site: str
) -> None:
    """Seen from the first parse: tab_open attaches the debugger to the empty tab before it
    navigates, so even a dialog from the page's first parse is seen."""
    trust_this_process(browser, [site])

    async with launched(browser) as (context, agent):
        keep_dialogs_open(context)
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


async def until_text(agent: Any, tab: int, text: str) -> None:
    async def shows_text() -> bool:
        read = await agent.call_tool("page_text", {"tabId": tab})
        return not read.is_error and text in read.structured_content["text"]

    await until(f"page_text shows {text!r}", shows_text)


@pytest.mark.promise("H4-45")
async def test_with_arming_allowed_dialogs_never_block_and_an_arm_answers_only_its_page(
    browser: ThrowawayBrowser, site: str
) -> None:
    trust_this_process(browser, [site])
    widen(browser, dialogArming=True)

    async with launched(browser) as (context, agent):
        keep_dialogs_open(context)
        tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]

        # Not armed: each dialog is dismissed at once and logged, masked; nothing blocks.
        await ok(agent, "page_click", {"tabId": tab, "selector": "#alert"})
        assert await state_of(agent, tab) == "after alert"
        await ok(agent, "page_click", {"tabId": tab, "selector": "#confirm"})
        assert await state_of(agent, tab) == "kept"
        listed = await ok(agent, "page_dialog", {"tabId": tab})
        assert listed["handled"] is False and listed.get("armed") is None
        assert listed["recent"] == [
            {
                "type": "alert",
                "message": "card [card] is on file",
                "origin": site,
                "answered": "auto-dismissed",
                "by": "tabwarden",
            },
            {
                "type": "confirm",
                "message": "Delete everything?",
                "origin": site,
                "answered": "auto-dismissed",
                "by": "tabwarden",
            },
        ]
        assert not shows_card(str(listed))

        # Armed accept: the person is asked when it is armed; the next confirm() gets OK.
        arming = asyncio.ensure_future(
            agent.call_tool("page_dialog", {"tabId": tab, "arm": "accept"})
        )
        window = await confirm_page(context)
        await shows(window, "Press OK on the next dialog")
        await press(window, "#allow")
        armed = await arming
        assert not armed.is_error, armed.content
        assert armed.structured_content["armed"] == {"answer": "accept", "origin": site}
        await ok(agent, "page_click", {"tabId": tab, "selector": "#confirm"})
        assert await state_of(agent, tab) == "confirmed"
        # One shot: the next one is dismissed again.
        await ok(agent, "page_click", {"tabId": tab, "selector": "#confirm"})
        assert await state_of(agent, tab) == "kept"
        recent = (await ok(agent, "page_dialog", {"tabId": tab}))["recent"]
        assert [(d["answered"], d["by"]) for d in recent[-2:]] == [
            ("accepted", "arm"),
            ("auto-dismissed", "tabwarden"),
        ]

        # prompt(): the armed answer is typed, never echoed (not in any result).
        arming = asyncio.ensure_future(
            agent.call_tool("page_dialog", {"tabId": tab, "arm": "accept", "promptText": "Ada"})
        )
        window = await confirm_page(context)
        await shows(window, "3 typed characters")
        await press(window, "#allow")
        armed = await arming
        assert not armed.is_error and "Ada" not in str(armed.content), armed.content
        await ok(agent, "page_click", {"tabId": tab, "selector": "#prompt"})
        assert await state_of(agent, tab) == "name=Ada"
        assert "Ada" not in str(await ok(agent, "page_dialog", {"tabId": tab}))

        # beforeunload, not armed: "stay" is the answer, and the call says so at once.
        await ok(agent, "page_mouse", {"tabId": tab, "selector": "#field"})
        stayed = await refused(
            agent, "page_navigate", {"tabId": tab, "url": f"{site}/transfer?from=a"}
        )
        assert stayed["code"] == "navigation_cancelled", stayed
        assert "arm" in stayed["message"]
        assert await state_of(agent, tab) == "name=Ada"
        # Armed accept lets that navigation through (the navigation passed its own gate).
        arming = asyncio.ensure_future(
            agent.call_tool("page_dialog", {"tabId": tab, "arm": "accept"})
        )
        await press(await confirm_page(context), "#allow")
        assert not (await arming).is_error
        await agent.call_tool("page_navigate", {"tabId": tab, "url": f"{site}/transfer?from=a"})
        await until_text(agent, tab, "Transfer")

        # The attack: an accept armed on page A does not survive the navigation to page B.
        arming = asyncio.ensure_future(
            agent.call_tool("page_dialog", {"tabId": tab, "arm": "accept"})
        )
        await press(await confirm_page(context), "#allow")
        assert not (await arming).is_error
        await ok(agent, "page_navigate", {"tabId": tab, "url": f"{site}/transfer"})
        assert (await ok(agent, "page_dialog", {"tabId": tab})).get("armed") is None
        await ok(agent, "page_click", {"tabId": tab, "selector": "#confirm"})
        assert await state_of(agent, tab) == "kept"
        last = (await ok(agent, "page_dialog", {"tabId": tab}))["recent"][-1]
        assert last["message"] == "Transfer all funds?"
        assert (last["answered"], last["by"]) == ("auto-dismissed", "tabwarden")


@pytest.mark.promise("H4-45")
async def test_with_arming_off_an_arm_is_refused_and_nothing_is_armed(
    agent: Client, context: BrowserContext, site: str
) -> None:
    keep_dialogs_open(context)
    tab = (await ok(agent, "tab_open", {"url": f"{site}/transfer"}))["tab"]["id"]
    for how in ("accept", "dismiss"):
        denied = await refused(agent, "page_dialog", {"tabId": tab, "arm": how})
        assert denied["code"] == "policy_denied", denied
        assert "dialogArming" in denied["message"]
        assert "tabwarden policy set dialogArming=true" in denied["message"]
    assert (await ok(agent, "page_dialog", {"tabId": tab})).get("armed") is None
    # Dialogs still wait for an answer: the confirm() is not accepted behind anyone's back.
    opened = await refused(agent, "page_click", {"tabId": tab, "selector": "#confirm"})
    assert opened["code"] == "dialog_open", opened
    await ok(agent, "page_dialog", {"tabId": tab, "action": "dismiss"})
    assert await state_of(agent, tab) == "kept"


@pytest.fixture
def other_site() -> Iterator[str]:
    """A second local origin (another port), not approved."""
    with _served() as origin:
        yield origin


@pytest.mark.promise("H4-45")
async def test_an_arm_answers_only_a_dialog_of_the_origin_it_was_armed_on(
    browser: ThrowawayBrowser, site: str, other_site: str
) -> None:
    trust_this_process(browser, [site])
    widen(browser, dialogArming=True)

    async with launched(browser) as (context, agent):
        keep_dialogs_open(context)
        url = f"{site}/framed?other={other_site}"
        tab = (await ok(agent, "tab_open", {"url": url}))["tab"]["id"]
        await until(
            "the frame loaded", lambda: _is_state(agent, tab, lambda s: s == "frame said ready")
        )
        arming = asyncio.ensure_future(
            agent.call_tool("page_dialog", {"tabId": tab, "arm": "accept"})
        )
        await press(await confirm_page(context), "#allow")
        assert not (await arming).is_error
        # The embedded frame of another origin asks: dismissed, and the arm stays.
        await ok(agent, "page_click", {"tabId": tab, "selector": "#ask"})
        await until(
            "the frame answered", lambda: _is_state(agent, tab, lambda s: s != "frame said ready")
        )
        assert await state_of(agent, tab) == "frame said no"
        listed = await ok(agent, "page_dialog", {"tabId": tab})
        assert listed["armed"] == {"answer": "accept", "origin": site}
        last = listed["recent"][-1]
        assert (last["origin"], last["answered"], last["by"]) == (
            other_site,
            "auto-dismissed",
            "tabwarden",
        )
        assert last["message"] == ""  # its site is not approved: its text is withheld
        assert "Frame asks" not in str(listed)
        # The page's own confirm() gets the armed OK.
        await ok(agent, "page_click", {"tabId": tab, "selector": "#own"})
        assert await state_of(agent, tab) == "own yes"


async def test_a_debugger_attached_after_a_dialog_opened_cannot_see_or_answer_it(
    browser: ThrowawayBrowser, site: str
) -> None:
    """The platform fact ADR 0005 stands on (docs/platform-facts-dialogs.md): a CDP session
    attached while a dialog is already open gets no `Page.javascriptDialogOpening`, and its
    `Page.handleJavaScriptDialog` answers "No dialog is showing" and leaves the dialog open. So
    the debugger is not detached when idle: a dialog opened meanwhile would freeze the tab. This
    fails the day Chromium lets a late attach answer the dialog; re-measure then."""

    async with chromium(browser) as context:
        seen = keep_dialogs_open(context)
        page = await context.new_page()
        await page.goto(f"{site}/")
        # The page's own timer opens it; no session of ours is attached yet.
        await page.evaluate("setTimeout(() => alert('opened before the attach'), 0)")
        await until("the alert opened", lambda: seen, interval_s=0.05)
        late = await context.new_cdp_session(page)
        announced: list[Any] = []
        late.on("Page.javascriptDialogOpening", lambda event: announced.append(event))
        enabling = asyncio.ensure_future(late.send("Page.enable"))
        with pytest.raises(PlaywrightError, match="No dialog is showing"):
            await late.send("Page.handleJavaScriptDialog", {"accept": False})
        # Still open, and still answerable by the session that saw it open.
        await seen[0].dismiss()
        await asyncio.wait_for(enabling, 30)  # answers once the page is unblocked
        assert announced == []
        assert await page.evaluate("1 + 1") == 2
