"""page_fill_form in real headless Chromium through the real chain: a text input, a textarea, a
<select>, a checkbox and a radio button filled in one call, with one confirm window (the select's
question, as page_select asks it) and the page's own state read back; a missing and a disabled
field reported field by field, each with its code and hint, while the others are filled; a
password field refused for the whole call while passwordFill is off (nothing changes); and, with
passwordFill on, a form holding a password opens exactly one window, a denial changes no field
(the page's own event log stays empty), and an allowed fill reports the password's length, never
its value."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from playwright.async_api import BrowserContext

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    ServedSite,
    confirm_page,
    launched,
    ok,
    press,
    served_pages,
    shows,
    trust_this_process,
    widen,
)
from tests.browser.provenance import confirm_windows
from tests.fakes import tool_error

pytestmark = pytest.mark.browser

#: What the agent types into the password field: never in a result or a confirm window.
SECRET = "hunter2-correct-horse"

#: A form of every kind; the page logs each input and change event it sees (capture phase), so
#: "nothing changed" is the page's own word.
FORM = b"""<!doctype html><html><head><title>form</title></head><body>
<form id="f" onsubmit="return false">
<label>Name <input id="name" name="name"></label>
<label>Notes <textarea id="notes"></textarea></label>
<label>Fruit <select id="fruit"><option value="a">Apple</option><option value="b">Banana</option>
<option value="c">Cherry</option></select></label>
<label><input id="terms" type="checkbox"> I agree</label>
<label><input type="radio" name="size" id="small" checked> Small</label>
<label><input type="radio" name="size" id="large"> Large</label>
<label>Locked <input id="locked" disabled value="keep"></label>
<label>Password <input id="pw" type="password" autocomplete="current-password"></label>
</form>
<p id="log"></p>
<script>
  const log = document.getElementById('log');
  for (const type of ['input', 'change']) {
    const seen = (e) => { log.textContent += type + ':' + e.target.id + ' '; };
    document.addEventListener(type, seen, true);
  }
