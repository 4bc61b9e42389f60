"""Helpers every real-Chromium test shares: a browser with the extension and our host, an MCP
client through the real chain, the confirm window, the options page's pairing steps, and the
local sites the tests' tabs visit (``served_pages``). tests/browser/conftest.py turns the usual
setup into fixtures (``agent``, ``context``, ``tab``); tests/README.md says which to use.

Helpers only (no tests): test modules import from here, never from each other."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from playwright.async_api import BrowserContext, Dialog, Page, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from tabwarden.cli.browser import ThrowawayBrowser, launch_flags
from tabwarden.cli.demo import provision_throwaway_trust, serve_http
from tabwarden.mcp_server.schema_cache import SCHEMA_CACHE_FILE, SchemaCache
from tabwarden.mcp_server.tools import catalogue_tools
from tabwarden.trust import store
from tabwarden.trust.gate import TrustGate, host_key_store
from tabwarden.trust.policy import apply_set
from tests.browser import pool
from tests.deadline import WAIT_S, until
from tests.fakes import tool_error

#: A spawned server's open (read, write) streams, as ``stdio_client`` yields them.
Streams = tuple[Any, Any]


def trust_this_process(browser: ThrowawayBrowser, origins: Sequence[str]) -> str:
    """The throwaway record most browser tests start from, in ``browser``'s config dir: this
    test process's interpreter paired (it spawns ``tabwarden mcp`` as the agent, through
    ``mcp_client``) and ``origins`` approved, and the tool-schema cache a person's config dir
    holds after their first ``tabwarden mcp`` (``warm_schema_cache``). Returns the host key's
    fingerprint."""
    fingerprint = provision_throwaway_trust(
        browser.config, client_exe=os.path.realpath("/proc/self/exe"), origins=list(origins)
    )
    warm_schema_cache(browser.config)
    return fingerprint


#: This worker's tool-schema cache (key and schemas), generated once (``warm_schema_cache``).
_SCHEMAS: tuple[str, dict[str, Any]] | None = None


def warm_schema_cache(config: Path) -> None:
    """Put in ``config`` the tool-schema cache ``tabwarden mcp`` writes at its first start
    (mcp_server/schema_cache.py), generated once per worker exactly as the server generates
    it: every later start of a person's server reads it, and so do the browser tests' (~0.2 s
    of CPU saved at each). A first start, cache empty, is tests/mcp_server/test_schema_cache.py's
    and the CLI tests'; tests/mcp_server/test_warm_cache.py shows a spawned server believes this
    one (and so never rewrites it)."""
    global _SCHEMAS
    if _SCHEMAS is None:
        with tempfile.TemporaryDirectory() as scratch:
            catalogue_tools(_NO_GUARD, _no_answer, schemas=SchemaCache(Path(scratch)))
            document = json.loads((Path(scratch) / SCHEMA_CACHE_FILE).read_bytes())
        _SCHEMAS = (document["key"], document["tools"])
    SchemaCache(config).store(*_SCHEMAS)


class _NoGuard:
    """Building the tools never consults their guard; a call through these would fail."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the schema cache's tools are never called ({name})")


_NO_GUARD: Any = _NoGuard()


async def _no_answer(*_: Any) -> Any:
    raise AssertionError("the schema cache's tools are never called")


def mcp_server(browser: ThrowawayBrowser) -> StdioServerParameters:
    """``tabwarden mcp --caps all``: the browser tests exercise every tool, the opt-in families'
    too (docs/adr/0012); the agents' own flows run on the default list
    (tests/browser/test_claude_code.py, test_codex.py)."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "tabwarden", "mcp", "--caps", "all"], env=browser.env
    )


def mcp_client(browser: ThrowawayBrowser) -> Client:
    """A client that spawns ``mcp_server(browser)`` when entered."""
    return Client(mcp_server(browser))


async def extension_connected(agent: Client, timeout_s: float = WAIT_S) -> dict[str, Any]:
    """Wait until ``agent``'s ``bridge_status`` says the extension is connected; its status."""
    seen: list[Any] = []

    async def connected() -> dict[str, Any] | None:
        status: dict[str, Any] = (await agent.call_tool("bridge_status", {})).structured_content
        seen[:] = [status]
        return status if status.get("extensionConnected") else None

    try:
        status = await until("the extension connected to the host", connected, timeout_s=timeout_s)
    except AssertionError as exc:
        raise AssertionError(f"{exc} (last bridge_status: {seen[-1] if seen else None})") from None
    connected_status: dict[str, Any] = status
    return connected_status


