"""Trusted keyboard input, in real Chromium through the real chain: page_type,
page_keys and page_fill's insertText against fixtures that break naive bridges — a React-style
controlled input that only takes trusted input, a contenteditable editor that ignores a set
textContent, a field in an open shadow root, fields in a same-origin iframe, a field that hands
its focus to a password field. The password guard is attacked through each way focus can reach
a password field, and every refusal is checked against the page: nothing was typed. Enter on a
form field asks the person as a submit click does (denied: the server never sees the form)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.trust import store
from tabwarden.trust.gate import TrustGate, host_key_store
from tabwarden.trust.policy import apply_set
from tests.browser.harness import (
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


PAGE = b"""<!doctype html><html><head><title>keyboard</title><style>
iframe { width: 300px; height: 40px; border: 0; display: block; }
</style></head><body>
<label>Controlled <input id="react"></label><p id="react-state"></p>
<div id="editor" contenteditable="true" role="textbox" aria-label="Editor"></div>
<p id="editor-model"></p>
<div id="host"></div><p id="shadow-out"></p>
<iframe id="frame" src="/frame"></iframe><p id="frame-out"></p>
<iframe id="framepw" src="/framepw"></iframe><p id="frame-pw">0</p>
<label>Nickname <input id="decoy"></label><p id="decoy-out"></p>
<label>Password <input id="pw" type="password"></label><p id="pw-len">0</p>
<label>Swap <input id="swap"></label><label>Swap key <input id="swapkey"></label>
<label>Hidden swap <input id="swapstop"></label>
<input id="t1" aria-label="one"><input id="t2" aria-label="two"><input id="t3" aria-label="three">
<p id="focus"></p>
<input id="sel" aria-label="Selectable" value="some text">
<form id="f" action="/done" method="get"><label>Query <input id="q" name="q"></label>
<button type="submit">Go</button></form>
<script>
  const $ = (id) => document.getElementById(id);
  // A controlled input: its state changes only on trusted input; anything else is re-rendered away.
  let state = '';
  $('react').addEventListener('input', (e) => {
    if (e.isTrusted) state = $('react').value;
    $('react').value = state;
    $('react-state').textContent = state;
  });
  // An editor with its own model: it applies trusted beforeinput itself and re-renders any
  // other change to its DOM (a set textContent) back to the model.
  let model = '';
  const ed = $('editor');
  const render = () => { if (ed.textContent !== model) ed.textContent = model;
    $('editor-model').textContent = model; };
  ed.addEventListener('beforeinput', (e) => {
    e.preventDefault();
    if (!e.isTrusted) return;
    const all = getSelection().toString() === model && model !== '';
    if (e.inputType === 'insertText') model = all ? e.data : model + e.data;
    else if (e.inputType.startsWith('delete')) model = all ? '' : model.slice(0, -1);
    render();
  });
  new MutationObserver(render).observe(ed, {childList: true, characterData: true, subtree: true});
  // A field in an open shadow root.
  const root = $('host').attachShadow({mode: 'open'});
  root.innerHTML = '<input id="inner" aria-label="Inner">';
  root.getElementById('inner').addEventListener('input', (e) => {
    $('shadow-out').textContent = e.target.value; });
  // A field that hands its focus to the password field.
  $('decoy').addEventListener('focus', () => $('pw').focus());
  $('decoy').addEventListener('input', () => { $('decoy-out').textContent = $('decoy').value; });
  // Fields that move the focus to the password field while the text is on its way: during the
  // insertion's beforeinput, and on a key's keydown.
  $('swap').addEventListener('beforeinput', () => $('pw').focus());
  $('swapkey').addEventListener('keydown', () => $('pw').focus());
  // The same, hiding the event from every listener above the field.
  $('swapstop').addEventListener('beforeinput', (e) => { e.stopPropagation(); $('pw').focus(); });
  $('pw').addEventListener('input', () => {
    $('pw-len').textContent = String($('pw').value.length); });
  document.addEventListener('focusin', () => {
    $('focus').textContent = document.activeElement.id; });
