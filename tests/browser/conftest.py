"""Real-browser fixtures: Debian's Chromium, headless, with our extension and host installed.

These tests need /usr/lib/chromium/chromium (or CHROME_BIN). `.ci/run` installs it; when it is
missing the tests fail with the launcher's hint rather than skip, so CI can never pass without
having driven a real browser.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from mcp import Client
from playwright.async_api import BrowserContext, Playwright

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.cli.demo import serve_page
from tests.browser import chain, pool
from tests.browser.chrome_dialog import x_display  # noqa: F401 - a fixture for the dialog tests
from tests.browser.harness import (
    Answer,
    Reply,
    ServedSite,
    Streams,
    chromium,
    served_pages,
    shared_playwright,
    trust_this_process,
)
from tests.browser.own_launch import window_manager  # noqa: F401 - a desktop for focus tests


@pytest.fixture(scope="session", autouse=True)
async def playwright(anyio_backend: str) -> AsyncIterator[Playwright]:
    """One Playwright driver for the worker's browser tests (``harness.shared_playwright``).
    Holding it keeps anyio's event loop open from test to test, so every async browser test and
    fixture runs on that one loop; each test still launches a Chromium of its own. It names
    ``anyio_backend`` so that anyio's plugin sets it up even when the first browser test a worker
    runs is a plain ``def`` one (pytest refuses an async fixture no plugin handles)."""
    async with shared_playwright() as pw:
        yield pw
        await pool.close_idle()


@pytest.fixture
def page_url() -> Iterator[str]:
    with serve_page() as url:
        yield url


@pytest.fixture
def browser(request: pytest.FixtureRequest) -> Iterator[ThrowawayBrowser]:
    """A ``ThrowawayBrowser`` with our host installed; in a module marked ``pooled``, the
    worker's, whose running Chromium the test's ``chromium(browser)`` borrows
    (tests/browser/pool.py)."""
    pooled = request.node.get_closest_marker("pooled") is not None
    with pool.browser_for(pooled, chain.new_browser) as b:
        yield b


# -- the usual setup, in the order it happens: record, browser, agent, tab (tests/browser/chain.py;
# tests/browser/shared/ holds the modules whose tests share one of each) --


@pytest.fixture
def origins(site: str) -> list[str]:
    """The origins the trust record approves: ``site``'s. A module that needs others overrides
    this fixture."""
    return [site]


@pytest.fixture
def trusted(browser: ThrowawayBrowser, origins: list[str]) -> ThrowawayBrowser:
    """``browser`` with the trust record most tests start from: this test process paired as the
    MCP client (``agent``), ``origins`` approved."""
    trust_this_process(browser, origins)
    return browser


@pytest.fixture
async def agent_server(
    trusted: ThrowawayBrowser, request: pytest.FixtureRequest
) -> AsyncIterator[Streams | None]:
    """``tabwarden mcp`` spawned for the ``agent`` fixture (``chain.server``); None when the
    test has no agent."""
    if "agent" not in request.node.fixturenames:
        yield None
        return
    async with chain.server(trusted) as streams:
        yield streams


@pytest.fixture
async def context(
    trusted: ThrowawayBrowser, agent_server: Streams | None
) -> AsyncIterator[BrowserContext]:
    """The throwaway Chromium, headless, with the extension and our host, launched through
    Playwright (so the test can click extension windows); closed after the test. (A module
    that replaces it keeps ``agent`` working: ``agent`` asks for ``agent_server`` first.)"""
    async with chromium(trusted) as launched:
        yield launched


@pytest.fixture
async def agent(
    trusted: ThrowawayBrowser, agent_server: Streams | None, context: BrowserContext
) -> AsyncIterator[Client]:
    """A real MCP client through the whole chain (``tabwarden mcp``, spawned by
    ``agent_server``), connected: the extension answered ``bridge_status``. Closed before the
    browser."""
    assert agent_server is not None, "agent_server spawns the server for every agent"
    async with chain.connected(agent_server) as client:
        yield client


@pytest.fixture
async def tab(agent: Client, site: str) -> int:
    """A tab the agent opened (and so owns) on ``site``'s form page; its id."""
    return await chain.opened_tab(agent, site)


@pytest.fixture
def collector() -> Iterator[ServedSite]:
    """The attacker's second origin (the provenance tests): answers anything, GET or POST, and
    records it; its request log is the proof of what left (tests/browser/provenance.py)."""
    with served_pages(fallback="ok", methods=("GET", "POST")) as served:
        yield served