@contextlib.asynccontextmanager
async def connected_agent(browser: ThrowawayBrowser) -> AsyncIterator[Client]:
    """An MCP client through the real chain (``tabwarden mcp`` spawned as an agent would),
    once the extension is connected; closed when the block ends."""
    async with mcp_client(browser) as agent:
        await extension_connected(agent)
        yield agent


@contextlib.asynccontextmanager
async def launched(
    browser: ThrowawayBrowser, display: str | None = None, extra_flags: Sequence[str] = ()
) -> AsyncIterator[tuple[BrowserContext, Client]]:
    """``chromium(browser, display, extra_flags)`` and a ``connected_agent``: what the
    ``context`` and ``agent`` fixtures give, for a test that provisions first or launches again
    in its body.

    ``tabwarden mcp`` is spawned first and starts (~1 s of imports) while Chromium launches; the
    client's handshake waits until both are up. Closed as ``connected_agent`` inside
    ``chromium`` closes: the agent and its server first, then the browser."""
    async with contextlib.AsyncExitStack() as browser_open:
        async with contextlib.AsyncExitStack() as agent_open:
            streams = await agent_open.enter_async_context(stdio_client(mcp_server(browser)))
            context = await browser_open.enter_async_context(
                chromium(browser, display, extra_flags)
            )
            agent = await agent_open.enter_async_context(spawned_client(streams))
            await extension_connected(agent)
            yield context, agent


def spawned_client(streams: Streams) -> Client:
    """A client of a server already spawned (``stdio_client``'s ``streams``): whoever spawned
    it closes it."""
    return Client(_Spawned(streams))


class _Spawned:
    """A transport whose server is already running: entering it hands the client the open
    streams; closing it leaves them to their owner."""

    def __init__(self, streams: Streams) -> None:
        self._streams = streams

    async def __aenter__(self) -> Streams:
        return self._streams

    async def __aexit__(self, *exc: object) -> None:
        return None


@contextlib.asynccontextmanager
async def chromium(
    browser: ThrowawayBrowser, display: str | None = None, extra_flags: Sequence[str] = ()
) -> AsyncIterator[BrowserContext]:
    """The throwaway browser, launched by Playwright so the test can click extension windows;
    headless, or headful on X ``display`` with real window sizes (Chrome's own dialogs show).
    ``extra_flags``: more Chromium switches (e.g. ``--host-resolver-rules``). In a module marked
    ``pooled``, the usual headless browser is the worker's, lent and reset (tests/browser/pool.py).

    A person's browser: none of Playwright's default switches (they turn off the popup blocker,
    timer throttling, backgrounding, ...); only ``launch_flags``, the one list every Chromium we
    start gets. Playwright still takes the profile as the persistent context's directory and
    creates it, but with its defaults ignored it passes neither ``--user-data-dir`` nor its
    ``--remote-debugging-pipe``: ``launch_flags`` does."""
    shared = (
        _DRIVER[0] if _DRIVER is not None and _DRIVER[1] is asyncio.get_running_loop() else None
    )
    if pool.lends(browser):
        if shared is not None and display is None and not extra_flags:
            async with pool.lent(browser, lambda: _launch(shared, browser, None, ())) as context:
                yield context
            return
        await pool.release(browser)
    async with playwright_driver() as pw:
        context = await _launch(pw, browser, display, extra_flags)
        try:
            yield context
        finally:
            await context.close()


async def _launch(
    pw: Playwright, browser: ThrowawayBrowser, display: str | None, extra_flags: Sequence[str]
) -> BrowserContext:
    flags = [
        *launch_flags(browser.profile, browser.extension, headless=display is None, pipe=True),
        *extra_flags,
        "about:blank",  # the first window's page, as Playwright's own defaults open
    ]
    env: dict[str, str | float | bool] = (
        dict(browser.env) if display is None else dict(browser.env, DISPLAY=display)
    )
    return await pw.chromium.launch_persistent_context(
        str(browser.profile),
        executable_path=browser.chrome,
        headless=display is None,
        no_viewport=display is not None,
        args=flags,
        env=env,
        ignore_default_args=True,
    )


#: The Playwright driver this worker's browser tests share (``shared_playwright``), with the
#: event loop it runs on; None outside a pytest session (bench, scripts).
_DRIVER: tuple[Playwright, asyncio.AbstractEventLoop] | None = None


@contextlib.asynccontextmanager
async def shared_playwright() -> AsyncIterator[Playwright]:
    """One Playwright driver (a Node process) for every browser a worker launches, started once:
    each launch still gets its own Chromium and profile, but no longer pays ~0.8 s and ~0.4 s
    of CPU for a driver of its own. tests/browser/conftest.py holds it for the session (its
    async fixture keeps the event loop alive between tests)."""
    global _DRIVER
    async with async_playwright() as pw:
        _DRIVER = (pw, asyncio.get_running_loop())
        try:
            yield pw
        finally:
            _DRIVER = None


