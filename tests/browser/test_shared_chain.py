"""The guard of tests/browser/shared/: a test that leaves the extension anything the next test of
its module could see fails, naming what it left, and a test that leaves nothing passes. A real
pytest session over a sample module on the folder's own fixtures (one Chromium, one agent): its
first test plants a key in the extension's session storage, its second a session network rule,
its third only opens a tab (whose page the guard closes), its fourth opens a window as it ends
(closed by Chrome's own tab list); a Playwright listener one test adds is gone for the next."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.sample_session import run_sample

pytestmark = pytest.mark.browser

CONFTEST = """
from tests.conftest import anyio_backend  # noqa: F401
from tests.browser.conftest import playwright, tab  # noqa: F401
from tests.browser.shared.conftest import (  # noqa: F401
    agent, agent_server, browser, context, leaves_nothing, origins, site, trusted,
)
"""

SAMPLE = """
from tests.browser.harness import ok


async def worker(context):
    [w] = context.service_workers
    return w


async def test_plants_a_stored_key(context, tab):
    await (await worker(context)).evaluate("chrome.storage.session.set({planted: 'by a test'})")


async def test_plants_a_network_rule(context, tab):
    await (await worker(context)).evaluate('''chrome.declarativeNetRequest.updateSessionRules({
        addRules: [{id: 4242, priority: 1, action: {type: 'block'},
                    condition: {urlFilter: 'planted.invalid'}}]})''')


async def test_only_opens_a_tab(agent, tab):
    assert (await ok(agent, "tab_list", {}))["tabs"][0]["id"] == tab


async def test_opens_a_window_at_its_very_end(context, tab):
    # a tab Playwright may not have attached when the test ends (as a popup the last click
    # opened): the check closes it by Chrome's own list, and the test passes
    await (await worker(context)).evaluate("chrome.windows.create({url: 'about:blank'})")


DIALOG_LISTENERS = []


async def test_adds_a_dialog_listener(context, agent):
    DIALOG_LISTENERS.append(len(context._impl_obj.listeners("dialog")))
    context.on("dialog", lambda dialog: None)


async def test_meets_none_of_the_last_tests_listeners(context, agent):
    assert len(context._impl_obj.listeners("dialog")) == DIALOG_LISTENERS[0]
"""


def test_a_test_that_leaves_state_fails_and_one_that_leaves_nothing_passes(
    tmp_path: Path,
) -> None:
    returncode, out = run_sample(
        tmp_path,
        {"conftest.py": CONFTEST, "test_sample.py": SAMPLE},
        env={"TABWARDEN_TEST_LEAK_WAIT_S": "15"},
    )
    assert returncode == 1, out
    assert "ERROR test_sample.py::test_plants_a_stored_key" in out, out
    assert "ERROR test_sample.py::test_plants_a_network_rule" in out, out
    assert "PASSED test_sample.py::test_only_opens_a_tab" in out, out
    assert "ERROR test_sample.py::test_only_opens_a_tab" not in out, out
    assert "PASSED test_sample.py::test_opens_a_window_at_its_very_end" in out, out
    assert "ERROR test_sample.py::test_opens_a_window_at_its_very_end" not in out, out
    # a Playwright listener one test added is gone before the next
    assert "PASSED test_sample.py::test_adds_a_dialog_listener" in out, out
    assert "PASSED test_sample.py::test_meets_none_of_the_last_tests_listeners" in out, out
    # each failure names what its test left
    assert '"planted": "by a test"' in out, out
    assert "planted.invalid" in out, out
