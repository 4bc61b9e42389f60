"""The suite's browser is a person's browser: the Chromium every browser test drives runs with no
switch a person's Chrome lacks (no disabled popup blocker, timer throttling, backgrounding, ...).

The check reads the real browser process's command line (``/proc/<pid>/cmdline`` of the Chromium
the fixture started, found by its profile directory) and judges it with
``tabwarden.cli.browser.person_browser_faults``, the one place the forbidden list lives."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest
from playwright.async_api import BrowserContext

from tabwarden.cli.browser import (
    BEHAVIOUR_CHANGING,
    HEADLESS_QUIET_FLAG,
    STILL_KEPT,
    ThrowawayBrowser,
    launch_flags,
    person_browser_faults,
)
from tests.browser.harness import chromium, trust_this_process

pytestmark = [pytest.mark.browser, pytest.mark.pooled]


def browser_process_argv(profile: Path) -> list[str]:
    """The command line of the Chromium browser process (not a renderer, GPU or utility
    process: those carry ``--type=``) started on ``profile``, among this test's descendants."""
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            argv = proc.cmdline()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if f"--user-data-dir={profile}" in argv and not any(a.startswith("--type=") for a in argv):
            found.append(argv)
    assert len(found) == 1, found
    return found[0]


def assert_a_persons_browser(argv: list[str], browser: ThrowawayBrowser) -> None:
    # The right process: it loaded our extension (so this is not some other Chromium).
    assert f"--load-extension={browser.extension}" in argv, argv
    assert person_browser_faults(argv) == [], argv


def test_the_checker_catches_every_behaviour_changing_switch() -> None:
    fine = ["/usr/lib/chromium/chromium", *launch_flags(Path("/p"), Path("/e"), headless=True)]
    assert person_browser_faults([*fine, "about:blank"]) == []
    for switch in BEHAVIOUR_CHANGING:
        if switch in STILL_KEPT:
            continue
        assert person_browser_faults([*fine, switch]) == [switch]
        assert person_browser_faults([*fine, f"{switch}=x"]) == [f"{switch}=x"]
    assert person_browser_faults([*fine, "--disable-popup-blocking"]) == [
        "--disable-popup-blocking"
    ]
    # A switch nobody listed is a fault too, unless the test passed it on purpose.
    assert person_browser_faults([*fine, "--some-new-switch"]) == ["--some-new-switch"]
    rules = "--host-resolver-rules=MAP *.test 127.0.0.1"
    assert person_browser_faults([*fine, rules], extra=(rules,)) == []
    # The address bar's preloaded popups off: exactly that list, and only headless.
    assert HEADLESS_QUIET_FLAG in fine
    headful = ["/usr/lib/chromium/chromium", *launch_flags(Path("/p"), Path("/e"), headless=False)]
    assert HEADLESS_QUIET_FLAG not in headful and person_browser_faults(headful) == []
    assert person_browser_faults([*headful, HEADLESS_QUIET_FLAG]) == [HEADLESS_QUIET_FLAG]
    more = f"{HEADLESS_QUIET_FLAG},BackForwardCache"
    assert person_browser_faults([*fine, more]) == [more]


async def test_the_headless_browser_of_every_test_runs_without_automation_switches(
    browser: ThrowawayBrowser, context: BrowserContext, tab: int
) -> None:
    argv = browser_process_argv(browser.profile)
    assert_a_persons_browser(argv, browser)
    assert "--headless=new" in argv
    # What HEADLESS_QUIET_FLAG turns off is gone (a Chromium that renamed the features would
    # show them again, and this fails): no address-bar popup page in any window.
    # (``tab``: the agent's tab, in a window of its own, has opened too)
    cdp = await context.new_cdp_session(context.pages[0])
    targets = (await cdp.send("Target.getTargets"))["targetInfos"]
    assert not [t["url"] for t in targets if "omnibox" in t["url"]], targets


async def test_the_headful_browser_runs_without_automation_switches(
    browser: ThrowawayBrowser, x_display: str
) -> None:
    trust_this_process(browser, [])
    async with chromium(browser, x_display):
        argv = browser_process_argv(browser.profile)
        assert_a_persons_browser(argv, browser)
        assert not any(a.startswith("--headless") for a in argv), argv
        assert HEADLESS_QUIET_FLAG not in argv, argv