</script>
</body></html>"""

# Each frame is one field filling the frame, so a click at the frame's centre lands in it.
FRAME = b"""<!doctype html><title>frame</title><style>body{margin:0}
input{position:fixed;inset:0;width:100%;height:100%}</style>
<input id="fin" aria-label="In frame"><script>
document.getElementById('fin').addEventListener('input', (e) => {
  parent.document.getElementById('frame-out').textContent = e.target.value; });
</script>"""
FRAME_PW = b"""<!doctype html><title>framepw</title><style>body{margin:0}
input{position:fixed;inset:0;width:100%;height:100%}</style>
<input id="fpw" type="password" aria-label="Frame password"><script>
document.getElementById('fpw').addEventListener('input', (e) => {
  parent.document.getElementById('frame-pw').textContent = String(e.target.value.length); });
</script>"""


PAGES = {
    "/frame": FRAME,
    "/framepw": FRAME_PW,
    "/done": b"<!doctype html><title>done</title><p>done</p>",
}


@pytest.fixture
def served() -> Iterator[ServedSite]:
    with served_pages(PAGES, fallback=PAGE) as served:
        yield served


@pytest.fixture
def site(served: ServedSite) -> str:
    return served.origin


def submitted(served: ServedSite) -> list[str]:
    """Every form submission the site received (the query strings of /done)."""
    return [urlsplit(r.target).query for r in served.requests("/done")]


def set_policy(browser: ThrowawayBrowser, **changes: Any) -> None:
    """What `tabwarden policy set` does after the person typed the phrase."""
    config = browser.root / "config"
    gate = TrustGate({"TABWARDEN_CONFIG_DIR": str(config)})
    key = host_key_store(config, "file").load()
    assert key is not None
    store.set_baseline(
        gate.path, key, apply_set(gate.current().policy, changes).to_json(), 1_800_000_000
    )


async def refused(agent: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    error = tool_error(await agent.call_tool(tool, args))
    assert error is not None, (tool, args)
    return error


async def text_of(agent: Any, tab: int, selector: str) -> str:
    return str((await ok(agent, "page_get_state", {"tabId": tab, "selector": selector}))["text"])


@pytest.mark.promise("H4-30")
async def test_trusted_typing_through_every_fixture(browser: ThrowawayBrowser, site: str) -> None:
    trust_this_process(browser, [site])
    # Key presses are not confirmed here (submits and links still are): the keys reach the page.
    set_policy(browser, confirm=["link_click", "select", "submit", "tab_close"])

    async with launched(browser) as (_, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]

        # The controlled input: a set value is re-rendered away and said so; typed, it takes.
        filled = await ok(
            agent, "page_fill", {"tabId": tab, "selector": "#react", "value": "hello"}
        )
        assert filled["applied"] == "no", filled
        assert await text_of(agent, tab, "#react-state") == ""
        filled = await ok(
            agent,
            "page_fill",
            {"tabId": tab, "selector": "#react", "value": "hello", "method": "insertText"},
        )
        assert filled.pop("target")["role"] == "textbox"
        assert filled.pop("waitedMs") >= 0
        assert filled == {"filled": True, "applied": "yes", "length": 5}, filled
        assert await text_of(agent, tab, "#react-state") == "hello"
        # insertText replaces what is there; page_type adds at the caret.
        await ok(
            agent,
            "page_fill",
            {"tabId": tab, "selector": "#react", "value": "bye", "method": "insertText"},
        )
        assert await text_of(agent, tab, "#react-state") == "bye"
        typed = await ok(agent, "page_type", {"tabId": tab, "value": "!"})
        assert typed["typed"] is True and typed["applied"] == "yes" and typed["length"] == 1
        assert "Controlled" in typed["focused"] and typed["ref"].startswith("@e"), typed
        assert await text_of(agent, tab, "#react-state") == "bye!"
        # The ref it answered names that field for the next call.
        await ok(agent, "page_type", {"tabId": tab, "ref": typed["ref"], "value": "?"})
        assert await text_of(agent, tab, "#react-state") == "bye!?"

        # The editor ignores a set textContent, and takes trusted insertion.
        filled = await ok(
            agent, "page_fill", {"tabId": tab, "selector": "#editor", "value": "draft"}
        )
        assert filled["applied"] == "no", filled
        assert await text_of(agent, tab, "#editor-model") == ""
        filled = await ok(
            agent,
            "page_fill",
            {"tabId": tab, "selector": "#editor", "value": "draft", "method": "insertText"},
        )
        assert filled["applied"] == "yes", filled
        await ok(agent, "page_type", {"tabId": tab, "selector": "#editor", "value": " two"})
        assert await text_of(agent, tab, "#editor-model") == "draft two"

        # A field in an open shadow root.
        typed = await ok(
            agent, "page_type", {"tabId": tab, "selector": "#inner", "value": "shadowed"}
        )
        assert "Inner" in typed["focused"], typed
        assert await text_of(agent, tab, "#shadow-out") == "shadowed"

        # A same-origin iframe: focus goes in with a trusted click, the text follows it.
        await ok(agent, "page_mouse", {"tabId": tab, "selector": "#frame"})
        typed = await ok(agent, "page_type", {"tabId": tab, "value": "framed"})
        assert "In frame" in typed["focused"] and typed.get("ref") is None, typed
        assert await text_of(agent, tab, "#frame-out") == "framed"

        # Keys: Shift+Tab moves the focus backwards, Tab forwards.
        await ok(agent, "page_keys", {"tabId": tab, "selector": "#t2", "keys": "Shift+Tab"})
        assert await text_of(agent, tab, "#focus") == "t1"
        done = await ok(agent, "page_keys", {"tabId": tab, "keys": ["Tab", "Tab"]})
        assert done["pressed"] == 2 and done["navigated"] is False, done
        assert await text_of(agent, tab, "#focus") == "t3"
        # Mod+A then Backspace empties a field; typed keys go in as text.
        await ok(
            agent,
            "page_keys",
            {"tabId": tab, "selector": "#sel", "keys": ["Mod+A", "Backspace"]},
        )
        state = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#sel"})
        assert state["value"] == "", state
        await ok(agent, "page_keys", {"tabId": tab, "keys": ["H", "i", "!"]})
        state = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#sel"})
        assert state["value"] == "Hi!", state

        # Keys that are not keys: bad_request, and nothing pressed.
        for bad in ("Hyper+A", "Shift+", "Enterr", "Control+Control+a", "Shift"):
            error = await refused(agent, "page_keys", {"tabId": tab, "keys": bad})
            assert error["code"] == "bad_request", (bad, error)
        state = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#sel"})
        assert state["value"] == "Hi!", state


@pytest.mark.promise("H4-30")
async def test_the_password_guard_holds_on_the_node_that_has_focus(
    browser: ThrowawayBrowser, site: str
) -> None:
    trust_this_process(browser, [site])
    set_policy(browser, confirm=["link_click", "select", "submit", "tab_close"])
    secret = "hunter2-from-the-agent"

    async with launched(browser) as (_, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
        attempts: list[tuple[str, dict[str, Any]]] = [
            # The password field named outright.
            ("page_type", {"selector": "#pw", "value": secret}),
            # A harmless field whose focus handler moves the focus to the password field.
            ("page_type", {"selector": "#decoy", "value": secret}),
            ("page_fill", {"selector": "#decoy", "value": secret, "method": "insertText"}),
            ("page_fill", {"selector": "#pw", "value": secret, "method": "insertText"}),
            ("page_keys", {"selector": "#decoy", "keys": list("hunter2")}),
            ("page_keys", {"selector": "#pw", "keys": "Control+v"}),
            # The focus moved while the text is already on its way (the page's own
            # beforeinput or keydown listener): the insertion is cancelled in the page.
            ("page_type", {"selector": "#swap", "value": secret}),
            ("page_fill", {"selector": "#swap", "value": secret, "method": "insertText"}),
            ("page_keys", {"selector": "#swapkey", "keys": list("hunter2")}),
        ]
        for tool, args in attempts:
            error = await refused(agent, tool, {"tabId": tab, **args})
            assert error["code"] == "policy_denied", (tool, args, error)
            assert "password" in error["message"] and secret not in str(error), error
        # Nothing reached either field.
        assert await text_of(agent, tab, "#pw-len") == "0"
        assert await text_of(agent, tab, "#decoy-out") == ""

        # A page that hides the insertion from the guard and moves the focus while it is
        # dispatched can redirect it (the page could copy the text there itself): the call
        # then says so, and never that nothing was typed.
        error = await refused(
            agent, "page_type", {"tabId": tab, "selector": "#swapstop", "value": "x"}
        )
        assert error["code"] == "policy_denied" and "may have gone" in error["message"], error
        assert "nothing was typed" not in error["message"]

        # The focus already in a password field of a same-origin frame (a trusted click put
        # it there): typing with no element named is refused all the same.
        await ok(agent, "page_mouse", {"tabId": tab, "selector": "#framepw"})
        error = await refused(agent, "page_type", {"tabId": tab, "value": secret})
        assert error["code"] == "policy_denied", error
        error = await refused(agent, "page_keys", {"tabId": tab, "keys": ["a", "b"]})
        assert error["code"] == "policy_denied", error
        assert await text_of(agent, tab, "#frame-pw") == "0"

        # With the policy's passwordFill on, the same field takes the text; the reply says
        # how much, never what.
        set_policy(browser, passwordFill=True)
        filled = await ok(
            agent,
            "page_fill",
            {"tabId": tab, "selector": "#pw", "value": "pw", "method": "insertText"},
        )
        assert filled.pop("target")["role"] == "textbox"
        assert filled.pop("waitedMs") >= 0
        assert filled == {"filled": True, "applied": "yes", "length": 2}, filled
        assert await text_of(agent, tab, "#pw-len") == "2"
        typed = await ok(agent, "page_type", {"tabId": tab, "value": "word"})
        assert typed["applied"] == "yes" and typed["length"] == 4, typed
        assert set(typed) <= {"typed", "applied", "length", "focused", "ref"}, typed
        assert await text_of(agent, tab, "#pw-len") == "6"


@pytest.mark.promise("H4-31")
async def test_enter_that_submits_asks_the_person(
    browser: ThrowawayBrowser, site: str, served: ServedSite
) -> None:
    trust_this_process(browser, [site])
    set_policy(browser, confirm=["link_click", "select", "submit", "tab_close"])

    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
        await ok(agent, "page_type", {"tabId": tab, "selector": "#q", "value": "cats"})

        # Denied: nothing is submitted.
        keys = asyncio.create_task(
            agent.call_tool("page_keys", {"tabId": tab, "selector": "#q", "keys": "Enter"})
        )
        window = await confirm_page(context)
        await shows(window, "This submits a form.")
        await press(window, "#deny")
        assert (tool_error(await keys) or {}).get("code") == "confirm_denied"
        assert submitted(served) == []

        # A key after an Enter that submits is refused before anything is pressed.
        error = await refused(
            agent, "page_keys", {"tabId": tab, "selector": "#q", "keys": ["Enter", "a"]}
        )
        assert error["code"] == "bad_request" and "end the keys there" in error["message"]
        assert submitted(served) == []

        # Allowed: the form goes, and the reply says the tab navigated.
        keys = asyncio.create_task(
            agent.call_tool("page_keys", {"tabId": tab, "selector": "#q", "keys": "Enter"})
        )
        await press(await confirm_page(context), "#allow")
        result = await keys
        assert not result.is_error, result.content
        out = result.structured_content
        # A GET form's values travel in the address: the reply masks them (worker/form-urls.js).
        assert out["navigated"] is True and "/done?q=[masked" in out["url"], out
        assert "cats" not in out["url"], out
        assert submitted(served) == ["q=cats"]