@contextlib.asynccontextmanager
async def playwright_driver() -> AsyncIterator[Playwright]:
    """The shared driver when one runs on this event loop, else a driver of this block's own."""
    if _DRIVER is not None and _DRIVER[1] is asyncio.get_running_loop():
        yield _DRIVER[0]
        return
    async with async_playwright() as pw:
        yield pw


async def page_at(context: BrowserContext, what: str, at: Callable[[str], bool]) -> Page:
    """The one page of ``context`` whose URL ``at`` accepts, once Playwright has it: a tab the
    extension opened or navigated is attached, and its URL known, only after the tool answered
    (later on a busy machine). Two such pages fail the test."""
    [page] = await until(what, lambda: [p for p in context.pages if at(p.url)])
    return page


async def confirm_page(context: BrowserContext) -> Page:
    page: Page = await context.wait_for_event(
        "page", predicate=lambda p: "/confirm.html" in p.url, timeout=30_000
    )
    await page.wait_for_selector("#allow", state="visible")
    return page


async def shows(window: Page, text: str, timeout_ms: float = 60_000) -> None:
    """Wait until ``window`` shows ``text`` (the confirm page renders its details after it
    opens): a deadline on the condition, never one read that races the render."""
    try:
        await window.wait_for_function(
            "(text) => (document.body?.textContent ?? '').includes(text)", arg=text,
            timeout=timeout_ms,
        )  # fmt: skip
    except PlaywrightError:
        body = await window.text_content("body")
        raise AssertionError(f"{text!r} never appeared in the window: {body!r}") from None


async def press(window: Page, button: str) -> None:
    """Click Allow/Deny. The extension closes the window as soon as it has the answer, which can
    land inside Playwright's click bookkeeping; the outcome is asserted on the tool result."""
    try:
        await window.click(button, no_wait_after=True)
    except PlaywrightError as exc:
        if "closed" not in str(exc):
            raise


CODE = "4821-9037"


async def pair_options_page(page: Any, code: str) -> None:
    # Once paired, the form is folded under "Pair this browser again": unfold it as a person would.
    await page.wait_for_function(
        "() => !(document.getElementById('pairing')?.textContent || 'Loading')"
        ".startsWith('Loading')",
        timeout=30_000,
    )
    if not await page.evaluate("() => document.getElementById('pair-block')?.open ?? true"):
        await page.click("#pair-summary")
    await page.fill("#code", code)
    await page.click("#pair")


async def options_status(page: Any, prefix: str) -> str:
    await page.wait_for_function(
        "(p) => (document.getElementById('status')?.textContent || '').startsWith(p)",
        arg=prefix,
        timeout=30_000,
    )
    return str(await page.text_content("#status"))


async def confirm_page_presence(context: Any) -> Any:
    page = await context.wait_for_event(
        "page", predicate=lambda p: "/confirm.html" in p.url, timeout=30_000
    )
    await page.wait_for_selector("#tap", state="visible")
    return page


async def policy_status(page: Any, prefix: str) -> str:
    await page.wait_for_function(
        "(p) => (document.getElementById('policy-status')?.textContent || '').startsWith(p)",
        arg=prefix,
        timeout=30_000,
    )
    return str(await page.text_content("#policy-status"))


def keep_dialogs_open(context: Any) -> list[Dialog]:
    """Playwright (our window into the browser) dismisses dialogs unless someone listens: listen
    and leave them open, as a person who has not looked yet would."""
    seen: list[Dialog] = []

    def keep(dialog: Dialog) -> None:
        seen.append(dialog)

    context.on("dialog", keep)
    return seen


def widen(browser: ThrowawayBrowser, **changes: Any) -> None:
    """What `tabwarden policy set KEY=VALUE` signs once the person typed the phrase."""
    config = browser.root / "config"
    gate = TrustGate({"TABWARDEN_CONFIG_DIR": str(config)})
    key = host_key_store(config, "file").load()
    assert key is not None
    widened = apply_set(gate.current().policy, changes)
    # As `policy set` does: a restriction on a key the person just set no longer narrows it.
    store.set_baseline(gate.path, key, widened.to_json(), int(time.time()), set_keys=changes)


#: The test pages' card number (4111 1111 1111 1111) in any spacing: its first eight digits. A
#: bare "4111" would also match a served site's port (127.0.0.1:41113) inside a URL.
_CARD = re.compile(r"4111[ -]?1111")


def shows_card(text: str) -> bool:
    """Whether ``text`` shows the test pages' card number unmasked."""
    return _CARD.search(text) is not None


