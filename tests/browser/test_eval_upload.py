"""page_eval through Chrome's debugger on a page whose Content-Security-Policy forbids eval, on
an element with JSON arguments, its result masked; and page_upload of several files and a 150 MB
one by their sandbox paths (Chrome reads them), with the attacker's ways out of the sandbox
refused and nothing uploaded."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.async_api import BrowserContext

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    Answer,
    Reply,
    code,
    confirm_page,
    extension_connected,
    launched,
    mcp_client,
    ok,
    press,
    served_pages,
    shows,
    trust_this_process,
    widen,
)
from tests.fakes import tool_error

#: Only the page's own scripts run: no inline script, no eval (no 'unsafe-eval').
STRICT = {"Content-Security-Policy": "script-src 'self'"}
STRICT_PAGE = (
    "<!doctype html><title>strict</title><p id=marker>untouched</p><p id=csp>unknown</p>"
    "<button type=button id=buy>Buy now</button><script src=/strict.js></script>"
)
# The page's own script: proves the policy holds for the page (its eval is refused), and keeps
# a secret the agent's code will try to return.
STRICT_JS = """
window.apiToken = 'Bearer sk_live_4f9a8b7c6d5e4f3a2b1c0d9e';
try { (0, eval)('1'); document.getElementById('csp').textContent = 'eval allowed'; }
catch (e) { document.getElementById('csp').textContent = 'eval blocked'; }
"""
UPLOAD_PAGE = (
    "<!doctype html><title>upload</title><input id=files type=file multiple>"
    "<input id=one type=file><p id=got>none</p><p id=got1>none</p>"
    "<script src=/upload.js></script>"
)
UPLOAD_JS = """
const show = (input, out) => input.addEventListener('change', () => {
  document.getElementById(out).textContent =
    Array.from(input.files, (f) => f.name + ':' + f.size).join(',') || 'empty';
});
show(document.getElementById('files'), 'got');
show(document.getElementById('one'), 'got1');
"""
JS = "text/javascript; charset=utf-8"
BIG = 150 * 1024 * 1024


@pytest.fixture
def site() -> Iterator[str]:
    pages: dict[str, Answer] = {
        "/strict": Reply(STRICT_PAGE, headers=STRICT),
        "/strict.js": (STRICT_JS, JS),
        "/upload": Reply(UPLOAD_PAGE, headers=STRICT),
        "/upload.js": (UPLOAD_JS, JS),
    }
    with served_pages(pages) as served:
        yield served.origin


async def _text(agent: Any, tab: int, selector: str) -> str:
    return str((await ok(agent, "page_get_state", {"tabId": tab, "selector": selector}))["text"])


async def _allowed(context: BrowserContext, agent: Any, tool: str, args: dict[str, Any],
                   shown: tuple[str, ...]) -> dict[str, Any]:  # fmt: skip
    """Call ``tool``; the person's window must show each of ``shown``; they allow it."""
    calling = asyncio.create_task(agent.call_tool(tool, args))
    window = await confirm_page(context)
    for text in shown:
        await shows(window, text)
    await press(window, "#allow")
    result = await calling
    assert not result.is_error, result.content
    content: dict[str, Any] = result.structured_content
    return content