# -- the fixture site the page-tool tests drive (one origin: http://127.0.0.1:<port>) --

FORM = b"""<!doctype html><html><head><title>form</title></head><body>
<h1>Sign in</h1>
<form id="f" action="/done" method="get">
  <label>User <input id="user" name="user"></label>
  <label>Password <input id="pw" name="pw" type="password" value="hunter2"></label>
  <label><input id="keep" type="checkbox"> keep me</label>
  <select id="color"><option value="r">red</option><option value="g">green</option></select>
  <button id="go" type="submit">Sign in</button>
</form>
<button id="plain" \
onclick="document.getElementById('out').textContent='clicked:'+(++window.n||(window.n=1))">\
Plain</button>
<div id="hov" onmouseover="this.textContent='hovered'">hover me</div>
<p id="out">idle</p>
<a id="next" href="/page2">next page</a>
<script>
  document.cookie = "session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl; path=/";
  localStorage.setItem("token", "0123456789abcdef0123456789abcdef");
  setTimeout(() => { const d = document.createElement('div'); d.id = 'late'; \
d.textContent = 'late'; document.body.append(d); }, 300);
</script>
<div style="height:3000px"></div>
</body></html>"""


#: A list whose buttons say which one was clicked, and plain buttons that remove, insert and
#: reorder the list's buttons (the stable-refs test).
REFS = b"""<!doctype html><html><head><title>refs</title></head><body>
<div id="list"><button type="button" id="del">Delete account</button>\
<button type="button" id="cancel">Cancel</button></div>
<p id="out">none</p>
<button type="button" id="remove">Remove</button>
<button type="button" id="insert">Insert</button>
<button type="button" id="reorder">Reorder</button>
<script>
  const list = document.getElementById('list');
  const on = (id, f) => document.getElementById(id).addEventListener('click', f);
  list.addEventListener('click', (e) => {
    document.getElementById('out').textContent += ' ' + e.target.id;
  });
  on('remove', () => document.getElementById('del').remove());
  on('insert', () => {
    const b = document.createElement('button');
    b.type = 'button'; b.id = 'keep'; b.textContent = 'Keep account';
    list.prepend(b);
  });
  on('reorder', () => list.append(...[...list.children].reverse()));
</script>
</body></html>"""


#: Plain buttons (no confirmation) whose clicks navigate at once, late, within the document, or
#: not at all (the click-settle test).
SETTLE = b"""<!doctype html><html><head><title>settle</title></head><body>
<p id="out">idle</p>
<button type="button" id="stay" onclick="document.getElementById('out').textContent='stayed'">\
Stay</button>
<button type="button" id="now" onclick="location.href='/page2'">Now</button>
<button type="button" id="late" onclick="setTimeout(() => { location.href='/page2'; }, 300)">\
Late</button>
<button type="button" id="push" onclick="history.pushState({}, '', '/pushed')">Push</button>
<a id="hash" href="#part">Part</a>
</body></html>"""


UPLOAD = (
    b"<!doctype html><title>upload</title><input id=file type=file "
    b"onchange=\"const f=this.files[0]; document.getElementById('got').textContent="
    b"f.name+':'+f.size\"><p id=got>none</p><input id=text>"
)
DIALOG = (
    b"<!doctype html><title>dialog</title><p id=state>ready</p>"
    b"<button type=button id=ask onclick=\"alert('card 4111 1111 1111 1111');"
    b"document.getElementById('state').textContent='answered'\">Ask</button>"
)
GROWING = (
    b"<!doctype html><title>growing</title><p>" + b"word " * 4000 + b"</p>"
    b"<p id=log></p><script>let n = 0; setInterval(() => "
    b"{ document.getElementById('log').textContent += ' tick' + (++n); }, 20);</script>"
)
PAGE2 = b"<!doctype html><title>page2</title><p>second page</p><ul><li>one</li><li>two</li></ul>"
SITE_FALLBACK = b"<!doctype html><title>other</title><p>other</p>"
SITE: dict[str, Answer] = {
    "/nocontent": Reply(status=204, content_type=None),
    "/": FORM,
    "/upload": UPLOAD,
    "/refs": REFS,
    "/settle": SETTLE,
    "/pushed": SETTLE,
    "/dialog": DIALOG,
    "/done": b"<!doctype html><title>done</title><p>submitted</p>",
    "/growing": GROWING,
    "/page2": PAGE2,
}


@pytest.fixture
def site() -> Iterator[str]:
    with served_pages(SITE, fallback=SITE_FALLBACK) as served:
        yield served.origin
