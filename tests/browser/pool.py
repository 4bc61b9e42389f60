"""One Chromium per xdist worker, lent to one test at a time: a test that launches the usual
headless browser (``chromium(browser)``, the ``context`` fixture, ``launched(browser)``) in a
module marked ``pooled`` gets the worker's running Chromium instead of a new one, its extension
restarted and emptied, its host and record the test's own.

Between two tests the lent browser goes back to where a fresh launch starts, and the next lend
proves it before handing it out:

- at the end of a lend: Playwright's listeners and routes the test added are removed, its
  cookies, permissions and the site data of every origin its pages reached cleared; the host's
  manifest is moved aside so no host can start; every tab and window but one blank tab closed;
  the extension's service worker stopped (its memory gone) and the host waited out;
- the test's own directories (record, audit log, sockets) are emptied when its ``browser``
  fixture ends;
- at the next lend: a worker started without a host empties the extension's storage, session
  network rules and optional permissions, then must show exactly what a fresh launch shows
  (nothing stored, no rule, the install's permissions, no download, one blank tab); it is
  stopped again, the manifest put back, and the worker started for the test, which connects to
  a new host reading the new record.

Anything that cannot be reset or proven (Chromium died, a download, the manifest, the
extension's folder or the home changed, another environment, a check that does not come out as
expected) closes that Chromium; the lend then launches a new one
on an emptied profile, so a test never runs on a browser the check could not clear. What it
cannot see is Chromium's own state outside the extension and the sites the test's pages
requested (whose cookies, storage and cache it clears): a profile preference, a window's size.
tests/browser/test_pool.py proves each reset.

A second lend in one test (a test that restarts the browser) closes the first Chromium and
launches a new one: a restart is always a real one."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import shutil
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil
from playwright.async_api import BrowserContext, CDPSession, Page, Request

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.cli.install.files import MANIFEST_FILENAME
from tabwarden.manifests import EXTENSION_ID
from tests.deadline import NeverHappened, until

WORKER_URL = f"chrome-extension://{EXTENSION_ID}/background.js"
_SCOPE = f"chrome-extension://{EXTENSION_ID}/"
#: The manifest's name while no host may start: Chrome looks for ``<host name>.json`` only.
_AWAY_SUFFIX = ".pooled-away"
#: What Chromium writes in the home by itself (not a test's leftovers).
_CHROMIUM_HOME = (".config/chromium/", ".cache/dconf/", ".pki/")

#: In a worker started without a host: empty what the extension keeps, then say what is left.
_EMPTY_AND_READ = """async (install) => {
  await chrome.storage.local.clear();
  await chrome.storage.session.clear();
  const rules = await chrome.declarativeNetRequest.getSessionRules();
  if (rules.length) {
    await chrome.declarativeNetRequest.updateSessionRules({removeRuleIds: rules.map((r) => r.id)});
  }
  const granted = await chrome.permissions.getAll();
  const extra = {
    permissions: (granted.permissions || []).filter((p) => !install.permissions.includes(p)),
    origins: (granted.origins || []).filter((o) => !install.origins.includes(o)),
  };
  if (extra.permissions.length || extra.origins.length) await chrome.permissions.remove(extra);
  return await (%s)();
}"""

#: What a fresh launch shows (``_FRESH``), read in the extension's worker.
_READ = """async () => {
  const granted = await chrome.permissions.getAll();
  const tabs = await chrome.tabs.query({});
  return {
    local: await chrome.storage.local.get(null),
    session: await chrome.storage.session.get(null),
    sessionRules: await chrome.declarativeNetRequest.getSessionRules(),
    permissions: {
      permissions: [...(granted.permissions || [])].sort(),
      origins: [...(granted.origins || [])].sort(),
    },
    downloads: (await chrome.downloads.search({})).length,
    tabs: tabs.map((t) => t.url || t.pendingUrl || ''),
  };
}"""


@dataclass(eq=False)
class _Lendable:
    """A running Chromium the pool holds, with what proves a reset of it."""

    browser: ThrowawayBrowser
    context: BrowserContext
    install: dict[str, list[str]]
    """The extension's permissions as the install gave them (read at launch)."""
    manifest: bytes | None
    """The host manifest as installed: a test that changes it makes the browser unlendable."""
    env: dict[str, str]
    """The environment Chromium (and so each host it starts) runs with: a test that sets
    another (``monkeypatch.setenv``) gets a Chromium of its own."""
    files: tuple[str, str]
    """What the extension's folder holds and which files the home holds (``_files``): a test
    that changes either makes the browser unlendable."""
    owner: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    """Removes ``browser`` (its ``new_browser()`` block) once its Chromium is closed."""
    listening: dict[Any, list[Any]] = field(default_factory=dict)
    origins: set[str] = field(default_factory=set)
    lent: bool = False
    """Lent to the test holding ``browser`` now (until its ``browser`` fixture ends): a second
    lend in that test is a restart."""


