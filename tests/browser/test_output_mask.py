"""One output pipeline, in real Chromium through the real chain: every reply the
extension sends passes one masking step (extension/worker/mask.js, applied in worker/dispatch.js),
so a secret a page holds reaches the agent nowhere in a result's text or structured content. A GET
login form's URL carries what was typed: after it is submitted, page_click's result, tab_list and
page_text's url mask every query value of it (the extension learned the URL from Chrome's form
submission signal, whatever the fields are named). page_network masks pwd/pin/key query values
(a multi-word one whole), page_console masks `pwd=<a multi-word password>` whole, page_fetch masks
the httpOnly cookie an endpoint echoes back, and an alert()'s token and card are masked in the
dialog_open error. What is not secret stays readable in each."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    Answer,
    Reply,
    Request,
    ServedSite,
    confirm_page,
    keep_dialogs_open,
    launched,
    ok,
    press,
    served_pages,
    shows_card,
    trust_this_process,
    widen,
)
from tests.deadline import until
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

#: What a person typed into the GET login form's password field (its name is not secret-like).
TYPED = "Tr0ub4dor and more"
#: A multi-word password the page logs and sends as `pwd`.
MULTI = "mauve zebra quartet"
PIN = "83146259"
KEY = "KEYc0ffee42"
ALERT_TOKEN = "ALERTSECRET91x"
SESSION_COOKIE = "COOKIEc4f3b00k"

LOGIN = """<!doctype html><title>sign in</title>
<form action="/welcome" method="get">
  <input name="login" value="alice">
  <input type="password" name="answer">
  <button id="go" type="submit">Sign in</button>
</form>
<script>document.querySelector('[name=answer]').value = 'TYPED';</script>"""

WELCOME = """<!doctype html><title>welcome</title><p id="state">welcome back</p>
<button type="button" id="log">Log</button>
<button type="button" id="net">Check</button>
<button type="button" id="alert">Alert</button>
<script>
  const state = (t) => { document.getElementById('state').textContent = t; };
  const on = (id, f) => document.getElementById(id).addEventListener('click', f);
  on('log', () => { console.error('login failed: pwd=MULTI'); state('logged'); });
  on('net', async () => {
    const pwd = encodeURIComponent('MULTI');
    const r = await fetch('/api/check?pwd=' + pwd + '&pin=PIN&key=KEY&spinner=3');
    state('checked ' + (await r.text()).length);
  });
  on('alert', () => { alert('card 4111 1111 1111 1111 on file; token=ALERT_TOKEN'); });