</script></body></html>"""


@pytest.fixture
def form_site() -> Iterator[ServedSite]:
    with served_pages({"/": FORM}) as served:
        yield served


async def state(agent: Client, tab: int, selector: str) -> dict[str, Any]:
    return await ok(agent, "page_get_state", {"tabId": tab, "selector": selector})


async def fill_answering(
    agent: Client, context: BrowserContext, args: dict[str, Any], button: str
) -> Any:
    """page_fill_form, the person answering its one window with ``button``; the window never
    shows the secret."""
    call = asyncio.create_task(agent.call_tool("page_fill_form", args))
    window = await confirm_page(context)
    await shows(window, "Fill a form on")
    assert SECRET not in (await window.text_content("body") or "")
    await press(window, button)
    return await call


async def test_a_form_of_every_kind_in_one_call_and_each_failure_on_its_own(
    browser: ThrowawayBrowser, form_site: ServedSite
) -> None:
    trust_this_process(browser, [form_site.origin])
    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{form_site.origin}/"}))["tab"]["id"]
        windows = confirm_windows(context)
        fields = [
            {"kind": "text", "selector": "#name", "value": "Alice"},
            {"kind": "text", "selector": "#notes", "value": "two\nlines"},
            {"kind": "select", "selector": "#fruit", "label": "Banana"},
            {"kind": "checkbox", "xpath": "//input[@type='checkbox']", "checked": True},
            {"kind": "radio", "selector": "#large"},
        ]
        result = await fill_answering(agent, context, {"tabId": tab, "fields": fields}, "#allow")
        assert not result.is_error, result.content
        done = result.structured_content
        assert (done["filled"], done["failed"]) == (5, 0), done
        assert [f["ok"] for f in done["fields"]] == [True] * 5
        text, notes, fruit, terms, large = done["fields"]
        assert (text["applied"], text["length"]) == ("yes", 5)
        assert text["target"]["role"] == "textbox" and "ref" in text["target"]
        assert (notes["applied"], notes["length"]) == ("yes", 9)
        assert (fruit["selected"], fruit["labels"]) == (["b"], ["Banana"])
        assert terms["checked"] is True and large["checked"] is True
        assert len(windows) == 1, "one window for the whole form"
        # The page's own state, read back.
        assert (await state(agent, tab, "#name"))["value"] == "Alice"
        assert (await state(agent, tab, "#notes"))["value"] == "two\nlines"
        assert (await state(agent, tab, "#fruit"))["value"] == "b"
        assert (await state(agent, tab, "#terms"))["checked"] is True
        assert (await state(agent, tab, "#large"))["checked"] is True
        assert (await state(agent, tab, "#small"))["checked"] is False

        # A missing and a disabled field: each its own error (code and hint); the others are
        # filled; no select, so nobody is asked.
        mixed = await ok(
            agent,
            "page_fill_form",
            {
                "tabId": tab,
                "timeoutMs": 500,
                "fields": [
                    {"kind": "text", "selector": "#missing", "value": "x"},
                    {"kind": "text", "selector": "#locked", "value": "changed"},
                    {"kind": "checkbox", "selector": "#terms", "checked": False},
                    {"kind": "text", "selector": "#name", "value": "Bob"},
                ],
            },
        )
        assert (mixed["filled"], mixed["failed"]) == (2, 2)
        missing, locked, unticked, bob = mixed["fields"]
        assert missing["ok"] is False and missing["error"]["code"] == "element_not_found"
        assert "page_snapshot" in missing["error"]["hint"]
        assert locked["ok"] is False and locked["error"]["code"] == "element_disabled"
        assert locked["error"]["hint"]
        assert unticked == {**unticked, "ok": True, "checked": False}
        assert bob["ok"] is True and bob["applied"] == "yes"
        assert (await state(agent, tab, "#locked"))["value"] == "keep"
        assert (await state(agent, tab, "#terms"))["checked"] is False
        assert (await state(agent, tab, "#name"))["value"] == "Bob"
        assert len(windows) == 1

        # A password field while passwordFill is off: the whole call is refused, nothing changes
        # (not even the text field listed before it), and nobody is asked.
        before = (await state(agent, tab, "#log"))["text"]
        refused = await agent.call_tool(
            "page_fill_form",
            {
                "tabId": tab,
                "fields": [
                    {"kind": "text", "selector": "#name", "value": "Carol"},
                    {"kind": "text", "selector": "#pw", "value": SECRET},
                ],
            },
        )
        error = tool_error(refused) or {}
        assert error.get("code") == "policy_denied" and "password" in error["message"], error
        assert SECRET not in str(refused.content)
        assert (await state(agent, tab, "#name"))["value"] == "Bob"
        assert (await state(agent, tab, "#log"))["text"] == before
        assert len(windows) == 1


async def test_a_form_with_a_password_asks_once_a_no_changes_nothing_and_no_value_comes_back(
    browser: ThrowawayBrowser, form_site: ServedSite
) -> None:
    trust_this_process(browser, [form_site.origin])
    widen(browser, passwordFill=True)
    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{form_site.origin}/"}))["tab"]["id"]
        windows = confirm_windows(context)
        args = {
            "tabId": tab,
            "fields": [
                {"kind": "text", "selector": "#name", "value": "Dave"},
                {"kind": "text", "selector": "#pw", "value": SECRET},
                {"kind": "select", "selector": "#fruit", "value": "c"},
                {"kind": "checkbox", "selector": "#terms", "checked": True},
            ],
        }
        # The person says no: one window, and no field changed (the page saw no event at all).
        denied = await fill_answering(agent, context, args, "#deny")
        assert (tool_error(denied) or {}).get("code") == "confirm_denied"
        assert len(windows) == 1
        assert (await state(agent, tab, "#log"))["text"] == ""
        assert (await state(agent, tab, "#name"))["value"] == ""
        assert (await state(agent, tab, "#fruit"))["value"] == "a"
        assert (await state(agent, tab, "#terms"))["checked"] is False

        # Allowed: every field filled; the password's length is reported, never its value.
        allowed = await fill_answering(agent, context, args, "#allow")
        assert not allowed.is_error, allowed.content
        assert len(windows) == 2, "one window per call"
        done = allowed.structured_content
        assert (done["filled"], done["failed"]) == (4, 0)
        password = done["fields"][1]
        assert (password["ok"], password["applied"], password["length"]) == (
            True,
            "yes",
            len(SECRET),
        )
        assert SECRET not in str(done) and SECRET not in str(allowed.content)
        assert "input:pw" in (await state(agent, tab, "#log"))["text"]
        assert SECRET not in str(await state(agent, tab, "#pw"))
        assert (await state(agent, tab, "#fruit"))["value"] == "c"
