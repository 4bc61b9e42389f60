"""The chaos suite (a write must never run twice): a call's transport breaks mid-call, in real
Chromium, through the real chain (MCP client → `tabwarden mcp` → the host Chrome launched → the
extension), and the command still runs at most once.

Each case drives `page_navigate` to a counting URL (one first asks the person, and the host dies
while the confirm window waits): the fixture site counts every request for
`/effect` (the side effect) and holds its answer until the test has broken something, so the
call is in flight at that moment. For each case: no hang past the call's deadline, the side
effect counted once, a code from the table (`command_lost` where the outcome is unknown), and
the next call works once the part is back (tab_open + page_text: it does not depend on tab
ownership surviving, which is helper B's part). Nothing here is a test hook: the host is
SIGKILLed, the worker stopped over CDP, the socket shut down from outside (tests.transport),
Chromium SIGKILLed, the trust record written as `tabwarden kill` and revoke write it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from playwright.async_api import BrowserContext

from tabwarden.bridge.client_identity import measure_process
from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.manifests import EXTENSION_ID
from tabwarden.trust import store
from tabwarden.trust.keystore import FileStore
from tests.browser.harness import (
    Request,
    ServedSite,
    chromium,
    confirm_page,
    extension_connected,
    mcp_client,
    ok,
    press,
    served_pages,
    shows,
    trust_this_process,
)
from tests.deadline import until, within
from tests.fakes import tool_error
from tests.transport import drop_bridge_connections, listener_pid

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

#: The confirm timeout these tests run under (a narrowing): the server's deadline for a call is
#: this plus 15 s.
CONFIRM_SECONDS = 20
CALL_DEADLINE = CONFIRM_SECONDS + 15
#: A hang guard on top of a call's deadline (never a timing assertion).
HANG_GUARD = CALL_DEADLINE + 30


@dataclass
class Effects:
    """The counting site: every request it received, and the answers it holds back."""

    site: ServedSite
    release: threading.Event

    @property
    def count(self) -> int:
        """How many times the side effect (``/effect``) reached the site."""
        return len(self.site.requests("/effect"))


def _counting(release: threading.Event) -> Callable[[Request], bytes | None]:
    def hook(request: Request) -> bytes | None:
        if request.path == "/effect":
            release.wait(120)  # held until the test has broken something
            return b"<!doctype html><title>effect</title><p>effect</p>"
        if request.path == "/value":
            return f"<!doctype html><title>value</title><p>{request.query('v')}</p>".encode()
        return None

    return hook


@pytest.fixture
def counting_site() -> Iterator[tuple[str, Effects]]:
    release = threading.Event()
    plain = b"<!doctype html><title>plain</title><p>plain page</p>"
    with served_pages(fallback=plain, hook=_counting(release)) as served:
        try:
            yield served.origin, Effects(served, release)
        finally:
            release.set()


@pytest.fixture
def site(counting_site: tuple[str, Effects]) -> str:
    """The counting site's origin (instead of the conftest's fixture site)."""
    return counting_site[0]


@pytest.fixture
def effects(counting_site: tuple[str, Effects]) -> Effects:
    return counting_site[1]


@pytest.fixture
def trusted(browser: ThrowawayBrowser, site: str) -> ThrowawayBrowser:
    """The conftest's ``trusted`` (this process paired, ``site`` approved) under a narrowed
    confirm timeout, so a call's deadline is ``CALL_DEADLINE``."""
    trust_this_process(browser, [site])
    store.add_restriction(
        browser.config / "trust.json", "confirmTimeoutSeconds", CONFIRM_SECONDS, _now()
    )
    return browser


def _now() -> int:
    return int(time.time())


def _socket(browser: ThrowawayBrowser) -> Path:
    return browser.root / "run" / f"{browser.label}.sock"


