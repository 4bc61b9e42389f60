"""page_network in real Chromium through the real chain, recorded from the owned tab's debugger
(CDP Network): a page's document, stylesheet, script, image, a fetch and a fetch to a port
nobody listens on are all listed, each with its type, status, timing, and the dead port's
`net::ERR_` text. The attacker's case: a token in the fetch's query and its Authorization header
(which really reached the server) appear nowhere in what the agent receives; a frame of an
unapproved site has its requests withheld (counted, its address never shown). The buffer keeps
the newest requests and says how many of the oldest it dropped; sinceId pages through what is
kept. Another session's tab is refused (`tab_not_owned`), nothing of it answered."""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest
from mcp import Client

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    Reply,
    ServedSite,
    code,
    extension_connected,
    mcp_client,
    ok,
    served_pages,
    widen,
)
from tests.deadline import until

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

QUERY_TOKEN = "NETQUERYSECRET3c4d5e6f7a8b"
WS_TOKEN = "NETWSSECRET0a1b2c3d4e5f"
AUTH = "NETAUTHSECRET9e8d7c6b5a"
FRAME_SECRET = "NETFRAMESECRET-never-shown"
#: The buffer's documented cap (extension/worker/capture.js NETWORK_RING, the catalogue's words).
RING = 500
PINGS = RING + 12

# The icon link keeps Chrome from asking for /favicon.ico.
APP = """<!doctype html><html><head><title>net</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/app.css"><script src="/app.js"></script></head><body>
<p id="state">ready</p><img src="/logo.png" alt="logo">
<button type="button" id="go">Fetch</button>
<button type="button" id="ws">Socket</button>
<iframe title="other" src="OTHER/frame"></iframe>
<script>
  const state = (t) => { document.getElementById('state').textContent = t; };
  document.getElementById('go').addEventListener('click', async () => {
    const r = await fetch('/api/data?page=2&access_token=QUERY_TOKEN',
      {headers: {'Authorization': 'Bearer AUTH'}});
    await r.text();
    const dead = await fetch('DEAD/nothing').then(() => 'answered', () => 'refused');
    state('fetched ' + r.status + ' ' + dead);
  });
  document.getElementById('ws').addEventListener('click', () => {
    const ws = new WebSocket('WS_URL/live?token=WS_TOKEN');
    ws.onopen = () => state('socket open');
  });
</script></body></html>"""

#: A page that requests nothing after its load but its pings.
PINGER = """<!doctype html><html><head><title>pings</title><link rel="icon" href="data:,">
</head><body><p id="state">ready</p><button type="button" id="many">Many</button><script>
  document.getElementById('many').addEventListener('click', async () => {
    for (let i = 0; i < PINGS; i++) await (await fetch('/ping?i=' + i)).text();
    document.getElementById('state').textContent = 'pinged';
  });
</script></body></html>"""

FRAME = f"""<!doctype html><title>frame</title><link rel="icon" href="data:,"><script>
  fetch('/frame-api?{FRAME_SECRET}').then((r) => r.text());
</script>"""

#: A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)
NO_STORE = {"Cache-Control": "no-store"}


@pytest.fixture
def dead_origin() -> str:
    """An origin on a port nobody listens on (it was bound, then closed)."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    probe.close()
    return dead


_WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


@pytest.fixture
def ws_origin() -> Iterator[str]:
    """A WebSocket server (the handshake only, then the socket is held open) on another port;
    its http: origin (the trust record approves it)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
            key = next(
                (
                    line.split(":", 1)[1].strip()
                    for line in data.decode("latin-1").split("\r\n")
                    if line.lower().startswith("sec-websocket-key:")
                ),
                "",
            )
            accept = base64.b64encode(hashlib.sha1((key + _WS_GUID).encode()).digest()).decode()  # noqa: S324 (the protocol's hash)
            conn.sendall(
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept.encode() + b"\r\n\r\n"
            )
            held.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()
        for conn in held:
            conn.close()
        thread.join(timeout=10)


@pytest.fixture
def origins(site: str, ws_origin: str) -> list[str]:
    return [site, ws_origin]


@pytest.fixture
def other() -> Iterator[str]:
    """A second origin the person never approved: the frame's."""
    pages = {
        "/frame": Reply(FRAME.encode(), "text/html", headers=NO_STORE),
        "/frame-api": Reply(b"frame data", "text/plain", headers=NO_STORE),
    }
    with served_pages(pages) as served:
        yield served.origin


