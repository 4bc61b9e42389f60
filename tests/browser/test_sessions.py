"""Sessions that survive restarts and the tab lifecycle, in real Chromium: the real
MCP client, `tabwarden mcp`, the host Chrome launched, the extension.

- A session's tabs are still its own after the host is SIGKILLed (Chrome starts another) and
  after the service worker is stopped; a new MCP process cannot reach them (`tab_not_owned`).
- When a session's MCP process exits its tabs stay open as orphans, listed in the popup, the
  options page and by `tabwarden tabs`, and closed from there (one click, `--close-orphans`).
- `closeTabsOnSessionEnd` closes them instead; the `maxAgentTabs` cap evicts an orphan nobody
  looked at and refuses (`tab_limit`) when only tabs the person looked at remain.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.manifests import EXTENSION_ID
from tabwarden.trust import store
from tests.browser.harness import (
    chromium,
    code,
    extension_connected,
    mcp_client,
    ok,
    trust_this_process,
)
from tests.deadline import until
from tests.fakes import tool_error
from tests.pty_cli import spawn_cli

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

WAIT_S = 60.0  # the deadline of every wait on a condition: generous for a busy 2-core machine
POPUP = f"chrome-extension://{EXTENSION_ID}/popup.html"
OPTIONS = f"chrome-extension://{EXTENSION_ID}/options.html"
SHOTS = Path("/tmp/shots-b")


def _provision(browser: ThrowawayBrowser, site: str, **restrictions: Any) -> None:
    config = browser.config
    trust_this_process(browser, [site])
    for key, value in restrictions.items():  # narrowing: free, unsigned
        store.add_restriction(config / "trust.json", key, value, 1_800_000_000)


async def _until(what: str, check: Callable[[], Awaitable[bool]]) -> None:
    """Poll ``check`` until it holds; a hang guard with a generous deadline, never a timing
    assertion."""
    await until(what, check, timeout_s=WAIT_S)


def _hosts(browser: ThrowawayBrowser) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "environ", "status"]):
        cmd = proc.info.get("cmdline") or []
        env = proc.info.get("environ") or {}
        if "tabwarden" in cmd and "host" in cmd and proc.info.get("status") != "zombie":
            if env.get("TABWARDEN_RUNTIME_DIR") == str(browser.root / "run"):
                found.append(proc)
    return found


async def _one_host(browser: ThrowawayBrowser, other_than: int | None = None) -> int:
    pids: list[int] = []

    async def check() -> bool:
        pids[:] = [p.pid for p in _hosts(browser) if p.pid != other_than]
        return len(pids) == 1

    await _until("one host runs", check)
    return pids[0]


def _run_tabs(browser: ThrowawayBrowser, *args: str) -> tuple[int, str]:
    """`tabwarden tabs --json` as a person runs it (the attested command, the real bridge, on a
    pty that is its controlling terminal): its exit status and what it printed."""
    status, raw = spawn_cli(browser.env, "tabs", "--json", *args).finish(WAIT_S)
    return status, raw.decode()


def _tabs_cli(browser: ThrowawayBrowser, *args: str) -> dict[str, Any]:
    status, out = _run_tabs(browser, *args)
    assert status == 0, out
    result: dict[str, Any] = json.loads(out)
    return result


async def _cli_tabs(browser: ThrowawayBrowser, *args: str) -> dict[str, Any]:
    return await asyncio.to_thread(_tabs_cli, browser, *args)


def _tabs_cli_or_away(browser: ThrowawayBrowser) -> dict[str, Any] | None:
    """`tabwarden tabs --json`, or None while it refuses with ``extension_away``: right after a
    host is killed Chrome is starting the next one, and the CLI says so instead of waiting."""
    status, out = _run_tabs(browser)
    if status != 0 and "error[extension_away]" in out:
        return None
    assert status == 0, out
    result: dict[str, Any] = json.loads(out)
    return result


async def _orphans(browser: ThrowawayBrowser) -> list[int] | None:
    """The orphaned tabs' ids, or None while the extension is reconnecting (poll again)."""
    listing = await asyncio.to_thread(_tabs_cli_or_away, browser)
    if listing is None:
        return None
    return sorted(t["id"] for t in listing["tabs"] if t["orphaned"])


def _page(context: Any, url: str) -> Any:
    [page] = [p for p in context.pages if p.url == url]
    return page


def _urls(context: Any) -> set[str]:
    return {p.url for p in context.pages}


async def _pages_are(
    context: Any, *, present: set[str], absent: frozenset[str] | set[str] = frozenset()
) -> None:
    """Wait until Playwright's view of the tabs shows ``present`` and none of ``absent`` (its
    page events trail the extension's answer a little)."""

    async def check() -> bool:
        urls = _urls(context)
        return present <= urls and not absent & urls

    await _until(f"tabs {sorted(present)} open, {sorted(absent)} closed", check)


