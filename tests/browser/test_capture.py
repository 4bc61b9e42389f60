"""page_console and page_network, in real Chromium through the real chain: with the
policy's consoleCapture / networkCapture off (the default) nothing is recorded and both answer
`enabled: false`; turned on by a signed widening, a click handler's console.error, an uncaught
exception and a fetch of JSON (with its body) appear, masked; an iframe of an unapproved origin
has its entries withheld (counted, never shown); a request's Authorization header, its cookie and
the response's Set-Cookie are never anywhere in a result; a 20 MB response is reported with
`bodyOmitted: "too_large"`; and turned off mid-session (a free restriction), everything recorded
is dropped at once and nothing more is recorded until it is turned on again."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlparse

import pytest
from mcp import Client
from playwright.async_api import BrowserContext

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.trust import store
from tests.browser.harness import (
    Reply,
    Request,
    ok,
    policy_status,
    served_pages,
    shows_card,
    widen,
)
from tests.browser.paired import paired_options_page, provision_for_pairing
from tests.deadline import until

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

#: What must never leave the extension: the request's auth and cookie, the response's cookie.
AUTH = "AUTHSECRET9f3a7c1e55"
COOKIE = "COOKIESECRET4b2d"
SET_COOKIE = "SETCOOKIESECRET77"
QUERY_TOKEN = "QUERYSECRET5e6f7a8b9c0d"
CONSOLE_SECRET = "CONSOLESECRET8d9e0f1a2b"
FRAME_SECRET = "FRAMESECRET-never-shown"
BIG_BYTES = 20 * 1024 * 1024

APP = """<!doctype html><html><head><title>app</title></head><body>
<p id="state">ready</p>
<button type="button" id="err">Log an error</button>
<button type="button" id="throw">Throw</button>
<button type="button" id="fetch">Fetch JSON</button>
<button type="button" id="big">Fetch big</button>
<iframe id="f" title="other" src="OTHER/frame"></iframe>
<script>
  document.cookie = "sid=COOKIE; path=/";
  const state = (t) => { document.getElementById('state').textContent = t; };
  const on = (id, f) => document.getElementById(id).addEventListener('click', f);
  console.error('logged at load, before capture');
  on('err', () => { console.error('save failed: n=' + (++window.n || (window.n = 1))
    + ' card 4111 1111 1111 1111 token=CONSOLE_SECRET');
    console.warn('slow save'); state('logged'); });
  on('throw', () => { setTimeout(() => { state('threw'); }, 0);
    throw new Error('handler threw: boom'); });
  on('fetch', async () => {
    const r = await fetch('/api/items?page=2&access_token=QUERY_TOKEN', {
      method: 'POST', credentials: 'include', body: JSON.stringify({q: 'widgets'}),
      headers: {'Authorization': 'Bearer AUTH', 'Content-Type': 'application/json'}});
    const items = (await r.json()).items.length;
    // The same JSON by XMLHttpRequest, with its own Authorization header.
    await new Promise((done) => { const x = new XMLHttpRequest();
      x.open('GET', '/api/items?via=xhr'); x.setRequestHeader('Authorization', 'Bearer AUTH');
      x.onloadend = done; x.send(); });
    state('fetched ' + items);
  });
  on('big', async () => {
    const r = await fetch('/api/big'); state('big ' + (await r.text()).length); });
</script></body></html>"""

FRAME = f"""<!doctype html><title>frame</title><script>
  console.error('{FRAME_SECRET} from the frame');
  fetch('/frame-api').then((r) => r.text());