</script>"""


def _echo(request: Request) -> Reply | None:
    """/api/echo answers with the request's headers, as httpbin's /headers does."""
    if request.path != "/api/echo":
        return None
    headers = {
        "Cookie": request.headers.get("cookie", ""),
        "Accept": request.headers.get("accept", ""),
    }
    return Reply(json.dumps({"headers": headers, "echoed": "yes"}), "application/json")


@pytest.fixture
def site() -> Iterator[ServedSite]:
    login = LOGIN.replace("TYPED", TYPED)
    welcome = (
        WELCOME.replace("MULTI", MULTI)
        .replace("PIN", PIN)
        .replace("KEY", KEY)
        .replace("ALERT_TOKEN", ALERT_TOKEN)
    )
    pages: dict[str, Answer] = {
        "/": Reply(
            login,
            headers={"Set-Cookie": f"sid={SESSION_COOKIE}; Path=/; HttpOnly"},
        ),
        "/welcome": welcome,
        "/api/check": ("ok", "text/plain"),
    }
    with served_pages(pages, hook=_echo) as served:
        yield served


def _everything(result: Any) -> str:
    """All a client receives of one result: its text content and its structured content."""
    texts = [getattr(c, "text", "") for c in result.content]
    return json.dumps(result.structured_content) + "".join(texts)


def _leaks(seen: str) -> list[str]:
    """The secrets (each word of each) that appear in ``seen``."""
    words = [*TYPED.split(), *MULTI.split(), PIN, KEY, ALERT_TOKEN, SESSION_COOKIE]
    found = [w for w in words if w in seen and w not in ("and", "more")]
    return found + (["the card number"] if shows_card(seen) else [])


async def _call(agent: Any, tool: str, args: dict[str, Any]) -> tuple[Any, str]:
    result = await agent.call_tool(tool, args)
    seen = _everything(result)
    assert _leaks(seen) == [], (tool, seen)
    return result, seen


async def _until(agent: Any, tool: str, args: dict[str, Any], needle: str) -> str:
    """Call ``tool`` until what it returns holds ``needle`` (generous deadline); each answer is
    checked for leaks on the way."""

    async def holds() -> str | None:
        result, seen = await _call(agent, tool, args)
        assert not result.is_error, seen
        return seen if needle in seen else None

    found: str = await until(f"{tool} answered with {needle!r}", holds, interval_s=0.2)
    return found


@pytest.mark.promise("H4-13", "H4-14")
async def test_a_get_login_form_url_and_page_tails_and_an_alert_never_carry_the_secret(
    browser: ThrowawayBrowser, site: ServedSite
) -> None:
    origin = site.origin
    trust_this_process(browser, [origin])

    async with launched(browser) as (context, agent):
        keep_dialogs_open(context)
        tab = (await ok(agent, "tab_open", {"url": f"{origin}/"}))["tab"]["id"]
        widen(browser, consoleCapture=True, networkCapture=True)

        # The GET form is submitted (the person allows it: it holds a password field), and
        # the password is in the URL Chrome loads.
        clicking = asyncio.create_task(
            agent.call_tool("page_click", {"tabId": tab, "selector": "#go"})
        )
        await press(await confirm_page(context), "#allow")
        clicked = await clicking
        seen = _everything(clicked)
        assert not clicked.is_error, seen
        assert _leaks(seen) == [], seen
        sent = site.requests("/welcome")
        assert len(sent) == 1 and sent[0].query("answer") == TYPED  # the site got it
        await _until(agent, "page_get_state", {"tabId": tab, "selector": "#state"}, "welcome back")
        listed = await _until(agent, "tab_list", {}, "/welcome?")
        assert "login=[masked" in listed and "answer=[masked" in listed, listed
        text = await _until(agent, "page_text", {"tabId": tab}, "welcome back")
        assert "/welcome?" in text and "answer=[masked" in text, text

        # page_console: `pwd=<a multi-word password>` masked whole.
        await ok(agent, "page_click", {"tabId": tab, "selector": "#log"})
        console = await _until(agent, "page_console", {"tabId": tab}, "login failed")
        assert "login failed: pwd=[masked" in console, console

        # page_network: pwd, pin and key query values masked; spinner stays.
        await ok(agent, "page_click", {"tabId": tab, "selector": "#net"})
        network = await _until(
            agent, "page_network", {"tabId": tab, "url": "/api/check"}, "spinner=3"
        )
        for name in ("pwd", "pin", "key"):
            assert f"{name}=[masked" in network, (name, network)

        # alert(): its token and card are masked in the dialog_open error.
        opened, seen = await _call(agent, "page_click", {"tabId": tab, "selector": "#alert"})
        refusal = tool_error(opened)
        assert refusal is not None and refusal["code"] == "dialog_open", seen
        assert "alert()" in refusal["message"] and "token=[masked" in refusal["message"], refusal
        assert "[card]" in refusal["message"]
        answered, _ = await _call(agent, "page_dialog", {"tabId": tab, "action": "dismiss"})
        assert not answered.is_error


@pytest.mark.promise("H4-13")
async def test_b_page_fetch_of_an_endpoint_echoing_the_httponly_cookie_masks_it(
    browser: ThrowawayBrowser, site: ServedSite
) -> None:
    origin = site.origin
    trust_this_process(browser, [origin])

    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{origin}/"}))["tab"]["id"]
        widen(browser, pageFetch=True)
        cookie, seen = await _call(agent, "cookie_get", {"tabId": tab})
        assert not cookie.is_error and "sid" in seen, seen  # masked there already
        fetching = asyncio.create_task(
            agent.call_tool("page_fetch", {"tabId": tab, "url": f"{origin}/api/echo"})
        )
        window = await confirm_page(context)
        await press(window, "#allow")
        got = await fetching
        seen = _everything(got)
        assert not got.is_error, seen
        echoed = site.requests("/api/echo")
        assert len(echoed) == 1 and SESSION_COOKIE in echoed[0].headers.get("cookie", "")
        assert _leaks(seen) == [], seen
        body = json.loads(got.structured_content["body"])
        assert body["echoed"] == "yes" and body["headers"]["Cookie"].startswith("[masked")


#: What the agent types into a password field whose name no rule calls secret.
ODD_PASSWORD = "Plover8quietly"
#: The page's other field: not secret, so it must stay readable (no over-masking).
VISIBLE_USER = "alice-visible"

ODD_FIELD = """<!doctype html><title>odd sign in</title>
<form id="f" onsubmit="return false">
  <input name="user" id="user" value="USER">
  <span id="slot"></span>
