"""Subdomain approvals in real Chromium through the real chain (docs/adr/0019): with
`http://*.wild.localhost:<port>` signed, every name under wild.localhost on that port is usable —
a tab, a frame, a popup that joins the session, a download, a navigation inside the tab — without
a question; a lookalike (`evilwild.localhost`, `wild.localhost.evil.localhost`), a sibling
registrable domain (`other.localhost`) and the suffix itself (`localhost`) are still refused (a
download from a lookalike too), and nothing reached them. Chromium resolves every `*.localhost`
name to loopback by itself (no flag), and `localhost` is a public suffix under the list's implicit
rule, so `wild.localhost` is a registrable domain.

The throwaway extension copy already holds loopback access at install (tabwarden/cli/browser.py);
this module adds the wildcard's own pattern there, as Chrome's grant after the person's yes would
(tests/extension/approval.test.mjs proves the gate asks for exactly that pattern)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.chrome_dialog import answer_permission_dialog, when_done
from tests.browser.harness import (
    Answer,
    Reply,
    Request,
    ServedSite,
    chromium,
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
)
from tests.browser.paired import paired_options_page, provision_for_pairing
from tests.browser.test_ui_layout import check_layout
from tests.deadline import until
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]


#: What a download under the wildcard carries.
WILD_FILE = b"a file from a name under the approved wildcard"


def _page(request: Request) -> Answer:
    port = request.port or 80
    if request.path.startswith("/files/"):
        name = request.path.rsplit("/", 1)[1]
        disposition = {"Content-Disposition": f'attachment; filename="{name}"'}
        return Reply(WILD_FILE, "application/octet-stream", headers=disposition)
    if request.path == "/child":
        via = request.query("via", "?")
        return f"<!doctype html><title>child {via}</title><p id=via>{via}</p>".encode()
    if request.path == "/inner":
        return b"<!doctype html><title>inner</title><p id=inner>inside the frame</p>"
    return (
        "<!doctype html><html><head><title>wild</title></head><body>"
        f"<iframe name=sub src='http://frame.wild.localhost:{port}/inner'></iframe>"
        f"<button type=button id=popup onclick=\"window.open('http://pop.wild.localhost:{port}"
        "/child?via=popup')\">Popup</button>"
        f"<button type=button id=sibling onclick=\"location.href='http://b.wild.localhost:{port}"
        "/child?via=sibling'\">Sibling</button>"
        f"<button type=button id=lookalike onclick=\"location.href='http://evilwild.localhost:"
        f"{port}/child?via=lookalike'\">Lookalike</button>"
        f"<button type=button id=suffixed onclick=\"location.href='http://wild.localhost.evil."
        f"localhost:{port}/child?via=suffixed'\">Suffixed</button>"
        f"<button type=button id=other onclick=\"location.href='http://other.localhost:{port}"
        "/child?via=other'\">Other</button>"
        f"<button type=button id=download onclick=\"location.href='http://files.wild.localhost:"
        f"{port}/files/wild.bin'\">Download</button>"
        f"<button type=button id=evil-download onclick=\"location.href='http://evilwild.localhost:"
        f"{port}/files/evil.bin'\">Lookalike download</button>"
        "<p id=via>top</p></body></html>"
    ).encode()


@pytest.fixture
def site() -> Iterator[ServedSite]:
    with served_pages(hook=_page) as served:
        yield served


@pytest.fixture
def wild_browser() -> Iterator[ThrowawayBrowser]:
    with ThrowawayBrowser() as b:
        manifest_path = b.extension / "manifest.json"
        manifest = json.loads(manifest_path.read_text("utf-8"))
        manifest["host_permissions"] = [*manifest["host_permissions"], "http://*.wild.localhost/*"]
        manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
        b.install_host()
        yield b


def hosts_seen(site: ServedSite) -> set[str]:
    """The host:port of every request the site received (as the browser named it)."""
    return {f"{r.host}:{r.port}" for r in site.requests()}


async def text_of(agent: Any, tab: int, frame: int | None = None) -> str:
    args: dict[str, Any] = {"tabId": tab, "selector": "#via" if frame is None else "#inner"}
    if frame is not None:
        args["frame"] = frame
    return str((await ok(agent, "page_get_state", args))["text"])


@pytest.mark.promise("H4-85")
async def test_every_name_under_an_approved_wildcard_is_usable(
    wild_browser: ThrowawayBrowser, site: ServedSite
) -> None:
    port = site.port
    trust_this_process(wild_browser, [f"http://*.wild.localhost:{port}"])
    async with launched(wild_browser) as (context, agent):
        # A tab on a subdomain: no question (the signed policy and Chrome's grant both cover it).
        tab = (await ok(agent, "tab_open", {"url": f"http://a.wild.localhost:{port}/"}))["tab"]
        assert await text_of(agent, tab["id"]) == "top"
        # The domain itself (as Chrome's pattern *.wild.localhost does).
        apex = (await ok(agent, "tab_open", {"url": f"http://wild.localhost:{port}/"}))["tab"]
        assert await text_of(agent, apex["id"]) == "top"

        # A frame on another subdomain is approved and read.
        async def the_frame() -> dict[str, Any] | None:
            frames = (await ok(agent, "page_frames", {"tabId": tab["id"]}))["frames"]
            return next(
                (
                    f
                    for f in frames
                    if (f["url"] or "").startswith(f"http://frame.wild.localhost:{port}/")
                ),
                None,
            )

        frame = await until("the subdomain frame is listed", the_frame)
        assert (
            frame["approved"] is True and frame["origin"] == f"http://frame.wild.localhost:{port}"
        )
        assert await text_of(agent, tab["id"], frame["frameId"]) == "inside the frame"

        # A popup on a third subdomain joins the session and is driven like any tab.
        popped = await ok(
            agent, "page_click", {"tabId": tab["id"], "selector": "#popup", "newTab": True}
        )
        popup = popped["newTab"]
        assert popup["url"] == f"http://pop.wild.localhost:{port}/child?via=popup", popped

        async def popup_text() -> str | None:
            # A cross-origin popup may still be committing its page when the click returns.
            result = await agent.call_tool(
                "page_get_state", {"tabId": popup["id"], "selector": "#via"}
            )
            error = tool_error(result)
            if error is not None:
                assert error["code"] == "internal_error", error  # never a refusal
                return None
            return str(result.structured_content["text"])

        assert await until("the popup reads", popup_text) == "popup"

        # A download from another name under the wildcard is found, named and copied whole.
        # Its navigation ends without a document: the tab stays, and the click answers when the
        # navigation ends (not after a load wait that nothing would end).
        clicked = await ok(agent, "page_click", {"tabId": tab["id"], "selector": "#download"})
        assert clicked["navigated"] is False and clicked["url"] == tab["url"], clicked
        got = await ok(agent, "page_wait_download", {"tabId": tab["id"], "timeoutMs": 30_000})
        assert got["state"] == "complete", got
        assert got["url"] == f"http://files.wild.localhost:{port}/files/wild.bin", got
        assert Path(got["path"]).read_bytes() == WILD_FILE
        # The same address through page_navigate also ends without a page, and says so.
        moved_to_file = await agent.call_tool(
            "page_navigate", {"tabId": tab["id"], "url": got["url"]}
        )
        cancelled = tool_error(moved_to_file)
        assert cancelled is not None and cancelled["code"] == "navigation_cancelled", cancelled
        assert "ended without a page" in cancelled["message"], cancelled

        # A navigation inside the tab to a sibling subdomain is let through (stop-before-leave).
        moved = await ok(agent, "page_click", {"tabId": tab["id"], "selector": "#sibling"})
        assert "blocked" not in json.dumps(moved), moved

        async def landed() -> bool | None:
            return (await text_of(agent, tab["id"])) == "sibling" or None

        await until("the tab lands on the sibling subdomain", landed)
        assert not context.pages or all("confirm" not in p.url for p in context.pages)
        assert {
            f"{h}.wild.localhost:{port}" for h in ("a", "frame", "pop", "b", "files")
        } <= hosts_seen(site)


@pytest.mark.promise("H4-85")
async def test_lookalikes_siblings_and_the_suffix_are_refused_and_nothing_reaches_them(
    wild_browser: ThrowawayBrowser, site: ServedSite
) -> None:
    port = site.port
    trust_this_process(wild_browser, [f"http://*.wild.localhost:{port}"])
    outside = {
        "lookalike": f"evilwild.localhost:{port}",
        "suffixed": f"wild.localhost.evil.localhost:{port}",
        "other": f"other.localhost:{port}",
    }
    async with launched(wild_browser) as (context, agent):
        # Opening them (and the suffix itself), before any page was read, asks the person like any
        # new site (the origin gate's window); a no refuses.
        for host in [*outside.values(), f"localhost:{port}"]:
            opening = asyncio.create_task(
                agent.call_tool("tab_open", {"url": f"http://{host}/child?via=opened"})
            )
            window = await confirm_page(context)
            await shows(window, f"http://{host}")
            await press(window, "#deny")
            denied = tool_error(await opening)
            assert denied is not None and denied["code"] == "origin_not_approved", (host, denied)

        tab = (await ok(agent, "tab_open", {"url": f"http://a.wild.localhost:{port}/"}))["tab"]
        # The attacker's page moves the agent's tab to a lookalike: stopped before it leaves.
        for button, host in outside.items():
            clicked = await ok(agent, "page_click", {"tabId": tab["id"], "selector": f"#{button}"})
            assert clicked.get("blocked") == f"http://{host}", (button, clicked)

            async def back() -> bool | None:
                return (await text_of(agent, tab["id"])) == "top" or None

            await until(f"the tab is back after the {button} stop", back)

        # A download from a lookalike is stopped the same way: no file, nothing to wait for.
        clicked = await ok(agent, "page_click", {"tabId": tab["id"], "selector": "#evil-download"})
        assert clicked.get("blocked") == f"http://{outside['lookalike']}", clicked
        waited = {"tabId": tab["id"], "timeoutMs": 2000}
        assert (await code(agent, "page_wait_download", waited)) == "timeout"
        sandbox = wild_browser.root / "config" / "downloads"
        assert not sandbox.exists() or list(sandbox.iterdir()) == []

        seen = hosts_seen(site)
        assert not seen & {*outside.values(), f"localhost:{port}"}, seen


async def test_the_options_page_lists_a_wildcard_in_plain_words_and_lays_out(
    wild_browser: ThrowawayBrowser, site: ServedSite, tmp_path: Path
) -> None:
    provision_for_pairing(wild_browser, origins=["https://*.example.com", site.origin])
    shots = tmp_path / "ui-screenshots"
    shots.mkdir()
    print(f"\nUI screenshots: {shots}")
    async with paired_options_page(wild_browser) as paired:
        options = paired.page
        await options.reload()
        await options.wait_for_function(
            "() => document.querySelectorAll('#sites-list button[data-origin]').length === 2",
            timeout=60_000,
        )
        rows = await options.evaluate(
            """() => [...document.querySelectorAll('#sites-list li')].map((li) => ({
              kind: li.className, text: li.innerText }))"""
        )
        wild = next(r for r in rows if r["kind"] == "wildcard")
        assert "example.com and every subdomain (https)" in wild["text"], rows
        assert "https://*.example.com" in wild["text"], rows
        problems: list[str] = []
        for label, size in (("options-wide", (1280, 800)), ("options-narrow", (560, 800))):
            await options.set_viewport_size({"width": size[0], "height": size[1]})
            problems.extend(await check_layout(options, f"wildcard-{label}", shots))
        assert not problems, "\n".join(problems)


@pytest.mark.promise("H4-85")
async def test_chrome_is_asked_for_the_wildcards_pattern_once_and_the_window_names_it(
    site: ServedSite, x_display: str
) -> None:
    """Headful on Xvfb with the shipped extension (no grant at install): the first subdomain asks
    Chrome for `http://*.wild.localhost:<port>/*` itself (the confirm window names the approval in
    plain words), so the next subdomain needs no window and no dialog."""
    port = site.port
    pattern = f"http://*.wild.localhost:{port}/*"
    with ThrowawayBrowser(grant_loopback=False) as shipped:
        shipped.install_host()
        trust_this_process(shipped, [f"http://*.wild.localhost:{port}"])
        async with chromium(shipped, x_display) as context, mcp_client(shipped) as agent:
            await extension_connected(agent)
            [worker] = context.service_workers or [await context.wait_for_event("serviceworker")]
            has = "(p) => chrome.permissions.contains({origins: [p]})"
            assert not await worker.evaluate(has, pattern)

            opening = asyncio.create_task(
                agent.call_tool("tab_open", {"url": f"http://a.wild.localhost:{port}/"})
            )
            window = await confirm_page(context)
            await shows(window, "wild.localhost and every subdomain (http, port")
            await press(window, "#allow")  # the click is Chrome's user gesture
            answer = await answer_permission_dialog(x_display, True, when_done(opening), 60)
            assert answer.clicks, f"Chrome's permission dialog never showed: {answer}"
            opened = await opening
            assert not opened.is_error, opened.content
            assert await worker.evaluate(has, pattern)

            # Another subdomain: covered by the one grant, nobody is asked.
            again = await agent.call_tool("tab_open", {"url": f"http://b.wild.localhost:{port}/"})
            assert not again.is_error, again.content
            assert all("confirm" not in p.url for p in context.pages)