async def _stop_worker(context: Any) -> None:
    """Stop the extension's service worker as Chrome does when it idles (CDP ServiceWorker, from
    an extension page, so the extension's own worker is the one addressed)."""
    page = await context.new_page()
    await page.goto(f"chrome-extension://{EXTENSION_ID}/confirm.html")
    cdp = await context.new_cdp_session(page)
    await cdp.send("ServiceWorker.enable")
    await cdp.send("ServiceWorker.stopAllWorkers")
    await cdp.detach()
    await page.close()


@pytest.mark.promise("H4-24")
async def test_a_sessions_tabs_survive_a_host_kill_and_a_worker_stop(
    browser: ThrowawayBrowser, site: str
) -> None:
    _provision(browser, site)

    async with chromium(browser) as context, mcp_client(browser) as agent:
        await extension_connected(agent)
        url = f"{site}/page2"
        tab = (await ok(agent, "tab_open", {"url": url}))["tab"]["id"]
        assert "second page" in (await ok(agent, "page_text", {"tabId": tab}))["text"]

        # 1. The host is SIGKILLed: no session_end, no goodbye. Chrome starts another when
        # the worker reconnects; the same MCP process still drives its tab.
        first = await _one_host(browser)
        os.kill(first, signal.SIGKILL)
        await _one_host(browser, other_than=first)
        await extension_connected(agent)
        listed = await ok(agent, "tab_list", {})
        assert [t["id"] for t in listed["tabs"]] == [tab]
        assert "second page" in (await ok(agent, "page_text", {"tabId": tab}))["text"]

        # 2. The service worker is stopped (its memory is gone; the port closes and the host
        # exits). Nothing in this branch wakes it by itself (that is the wake alarm's job): the
        # person opening the popup is the browser event that starts it again here.
        second = await _one_host(browser)
        await _stop_worker(context)
        await _until("the host exits with the port", lambda: _gone(second))
        popup = await context.new_page()
        await popup.goto(POPUP)
        await _one_host(browser, other_than=second)
        await extension_connected(agent)
        listed = await ok(agent, "tab_list", {})
        assert [t["id"] for t in listed["tabs"]] == [tab], "ownership came back from storage"
        assert "second page" in (await ok(agent, "page_text", {"tabId": tab}))["text"]
        await popup.close()

        # 3. The attacker: a second MCP server (another process, attested and paired like
        # the first) goes for the first one's tab. It is another session: not its tab.
        async with mcp_client(browser) as intruder:
            await extension_connected(intruder)
            assert (await ok(intruder, "tab_list", {}))["tabs"] == []
            for tool, args in (
                ("page_text", {"tabId": tab}),
                ("page_navigate", {"tabId": tab, "url": f"{site}/done"}),
                ("tab_close", {"tabId": tab}),
            ):
                assert await code(intruder, tool, args) == "tab_not_owned", tool
            # ...and it cannot ask for every session's tabs either: no such action for it.
        assert url in _urls(context), "the tab is untouched"
        assert _page(context, url).url == url
        assert "second page" in (await ok(agent, "page_text", {"tabId": tab}))["text"]


async def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.promise("H4-25")
async def test_orphans_are_listed_and_closed_from_the_popup_options_page_and_terminal(
    browser: ThrowawayBrowser, site: str
) -> None:
    _provision(browser, site)
    SHOTS.mkdir(exist_ok=True)

    async with chromium(browser) as context:
        urls = [f"{site}/other?tab={n}" for n in (1, 2, 3)]
        async with mcp_client(browser) as agent:
            await extension_connected(agent)
            ids = [(await ok(agent, "tab_open", {"url": u}))["tab"]["id"] for u in urls]
            live = await _cli_tabs(browser)
            assert sorted(t["id"] for t in live["tabs"]) == sorted(ids)
            assert not any(t["orphaned"] for t in live["tabs"])
            session = live["tabs"][0]["session"]
            assert session.startswith("s-")
        # The MCP process exited: its session ended, its tabs stay open as orphans.

        async def all_orphaned() -> bool:
            return await _orphans(browser) == sorted(ids)

        await _until("the tabs are orphaned", all_orphaned)
        await _pages_are(context, present=set(urls))
        listing = (await _cli_tabs(browser))["tabs"]
        for row in listing:
            assert row["session"] == session and row["origin"] == site
            assert row["title"] == "other" and "?tab=" not in json.dumps(row)

        options = await context.new_page()
        await options.goto(OPTIONS)
        await options.wait_for_selector("#agent-tabs li.orphaned .close-orphan")
        assert await options.locator("#agent-tabs li.orphaned").count() == 3
        await options.screenshot(path=str(SHOTS / "options-orphans.png"), full_page=True)

        popup = await context.new_page()
        await popup.set_viewport_size({"width": 400, "height": 420})  # a toolbar popup's size
        await popup.goto(POPUP)
        await popup.wait_for_selector("#agent-tabs li.orphaned .close-orphan")
        assert "orphaned" in (await popup.text_content("#agent-tabs") or "")
        await popup.screenshot(path=str(SHOTS / "popup-orphans.png"), full_page=True)
        # One click closes one orphan (the first row: the oldest tab).
        await popup.locator("#agent-tabs li.orphaned .close-orphan").first.click()
        await popup.wait_for_function(
            "() => document.getElementById('agent-tabs-status').textContent.startsWith('done')"
        )

        async def two_left() -> bool:
            return await _orphans(browser) == sorted(ids[1:])

        await _until("one orphan closed from the popup", two_left)
        await _pages_are(context, present=set(urls[1:]), absent={urls[0]})
        await popup.screenshot(path=str(SHOTS / "popup-after-close.png"), full_page=True)

        closed = await _cli_tabs(browser, "--close-orphans")
        assert closed == {"tabs": [], "closed": 2, "terminalSessions": []}
        await _pages_are(context, present=set(), absent=set(urls))
        await options.reload()
        await options.wait_for_function(
            "() => document.getElementById('agent-tabs').textContent.includes('no agent tabs')"
        )


