"""Act and look in one call, in real headless Chromium through the real chain: every action's
``waitFor`` and ``observe``, and page_settle. The observation is read through page_snapshot and
page_text themselves (card numbers masked, password values never), and it re-checks the tab's
origin: a click after which the tab went to a site the person never approved answers
``{skipped}`` and carries nothing of that page. A page that keeps mutating never settles; one
that stops, does."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.mcp_server.catalogue.interact import lines
from tests.browser.harness import (
    Request,
    code,
    launched,
    ok,
    served_pages,
    trust_this_process,
)
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

SECRET = "TOP-SECRET-OF-THE-OTHER-SITE"


def act_page(elsewhere: str) -> bytes:
    """Buttons whose effects come late, a card number and a password in the page, and a button
    that sends the tab to ``elsewhere`` (an unapproved site) once the click has answered."""
    return f"""<!doctype html><html><head><title>act</title></head><body>
<p>card 4111 1111 1111 1111</p>
<label>Name <input id="name"></label>
<label>Password <input id="pw" type="password" value="hunter2"></label>
<button type="button" id="add" onclick="window.n=(window.n||0)+1;
  setTimeout(() => {{ const p = document.createElement('p'); p.id = 'result';
  p.textContent = 'added ' + window.n; document.body.append(p); }}, 200)">Add</button>
<button type="button" id="hide"
  onclick="setTimeout(() => document.getElementById('doomed').remove(), 200)">Hide</button>
<button type="button" id="doomed">Doomed</button>
<button type="button" id="leave"
  onclick="window.left = true; setTimeout(() => {{ location.href = '{elsewhere}/slow'; }}, 100)">
  Leave</button>
<p id="status">here</p>
<script>
  // Back from the back-forward cache after the navigation away was stopped (nav-block.js).
  addEventListener("pageshow", (e) => {{
    if (e.persisted && window.left) document.getElementById("status").textContent = "came back";
  }});
</script>
</body></html>""".encode()


MUTATING = b"""<!doctype html><html><head><title>mutating</title></head><body>
<p id="tick">0</p><p id="state">busy</p>
<script>
  let n = 0;
  const t = setInterval(() => {
    document.getElementById('tick').textContent = String(++n);
    if (n === 30) { clearInterval(t); document.getElementById('state').textContent = 'stopped'; }
  }, 50);
</script></body></html>"""

FOREVER = b"""<!doctype html><html><head><title>forever</title></head><body>
<p id="tick">0</p>
<script>
  let n = 0;
  setInterval(() => { document.getElementById('tick').textContent = String(++n); }, 40);
