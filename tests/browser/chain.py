"""The usual setup of a browser test as recipes (a browser with our host, the agent's server,
the connected agent, an owned tab), so that each exists once: tests/browser/conftest.py makes
them fixtures of each test, tests/browser/shared/conftest.py fixtures of each module.

In a shared module one Chromium, one host, one ``tabwarden mcp`` and one agent serve every test;
each test still opens its own ``tab``. ``leaves_nothing`` wraps each of those tests: it closes
the pages the test opened, then fails the test unless the extension is back where the test found
it (the same stored state, the parts that only grow aside; no agent tab; no session network
rule; no other tab), so no test passes or fails on what an earlier one left. It reads what the
extension stores, not what its worker holds only in memory; the output mask's learned rules are
stored (worker/secret-fields.js, worker/form-urls.js), which is how the check caught a test that
taught it a field name. A module whose tests change more than tabs stays one folder up."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import stdio_client
from playwright.async_api import BrowserContext

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser import pool
from tests.browser.harness import (
    Streams,
    extension_connected,
    mcp_server,
    ok,
    spawned_client,
)
from tests.deadline import WAIT_S, until


@contextlib.contextmanager
def new_browser() -> Iterator[ThrowawayBrowser]:
    """A ``ThrowawayBrowser`` with our host installed; removed with everything it holds."""
    with ThrowawayBrowser() as b:
        b.install_host()
        yield b


def server(trusted: ThrowawayBrowser) -> contextlib.AbstractAsyncContextManager[Streams]:
    """``tabwarden mcp`` spawned for the agent: started before the browser, so its start (~1 s
    of imports) runs while Chromium launches."""
    return stdio_client(mcp_server(trusted))


@contextlib.asynccontextmanager
async def connected(streams: Streams) -> AsyncIterator[Client]:
    """A real MCP client of the spawned server, once the extension answered ``bridge_status``."""
    async with spawned_client(streams) as client:
        await extension_connected(client)
        yield client


async def opened_tab(agent: Client, site: str) -> int:
    """A tab the agent opened (and so owns) on ``site``'s front page; its id."""
    opened = await ok(agent, "tab_open", {"url": f"{site}/"})
    tab_id: int = opened["tab"]["id"]
    return tab_id


#: How long a test's leftovers may take to go (a closed tab leaves the extension's list when
#: Chrome says so): ``WAIT_S``, or less for tests/browser/test_shared_chain.py, whose sample
#: tests leave things on purpose and would each wait it out.
LEAK_WAIT_S = float(os.environ.get("TABWARDEN_TEST_LEAK_WAIT_S", WAIT_S))

#: What the extension keeps that only grows with each call, never steering a later one: the
#: request journal (one entry per request id, which is never reused), the popup's recent calls,
#: and when each session last called.
_GROWS = ("journal:", "recentCalls", "sessionClients")

#: Everything the extension holds that a test could leave behind for the next one.
_STATE = """async () => {
  const tabs = await chrome.tabs.query({});
  return {
    local: await chrome.storage.local.get(null),
    session: await chrome.storage.session.get(null),
    sessionRules: await chrome.declarativeNetRequest.getSessionRules(),
    tabs: tabs.map((t) => t.url || t.pendingUrl || ''),
  };
}"""


def _comparable(state: dict[str, Any]) -> dict[str, Any]:
    session = {k: v for k, v in state["session"].items() if not k.startswith(_GROWS)}
    agent_tabs = session.get("agentTabs")
    if agent_tabs is not None and not agent_tabs.get("tabs") and not agent_tabs.get("windows"):
        del session["agentTabs"]  # the list of agent tabs, empty: as if never written
    return {**state, "session": session}


async def _worker_evaluate(context: BrowserContext, script: str, arg: Any = None) -> Any:
    [worker] = await until("the extension's service worker", lambda: list(context.service_workers))
    return await worker.evaluate(script, arg)


async def extension_state(context: BrowserContext) -> dict[str, Any]:
    """What the extension holds that one test could leave for the next (``_STATE``), the parts
    that only grow (``_GROWS``) left out."""
    state: dict[str, Any] = await _worker_evaluate(context, _STATE)
    return _comparable(state)


_TAB_IDS = "async () => (await chrome.tabs.query({})).map((t) => t.id)"
_CLOSE_OTHER_TABS = """async (keep) => {
  const others = (await chrome.tabs.query({})).map((t) => t.id).filter((id) => !keep.includes(id));
  if (others.length) await chrome.tabs.remove(others);
}"""


async def _tab_ids(context: BrowserContext) -> list[int]:
    ids: list[int] = await _worker_evaluate(context, _TAB_IDS)
    return ids


@contextlib.asynccontextmanager
async def leaves_nothing(context: BrowserContext) -> AsyncIterator[None]:
    """Around one test of a shared chain: the pages, Playwright listeners and the extension's
    state before it; after it, the pages it opened closed, its listeners and routes removed,
    and the extension's state as before, or the test fails with both."""
    pages = list(context.pages)
    listening = pool.listeners(context)
    before = await extension_state(context)
    tab_ids = await _tab_ids(context)
    yield
    for page in list(context.pages):
        if page not in pages:
            await page.close()
    # and the tabs Playwright has not attached yet (a window the test's last click opened): by
    # Chrome's own list, through the extension
    await _worker_evaluate(context, _CLOSE_OTHER_TABS, tab_ids)
    # Playwright's own state the test added to the shared context (a ``keep_dialogs_open``, a
    # route) goes too: the next test starts with the context as the module gave it.
    for event, handlers in pool.listeners(context).items():
        for handler in handlers:
            if handler not in listening.get(event, []):
                context._impl_obj.remove_listener(event, handler)
    await context.unroute_all()
    seen: list[dict[str, Any]] = []

    async def back() -> bool:
        seen[:] = [await extension_state(context)]
        return seen[0] == before

    try:
        await until("the extension back where the test found it", back, timeout_s=LEAK_WAIT_S)
    except AssertionError:
        pytest.fail(
            "this test left state behind for the next test of its shared chain:\n"
            f"before: {json.dumps(before, sort_keys=True)}\n"
            f"after:  {json.dumps(seen[0] if seen else None, sort_keys=True)}",
            pytrace=False,
        )