@pytest.fixture
def served(other: str, dead_origin: str, ws_origin: str) -> Iterator[ServedSite]:
    app = (
        APP.replace("OTHER", other)
        .replace("WS_URL", "ws" + ws_origin.removeprefix("http"))
        .replace("WS_TOKEN", WS_TOKEN)
        .replace("DEAD", dead_origin)
        .replace("QUERY_TOKEN", QUERY_TOKEN)
        .replace("Bearer AUTH", f"Bearer {AUTH}")
    )
    pages = {
        "/": Reply(app.encode(), "text/html", headers=NO_STORE),
        "/app.css": Reply(b"p { color: teal; }", "text/css", headers=NO_STORE),
        "/app.js": Reply(b"window.loaded = true;", "text/javascript", headers=NO_STORE),
        "/logo.png": Reply(PNG, "image/png", headers=NO_STORE),
        "/api/data": Reply(b'{"ok": true}', "application/json", headers=NO_STORE),
        "/ping": Reply(b"pong", "text/plain", headers=NO_STORE),
        "/pings": Reply(PINGER.replace("PINGS", str(PINGS)).encode(), "text/html"),
    }
    with served_pages(pages) as site:
        yield site


@pytest.fixture
def site(served: ServedSite) -> str:
    return served.origin


def _everything(result: Any) -> str:
    """All a client receives of one result: its text content and its structured content."""
    texts = [getattr(c, "text", "") for c in result.content]
    return json.dumps(result.structured_content) + "".join(texts)


def _by_path(out: dict[str, Any], path: str) -> dict[str, Any] | None:
    return next((e for e in out["entries"] if urlparse(e["url"]).path == path), None)


async def _network_until(
    agent: Client, args: dict[str, Any], done: Any, what: str
) -> tuple[dict[str, Any], str]:
    """page_network until ``done`` holds of its answer; the answer and all the client got."""

    async def answered() -> tuple[dict[str, Any], str] | None:
        result = await agent.call_tool("page_network", args)
        assert not result.is_error, result.content
        out: dict[str, Any] = result.structured_content
        return (out, _everything(result)) if done(out) else None

    found: tuple[dict[str, Any], str] = await until(what, answered, interval_s=0.2)
    return found


@pytest.mark.promise("H4-52")
async def test_every_request_type_with_status_failure_and_timing_masked_and_frames_withheld(
    browser: ThrowawayBrowser, agent: Client, served: ServedSite, other: str, dead_origin: str
) -> None:
    site = served.origin
    tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
    widen(browser, networkCapture=True)
    assert (await ok(agent, "page_network", {"tabId": tab}))["enabled"] is True

    # The page loaded again with capture on: its document and subresources, then the fetches.
    await ok(agent, "page_reload", {"tabId": tab})
    await ok(agent, "page_click", {"tabId": tab, "selector": "#go"})
    wanted = ("/", "/app.css", "/app.js", "/logo.png", "/api/data", "/nothing")

    def loaded(out: dict[str, Any]) -> bool:
        return all(_by_path(out, p) is not None for p in wanted) and out["withheld"] >= 2

    out, seen = await _network_until(
        agent, {"tabId": tab, "limit": 200}, loaded, "the page's requests are listed"
    )
    kinds = {p: (_by_path(out, p) or {}).get("type") for p in wanted}
    assert kinds == {
        "/": "Document",
        "/app.css": "Stylesheet",
        "/app.js": "Script",
        "/logo.png": "Image",
        "/api/data": "Fetch",
        "/nothing": "Fetch",
    }, kinds
    for path in wanted[:-1]:
        entry = _by_path(out, path)
        assert entry is not None and entry["status"] == 200, entry
        assert entry["origin"] == site and "failed" not in entry, entry
        # Timing is there (its values are the machine's: never asserted).
        assert isinstance(entry["durationMs"], int) and entry["durationMs"] >= 0, entry
        assert isinstance(entry["ttfbMs"], int) and entry["ttfbMs"] >= 0, entry
        assert isinstance(entry["ts"], int) and entry["ts"] > 0, entry
    css, logo, script = (_by_path(out, p) or {} for p in ("/app.css", "/logo.png", "/app.js"))
    assert css["mimeType"] == "text/css" and logo["size"] == len(PNG), (css, logo)
    dead = _by_path(out, "/nothing")
    assert dead is not None and dead["status"] == 0, dead
    assert dead["failed"] == "net::ERR_CONNECTION_REFUSED", dead
    assert dead["url"] == f"{dead_origin}/nothing" and isinstance(dead["durationMs"], int)
    # Bodies are for XHR/fetch only: a script's or an image's never.
    assert "body" not in script and "bodyOmitted" not in script, script

    # The attacker's case: the token and the Authorization header really went to the server...
    sent = served.requests("/api/data")
    assert sent and sent[-1].query("access_token") == QUERY_TOKEN
    assert sent[-1].headers.get("authorization") == f"Bearer {AUTH}"
    # ...and appear nowhere in the answer, nor does the unapproved frame's address or secret.
    data = _by_path(out, "/api/data")
    assert data is not None and "access_token=[masked" in data["url"] and "page=2" in data["url"]
    for secret in (QUERY_TOKEN, AUTH, FRAME_SECRET, other):
        assert secret not in seen, secret
    assert "authorization" not in seen.lower()

    # Filters: types, failedOnly.
    scripts = await ok(agent, "page_network", {"tabId": tab, "types": ["Script", "Stylesheet"]})
    assert {e["type"] for e in scripts["entries"]} == {"Script", "Stylesheet"}, scripts
    failed = await ok(agent, "page_network", {"tabId": tab, "failedOnly": True})
    assert [urlparse(e["url"]).path for e in failed["entries"]] == ["/nothing"], failed

    # A WebSocket's handshake, to an approved site: listed with its 101, its token masked.
    await ok(agent, "page_click", {"tabId": tab, "selector": "#ws"})
    sockets, seen = await _network_until(
        agent, {"tabId": tab, "types": ["WebSocket"]}, lambda o: o["entries"], "the socket"
    )
    live = sockets["entries"][0]
    assert live["status"] == 101 and live["origin"] == site, live
    assert live["url"].startswith("ws://127.0.0.1:") and "token=[masked" in live["url"], live
    assert isinstance(live["durationMs"], int), live
    assert WS_TOKEN not in seen


