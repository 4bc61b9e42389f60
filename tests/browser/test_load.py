"""Load: 8 sessions × 200 calls at once, each session a real `tabwarden mcp` over
stdio, all against one real Chromium — 0 lost, 0 misrouted.

Every session drives its own tab: it fills a field with a value unique to the call
(session, step) — a write, so journaled — then reads the field back. A reply that belonged to
another call or session would read back another value; a lost one would be an error result.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.async_api import BrowserContext

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import extension_connected, mcp_client, served_pages

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

SESSIONS = 8
CALLS = 200  # per session: CALLS / 2 fills, each read back

FIELD = b"""<!doctype html><html><head><title>load</title></head><body>
<label>Value <input id="v"></label></body></html>"""


@pytest.fixture
def field_site() -> Iterator[str]:
    with served_pages(fallback=FIELD) as served:
        yield served.origin


@pytest.fixture
def origins(field_site: str) -> list[str]:
    return [field_site]


@pytest.mark.promise("H4-23")
@pytest.mark.deadline(600)
async def test_eight_sessions_two_hundred_calls_each(
    trusted: ThrowawayBrowser, context: BrowserContext, field_site: str
) -> None:
    outcomes: dict[str, int] = {"ok": 0, "lost": 0, "misrouted": 0}
    failures: list[str] = []

    async def session(agent: Any, n: int) -> None:
        opened = await agent.call_tool("tab_open", {"url": f"{field_site}/"})
        assert not opened.is_error, opened.content
        tab = opened.structured_content["tab"]["id"]
        for step in range(CALLS // 2):
            value = f"session-{n}-call-{step}"
            filled = await agent.call_tool(
                "page_fill", {"tabId": tab, "selector": "#v", "value": value}
            )
            read = await agent.call_tool("page_get_state", {"tabId": tab, "selector": "#v"})
            for result in (filled, read):
                if result.is_error:
                    outcomes["lost"] += 1
                    failures.append(str(result.content)[:300])
                else:
                    outcomes["ok"] += 1
            if not read.is_error and read.structured_content.get("value") != value:
                outcomes["misrouted"] += 1
                failures.append(f"{value} read back {read.structured_content.get('value')!r}")

    async with contextlib.AsyncExitStack() as stack:
        agents = [await stack.enter_async_context(mcp_client(trusted)) for _ in range(SESSIONS)]
        for agent in agents:
            await extension_connected(agent)
        await asyncio.gather(*(session(a, n) for n, a in enumerate(agents)))
    assert outcomes["lost"] == 0 and outcomes["misrouted"] == 0, (outcomes, failures[:5])
    assert outcomes["ok"] == SESSIONS * CALLS
