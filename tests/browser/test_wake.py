"""A stopped worker wakes by itself, in real Chromium: the extension's service worker is stopped
through CDP (``Target.closeTarget`` on its target, from the browser's own DevTools session) and
nothing in the browser happens afterwards — no tab, no click, no navigation. The wake alarm
(extension/worker/wake.js) must bring the bridge back by itself; meanwhile calls answer
``extension_away`` with the expected wait. Repeated stops leave one alarm and one host (one native
port)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import psutil
import pytest
from playwright.async_api import BrowserContext, CDPSession

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.manifests import EXTENSION_ID
from tabwarden.protocol.codes import WIRE_CODES
from tests.browser.harness import (
    Request,
    chromium,
    extension_connected,
    mcp_client,
    served_pages,
    trust_this_process,
)
from tests.deadline import until
from tests.fakes import tool_error

# Not lent (tests/browser/pool.py): it counts the hosts one Chromium starts across repeated worker
# stops, and a fresh-clone run of the lent browser once sampled two alive at once (cause not
# found); a Chromium of its own keeps the count to what this test's stops do.
pytestmark = pytest.mark.browser

BACK_DEADLINE = 60.0  # generous: the measured wake is one alarm period (5 s) plus start-up
WORKER_URL = f"chrome-extension://{EXTENSION_ID}/background.js"
#: One unpacked wake period (worker/wake.js UNPACKED_PERIOD_MINUTES) plus slack, as the hello
#: states.
EXPECTED_BACK_S = 10


#: ``/`` answers at once; ``/hang`` holds its answer until the test releases it, so a tab_open to
#: it stays in flight (and its tab sends no load event that could wake the worker).
HUNG = threading.Event()
RELEASE = threading.Event()


def _hang(request: Request) -> None:
    if request.target == "/hang":
        HUNG.set()
        RELEASE.wait(120)


@pytest.fixture
def site() -> Iterator[str]:
    HUNG.clear()
    RELEASE.clear()
    page = (b"<!doctype html><title>wake</title><p>wake</p>", "text/html")
    with served_pages(fallback=page, hook=_hang) as served:
        try:
            yield served.origin
        finally:
            RELEASE.set()


def _hosts(browser: ThrowawayBrowser) -> set[int]:
    """PIDs of the hosts this browser launched (one per native port): our command line, and the
    throwaway runtime directory in their environment (other tests' hosts are not ours)."""
    mine = str(browser.root / "run")
    found = set()
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if "host" not in cmdline or not any(a.startswith("chrome-extension://") for a in cmdline):
            continue
        with contextlib.suppress(psutil.Error):
            if proc.environ().get("TABWARDEN_RUNTIME_DIR") == mine:
                found.add(proc.pid)
    return found


async def _until(condition: Any, deadline_s: float, what: str) -> None:
    await until(what, condition, timeout_s=deadline_s, interval_s=0.05)


async def _stop_worker(cdp: CDPSession) -> None:
    targets = (await cdp.send("Target.getTargets"))["targetInfos"]
    [worker] = [t for t in targets if t["type"] == "service_worker" and t["url"] == WORKER_URL]
    result = await cdp.send("Target.closeTarget", {"targetId": worker["targetId"]})
    assert result.get("success") is True


async def _in_worker(context: BrowserContext, expression: str) -> Any:
    """Evaluate in the extension's live service worker (the newest that answers)."""
    deadline = time.monotonic() + BACK_DEADLINE
    while True:
        for worker in reversed(context.service_workers):
            if worker.url == WORKER_URL:
                with contextlib.suppress(Exception):
                    return await worker.evaluate(expression)
        if time.monotonic() > deadline:
            raise AssertionError("the service worker never answered")
        await asyncio.sleep(0.1)


async def _back(client: Any) -> list[dict[str, Any]]:
    """Call tab_list until it succeeds (no browser event in between); the errors it met."""
    errors: list[dict[str, Any]] = []
    deadline = time.monotonic() + BACK_DEADLINE
    while True:
        result = await client.call_tool("tab_list", {})
        error = tool_error(result)
        if error is None:
            return errors
        errors.append(error | {"text": str(result.content)})
        assert time.monotonic() < deadline, f"the bridge did not come back: {errors[-3:]}"
        await asyncio.sleep(0.1)


@pytest.mark.promise("H4-48")
async def test_stopped_worker_wakes_by_itself_and_repeated_stops_pile_up_nothing(
    browser: ThrowawayBrowser, site: str
) -> None:
    trust_this_process(browser, [site])

    async with chromium(browser) as context, mcp_client(browser) as client:
        await extension_connected(client)
        assert not (await client.call_tool("tab_list", {})).is_error
        cdp = await context.browser.new_browser_cdp_session()  # type: ignore[union-attr]
        seen_hosts = set(_hosts(browser))
        assert len(seen_hosts) == 1, seen_hosts

        # Restart the alarm's schedule so its next firing is a full period away: the first
        # call below then lands while the worker is surely still stopped.
        await _in_worker(
            context,
            "chrome.alarms.create('tabwarden-wake', {periodInMinutes: 5 / 60, "
            "delayInMinutes: 5 / 60})",
        )
        [old] = seen_hosts
        await _stop_worker(cdp)
        await _until(lambda: not psutil.pid_exists(old), 30, "the host exits with the port")
        away = await client.call_tool("tab_list", {})
        error = tool_error(away)
        assert error is not None and error["code"] == "extension_away", away.content
        assert error["retry"] == "safe"
        assert f"expected back within {EXPECTED_BACK_S} s" in str(away.content)
        status = (await client.call_tool("bridge_status", {})).structured_content
        if not status["extensionConnected"]:
            assert status["extensionAway"] is True
            assert status["expectedBackWithinS"] == EXPECTED_BACK_S
            assert "native port" in (status["lastDisconnectReason"] or "")

        errors = await _back(client)  # no browser event: only the alarm can wake it
        assert {e["code"] for e in errors} <= {"extension_away", "extension_not_connected"}
        seen_hosts |= _hosts(browser)
        status = (await client.call_tool("bridge_status", {})).structured_content
        assert status["extensionConnected"] is True and status["connectedSince"] is not None
        assert status["lastDisconnectAt"] is not None

        most_alive = 1
        for _ in range(5):
            [current] = _hosts(browser)
            await _stop_worker(cdp)
            await _until(lambda: not psutil.pid_exists(current), 30, "the host exits")  # noqa: B023
            deadline = time.monotonic() + BACK_DEADLINE
            while tool_error(await client.call_tool("tab_list", {})) is not None:
                alive = _hosts(browser)  # sampled while waiting: a second port shows
                seen_hosts |= alive
                most_alive = max(most_alive, len(alive))
                assert time.monotonic() < deadline, "the bridge did not come back"
                await asyncio.sleep(0.1)
            seen_hosts |= _hosts(browser)

        alarms = await _in_worker(context, "chrome.alarms.getAll()")
        assert [a["name"] for a in alarms] == ["tabwarden-wake"], alarms
        assert len(_hosts(browser)) == 1
        # Never a second host beside the first: one port at a time, at every sample. A new host
        # per stop (at least 7 in all); a port that drops is reconnected (worker/session.js's
        # backoff), so a busy machine may show one more host, after the other: no pile-up (a
        # fresh-clone CI run saw 8).
        assert most_alive == 1, seen_hosts
        assert len(seen_hosts) >= 7, seen_hosts

        # A stopped worker never sees its own disconnect; the popup shows the one the host
        # remembers (its welcome says it), as `tabwarden status` does.
        popup = await context.new_page()
        await popup.goto(f"chrome-extension://{EXTENSION_ID}/popup.html")
        await popup.wait_for_function(
            "() => (document.getElementById('state')?.textContent || '')"
            ".includes('last disconnect')",
            timeout=30_000,
        )
        assert "port_closed" in (await popup.text_content("#state") or "")


@pytest.mark.promise("H4-48")
async def test_call_in_flight_when_the_worker_stops_fails_coded_and_the_next_succeeds(
    browser: ThrowawayBrowser, site: str
) -> None:
    trust_this_process(browser, [site])

    async with chromium(browser) as context, mcp_client(browser) as client:
        await extension_connected(client)
        cdp = await context.browser.new_browser_cdp_session()  # type: ignore[union-attr]
        [old] = _hosts(browser)
        in_flight = asyncio.create_task(client.call_tool("tab_open", {"url": f"{site}/hang"}))
        await _until(HUNG.is_set, 60, "the tab_open reached the site")
        assert not in_flight.done()
        await _stop_worker(cdp)
        failed = await asyncio.wait_for(in_flight, 120)
        error = tool_error(failed)
        assert error is not None, failed.content
        assert error["code"] in WIRE_CODES and error["hint"]
        await _until(lambda: not psutil.pid_exists(old), 30, "the host exits with the port")
        # The hung page still loads (the test holds its answer): no tab event wakes the worker.
        errors = await _back(client)
        assert {e["code"] for e in errors} <= {"extension_away", "extension_not_connected"}