</script>"""

ITEMS = json.dumps({"items": [{"id": 1, "name": "widget"}, {"id": 2, "name": "gadget"}]})


#: Every answer but the big one sets a cookie the page's requests must never reveal.
RESP_COOKIE = {"Set-Cookie": f"resp={SET_COOKIE}; Path=/"}


def _big(request: Request) -> Reply | None:
    """A 20 MB JSON response (without the cookie)."""
    return Reply(b" " * BIG_BYTES, "application/json") if request.path == "/api/big" else None


@contextlib.contextmanager
def _serve(pages: dict[str, tuple[str, bytes]]) -> Iterator[str]:
    """``pages`` (path -> (content type, body)) and the big response, GET or POST."""
    with served_pages(
        {path: Reply(body, kind, headers=RESP_COOKIE) for path, (kind, body) in pages.items()},
        fallback=Reply(b"not here", "text/plain", 404, RESP_COOKIE),
        hook=_big,
        methods=("GET", "POST"),
    ) as served:
        yield served.origin


@pytest.fixture
def other() -> Iterator[str]:
    """A second origin (same host, another port): the frame the person never approved."""
    pages = {
        "/frame": ("text/html", FRAME.encode()),
        "/frame-api": ("text/plain", f"frame data {FRAME_SECRET}".encode()),
    }
    with _serve(pages) as origin:
        yield origin


@pytest.fixture
def site(other: str) -> Iterator[str]:
    app = (
        APP.replace("OTHER", other)
        .replace("COOKIE;", f"{COOKIE};")
        .replace("CONSOLE_SECRET", CONSOLE_SECRET)
        .replace("QUERY_TOKEN", QUERY_TOKEN)
        .replace("Bearer AUTH", f"Bearer {AUTH}")
    )
    pages = {"/": ("text/html", app.encode()), "/api/items": ("application/json", ITEMS.encode())}
    with _serve(pages) as origin:
        yield origin


def _everything(result: Any) -> str:
    """All a client receives of one result: its text content and its structured content."""
    texts = [getattr(c, "text", "") for c in result.content]
    return json.dumps(result.structured_content) + "".join(texts)


async def _until(
    agent: Any, tool: str, args: dict[str, Any], done: Callable[[dict[str, Any]], bool]
) -> tuple[dict[str, Any], str]:
    """Call ``tool`` until ``done`` holds for its result (generous deadline); the result and
    everything the client received of it."""

    async def answered() -> tuple[dict[str, Any], str] | None:
        result = await agent.call_tool(tool, args)
        assert not result.is_error, (tool, result.content)
        if done(result.structured_content):
            return result.structured_content, _everything(result)
        return None

    found: tuple[dict[str, Any], str] = await until(
        f"{tool} answered as wanted", answered, interval_s=0.2
    )
    return found


def _texts(out: dict[str, Any]) -> list[str]:
    return [e["text"] for e in out["entries"]]


def _entry(out: dict[str, Any], path: str) -> dict[str, Any] | None:
    return next((e for e in out["entries"] if urlparse(e["url"]).path == path), None)


@pytest.mark.promise("H4-52")
async def test_console_and_network_tails_are_opt_in_masked_origin_filtered_and_dropped_when_off(
    browser: ThrowawayBrowser, agent: Client, context: BrowserContext, site: str, other: str
) -> None:
    tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]

    # Off (the default): the page logs and fetches; nothing is recorded.
    await ok(agent, "page_click", {"tabId": tab, "selector": "#err"})
    await ok(agent, "page_click", {"tabId": tab, "selector": "#fetch"})
    await _until(agent, "page_get_state", {"tabId": tab, "selector": "#state"},
                 lambda s: s["text"] == "fetched 2")  # fmt: skip
    off = await ok(agent, "page_console", {"tabId": tab})
    assert off["enabled"] is False and off["entries"] == []
    assert "consoleCapture=true" in off["hint"]
    net_off = await ok(agent, "page_network", {"tabId": tab})
    assert net_off["enabled"] is False and net_off["entries"] == []

    # On, by a signed widening (what `tabwarden policy set` signs).
    widen(browser, consoleCapture=True, networkCapture=True)
    first = await ok(agent, "page_console", {"tabId": tab})
    assert first["enabled"] is True
    # What the page logged before capture began is not there (Chrome replays it).
    assert first["entries"] == [], first

    await ok(agent, "page_click", {"tabId": tab, "selector": "#err"})
    await ok(agent, "page_click", {"tabId": tab, "selector": "#throw"})
    await ok(agent, "page_click", {"tabId": tab, "selector": "#fetch"})
    console, seen = await _until(
        agent, "page_console", {"tabId": tab},
        lambda o: any("handler threw: boom" in t for t in _texts(o)),
    )  # fmt: skip
    texts = _texts(console)
    saved = next(e for e in console["entries"] if e["text"].startswith("save failed"))
    assert saved["level"] == "error" and saved["origin"] == site
    assert saved["source"] == "console"
    assert "[card]" in saved["text"] and "token=[masked" in saved["text"], saved
    assert CONSOLE_SECRET not in seen and not shows_card(seen)
    assert "slow save" in texts
    warned = next(e for e in console["entries"] if e["text"] == "slow save")
    assert warned["level"] == "warning"
    threw = next(e for e in console["entries"] if "handler threw: boom" in e["text"])
    assert threw["level"] == "error" and threw["source"] == "exception"
    assert threw["text"].startswith("Uncaught")
    assert "logged at load, before capture" not in seen
    only_warnings = await ok(agent, "page_console", {"tabId": tab, "level": "warning"})
    assert "slow save" in _texts(only_warnings)
    assert {e["level"] for e in only_warnings["entries"]} == {"warning"}

    # The accessibility snapshot enables and disables Chrome's Runtime domain for
    # itself: it still works, and capture keeps recording after it.
    snap = await ok(agent, "page_snapshot", {"format": "json", "tabId": tab, "mode": "a11y"})
    assert snap["mode"] == "a11y" and any(r["name"] == "Throw" for r in snap["snapshot"])
    await ok(agent, "page_click", {"tabId": tab, "selector": "#err"})
    await _until(agent, "page_console", {"tabId": tab},
                 lambda o: any(t.startswith("save failed: n=3 ")
                               for t in _texts(o)))  # fmt: skip

    network, seen = await _until(
        agent, "page_network", {"tabId": tab, "url": "/api/items", "bodies": True},
        lambda o: _entry(o, "/api/items") is not None,
    )  # fmt: skip
    items = _entry(network, "/api/items")
    assert items is not None
    # Unasked, the same entry is metadata only.
    plain = _entry(
        await ok(agent, "page_network", {"tabId": tab, "url": "/api/items"}), "/api/items"
    )
    assert plain is not None and "body" not in plain and "bodyOmitted" not in plain, plain
    assert items["method"] == "POST" and items["status"] == 200
    assert items["type"] == "Fetch" and items["mimeType"] == "application/json"
    assert json.loads(items["body"]) == json.loads(ITEMS)
    assert items["origin"] == site and items["size"] == len(ITEMS)
    assert "access_token=[masked" in items["url"] and "page=2" in items["url"]
    xhr_out, seen_xhr = await _until(
        agent, "page_network", {"tabId": tab, "url": "via=xhr", "bodies": True},
        lambda o: any(e["type"] == "XHR" for e in o["entries"]),
    )  # fmt: skip
    xhr = next(e for e in xhr_out["entries"] if e["type"] == "XHR")
    assert xhr["method"] == "GET" and xhr["status"] == 200
    assert json.loads(xhr["body"]) == json.loads(ITEMS)
    for secret in (AUTH, COOKIE, SET_COOKIE, QUERY_TOKEN, "widgets"):
        assert secret not in seen, secret
        assert secret not in seen_xhr, secret
    assert "authorization" not in seen.lower() and "cookie" not in seen.lower()

    # The unapproved frame (another origin): its console and its requests withheld.
    reload = await ok(agent, "page_reload", {"tabId": tab})
    assert reload["url"].startswith(site)
    await _until(agent, "page_console", {"tabId": tab},
                 lambda o: o["withheld"] >= 1)  # fmt: skip
    framed = await agent.call_tool("page_console", {"tabId": tab})
    assert FRAME_SECRET not in _everything(framed)
    _, seen = await _until(agent, "page_network", {"tabId": tab}, lambda o: o["withheld"] >= 1)
    assert FRAME_SECRET not in seen and other not in seen

    # A 20 MB response: listed, its body omitted as too large.
    await ok(agent, "page_click", {"tabId": tab, "selector": "#big"})
    big, _ = await _until(
        agent, "page_network", {"tabId": tab, "url": "/api/big", "bodies": True},
        lambda o: _entry(o, "/api/big") is not None,
    )  # fmt: skip
    entry = _entry(big, "/api/big")
    assert entry is not None and entry["bodyOmitted"] == "too_large"
    assert "body" not in entry and entry["size"] == BIG_BYTES

    # Off mid-session, for free (a restriction, as `tabwarden policy restrict` writes):
    # the next call finds everything dropped; what the page does meanwhile is not kept.
    store.add_restrictions(
        browser.root / "config" / "trust.json",
        {"consoleCapture": False, "networkCapture": False},
        int(time.time()),
    )
    dropped = await ok(agent, "page_console", {"tabId": tab})
    assert dropped["enabled"] is False and dropped["entries"] == []
    assert (await ok(agent, "page_network", {"tabId": tab}))["entries"] == []
    await ok(agent, "page_click", {"tabId": tab, "selector": "#err"})
    await ok(agent, "page_click", {"tabId": tab, "selector": "#fetch"})
    await _until(agent, "page_get_state", {"tabId": tab, "selector": "#state"},
                 lambda s: s["text"] == "fetched 2")  # fmt: skip
    widen(browser, consoleCapture=True, networkCapture=True)
    again = await ok(agent, "page_console", {"tabId": tab})
    assert again["enabled"] is True and again["entries"] == [], again
    assert (await ok(agent, "page_network", {"tabId": tab}))["entries"] == []
    # And it records again from now on.
    await ok(agent, "page_click", {"tabId": tab, "selector": "#err"})
    resumed, _ = await _until(
        agent, "page_console", {"tabId": tab}, lambda o: "slow save" in _texts(o)
    )
    assert len([t for t in _texts(resumed) if t.startswith("save failed")]) == 1

    # Off from the terminal while the agent is idle: the host pushes the change and the
    # worker reads the policy itself, so what was kept is dropped now, not at the agent's
    # next call. The same push narrows the navigation rules: the site taken out of the
    # policy loses its allow rule with no request in between (that is the condition
    # waited on; the capture drop runs before it in the same handler).
    worker = context.service_workers[0] if context.service_workers else None
    if worker is None:
        worker = await context.wait_for_event("serviceworker", timeout=30_000)

    async def allowed_in_rules() -> bool:
        rules = await worker.evaluate("chrome.declarativeNetRequest.getSessionRules()")
        return any(
            r["action"]["type"] == "allow" and f"{site}/" in r["condition"].get("urlFilter", "")
            for r in rules
        )

    assert await allowed_in_rules()
    store.add_restrictions(
        browser.root / "config" / "trust.json",
        {"consoleCapture": False, "origins": []},
        int(time.time()),
    )

    async def narrowed() -> bool:
        return not await allowed_in_rules()

    await until("the push narrowed the session rules", narrowed, interval_s=0.2)
    widen(browser, consoleCapture=True, origins=[site])
    pushed = await ok(agent, "page_console", {"tabId": tab})
    assert pushed["enabled"] is True and pushed["entries"] == [], pushed


async def _act(page: Any, selector: str, prefix: str) -> str:
    """Click an options-page control and wait for its outcome (the status cleared first, so an
    earlier operation's text can never pass for this one's)."""
    await page.evaluate("() => { document.getElementById('policy-status').textContent = ''; }")
    await page.click(selector)
    return await policy_status(page, prefix)


@pytest.mark.promise("H4-52")
async def test_the_options_page_turns_capture_on_with_a_tap_and_off_for_free(
    browser: ThrowawayBrowser, site: str
) -> None:
    """The person's switch: on lands in the signed policy only with a tap; off needs none (the
    authenticator is gone) and the agent's next call finds nothing recorded."""
    gate = provision_for_pairing(browser, [site])
    assert gate.current().policy.console_capture is False

    async with paired_options_page(browser) as paired:
        page, agent = paired.page, paired.agent
        await page.wait_for_function(
            "() => (document.getElementById('enrolled')?.textContent || '').startsWith('yes')",
            timeout=60_000,
        )
        assert await page.is_disabled("#console-capture-off")  # already off
        assert await _act(page, "#console-capture-on", "done") == "done: policy.widen"
        assert gate.current().policy.console_capture is True
        tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
        await ok(agent, "page_click", {"tabId": tab, "selector": "#err"})
        await _until(agent, "page_console", {"tabId": tab}, lambda o: "slow save" in _texts(o))
        await paired.cdp.send(
            "WebAuthn.removeVirtualAuthenticator", {"authenticatorId": paired.authenticator}
        )
        assert await _act(page, "#console-capture-off", "done") == "done: policy_restrict"
        assert gate.current().policy.console_capture is False
        off = await ok(agent, "page_console", {"tabId": tab})
        assert off["enabled"] is False and off["entries"] == []
