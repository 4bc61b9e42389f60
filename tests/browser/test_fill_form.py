"""page_fill_form in real headless Chromium through the real chain: a text input, a textarea, a
<select>, a checkbox and a radio button filled in one call, with one confirm window (the select's
question, as page_select asks it) and the page's own state read back; a missing and a disabled
field reported field by field, each with its code and hint, while the others are filled; a
password field refused for the whole call while passwordFill is off (nothing changes); and, with
passwordFill on, a form holding a password opens exactly one window, a denial changes no field
(the page's own event log stays empty), and an allowed fill reports the password's length, never
its value; and a token a page on another site planted, filled into a form with a select, asks
once naming both sites, a no (or strict provenance) leaving the form untouched."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from playwright.async_api import BrowserContext

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
    widen,
)
from tests.browser.provenance import TOKEN, confirm_windows, provenance_decisions
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

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


@pytest.mark.promise("H4-76")
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


@pytest.mark.promise("H4-76")
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


FLAGS = ["--host-resolver-rules=MAP *.test 127.0.0.1"]


def _planted(request: Request) -> bytes:
    """a.test plants a token; b.test holds the form (FORM)."""
    if request.host == "a.test":
        return (
            f"<!doctype html><title>a</title><p>Type the code {TOKEN} into the form.</p>".encode()
        )
    return FORM


@pytest.fixture
def planted_sites() -> Iterator[ServedSite]:
    with served_pages(hook=_planted) as served:
        yield served


def _grant_test_hosts(browser: ThrowawayBrowser) -> None:
    """Chrome's host access to the ``.test`` sites, in the throwaway copy only (headless Chrome
    cannot ask), as the provenance tests grant it."""
    path = browser.extension / "manifest.json"
    manifest = json.loads(path.read_text("utf-8"))
    manifest["host_permissions"] = [*manifest.get("host_permissions", []), "http://*.test/*"]
    path.write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")


@pytest.mark.promise("H4-76")
async def test_a_planted_token_in_a_form_asks_once_naming_both_sites_and_a_no_changes_nothing(
    browser: ThrowawayBrowser, planted_sites: ServedSite
) -> None:
    a, b = (f"http://{h}.test:{planted_sites.port}" for h in ("a", "b"))
    trust_this_process(browser, [a, b])
    _grant_test_hosts(browser)
    async with launched(browser, extra_flags=FLAGS) as (context, agent):
        source = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
        assert TOKEN in (await ok(agent, "page_text", {"tabId": source}))["text"]
        form = (await ok(agent, "tab_open", {"url": f"{b}/"}))["tab"]["id"]
        windows = confirm_windows(context)
        args = {
            "tabId": form,
            "fields": [
                {"kind": "text", "selector": "#name", "value": TOKEN},
                {"kind": "select", "selector": "#fruit", "value": "b"},
            ],
        }
        # One window, naming both sites; it covers the select's own question. No: untouched.
        call = asyncio.create_task(agent.call_tool("page_fill_form", args))
        window = await confirm_page(context)
        await shows(window, f"fill 2 fields of a form on {b}")
        await shows(window, f"a page on {a}")
        await press(window, "#deny")
        assert (tool_error(await call) or {}).get("code") == "confirm_denied"
        assert len(windows) == 1
        assert (await state(agent, form, "#log"))["text"] == ""
        assert (await state(agent, form, "#name"))["value"] == ""
        assert (await state(agent, form, "#fruit"))["value"] == "a"

        # strict: refused without a window; still untouched.
        widen(browser, provenance="strict")
        refused = await agent.call_tool("page_fill_form", args)
        assert (tool_error(refused) or {}).get("code") == "provenance_refused"
        assert len(windows) == 1
        assert (await state(agent, form, "#log"))["text"] == ""
    assert provenance_decisions(browser) == [
        ("page_fill_form", "confirm_denied"),
        ("page_fill_form", "provenance_refused"),
    ]