#: The worker's Chromium between two tests, reset; None before the first or after one was closed.
_IDLE: _Lendable | None = None
#: The browsers handed out by ``browser_for`` to the running test, by identity, with the
#: Chromium lent for each (None until its first lend).
_OUT: dict[int, _Lendable | None] = {}


def _manifest(browser: ThrowawayBrowser) -> Path:
    return browser.profile / "NativeMessagingHosts" / MANIFEST_FILENAME


def _away(browser: ThrowawayBrowser) -> Path:
    return _manifest(browser).with_name(MANIFEST_FILENAME + _AWAY_SUFFIX)


def _empty(directory: Path) -> None:
    """Remove what ``directory`` holds (the host may have removed the directory itself)."""
    if not directory.exists():
        return
    for entry in directory.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


@contextlib.contextmanager
def browser_for(
    pooled: bool, new_browser: Callable[[], contextlib.AbstractContextManager[ThrowawayBrowser]]
) -> Iterator[ThrowawayBrowser]:
    """The ``browser`` fixture: the idle pooled one (its directories empty) when the test is
    ``pooled`` and one is idle, else ``new_browser()``'s. At the end the test's directories are
    emptied and a browser whose Chromium is still lendable waits for the next test; any other
    is removed with everything it holds."""
    global _IDLE
    if not pooled:
        with new_browser() as plain:
            yield plain
        return
    held, _IDLE = _IDLE, None
    # What removes the browser: the ``new_browser()`` block, held open while its Chromium is.
    owner = held.owner if held is not None else contextlib.ExitStack()
    browser = held.browser if held is not None else owner.enter_context(new_browser())
    _OUT[id(browser)] = held
    try:
        yield browser
    finally:
        lendable = _OUT.pop(id(browser), None)
        if lendable is not None and lendable.browser is browser:
            # The host is gone (the lend's end waited it out): nothing writes here now.
            _empty(browser.config)
            _empty(browser.root / "run")
            lendable.owner, lendable.lent = owner, False
            _IDLE = lendable  # the next pooled test gets it
        else:
            owner.close()


def lends(browser: ThrowawayBrowser) -> bool:
    """Whether ``chromium(browser)`` lends the pool's Chromium rather than launching one."""
    return id(browser) in _OUT


