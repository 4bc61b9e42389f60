"""page_fetch through the real chain in real headless Chromium: refused by default with no
request reaching the site; once the signed policy enables it, every call waits in the confirm
window showing the method and URL — denied, nothing is sent; allowed, the page's own cookie goes
with it and the answer comes back masked; saveAs writes the raw body into the download sandbox.
The site logs every request it receives, so "nothing was sent" is the server's word."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    Answer,
    Reply,
    Request,
    ServedSite,
    confirm_page,
    launched,
    ok,
    press,
    served_pages,
    shows,
    shows_card,
    trust_this_process,
    widen,
)
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

SESSION = "sid-7c1e0b5a9d"
DATA = b'{"items": [1, 2, 3], "card": "4111 1111 1111 1111"}'


def _created(request: Request) -> Reply | None:
    if request.method != "POST":
        return None
    return Reply(b'{"created": true}', "application/json", 201)


@pytest.fixture
def logged_site() -> Iterator[ServedSite]:
    """A site that sets a session cookie on its page; every request is recorded."""
    pages: dict[str, Answer] = {
        "/": Reply(
            b"<!doctype html><title>app</title><p>app</p>",
            "text/html",
            headers={"Set-Cookie": f"sid={SESSION}; Path=/; HttpOnly"},
        ),
        "/api/data": (DATA, "application/json"),
    }
    fallback = Reply(b"no", "text/plain", 404)
    with served_pages(pages, fallback=fallback, hook=_created, methods=("GET", "POST")) as served:
        yield served


def _api_requests(site: ServedSite) -> list[dict[str, Any]]:
    """The requests to /api, as the page sent them."""
    return [
        {
            "method": r.method,
            "path": r.target,
            "cookie": r.headers.get("cookie"),
            "body": r.body.decode(errors="replace"),
        }
        for r in site.requests()
        if r.target.startswith("/api")
    ]


async def test_page_fetch_refused_by_default_then_confirmed_every_call_with_the_page_cookie(
    browser: ThrowawayBrowser, logged_site: ServedSite
) -> None:
    site = logged_site.origin
    trust_this_process(browser, [site])

    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]

        # Off by default: the hint names the key and the command; the site hears nothing.
        refused = tool_error(
            await agent.call_tool("page_fetch", {"tabId": tab, "url": f"{site}/api/data"})
        )
        assert refused is not None and refused["code"] == "fetch_off", refused
        assert "tabwarden policy set pageFetch=true" in refused["hint"]
        assert _api_requests(logged_site) == []

        widen(browser, pageFetch=True)

        # Denied in the window, which showed the method and the URL: nothing is sent.
        posting = asyncio.create_task(
            agent.call_tool(
                "page_fetch",
                {"tabId": tab, "url": f"{site}/api/items", "method": "POST", "body": "n=1"},
            )
        )
        window = await confirm_page(context)
        await shows(window, f"POST {site}/api/items")
        await press(window, "#deny")
        assert (tool_error(await posting) or {}).get("code") == "confirm_denied"
        assert _api_requests(logged_site) == []

        # Allowed: sent with the page's own cookie; the answer is masked.
        getting = asyncio.create_task(
            agent.call_tool("page_fetch", {"tabId": tab, "url": f"{site}/api/data?x=1"})
        )
        window = await confirm_page(context)
        await shows(window, f"GET {site}/api/data?x=1")
        await press(window, "#allow")
        got = await getting
        assert not got.is_error, got.content
        answer = got.structured_content
        assert answer["status"] == 200 and answer["ok"] is True
        assert answer["contentType"] == "application/json"
        assert answer["bodyTruncated"] is False and answer["bytes"] == len(DATA)
        assert '"items": [1, 2, 3]' in answer["body"]
        assert "4111 1111 1111 1111" not in answer["body"]
        sent = _api_requests(logged_site)
        assert [(r["method"], r["path"]) for r in sent] == [("GET", "/api/data?x=1")]
        assert sent[0]["cookie"] == f"sid={SESSION}"

        # Every call asks again (no grace), and saveAs writes the raw body to the sandbox.
        saving = asyncio.create_task(
            agent.call_tool(
                "page_fetch", {"tabId": tab, "url": f"{site}/api/data", "saveAs": "data.json"}
            )
        )
        window = await confirm_page(context)
        await shows(window, "data.json")
        await press(window, "#allow")
        saved = await saving
        assert not saved.is_error, saved.content
        out = saved.structured_content
        assert "body" not in out and not shows_card(json.dumps(out))
        path = Path(out["savedTo"])
        assert path == browser.root / "config" / "downloads" / "data.json"
        assert path.read_bytes() == DATA
        assert os.stat(path).st_mode & 0o777 == 0o600
        assert len(_api_requests(logged_site)) == 2


@pytest.fixture
def other_site() -> Iterator[ServedSite]:
    """Another approved site: answers a POST without CORS headers."""
    with served_pages(methods=("GET", "POST"), fallback=Reply(b"done", "text/plain")) as other:
        yield other


@pytest.fixture
def dead_origin() -> str:
    """An origin on a port nobody listens on (it was bound, then closed)."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    probe.close()  # nobody listens there now
    return dead


@pytest.mark.promise("H4-51")
async def test_a_post_the_server_answered_without_cors_is_delivered_and_a_dead_port_is_not_sent(
    browser: ThrowawayBrowser, logged_site: ServedSite, other_site: ServedSite, dead_origin: str
) -> None:
    """The agent's POST from a page on one approved site to another approved site that answers
    without CORS headers: fetch() in the page rejects, but the server received it — the result
    says so (delivered, not to be repeated), never fetch_failed, and the server counted exactly
    one request. A POST to an approved port nobody listens on is fetch_failed: not sent."""
    site, other, dead = logged_site.origin, other_site, dead_origin
    trust_this_process(browser, [site, other.origin, dead])

    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
        widen(browser, pageFetch=True)

        async def post(url: str) -> Any:
            args = {"tabId": tab, "url": url, "method": "POST", "body": "amount=5"}
            sending = asyncio.create_task(agent.call_tool("page_fetch", args))
            window = await confirm_page(context)
            await shows(window, f"POST {url}")
            await press(window, "#allow")
            return await sending

        delivered = await post(f"{other.origin}/api/pay")
        assert tool_error(delivered) is None, delivered.content
        out = delivered.structured_content
        assert out["delivery"] == "sent_unreadable", out
        assert "Do not repeat this POST" in out["hint"]
        assert "body" not in out
        assert [(r.method, r.target) for r in other.requests()] == [("POST", "/api/pay")]

        lost = await post(f"{dead}/api/pay")
        refused = tool_error(lost)
        assert refused is not None and refused["code"] == "fetch_failed", lost.content
        assert "was not sent" in refused["message"], refused