</script>
</body></html>"""


#: Holds the unapproved site's answer until the test has its result, so the navigation there is
#: still pending (the old page still shown) while the agent's wait and observation run.
RELEASE = threading.Event()


def _held(request: Request) -> None:
    RELEASE.wait(120)


@pytest.fixture
def elsewhere() -> Iterator[str]:
    """The site nobody approved: it answers once the test releases it."""
    RELEASE.clear()
    page = f"<!doctype html><title>{SECRET}</title><p>{SECRET}</p><button>Steal</button>"
    with served_pages(fallback=page, hook=_held) as served:
        try:
            yield served.origin
        finally:
            RELEASE.set()


@pytest.fixture
def act_site(elsewhere: str) -> Iterator[str]:
    pages = {"/mutating": MUTATING, "/forever": FOREVER}
    with served_pages(pages, fallback=act_page(elsewhere)) as served:
        yield served.origin


@pytest.mark.promise("H4-33")
async def test_an_action_waits_then_observes_through_the_read_tools(
    browser: ThrowawayBrowser, act_site: str
) -> None:
    trust_this_process(browser, [act_site])

    async with launched(browser) as (_, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{act_site}/"}))["tab"]["id"]

        # The effect comes 200 ms after the click: waitFor holds the answer until it shows,
        # and the observation sees it.
        done = await ok(
            agent,
            "page_click",
            {
                "tabId": tab,
                "selector": "#add",
                "waitFor": {"selector": "#result", "timeoutMs": 30_000},
                "observe": {"snapshot": "compact", "text": True},
            },
        )
        assert done["clicked"] is True and done["navigated"] is False
        seen = done["observation"]
        assert "skipped" not in seen
        assert "added 1" in seen["text"]["text"]
        # The observation is page_text's and page_snapshot's: masked, no password values.
        assert "4111 1111 1111 1111" not in str(done) and "hunter2" not in str(done)
        # The observed snapshot is page_snapshot's line form: no JSON rows, and each line gives
        # back the ref, role and name an action takes.
        assert "snapshot" not in seen["snapshot"]
        rows = lines.decode(seen["snapshot"]["lines"])
        names = {row["name"]: row["ref"] for row in rows if row["role"] == "button"}
        assert {"Add", "Hide", "Doomed"} <= set(names)

        # Its refs are this document's: usable at once, and waitFor takes a ref too.
        hidden = await ok(
            agent,
            "page_click",
            {
                "tabId": tab,
                "selector": "#hide",
                "waitFor": {"ref": names["Doomed"], "state": "absent", "timeoutMs": 30_000},
            },
        )
        assert "observation" not in hidden  # not asked for: the result reads as before
        state = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#status"})
        assert state["text"] == "here"
        assert await code(agent, "page_click", {"tabId": tab, "ref": names["Doomed"]}) == "bad_ref"

        filled = await ok(
            agent,
            "page_fill",
            {"tabId": tab, "selector": "#name", "value": "alice", "observe": {"text": True}},
        )
        assert filled["filled"] is True and "text" in filled["observation"]

        # A bad waitFor or observe acts on nothing: the counter stays at one click. The
        # schema refuses some (the SDK's error), the extension the rest (bad_request).
        schema_bad: list[dict[str, Any]] = [
            {"waitFor": {"selector": "#result", "state": "gone"}},
            {"waitFor": {"selector": "#result", "text": "added"}},
            {"observe": {"snapshot": "everything"}},
        ]
        for bad in schema_bad:
            refused = await agent.call_tool("page_click", {"tabId": tab, "selector": "#add", **bad})
            assert refused.is_error, bad
        extension_bad: list[dict[str, Any]] = [
            {"observe": {}},
        ]
        for bad in extension_bad:
            refusal = await code(agent, "page_click", {"tabId": tab, "selector": "#add", **bad})
            assert refusal == "bad_request", bad
        counted = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#result"})
        assert counted["text"] == "added 1"

        # The trusted-input and navigation actions observe the same way.
        mouse = await ok(
            agent,
            "page_mouse",
            {
                "tabId": tab,
                "selector": "#add",
                "waitFor": {"text": "added 2", "timeoutMs": 30_000},
                "observe": {"text": True},
            },
        )
        assert mouse["clicked"] is True and "added 2" in mouse["observation"]["text"]["text"]
        moved = await ok(
            agent,
            "page_navigate",
            {"tabId": tab, "url": f"{act_site}/mutating", "observe": {"snapshot": "full"}},
        )
        assert moved["observation"]["snapshot"]["title"] == "mutating"
        assert "lines" in moved["observation"]["snapshot"]
        # JSON rows for who asks, as page_snapshot's format json.
        back = await ok(
            agent,
            "page_navigate",
            {
                "tabId": tab,
                "url": f"{act_site}/",
                "observe": {"snapshot": "compact", "format": "json"},
            },
        )
        seen_json = back["observation"]["snapshot"]
        assert "lines" not in seen_json
        assert {"Add", "Hide", "Doomed"} <= {row["name"] for row in seen_json["snapshot"]}

        await ok(agent, "page_navigate", {"tabId": tab, "url": f"{act_site}/"})
        # An unmet waitFor: the action was done, the answer says wait_not_met (not timeout).
        assert (
            await code(
                agent,
                "page_fill",
                {
                    "tabId": tab,
                    "selector": "#name",
                    "value": "bob",
                    "waitFor": {"selector": "#never", "timeoutMs": 300},
                },
            )
            == "wait_not_met"
        )
        filled = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#name"})
        assert filled["value"] == "bob"


@pytest.mark.promise("H4-33")
async def test_the_observation_skips_a_tab_that_left_the_approved_sites(
    browser: ThrowawayBrowser, act_site: str, elsewhere: str
) -> None:
    """The attacker's page sends the tab to a site nobody approved right after the click; the
    agent asked to observe. It gets ``skipped`` and not one byte of the other site."""
    trust_this_process(browser, [act_site])

    async with launched(browser) as (_, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{act_site}/"}))["tab"]["id"]
        result = await agent.call_tool(
            "page_click",
            {
                "tabId": tab,
                "selector": "#leave",
                # "came back" shows only once the navigation to the other site was stopped and
                # the tab brought back to this page: never before the stop, however late it is.
                "waitFor": {"text": "came back", "timeoutMs": 30_000},
                "observe": {"snapshot": "full", "text": True},
            },
        )
        # Stopped before it leaves: the navigation is stopped before its request leaves
        # (worker/nav-block.js); the action says so (blocked, or its wait's failure reported as the
        # stop), and the observation, when there is one, never holds the other site.
        error = tool_error(result)
        if error is None:
            out = result.structured_content
            assert out.get("blocked") == elsewhere or set(out["observation"]) == {"skipped"}
        else:
            assert error["code"] == "origin_not_approved" and elsewhere in error["message"]
        everything = str(result.structured_content) + str(result.content)
        assert SECRET not in everything and "Steal" not in everything
        # The tab stayed on the approved site.
        tabs = (await ok(agent, "tab_list", {}))["tabs"]
        assert next(t["url"] for t in tabs if t["id"] == tab).startswith(act_site)


async def test_page_settle_waits_for_quiet_and_says_when_it_never_came(
    browser: ThrowawayBrowser, act_site: str
) -> None:
    trust_this_process(browser, [act_site])

    async with launched(browser) as (_, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{act_site}/mutating"}))["tab"]["id"]
        settled = await ok(
            agent, "page_settle", {"tabId": tab, "stableMs": 400, "timeoutMs": 60_000}
        )
        assert settled["settled"] is True and settled["quietMs"] >= 400
        # Settled means the mutations had stopped: the page says so.
        state = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#state"})
        assert state["text"] == "stopped"

        await ok(agent, "page_navigate", {"tabId": tab, "url": f"{act_site}/forever"})
        never = await ok(agent, "page_settle", {"tabId": tab, "stableMs": 500, "timeoutMs": 1500})
        assert never["settled"] is False and never["quietMs"] < 500
        negative = await agent.call_tool("page_settle", {"tabId": tab, "stableMs": -1})
        assert negative.is_error