@contextlib.asynccontextmanager
async def lent(
    browser: ThrowawayBrowser, launch: Callable[[], Awaitable[BrowserContext]]
) -> AsyncIterator[BrowserContext]:
    """``browser``'s Chromium for one ``chromium(browser)`` block of a pooled test: the idle one
    the ``browser`` fixture handed out, woken for this test, or one ``launch()`` starts (the
    first of the worker, a restart, or after a reset that failed). At the end it is reset for
    the next test, or closed."""
    current = _OUT.get(id(browser))
    if current is not None and current.lent:
        _OUT[id(browser)] = None
        await _close(current)  # a restart within the test: a new Chromium, the same profile
        current = None
    elif current is not None and not (_same_env(current, browser) and await _woken(current)):
        _OUT[id(browser)] = None
        await _close(current)  # a new Chromium on a new profile, as a new browser has
        current = None
        _fresh_profile(browser)
    if current is None:
        current = await _launched(browser, launch)
    _OUT[id(browser)] = current
    current.lent = True
    current.listening = listeners(current.context)
    current.origins = set()

    def reached(request: Request) -> None:
        origin = urlsplit(request.url)
        if origin.scheme in ("http", "https"):
            current.origins.add(f"{origin.scheme}://{origin.netloc}")

    current.context.on("request", reached)
    try:
        yield current.context
    finally:
        if not await _reset(current):
            await _close(current)
            _OUT[id(browser)] = None


async def release(browser: ThrowawayBrowser) -> None:
    """Before ``browser`` is launched another way (headful, other switches): close the pool's
    Chromium on its profile; ``browser`` is then removed at the test's end like any other."""
    held = _OUT.get(id(browser))
    if held is not None:
        _OUT[id(browser)] = None
        await _close(held)
        _fresh_profile(browser)  # the extension's state in it is the last test's


async def close_idle() -> None:
    """At the worker's end: close the idle Chromium and remove its browser."""
    global _IDLE
    held, _IDLE = _IDLE, None
    if held is not None:
        await _close(held)
        held.owner.close()


def retire() -> None:
    """Before a test outside ``tests/browser/`` (tests/conftest.py): close the idle Chromium on
    the worker's browser loop (``harness.shared_playwright``'s), idle between two tests. The
    worker has moved past the browser tests (they come together in collection order), and an
    idle Chromium is not idle: the extension's wake alarm starts its worker every 5 s unpacked,
    for the rest of the run."""
    from tests.browser import harness

    if _IDLE is None or harness._DRIVER is None:
        return
    loop = harness._DRIVER[1]
    if not loop.is_running() and not loop.is_closed():
        loop.run_until_complete(close_idle())


async def _launched(
    browser: ThrowawayBrowser, launch: Callable[[], Awaitable[BrowserContext]]
) -> _Lendable:
    """A new Chromium for ``browser``, with what a reset of it is checked against."""
    context = await launch()
    worker = await _worker(context)
    install = await worker.evaluate(
        "async () => { const g = await chrome.permissions.getAll();"
        " return {permissions: g.permissions || [], origins: g.origins || []}; }"
    )
    manifest = _manifest(browser)
    installed = manifest.read_bytes() if manifest.exists() else None
    return _Lendable(browser, context, install, installed, _env(browser), _files(browser))


def _env(browser: ThrowawayBrowser) -> dict[str, str]:
    env = browser.env
    env.pop("PYTEST_CURRENT_TEST", None)  # pytest's name of the running test
    return env


def _same_env(lendable: _Lendable, browser: ThrowawayBrowser) -> bool:
    env = _env(browser)
    if env == lendable.env:
        return True
    changed = sorted(
        k for k in env.keys() | lendable.env.keys() if env.get(k) != lendable.env.get(k)
    )
    return _not_lendable("the test runs it with another environment", changed)


def _files(browser: ThrowawayBrowser) -> tuple[str, str]:
    """A digest of every file in the extension's folder, and the names of the home's files
    Chromium does not write itself (its crash-report settings, dconf's cache)."""
    extension = hashlib.sha256()
    for path in sorted(browser.extension.rglob("*")):
        if path.is_file():
            extension.update(str(path.relative_to(browser.extension)).encode() + b"\0")
            extension.update(path.read_bytes())
    home = browser.root / "home"
    names = sorted(
        str(p.relative_to(home))
        for p in home.rglob("*")
        if p.is_file() and not str(p.relative_to(home)).startswith(_CHROMIUM_HOME)
    )
    return extension.hexdigest(), "\n".join(names)


def _fresh_profile(browser: ThrowawayBrowser) -> None:
    """The profile of a new browser: empty but for our host's registration."""
    _empty(browser.profile)
    browser.install_host()


