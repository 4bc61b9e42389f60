"""page_console's opt-in levels in real Chromium through the real chain: with
consoleCapture on, a page's console.log, console.info and console.debug are answered only when
asked for (``levels``), in time order with the errors and warnings, masked as they are; the
default answer is unchanged (errors and warnings only). The attacker's case: a frame of an
unapproved site logs its own words at every level; they are withheld (counted), never shown,
and a page's secrets in a log line come back masked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import Reply, ok, served_pages, shows_card, widen
from tests.deadline import until

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

LOG_SECRET = "LOGSECRET7a1b2c3d4e"
FRAME_SECRET = "FRAMELOG-never-shown"

# The icon link keeps Chrome from asking for /favicon.ico, whose 404 it would log as an error.
APP = """<!doctype html><html><head><title>app</title><link rel="icon" href="data:,"></head><body>
<p id="state">ready</p><button type="button" id="go">Log</button>
<iframe title="other" src="OTHER/frame"></iframe>
<script>
  document.getElementById('go').addEventListener('click', () => {
    console.log('step one');
    console.error('it broke');
    console.info('signed in with card 4111 1111 1111 1111, token=LOG_SECRET');
    console.debug('cache warm');
    console.warn('slow');
    document.getElementById('state').textContent = 'logged';
  });
</script></body></html>"""

FRAME = f"""<!doctype html><title>frame</title><link rel="icon" href="data:,">
<button id=go>go</button><script>
  setInterval(() => {{ console.log('{FRAME_SECRET} log'); console.info('{FRAME_SECRET} info');
    console.debug('{FRAME_SECRET} debug'); }}, 200);
</script>"""


@pytest.fixture
def other() -> Iterator[str]:
    with served_pages({"/frame": Reply(FRAME.encode(), "text/html")}) as served:
        yield served.origin


@pytest.fixture
def site(other: str) -> Iterator[str]:
    app = APP.replace("OTHER", other).replace("LOG_SECRET", LOG_SECRET)
    with served_pages({"/": Reply(app.encode(), "text/html")}) as served:
        yield served.origin


def _pairs(out: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["level"], e["text"]) for e in out["entries"]]


async def test_log_info_debug_are_opt_in_masked_and_other_sites_withheld(
    browser: ThrowawayBrowser, agent: Client, site: str
) -> None:
    tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
    widen(browser, consoleCapture=True)
    assert (await ok(agent, "page_console", {"tabId": tab}))["enabled"] is True

    await ok(agent, "page_click", {"tabId": tab, "selector": "#go"})

    async def everything() -> dict[str, Any] | None:
        out: dict[str, Any] = await ok(
            agent, "page_console", {"tabId": tab, "levels": ["log", "info", "debug"]}
        )
        levels = {e["level"] for e in out["entries"]}
        done = levels >= {"log", "error", "info", "debug", "warning"} and out["withheld"] >= 3
        return out if done else None

    every = await until("the page's five lines and the frame's logs are recorded", everything)
    page = [p for p in _pairs(every) if "FRAMELOG" not in p[1]]
    assert [lvl for lvl, _ in page] == ["log", "error", "info", "debug", "warning"], page
    info = next(text for lvl, text in page if lvl == "info")
    assert info.startswith("signed in with card [card], token=[masked"), info
    assert all(e["origin"] == site for e in every["entries"]), every
    dumped = json.dumps(every)
    assert LOG_SECRET not in dumped and not shows_card(dumped) and FRAME_SECRET not in dumped

    # The default answer is unchanged: errors and warnings only.
    plain = await ok(agent, "page_console", {"tabId": tab})
    assert _pairs(plain) == [("error", "it broke"), ("warning", "slow")], plain
    only_logs = await ok(agent, "page_console", {"tabId": tab, "level": "error", "levels": ["log"]})
    assert _pairs(only_logs) == [("log", "step one"), ("error", "it broke")], only_logs
    assert FRAME_SECRET not in json.dumps(only_logs) and only_logs["withheld"] >= 1