@pytest.mark.promise("H4-72")
async def test_page_eval_runs_under_a_strict_csp_on_an_element_with_args_and_masks_secrets(
    browser: ThrowawayBrowser, site: str
) -> None:
    trust_this_process(browser, [site])
    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{site}/strict"}))["tab"]["id"]
        # The page's policy holds: its own eval is refused.
        assert await _text(agent, tab, "#csp") == "eval blocked"
        # The switch is off: refused, and nothing ran.
        write = "document.getElementById('marker').textContent = 'ran'"
        assert await code(agent, "page_eval", {"tabId": tab, "code": write}) == "policy_denied"
        assert await _text(agent, tab, "#marker") == "untouched"

        widen(browser, eval=True)
        # An expression, through the debugger: the strict policy does not stop it.
        expression = {"tabId": tab, "code": "document.title + ':' + (6 * 7)"}
        got = await _allowed(context, agent, "page_eval", expression, ("6 * 7",))
        assert got["result"] == "strict:42"
        # A function on an element (its ref) with JSON args; the window shows all three.
        found = await ok(agent, "page_find", {"tabId": tab, "role": "button", "name": "Buy now"})
        ref = found["matches"][0]["ref"]
        fn = "(el, n, tail) => el.textContent.slice(0, n) + tail.mark"
        args = {"tabId": tab, "code": fn, "ref": ref, "args": [3, {"mark": "!"}]}
        got = await _allowed(context, agent, "page_eval", args, (fn, ref, '{"mark":"!"}'))
        assert got["result"] == "Buy!"
        # Structured results come back as JSON.
        structured = {"tabId": tab, "code": "({n: [1, 2], ok: true})"}
        got = await _allowed(context, agent, "page_eval", structured, ("ok: true",))
        assert got["result"] == {"n": [1, 2], "ok": True}
        # A result carrying the page's secret and a card number leaves masked.
        leak = "({token: window.apiToken, note: 'card 4111 1111 1111 1111'})"
        result = await _allowed(
            context, agent, "page_eval", {"tabId": tab, "code": leak}, ("apiToken",)
        )
        shown = json.dumps(result)
        assert "sk_live_4f9a8b7c6d5e4f3a2b1c0d9e" not in shown and "4111 1111" not in shown, shown
        assert "[masked" in shown, shown
        # A throw is script_error quoting it, not internal_error.
        thrown = asyncio.create_task(
            agent.call_tool("page_eval", {"tabId": tab, "code": "null.x"})
        )  # fmt: skip
        await press(await confirm_page(context), "#allow")
        error = tool_error(await thrown)
        assert error is not None and error["code"] == "script_error", error
        assert await _text(agent, tab, "#marker") == "untouched"

        # Another session's tab is not ours: refused before anyone is asked, nothing ran there.
        async with mcp_client(browser) as other:
            await extension_connected(other)
            theirs = (await ok(other, "tab_open", {"url": f"{site}/strict"}))["tab"]["id"]
            assert (
                await code(agent, "page_eval", {"tabId": theirs, "code": write}) == "tab_not_owned"
            )
            function = {"tabId": theirs, "code": "(el) => el", "args": []}
            assert await code(agent, "page_eval", function) == "tab_not_owned"
            assert await _text(other, theirs, "#marker") == "untouched"
        assert await _text(agent, tab, "#marker") == "untouched"


@pytest.mark.promise("H4-73")
async def test_page_upload_hands_chrome_several_files_and_a_150_mb_one_and_refuses_escapes(
    browser: ThrowawayBrowser, site: str
) -> None:
    trust_this_process(browser, [site])
    sandbox = browser.root / "config" / "uploads"
    sandbox.mkdir(mode=0o700)
    (sandbox / "notes.txt").write_bytes(b"hello")
    (sandbox / "table.csv").write_bytes(b"a,b")
    with (sandbox / "big.bin").open("wb") as fh:  # sparse: 150 MB on paper, nothing written
        fh.truncate(BIG)
    secret = browser.root / "id_ed25519"
    secret.write_text("PRIVATE KEY")
    # The attacker's plants: a symlink and a hard link to the secret, and a way up and out.
    (sandbox / "link.txt").symlink_to(secret)
    os.link(secret, sandbox / "hard.txt")
    widen(browser, upload=True)

    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{site}/upload"}))["tab"]["id"]
        for paths in (["link.txt"], ["hard.txt"], ["../id_ed25519"], ["notes.txt", "link.txt"],
                      [str(secret)]):  # fmt: skip
            args = {"tabId": tab, "selector": "#files", "paths": paths}
            assert await code(agent, "page_upload", args) == "policy_denied", paths
        assert await _text(agent, tab, "#got") == "none"  # nothing reached the page

        # Several files into a `multiple` input: the page sees each name and size.
        args = {"tabId": tab, "selector": "#files", "paths": ["notes.txt", "table.csv"]}
        done = await _allowed(context, agent, "page_upload", args, ("notes.txt", "table.csv"))
        assert done["files"] == [{"name": "notes.txt", "size": 5}, {"name": "table.csv", "size": 3}]
        assert await _text(agent, tab, "#got") == "notes.txt:5,table.csv:3"
        # Two files into a single-file input: refused, nothing set.
        two = {"tabId": tab, "selector": "#one", "paths": ["notes.txt", "table.csv"]}
        assert await code(agent, "page_upload", two) == "bad_request"
        assert await _text(agent, tab, "#got1") == "none"
        # 150 MB: Chrome reads it by its path; the page reads file.size.
        big = {"tabId": tab, "selector": "#one", "path": "big.bin"}
        done = await _allowed(context, agent, "page_upload", big, ("big.bin", str(BIG)))
        assert done["files"] == [{"name": "big.bin", "size": BIG}]
        assert await _text(agent, tab, "#got1") == f"big.bin:{BIG}"
    assert secret.read_text() == "PRIVATE KEY"