async def _close(lendable: _Lendable) -> None:
    with contextlib.suppress(Exception):  # closing a Chromium that died is done already
        await lendable.context.close()
    away = _away(lendable.browser)
    if away.exists():
        away.replace(_manifest(lendable.browser))


async def _worker(context: BrowserContext) -> Any:
    """The extension's running worker as Playwright has it (the newest that answers: a stopped
    one may stay listed)."""

    async def answering() -> Any:
        for worker in reversed(context.service_workers):
            if worker.url == WORKER_URL:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(worker.evaluate("1"), 2)
                    return [worker]
        return None

    [worker] = await until("the extension's service worker", answering, interval_s=0.02)
    return worker


def listeners(context: BrowserContext) -> dict[Any, list[Any]]:
    emitter = context._impl_obj  # the handlers as registered (``context.on`` wraps each)
    return {event: list(emitter.listeners(event)) for event in emitter.event_names()}


async def _worker_targets(cdp: CDPSession) -> list[str]:
    targets = (await cdp.send("Target.getTargets"))["targetInfos"]
    return [
        t["targetId"] for t in targets if t["type"] == "service_worker" and t["url"] == WORKER_URL
    ]


async def _worker_session(context: BrowserContext, page: Page) -> CDPSession:
    """A CDP session (on ``page``) that follows the extension's worker (``ServiceWorker``
    events): the state of each start and stop lands in ``session.tabwarden_statuses``."""
    cdp = await context.new_cdp_session(page)
    statuses: list[str] = []

    def updated(event: dict[str, Any]) -> None:
        for version in event["versions"]:
            if version["scriptURL"] == WORKER_URL:
                statuses.append(version["runningStatus"])

    cdp.on("ServiceWorker.workerVersionUpdated", updated)
    cdp.tabwarden_statuses = statuses  # type: ignore[attr-defined]
    await cdp.send("ServiceWorker.enable")
    return cdp


async def _stop_worker(cdp: CDPSession) -> None:
    """Stop the extension's worker: the one running now is gone, its memory with it. Chrome may
    start another at once (a pending event, the wake alarm every 5 s unpacked), so this waits
    for Chrome to say the running one stopped, not for the worker to stay away. (No evaluate
    in a stopping worker: Playwright then drops the worker for good.)"""
    statuses: list[str] = cdp.tabwarden_statuses  # type: ignore[attr-defined]
    targets = await _worker_targets(cdp)
    if not targets:
        return
    since = len(statuses)
    for target in targets:
        with contextlib.suppress(Exception):  # it stopped by itself meanwhile
            await cdp.send("Target.closeTarget", {"targetId": target})
    await until(
        "the extension's worker stopped",
        lambda: "stopped" in statuses[since:],
        interval_s=0.02,
    )


async def _start_worker(cdp: CDPSession) -> None:
    """Start the extension's worker and wait until Chrome says it runs (a start that Chrome
    stops at once is asked again)."""
    statuses: list[str] = cdp.tabwarden_statuses  # type: ignore[attr-defined]

    async def running() -> bool:
        since = len(statuses)
        await cdp.send("ServiceWorker.startWorker", {"scopeURL": _SCOPE})
        with contextlib.suppress(NeverHappened):
            await until(
                "the worker running or stopped again",
                lambda: {"running", "stopped"} & set(statuses[since:]),
                timeout_s=10,
                interval_s=0.02,
            )
        return statuses[-1:] == ["running"]

    await until("the extension's worker running", running, interval_s=0.02)


def _chromium_pid(browser: ThrowawayBrowser) -> int | None:
    flag = f"--user-data-dir={browser.profile}"
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if flag in cmdline and not any(arg.startswith("--type=") for arg in cmdline):
            return int(proc.pid)
    return None


