"""The extension's version (extension/manifest.json ``version``) where a person or an agent looks
for it, from the real extension in real Chromium through the real host: ``bridge_status``
(``extensionVersion``), ``tabwarden status`` (its host line and ``--json``), and the popup's and
the options page's header (#version)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from playwright.async_api import BrowserContext

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.manifests import EXTENSION_ID
from tests.browser.harness import extension_connected

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

MANIFEST = json.loads((Path(__file__).parents[2] / "extension" / "manifest.json").read_text())
VERSION = MANIFEST["version"]
BASE = f"chrome-extension://{EXTENSION_ID}/"


def _status(browser: ThrowawayBrowser, *args: str) -> str:
    done = subprocess.run(  # noqa: S603 (this interpreter, our own CLI)
        [sys.executable, "-m", "tabwarden", "status", *args],
        capture_output=True, text=True, env=browser.env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout


async def test_the_extension_version_in_bridge_status_status_popup_and_options(
    trusted: ThrowawayBrowser, context: BrowserContext, agent: Client
) -> None:
    assert VERSION and VERSION.replace(".", "").isdigit()
    status = await extension_connected(agent, timeout_s=90)
    assert status["extensionVersion"] == VERSION, status

    report = json.loads(_status(trusted, "--json"))
    [host] = [h for h in report["hosts"] if h.get("extensionConnected")]
    assert host["extensionVersion"] == VERSION, host
    assert f"extension connected (extension v{VERSION})" in _status(trusted)

    for page_name in ("popup.html", "options.html"):
        page = await context.new_page()
        await page.goto(BASE + page_name)
        await page.wait_for_function(
            "(v) => document.getElementById('version')?.textContent === v",
            arg=f"v{VERSION}",
            timeout=60_000,
        )
        await page.close()