@pytest.mark.promise("H4-52")
async def test_the_buffer_drops_the_oldest_and_says_so_and_another_sessions_tab_is_refused(
    browser: ThrowawayBrowser, agent: Client, site: str
) -> None:
    tab = (await ok(agent, "tab_open", {"url": f"{site}/pings"}))["tab"]["id"]
    widen(browser, networkCapture=True)
    await ok(agent, "page_network", {"tabId": tab, "clear": True})
    await ok(agent, "page_click", {"tabId": tab, "selector": "#many"})

    def pings(out: dict[str, Any]) -> int:
        shown = [e for e in out["entries"] if urlparse(e["url"]).path == "/ping"]
        return len(shown) + int(out["more"]) + int(out["dropped"])

    def all_pinged(out: dict[str, Any]) -> bool:
        last = out["entries"][-1]["url"] if out["entries"] else ""
        return last.endswith(f"?i={PINGS - 1}")

    out, _ = await _network_until(
        agent, {"tabId": tab, "types": ["Fetch"], "limit": 200}, all_pinged, "every ping listed"
    )
    # Only the pings were made since the clear: the newest RING kept, the oldest dropped.
    assert out["dropped"] == PINGS - RING, out["dropped"]
    assert len(out["entries"]) == 200 and out["more"] == RING - 200
    assert pings(out) == PINGS
    first = await ok(agent, "page_network", {"tabId": tab, "sinceId": 0, "limit": 2})
    assert [e["url"].split("?")[1] for e in first["entries"]] == [
        f"i={PINGS - RING}",
        f"i={PINGS - RING + 1}",
    ], first
    assert first["dropped"] == PINGS - RING and first["more"] == RING - 2
    after = await ok(
        agent, "page_network", {"tabId": tab, "sinceId": first["entries"][-1]["id"], "limit": 1}
    )
    assert after["entries"][0]["id"] > first["entries"][-1]["id"]
    assert after["entries"][0]["url"].endswith(f"?i={PINGS - RING + 2}")

    # Another session's tab: refused, nothing of it answered.
    async with mcp_client(browser) as other:
        await extension_connected(other)
        theirs = (await ok(other, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
        await ok(other, "page_click", {"tabId": theirs, "selector": "#go"})
        assert await code(agent, "page_network", {"tabId": theirs}) == "tab_not_owned"
        refused = await agent.call_tool("page_network", {"tabId": theirs})
        assert refused.is_error and "/api/data" not in _everything(refused)
        # Their owner reads it (it was recorded): the refusal was about ownership alone.
        await _network_until(
            other,
            {"tabId": theirs},
            lambda o: _by_path(o, "/api/data") is not None,
            "the owner sees its own tab's fetch",
        )