async def ok(agent: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Call ``tool`` through the real chain; it must succeed. Returns its structured content."""
    result = await agent.call_tool(tool, args)
    assert not result.is_error, (tool, result.content)
    content: dict[str, Any] = result.structured_content
    return content


async def code(agent: Any, tool: str, args: dict[str, Any]) -> str | None:
    """The error code a call answers (None when it succeeds)."""
    return (tool_error(await agent.call_tool(tool, args)) or {}).get("code")


# -- the local sites the tests' tabs visit --

HTML = "text/html; charset=utf-8"
#: A served page's content: its body (text is sent as UTF-8) and its content type.
Content = tuple[bytes | str, str]


@dataclass(frozen=True)
class Reply:
    """A response other than a plain 200 page: a status, more headers (a redirect's
    ``Location``, a ``Set-Cookie``), or no content type at all (``None``)."""

    body: bytes | str = b""
    content_type: str | None = HTML
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)


#: What a site answers with: a reply, a content, or a bare body (an HTML page).
Answer = Reply | Content | bytes | str


@dataclass(frozen=True)
class Request:
    """One request a served site received, as it arrived."""

    method: str
    target: str  # the request target: path and query, as sent
    host: str  # the Host header's name (no port)
    port: int | None  # the Host header's port
    headers: Mapping[str, str]  # names lower-cased
    body: bytes

    @property
    def path(self) -> str:
        """The target's path, without the query."""
        return urlsplit(self.target).path

    def query(self, name: str, default: str = "") -> str:
        """The first value of query parameter ``name``."""
        return parse_qs(urlsplit(self.target).query).get(name, [default])[0]


#: Answers a request before the pages are looked at (``None``: look them up). It runs on the
#: server's thread for that request, so it may wait for the test (an answer held back).
Hook = Callable[[Request], Answer | None]


class ServedSite:
    """A site being served: its origin and every request it has received (``requests``)."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.port = int(origin.rsplit(":", 1)[1])
        self._lock = threading.Lock()
        self._requests: list[Request] = []

    def record(self, request: Request) -> None:
        with self._lock:
            self._requests.append(request)

    def requests(self, path: str | None = None) -> list[Request]:
        """What it received so far, in order (only those for ``path``, if given)."""
        with self._lock:
            return [r for r in self._requests if path is None or r.path == path]


_NOT_HERE = Reply(b"not here", "text/plain; charset=utf-8", 404)


def _reply(answer: Answer) -> Reply:
    if isinstance(answer, Reply):
        return answer
    if isinstance(answer, tuple):
        return Reply(*answer)
    return Reply(answer)


_BODYLESS = (204, 304)


@contextlib.contextmanager
def served_pages(
    pages: Mapping[str, Answer] | None = None,
    *,
    fallback: Answer | None = None,
    hook: Hook | None = None,
    methods: Collection[str] = ("GET",),
) -> Iterator[ServedSite]:
    """A threaded local HTTP site on 127.0.0.1 (an ephemeral port) while the block runs: each
    request is recorded, then answered by ``hook`` if it answers, else by ``pages[path]`` (the
    path without the query), else ``fallback``, else a 404. A bare body is an HTML page
    (``HTML``, status 200). Only ``methods`` are served (others
    get http.server's 501)."""
    table = dict(pages or {})
    holder: list[ServedSite] = []

    class Site(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            host_header = self.headers.get("Host", "")
            split = urlsplit(f"http://{host_header}")
            try:
                port = split.port
            except ValueError:
                port = None
            request = Request(
                method=self.command,
                target=self.path,
                host=split.hostname or "",
                port=port,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=self.rfile.read(length) if length else b"",
            )
            holder[0].record(request)
            found = hook(request) if hook is not None else None
            if found is None:
                found = table.get(request.path, fallback)
            reply = _reply(_NOT_HERE if found is None else found)
            data = reply.body.encode() if isinstance(reply.body, str) else reply.body
            self.send_response(reply.status)
            if reply.content_type is not None:
                self.send_header("Content-Type", reply.content_type)
            if reply.status not in _BODYLESS:
                self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if reply.status not in _BODYLESS and self.command != "HEAD":
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

    for method in methods:
        setattr(Site, f"do_{method}", Site._answer)
    with serve_http(Site) as origin:
        holder.append(ServedSite(origin))
        yield holder[0]


def approved_origins(browser: ThrowawayBrowser) -> tuple[str, ...]:
    """The origins the browser's trust record approves now, read as the host reads it."""
    return TrustGate({"TABWARDEN_CONFIG_DIR": str(browser.config)}).current().policy.origins
