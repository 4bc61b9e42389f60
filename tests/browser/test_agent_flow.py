"""An agent-style flow, end to end through the real chain (an MCP client → `tabwarden mcp`
→ the host Chrome launched → the extension in real Chromium), on a page built to break naive
bridges: an editor that ignores a programmatic value, a Publish button under a transparent
overlay that only a trusted click passes through, and a `confirm()` before anything is
published.

The agent navigates, takes a compact snapshot, finds that setting the editor's value does not
take (`applied: "no"`) and types into it as trusted input instead, is told the button is covered
(and by what, with its ref), arms an OK for the page's next dialog (the person allows it in the
confirm window, since OK on a `confirm()` is the second half of a submit), clicks through the
overlay, and reads the outcome in the same call through `observe`. The page's own state is read
back outside the bridge at the end: what the page holds is what the agent was told."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    confirm_page,
    keep_dialogs_open,
    launched,
    ok,
    page_at,
    press,
    served_pages,
    shows,
    trust_this_process,
    widen,
)

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

HOME = b"<!doctype html><title>home</title><p>Welcome. <a href='/compose'>Write a post</a></p>"
COMPOSE = b"""<!doctype html><html><head><title>compose</title><style>
#box { position: relative; width: 240px; height: 40px; }
#overlay { position: absolute; inset: 0; background: transparent; }
#editor { min-height: 3em; border: 1px solid #888; }
</style></head><body>
<h1>Compose</h1>
<div id="editor" role="textbox" aria-label="Post body" contenteditable="true"></div>
<p>Preview: <span id="preview"></span></p>
<div id="box"><button type="button" id="publish">Publish</button>
<div id="overlay" role="button" aria-label="Publish for real"></div></div>
<p id="status">draft</p>
<script>
  // The editor keeps its own model: only trusted input changes it; anything else is undone.
  let model = "";
  const editor = document.getElementById("editor");
  const preview = document.getElementById("preview");
  editor.addEventListener("input", (e) => {
    if (e.isTrusted) model = editor.textContent;
    else editor.textContent = model;
    preview.textContent = model;
  });
  // The overlay catches the click (only a trusted one) and asks before publishing.
  document.getElementById("overlay").addEventListener("click", (e) => {
    if (!e.isTrusted) return;
    const status = document.getElementById("status");
    const yes = confirm("Publish " + model.length + " characters?");
    status.textContent = yes ? "published: " + model : "kept as draft";
  });
</script>
</body></html>"""
POST = "Hello from the agent"


@pytest.fixture
def site() -> Iterator[str]:
    with served_pages({"/compose": COMPOSE}, fallback=HOME) as served:
        yield served.origin


def _row(snapshot: dict[str, Any], role: str, name: str) -> dict[str, Any]:
    rows = [r for r in snapshot["snapshot"] if r["role"] == role and r["name"] == name]
    assert len(rows) == 1, (role, name, snapshot["snapshot"])
    row: dict[str, Any] = rows[0]
    return row


async def test_navigate_snapshot_type_click_through_confirm_and_observe(
    browser: ThrowawayBrowser, site: str
) -> None:
    trust_this_process(browser, [site])
    widen(browser, dialogArming=True)

    async with launched(browser) as (context, agent):
        keep_dialogs_open(context)  # Playwright must not answer the page's confirm() for us
        tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]

        # navigate
        landed = await ok(agent, "page_navigate", {"tabId": tab, "url": f"{site}/compose"})
        assert landed["url"] == f"{site}/compose" and landed["title"] == "compose"

        # compact snapshot: interactive elements only, from the accessibility tree
        snap = await ok(agent, "page_snapshot", {"format": "json", "tabId": tab, "compact": True})
        assert snap["mode"] in ("a11y", "a11y+dom"), snap
        editor = _row(snap, "textbox", "Post body")
        publish = _row(snap, "button", "Publish")
        assert not [r for r in snap["snapshot"] if r["role"] == "heading"], "compact"

        # A programmatic value does not take in this editor; trusted typing does.
        tried = await ok(agent, "page_fill", {"tabId": tab, "ref": editor["ref"], "value": POST})
        assert tried["applied"] == "no", tried
        typed = await ok(
            agent,
            "page_fill",
            {"tabId": tab, "ref": editor["ref"], "value": POST, "method": "insertText"},
        )
        assert typed.pop("target")["ref"] == editor["ref"]  # it names what it filled
        assert isinstance(typed.pop("waitedMs"), int)  # and how long it waited to act
        assert typed == {"filled": True, "applied": "yes", "length": len(POST)}
        assert POST not in str(typed)  # the content never comes back

        # The button is covered: reported with what is on top, and not clicked.
        covered = await ok(agent, "page_mouse", {"tabId": tab, "ref": publish["ref"]})
        assert covered["covered"] is True and covered["clicked"] is False, covered
        assert "Publish for real" in covered["hitTarget"]
        assert covered["hitRef"].startswith("@e")

        # Arm an OK for the page's next dialog: the person allows it in the confirm window.
        arming = asyncio.ensure_future(
            agent.call_tool("page_dialog", {"tabId": tab, "arm": "accept"})
        )
        window = await confirm_page(context)
        await shows(window, "Press OK on the next dialog")
        await press(window, "#allow")
        armed = await arming
        assert not armed.is_error, armed.content
        assert armed.structured_content["armed"] == {"answer": "accept", "origin": site}

        # Click through the hit target, and read the outcome in the same call.
        clicked = await ok(
            agent,
            "page_mouse",
            {"tabId": tab, "ref": covered["hitRef"], "observe": {"text": True}},
        )
        assert clicked["clicked"] is True and clicked["covered"] is False, clicked
        observed = clicked["observation"]
        assert "skipped" not in observed, observed
        assert f"published: {POST}" in observed["text"]["text"]

        # The confirm() was answered by the arm, once, its text as the page wrote it.
        recent = (await ok(agent, "page_dialog", {"tabId": tab}))["recent"]
        assert recent[-1] == {
            "type": "confirm",
            "message": f"Publish {len(POST)} characters?",
            "origin": site,
            "answered": "accepted",
            "by": "arm",
        }
        assert (await ok(agent, "page_dialog", {"tabId": tab})).get("armed") is None

        # Outside the bridge: the page holds what the agent was told.
        page = await page_at(context, "the compose page", lambda url: url == f"{site}/compose")
        assert await page.text_content("#status") == f"published: {POST}"
        assert await page.text_content("#preview") == POST