async def _until(condition: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    """Poll ``condition`` until it is truthy (a hang guard with a generous deadline)."""
    return await until(what, condition, timeout_s=timeout, interval_s=0.05)


async def _works(agent: Any, site: str) -> None:
    """The next call works: a new tab, and its text read back (retried while the part comes
    back, within a generous deadline)."""
    seen: list[Any] = []

    async def opened() -> Any:
        result = await agent.call_tool("tab_open", {"url": f"{site}/"})
        seen[:] = [result.content]
        return None if result.is_error else result

    try:
        result = await until("a new tab opens", opened, interval_s=0.25)
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {seen}") from None
    tab = result.structured_content["tab"]["id"]
    assert "plain page" in (await ok(agent, "page_text", {"tabId": tab}))["text"]


@dataclass
class MidCall:
    """A page_navigate to the counting URL, in flight (its request counted, its answer held)."""

    call: asyncio.Task[Any]
    effects: Effects

    async def outcome(self) -> Any:
        # The call's own deadline ends it; the guard only catches a hang past it.
        return await within("the call ended", self.call, timeout_s=HANG_GUARD)


async def _mid_call(agent: Any, site: str, effects: Effects) -> MidCall:
    tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
    call = asyncio.create_task(
        agent.call_tool("page_navigate", {"tabId": tab, "url": f"{site}/effect"})
    )
    await _until(lambda: effects.count == 1, "the side effect reached the site")
    return MidCall(call, effects)


@pytest.fixture
async def mid(agent: Client, site: str, effects: Effects) -> MidCall:
    """A page_navigate to the counting URL in flight through ``agent``: its request reached the
    site, its answer is held until ``effects.release`` is set."""
    return await _mid_call(agent, site, effects)


@pytest.mark.promise("H4-21")
async def test_host_sigkilled_mid_call(
    browser: ThrowawayBrowser,
    agent: Client,
    site: str,
    effects: Effects,
    mid: MidCall,
) -> None:
    old = listener_pid(_socket(browser))
    assert old is not None
    os.kill(old, signal.SIGKILL)
    # Chrome starts a new host when the extension reconnects (a new run secret).
    await _until(lambda: listener_pid(_socket(browser)) not in (None, old), "a new host")
    effects.release.set()
    result = await mid.outcome()
    # The journal had the command in flight: the retry got its one outcome.
    assert not result.is_error, result.content
    assert result.structured_content["url"].endswith("/effect")
    await _works(agent, site)
    assert effects.count == 1


@pytest.mark.promise("H4-21")
async def test_service_worker_stopped_mid_call(
    browser: ThrowawayBrowser,
    context: BrowserContext,
    agent: Client,
    site: str,
    effects: Effects,
    mid: MidCall,
) -> None:
    host = listener_pid(_socket(browser))
    page = await context.new_page()
    cdp = await context.new_cdp_session(page)
    await cdp.send("ServiceWorker.enable")
    await cdp.send("ServiceWorker.stopAllWorkers")
    await cdp.detach()
    # The worker's port closed, so Chrome's host exits.
    await _until(lambda: listener_pid(_socket(browser)) != host, "the old host to exit")
    effects.release.set()
    # A worker that stopped does not wake by itself yet (that is the wake alarm's job): an
    # extension page messaging it does.
    await page.goto(f"chrome-extension://{EXTENSION_ID}/popup.html")
    result = await mid.outcome()
    error = tool_error(result) or {}
    assert error.get("code") == "command_lost", result.content
    assert error["retry"] == "after_check"
    await _works(agent, site)
    assert effects.count == 1


@pytest.mark.promise("H4-21")
async def test_bridge_socket_dropped_mid_call(
    browser: ThrowawayBrowser,
    agent: Client,
    site: str,
    effects: Effects,
    mid: MidCall,
) -> None:
    host = listener_pid(_socket(browser))
    assert host is not None
    assert drop_bridge_connections(host, _socket(browser)) >= 1
    effects.release.set()
    result = await mid.outcome()
    assert not result.is_error, result.content
    assert result.structured_content["url"].endswith("/effect")
    assert listener_pid(_socket(browser)) == host  # the same host, a new connection
    await _works(agent, site)
    assert effects.count == 1


def _chromium_pid(browser: ThrowawayBrowser) -> int | None:
    """The browser process (not a renderer or helper) running ``browser``'s profile."""
    flag = f"--user-data-dir={browser.profile}".encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if flag in argv and not any(a.startswith(b"--type=") for a in argv):
            return int(proc.name)
    return None


@pytest.mark.promise("H4-21")
async def test_chromium_killed_mid_call(
    trusted: ThrowawayBrowser, site: str, effects: Effects
) -> None:
    browser = trusted
    async with mcp_client(browser) as agent:
        with contextlib.suppress(Exception):  # the browser dies under Playwright's feet
            async with chromium(browser):
                await extension_connected(agent)
                mid = await _mid_call(agent, site, effects)
                pid = _chromium_pid(browser)
                assert pid is not None
                os.kill(pid, signal.SIGKILL)
                await _until(lambda: listener_pid(_socket(browser)) is None, "the host exits")
        effects.release.set()
        # Back up within the call's deadline: its journal died with the browser, so the
        # retry cannot know whether the first attempt ran.
        async with chromium(browser):
            result = await mid.outcome()
            error = tool_error(result) or {}
            assert error.get("code") == "command_lost", result.content
            await _works(agent, site)
            assert effects.count == 1


def _tabwarden(browser: ThrowawayBrowser, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own CLI with fixed arguments
        [sys.executable, "-m", "tabwarden", *args],
        env=browser.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.promise("H4-21")
async def test_kill_switch_mid_call(
    browser: ThrowawayBrowser,
    agent: Client,
    site: str,
    effects: Effects,
    mid: MidCall,
) -> None:
    killed = _tabwarden(browser, "kill", "--reason", "chaos test")
    assert killed.returncode == 0, killed.stderr
    effects.release.set()
    result = await mid.outcome()
    # The navigation had started before the kill: its one outcome is reported.
    assert not result.is_error, result.content
    after = tool_error(await agent.call_tool("tab_open", {"url": f"{site}/"})) or {}
    assert after.get("code") == "killed"
    key = FileStore(browser.config / "host-key.pem").load()
    assert key is not None
    store.release_kill(browser.config / "trust.json", key, _now())
    await _works(agent, site)
    assert effects.count == 1


@pytest.mark.promise("H4-21")
async def test_client_revoked_mid_call(
    browser: ThrowawayBrowser,
    agent: Client,
    site: str,
    effects: Effects,
    mid: MidCall,
) -> None:
    record = browser.config / "trust.json"
    store.revoke(record, "client", "demo", _now())  # what `tabwarden revoke` writes
    result = await mid.outcome()
    # The host cut the revoked client's connection; its retry is refused at the host, which
    # tells it that it was revoked (not that it was never paired).
    error = tool_error(result) or {}
    assert error.get("code") == "client_revoked", result.content
    effects.release.set()
    key = FileStore(browser.config / "host-key.pem").load()
    assert key is not None
    me = measure_process(os.getpid())
    store.add_client(record, key, "demo", me.exe, me.sha256, _now())
    await _works(agent, site)
    assert effects.count == 1


@pytest.mark.promise("H4-21")
async def test_host_sigkilled_mid_confirmation(
    browser: ThrowawayBrowser,
    context: BrowserContext,
    agent: Client,
    site: str,
    effects: Effects,
) -> None:
    # The same site under a name the person has not approved: navigating there asks first.
    other = site.replace("127.0.0.1", "localhost")
    tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
    asking = asyncio.ensure_future(confirm_page(context))
    call = asyncio.create_task(
        agent.call_tool("page_navigate", {"tabId": tab, "url": f"{other}/effect"})
    )
    window = await asking
    old = listener_pid(_socket(browser))
    assert old is not None
    os.kill(old, signal.SIGKILL)
    await _until(lambda: listener_pid(_socket(browser)) not in (None, old), "a new host")
    assert effects.count == 0  # nothing happened before the person's yes
    # The yes is recorded through the host (a signed grant): wait for the new one.
    await extension_connected(agent)
    await shows(window, other)
    await press(window, "#allow")
    try:
        await _until(lambda: effects.count == 1, "the navigation after the yes")
    except AssertionError:
        raise AssertionError(
            (await within("the call ended", call, timeout_s=HANG_GUARD)).content
        ) from None
    effects.release.set()
    result = await within("the call ended", call, timeout_s=HANG_GUARD)
    assert not result.is_error, result.content
    assert result.structured_content["url"].startswith(other)
    await _works(agent, site)
    assert effects.count == 1
