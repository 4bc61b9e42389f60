"""The guard of tests/browser/pool.py: a test that borrows the worker's Chromium finds none of
what the test before it left, on the same Chromium (so the reset, not a new launch, is what is
proven); a browser the reset cannot clear is replaced; a restart within a test is a new Chromium.

A real pytest session over a sample module marked ``pooled`` on the usual fixtures: its first
test leaves everything it can (stored keys, a session network rule, a value in the worker's
memory, a window, a cookie and site storage of its site, a Playwright listener, its record and
audit log); the second finds none of it, on the same Chromium, and drives its own site through a
host reading its own record; the third downloads a file, which the reset cannot undo, and the
fourth gets a new Chromium; the fifth restarts the browser in its body and gets a new one. A
test outside tests/browser/ after them finds the idle Chromium closed (tests/conftest.py's
``pytest_runtest_setup`` retires it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.sample_session import run_sample

pytestmark = pytest.mark.browser

CONFTEST = """
from tests.conftest import anyio_backend, pytest_runtest_setup  # noqa: F401
from tests.browser.conftest import (  # noqa: F401
    agent, agent_server, browser, context, origins, playwright, site, tab, trusted,
)
"""

SAMPLE = '''
import json
from pathlib import Path

import pytest

from tests.browser import pool
from tests.browser.conftest import SITE, SITE_FALLBACK
from tests.browser.harness import launched, ok, served_pages, trust_this_process
from tests.deadline import until

pytestmark = pytest.mark.pooled
SEEN = {}

LEAVE = """async () => {
  globalThis.plantedInMemory = 'by the first test';
  await chrome.storage.local.set({planted: 'local'});
  await chrome.storage.session.set({planted: 'session'});
  await chrome.declarativeNetRequest.updateSessionRules({addRules: [{id: 4242, priority: 1,
    action: {type: 'block'}, condition: {urlFilter: 'planted.invalid'}}]});
  await chrome.windows.create({url: 'about:blank'});
}"""

FIND = """async () => ({
  memory: String(globalThis.plantedInMemory),
  local: await chrome.storage.local.get('planted'),
  session: await chrome.storage.session.get('planted'),
  planted: (await chrome.declarativeNetRequest.getSessionRules()).some((r) => r.id === 4242),
  tabs: (await chrome.tabs.query({})).length,
})"""


@pytest.fixture(scope="module")
def site():
    """One site for the module: the second test meets the first one's origin again, as a later
    test whose site reuses a port would."""
    with served_pages(SITE, fallback=SITE_FALLBACK) as served:
        yield served.origin


async def worker(context):
    return await pool._worker(context)


async def test_leaves_everything_it_can(browser, context, agent, tab, site):
    SEEN.update(pid=pool._chromium_pid(browser), key=(browser.config / "host-key.pem").read_bytes())
    (browser.config / "planted").write_text("by the first test")
    (browser.root / "run" / "planted").write_text("by the first test")
    await (await worker(context)).evaluate(LEAVE)
    page = await context.new_page()
    await page.goto(site + "/")  # the form page sets a cookie and a localStorage token
    assert [c["name"] for c in await context.cookies()] == ["session"]
    SEEN["listeners"] = len(context._impl_obj.listeners("dialog"))
    context.on("dialog", lambda dialog: None)


async def test_finds_none_of_it_on_the_same_chromium(browser, context, agent, site):
    assert pool._chromium_pid(browser) == SEEN["pid"], "the pool launched a new Chromium"
    found = await (await worker(context)).evaluate(FIND)
    assert found == {"memory": "undefined", "local": {}, "session": {}, "planted": False, "tabs": 1}
    assert await context.cookies() == []
    page = await context.new_page()
    await page.goto(site + "/page2")  # the first test's origin: no cookie, no stored token
    assert await page.evaluate("[document.cookie, localStorage.length]") == ["", 0]
    assert len(context._impl_obj.listeners("dialog")) == SEEN["listeners"]
    # its own record and key, its own host: the agent drives its site; nothing of the first
    # test's directories is left
    tab = (await ok(agent, "tab_open", {"url": site + "/page2"}))["tab"]["id"]
    state = await ok(agent, "page_get_state", {"tabId": tab, "selector": "p"})
    assert state["text"] == "second page"
    assert (browser.config / "host-key.pem").read_bytes() != SEEN["key"]
    assert not (browser.config / "planted").exists()
    assert not (browser.root / "run" / "planted").exists()


async def test_downloads_a_file(browser, context, agent, site):
    SEEN["pid"] = pool._chromium_pid(browser)
    w = await worker(context)
    await w.evaluate("(url) => chrome.downloads.download({url})", site + "/page2")
    done = "async () => (await chrome.downloads.search({state: 'complete'})).length"
    await until("the download complete", lambda: w.evaluate(done))


async def test_gets_a_new_chromium_after_a_download(browser, context, agent):
    assert pool._chromium_pid(browser) != SEEN["pid"]
    w = await worker(context)
    assert await w.evaluate("async () => (await chrome.downloads.search({})).length") == 0
    SEEN["pid"] = pool._chromium_pid(browser)


async def test_a_restart_in_the_body_is_a_new_chromium(browser, site):
    trust_this_process(browser, [site])
    async with launched(browser) as (context, agent):
        first = pool._chromium_pid(browser)
    async with launched(browser) as (context, agent):
        second = pool._chromium_pid(browser)
    assert first == SEEN["pid"]  # the first launch borrowed the idle one
    assert second not in (None, first)
    (Path(__file__).parent / "idle.pid").write_text(str(second))  # lent again: it stays up
'''

#: A test past the browser tests: the idle Chromium is closed before it starts.
AFTER = """
from pathlib import Path

import psutil


def test_finds_the_idle_chromium_closed():
    pid = int((Path(__file__).parents[1] / "browser" / "idle.pid").read_text())
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
"""


def test_a_borrowed_browser_shows_nothing_the_last_test_left(tmp_path: Path) -> None:
    files = {
        "conftest.py": CONFTEST,
        "tests/browser/test_sample.py": SAMPLE,
        "tests/cli/test_after.py": AFTER,
    }
    returncode, out = run_sample(tmp_path, files, ini=["markers=pooled"])
    assert returncode == 0, out
    assert "6 passed" in out, out
