"""``tabwarden setup`` against a real Chromium: it registers the host where that browser reads
it, says how to load the extension and waits; the browser then starts with the extension (what
"Load unpacked" does) and setup sees it connect through ``tabwarden status``'s own handshake —
then asks for the pairing phrase at the terminal. Ctrl-C there pairs nothing; a rerun finds the
host and the extension done.
"""

from __future__ import annotations

import re

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.pty_cli import PROMPT, spawn_cli

pytestmark = pytest.mark.browser


def test_setup_waits_for_a_real_extension_to_connect_then_asks_to_pair() -> None:
    with ThrowawayBrowser() as browser:
        manifests = browser.profile / "NativeMessagingHosts"
        args = ("setup", "--browser", "chromium", "--file-store", "--manifest-dir", str(manifests))
        child = spawn_cli(browser.env, *args)
        child.expect(b"waiting for the extension in chromium to connect")
        assert (manifests / "dev.tabwarden.host.json").is_file()
        assert b"chrome://extensions" in child.output and b"Load unpacked" in child.output

        browser.start("about:blank")  # the person loads the extension: the browser starts the host
        child.expect(b"extension connected in chromium", timeout=120)
        child.expect(PROMPT, timeout=60)  # on to pairing, at this terminal
        child.send("\x03")
        status, out = child.finish()
        assert status == 130, out
        assert not (browser.config / "trust.json").exists(), out

        again = spawn_cli(browser.env, *args)
        again.expect(PROMPT, timeout=120)
        assert re.search(rb"host registered for chromium .*\(already done\)", again.output)
        assert re.search(rb"extension connected in chromium \(already done\)", again.output)
        again.send("\x03")
        status, out = again.finish()
        assert status == 130, out