def _hosts(chromium_pid: int) -> list[psutil.Process]:
    """The native hosts Chromium started (``sh`` running the wrapper, then Python)."""
    try:
        children = psutil.Process(chromium_pid).children()
    except psutil.Error:
        return []
    hosts = []
    for child in children:
        with contextlib.suppress(psutil.Error):
            argv = child.cmdline()
            if argv[1:5] == ["-I", "-m", "tabwarden", "host"]:  # the wrapper's exec line
                hosts.append(child)
    return hosts


async def _reset(lendable: _Lendable) -> bool:
    """Back to where a fresh launch starts, as far as it can be done without the extension's
    worker (``_woken`` does the rest); False when that is not possible."""
    context, browser = lendable.context, lendable.browser
    try:
        for event, handlers in listeners(context).items():
            for handler in handlers:
                if handler not in lendable.listening.get(event, []):
                    context._impl_obj.remove_listener(event, handler)
        await context.unroute_all()
        manifest = _manifest(browser)
        if lendable.manifest is None or not manifest.exists():
            return _not_lendable("the test removed its host manifest", "")
        if manifest.read_bytes() != lendable.manifest:
            return _not_lendable("the test changed its host manifest", "")
        if _files(browser) != lendable.files:
            return _not_lendable("the test changed the extension's folder or the home", "")
        _manifest(browser).replace(_away(browser))
        blank = await context.new_page()
        cdp = await _worker_session(context, blank)
        try:
            targets = (await cdp.send("Target.getTargets"))["targetInfos"]
            mine = (await cdp.send("Target.getTargetInfo"))["targetInfo"]["targetId"]
            for target in targets:
                if target["type"] == "page" and target["targetId"] != mine:
                    await cdp.send("Target.closeTarget", {"targetId": target["targetId"]})
            await _stop_worker(cdp)
            chromium = _chromium_pid(browser)
            if chromium is None:
                return _not_lendable("its Chromium is gone", "")
            await until("the host gone", lambda: not _hosts(chromium))
            await context.clear_cookies()
            await context.clear_permissions()
            for origin in sorted(lendable.origins):
                await cdp.send(
                    "Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"}
                )
            await cdp.send("Network.clearBrowserCache")
        finally:
            await cdp.detach()
        return True
    except Exception as exc:  # noqa: BLE001 - anything unexpected: the browser is not lent again
        return _not_lendable("its reset failed", exc)


def _not_lendable(why: str, detail: object) -> bool:
    """Say on stderr (the test's captured output) why the browser is not lent again."""
    print(
        f"tests/browser/pool.py: a new Chromium for the next test: {why}: {detail!r}",
        file=sys.stderr,
    )
    return False


async def _woken(lendable: _Lendable) -> bool:
    """The idle Chromium ready for the test: the extension emptied by a worker that has no host,
    the result checked against a fresh launch's, then a new worker started with the manifest
    back. False (the caller launches a new Chromium) when any of it does not hold."""
    context, browser = lendable.context, lendable.browser
    fresh = {
        "local": {},
        "session": {},
        "sessionRules": [],
        "permissions": {k: sorted(v) for k, v in lendable.install.items()},
        "downloads": 0,
        "tabs": ["about:blank"],
    }
    try:
        [blank] = context.pages  # the one tab the reset left
        cdp = await _worker_session(context, blank)
        try:
            await _stop_worker(cdp)  # woken meanwhile by its alarm (with no host to reach)
            await _start_worker(cdp)
            worker = await _worker(context)
            seen = await worker.evaluate(_EMPTY_AND_READ % _READ, lendable.install)
            if seen != fresh:
                return _not_lendable("it is not as a fresh launch", f"{seen} != {fresh}")
            # the manifest back, then a worker that starts with it: one started meanwhile
            # without it could be waiting out a failed connect
            _away(browser).replace(_manifest(browser))
            await _stop_worker(cdp)
            await _start_worker(cdp)
        finally:
            await cdp.detach()
        return True
    except Exception as exc:  # noqa: BLE001 - anything unexpected: a new browser instead
        return _not_lendable("waking it failed", exc)