async def test_a_session_that_ends_while_its_host_is_dead_is_ended_too(
    browser: ThrowawayBrowser, site: str
) -> None:
    """The host is SIGKILLed and the MCP server exits before or while Chrome starts the next
    host, which never had a connection from it: its tabs still become orphans (the extension's
    sweep asks the new host, which finds the process gone or watches it until it is)."""
    _provision(browser, site)

    async with chromium(browser) as context:
        url = f"{site}/other?lost"
        async with mcp_client(browser) as agent:
            await extension_connected(agent)
            tab = (await ok(agent, "tab_open", {"url": url}))["tab"]["id"]
            os.kill(await _one_host(browser), signal.SIGKILL)
        # The MCP server exited (its client closed it) with no host to see it.

        async def orphaned() -> bool:
            return await _orphans(browser) == [tab]

        await _until("the lost session's tab is orphaned", orphaned)
        await _pages_are(context, present={url})  # kept open: closeTabsOnSessionEnd is off


@pytest.mark.promise("H4-26")
async def test_close_tabs_on_session_end_closes_them(browser: ThrowawayBrowser, site: str) -> None:
    """Turned on from the options page (a narrowing: one click, no tap, no authenticator)."""
    _provision(browser, site)

    async with chromium(browser) as context:
        url = f"{site}/other?closing"
        async with mcp_client(browser) as agent:
            await extension_connected(agent)
            options = await context.new_page()  # once the host is there to read the policy
            await options.goto(OPTIONS)
            await options.click("#close-tabs-on")
            await options.wait_for_function(
                "() => document.getElementById('policy-status').textContent.startsWith('done')"
            )
            assert await options.is_disabled("#close-tabs-on")
            await ok(agent, "tab_open", {"url": url})
            await _pages_are(context, present={url})
        await _pages_are(context, present=set(), absent={url})  # the session ended
        assert (await _cli_tabs(browser))["tabs"] == []


@pytest.mark.promise("H4-26")
async def test_the_cap_evicts_an_unseen_orphan_and_never_a_tab_the_person_looked_at(
    browser: ThrowawayBrowser, site: str
) -> None:
    _provision(browser, site, maxAgentTabs=2)

    async with chromium(browser) as context:
        seen, unseen = f"{site}/other?seen", f"{site}/other?unseen"
        async with mcp_client(browser) as first:
            await extension_connected(first)
            seen_id = (await ok(first, "tab_open", {"url": seen}))["tab"]["id"]
            await ok(first, "tab_open", {"url": unseen})  # the active tab of its window
            # The person looks at the other one (activates it: tabs.onActivated) right after
            # the agent's last action: a look that soon is still the person's.
            await _pages_are(context, present={seen, unseen})
            await _page(context, seen).bring_to_front()
        await _until("both orphaned", lambda: _n_orphans(browser, 2))
        await _until("marked as seen", lambda: _viewed(browser, seen_id))

        async with mcp_client(browser) as second:
            await extension_connected(second)
            # At the cap: the orphan nobody looked at makes room.
            new = f"{site}/other?new"
            await ok(second, "tab_open", {"url": new})
            await _pages_are(context, present={seen, new}, absent={unseen})
            # At the cap again: one live tab and one the person looked at. Refused, and
            # nothing closed.
            result = await second.call_tool("tab_open", {"url": f"{site}/other?more"})
            error = tool_error(result) or {}
            assert error.get("code") == "tab_limit", result.content
            assert "cap is 2" in error["message"]
            assert {seen, new} <= _urls(context)
            assert f"{site}/other?more" not in _urls(context)
            rows = (await _cli_tabs(browser))["tabs"]
            assert sorted(r["id"] for r in rows) == sorted(
                [seen_id, (await ok(second, "tab_list", {}))["tabs"][0]["id"]]
            )


async def _n_orphans(browser: ThrowawayBrowser, n: int) -> bool:
    orphans = await _orphans(browser)
    return orphans is not None and len(orphans) == n


async def _viewed(browser: ThrowawayBrowser, tab_id: int) -> bool:
    rows = (await _cli_tabs(browser))["tabs"]
    return any(r["id"] == tab_id and r["viewed"] for r in rows)