</form>
<button type="button" id="reveal">Reveal</button>
<button type="button" id="send">Send</button>
<p id="state">ready</p>
<iframe src="SINK/frame" title="another site"></iframe>
<script>
  const state = (t) => { document.getElementById('state').textContent = t; };
  // The password field arrives after the page loaded, under a name no rule calls secret.
  document.getElementById('reveal').addEventListener('click', () => {
    const pw = document.createElement('input');
    pw.type = 'password'; pw.name = 'zz9'; pw.id = 'fieldq';
    document.getElementById('slot').append(pw);
    state('revealed');
  });
  document.getElementById('send').addEventListener('click', async () => {
    const v = document.getElementById('fieldq').value;
    const u = document.getElementById('user').value;
    console.error('zz9=' + v);
    console.error('user=' + u);
    await fetch('SINK/collect?zz9=' + encodeURIComponent(v) + '&user=' + encodeURIComponent(u),
                {mode: 'no-cors'});
    state('sent');
  });
</script>"""


@pytest.fixture
def sink() -> Iterator[ServedSite]:
    """The second origin the page sends the password to (the policy does not approve it)."""
    frame = "<!doctype html><p>an embedded page of a site the policy does not approve</p>"
    with served_pages({"/collect": ("ok", "text/plain"), "/frame": frame}) as served:
        yield served


@pytest.fixture
def odd_site(sink: ServedSite) -> Iterator[ServedSite]:
    """The approved page with the oddly named password field; it embeds and sends to ``sink``."""
    page = ODD_FIELD.replace("SINK", sink.origin).replace("USER", VISIBLE_USER)
    with served_pages({"/": page}) as served:
        yield served


def _odd_leaks(seen: str) -> list[str]:
    return [w for w in (ODD_PASSWORD, "Plover8", "quietly") if w in seen]


async def _checked(agent: Any, tool: str, args: dict[str, Any]) -> str:
    """Call ``tool``: it must succeed, and the odd password be nowhere in what it returns."""
    result = await agent.call_tool(tool, args)
    seen = _everything(result)
    assert _odd_leaks(seen) == [], (tool, seen)
    assert not result.is_error, (tool, seen)
    return seen


async def _checked_until(agent: Any, tool: str, args: dict[str, Any], needle: str) -> str:
    """``_checked`` until what ``tool`` returns holds ``needle``."""

    async def holds() -> str | None:
        seen = await _checked(agent, tool, args)
        return seen if needle in seen else None

    found: str = await until(f"{tool} answered with {needle!r}", holds, interval_s=0.2)
    return found


@pytest.mark.promise("H4-62")
async def test_c_a_password_field_with_an_odd_name_masks_its_value_wherever_the_page_sends_it(
    browser: ThrowawayBrowser, odd_site: ServedSite, sink: ServedSite
) -> None:
    """A password field named `zz9` (no secret word) whose value the page then logs and sends by
    fetch to a second origin under that name: the extension learned the field's name on the page
    (a frame of that unapproved origin in it does not stop the reading), so page_network,
    page_console and every other reply mask it; the user field stays readable."""
    origin = odd_site.origin
    trust_this_process(browser, [origin])

    async with launched(browser) as (_, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{origin}/"}))["tab"]["id"]
        widen(browser, consoleCapture=True, networkCapture=True, passwordFill=True)
        await _checked(agent, "page_click", {"tabId": tab, "selector": "#reveal"})
        state = {"tabId": tab, "selector": "#state"}
        await _checked_until(agent, "page_get_state", state, "revealed")
        typed = {"tabId": tab, "selector": "#fieldq", "value": ODD_PASSWORD}
        await _checked(agent, "page_type", typed)
        await _checked(agent, "page_click", {"tabId": tab, "selector": "#send"})
        await _checked_until(agent, "page_get_state", state, "sent")
        # The page really sent it, to the second origin, under the odd name.
        collected = sink.requests("/collect")
        assert len(collected) == 1 and collected[0].query("zz9") == ODD_PASSWORD
        network = await _checked_until(
            agent, "page_network", {"tabId": tab, "url": "/collect"}, "/collect"
        )
        assert "zz9=[masked" in network, network
        assert f"user={VISIBLE_USER}" in network, network  # not over-masked
        console = await _checked_until(agent, "page_console", {"tabId": tab}, "user=")
        assert "zz9=[masked" in console, console
        assert f"user={VISIBLE_USER}" in console, console
        for tool, args in (
            ("tab_list", {}),
            ("page_text", {"tabId": tab}),
            ("page_snapshot", {"tabId": tab}),
        ):
            await _checked(agent, tool, args)
        # Nothing but the frame's load and the page's one request reached it.
        assert sorted(r.path for r in sink.requests()) == ["/collect", "/frame"]
