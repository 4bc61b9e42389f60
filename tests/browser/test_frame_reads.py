"""The read tools read one frame when given `frame`, in real Chromium through the real chain:
page_text, page_markdown and page_scrape of a same-origin frame, of a cross-site
(out-of-process) one and of a `srcdoc` frame (which takes its creator's origin) each answer that
frame's own content, masked as the page's is, and nothing of the top page or another frame. The
attacker's case: an approved page embedding an unapproved site. Reading that frame goes to the
person as a navigation there would; denied, the call is refused, nothing of the frame comes
back and the policy is unchanged."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    Request,
    approved_origins,
    confirm_page,
    launched,
    ok,
    press,
    served_pages,
    shows,
    trust_this_process,
)
from tests.deadline import until
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

CARD = "4111 1111 1111 1111"
#: In the cross-site frame's text: it must never come back from a refused read.
SECRET = "cross-frame-words-7c2d"


def _top(port: int) -> bytes:
    return (
        "<!doctype html><html><head><title>top</title></head><body>"
        "<h1>Top heading</h1><p>Top words</p>"
        "<iframe id=same src='/inner?who=same' width=400 height=200></iframe>"
        f"<iframe id=cross src='http://localhost:{port}/inner?who=cross' width=400 height=200>"
        "</iframe>"
        "<iframe id=doc srcdoc='<p>Srcdoc words</p><p class=item>srcdoc item</p>'></iframe>"
        "</body></html>"
    ).encode()


def _inner(who: str) -> bytes:
    words = SECRET if who == "cross" else f"Words of {who}"
    return (
        f"<!doctype html><html><head><title>inner {who}</title></head><body>"
        f"<h2>Inner {who}</h2><p>{words}</p><p class=item>item {who}</p>"
        f"<p>Pay {CARD}</p><input type=password value='hunter2-in-frame'>"
        "</body></html>"
    ).encode()


def _page(request: Request) -> bytes:
    if request.path == "/inner":
        return _inner(request.query("who", "?"))
    return _top(request.port or 80)


@pytest.fixture
def site_port() -> Iterator[int]:
    with served_pages(hook=_page) as served:
        yield served.port


async def _frames(agent: Any, tab: int) -> dict[str, int]:
    """The frame ids by who they are (same, cross, doc), once all three have committed."""

    async def all_there() -> dict[str, int] | None:
        frames = (await ok(agent, "page_frames", {"tabId": tab}))["frames"]
        found: dict[str, int] = {}
        for f in frames[1:]:
            url = f["url"] or ""
            if "who=same" in url:
                found["same"] = f["frameId"]
            elif f["origin"].startswith("http://localhost"):
                found["cross"] = f["frameId"]
            elif url == "about:srcdoc":
                found["doc"] = f["frameId"]
        return found if len(found) == 3 else None

    return await until("the three frames have committed", all_there)


async def _text(agent: Any, tab: int, frame: int) -> str:
    """page_text of ``frame`` once its document has its text (a frame commits before it
    renders)."""

    async def read() -> str | None:
        text: str = (await ok(agent, "page_text", {"tabId": tab, "frame": frame}))["text"]
        return text if "item" in text else None

    return await until(f"frame {frame} has its text", read)


@pytest.mark.promise("H4-35")
async def test_each_read_tool_reads_the_frame_it_is_given_and_only_that_frame(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    a, b = f"http://127.0.0.1:{site_port}", f"http://localhost:{site_port}"
    trust_this_process(browser, [a, b])

    async with launched(browser) as (_, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
        frames = await _frames(agent, tab)
        own = {"same": "Words of same", "cross": SECRET, "doc": "Srcdoc words"}

        top = await ok(agent, "page_text", {"tabId": tab})
        assert "Top words" in top["text"] and not any(w in top["text"] for w in own.values())

        for who, frame in frames.items():
            others = [w for k, w in own.items() if k != who]
            text = await _text(agent, tab, frame)
            assert own[who] in text and "Top words" not in text, (who, text)
            assert not any(w in text for w in others), (who, text)

            md = await ok(agent, "page_markdown", {"tabId": tab, "frame": frame})
            assert own[who] in md["text"] and "Top heading" not in md["text"], (who, md)
            if who != "doc":
                assert f"## Inner {who}" in md["text"], md

            scraped = await ok(
                agent, "page_scrape", {"tabId": tab, "frame": frame, "selector": ".item"}
            )
            assert [i["text"] for i in scraped["items"]] == [
                "srcdoc item" if who == "doc" else f"item {who}"
            ], scraped

            # Masked as the page's own text is: the card number, never the password.
            for reply in (text, md, scraped):
                dumped = json.dumps(reply)
                assert CARD not in dumped and "hunter2" not in dumped, (who, dumped)

            # A slice past offset 0 continues the same frame's read.
            first = await ok(agent, "page_text", {"tabId": tab, "frame": frame, "maxChars": 5})
            assert first["nextOffset"] == 5, first
            rest = await ok(
                agent, "page_text", {"tabId": tab, "frame": frame, "offset": 5, "maxChars": 10_000}
            )
            assert first["text"] + rest["text"] == text, (who, first, rest)

        # A frame the tab does not have is a clear error, naming page_frames.
        for tool, extra in (("page_text", {}), ("page_markdown", {}),
                            ("page_scrape", {"selector": "p"})):  # fmt: skip
            missing = tool_error(
                await agent.call_tool(tool, {"tabId": tab, "frame": 987654, **extra})
            )
            assert missing is not None and missing["code"] == "element_not_found", missing
            assert "page_frames" in missing["message"], missing


@pytest.mark.promise("H4-35")
async def test_reading_an_unapproved_embedded_site_asks_the_person_and_denied_leaks_nothing(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    a = f"http://127.0.0.1:{site_port}"
    b = f"http://localhost:{site_port}"
    trust_this_process(browser, [a])

    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]

        async def cross_listed() -> int | None:
            frames = (await ok(agent, "page_frames", {"tabId": tab}))["frames"]
            return next((f["frameId"] for f in frames if f["origin"] == b), None)

        cross = await until("the cross-site frame is listed", cross_listed)
        for tool, extra in (("page_text", {}), ("page_markdown", {}),
                            ("page_scrape", {"selector": "p"})):  # fmt: skip
            attempt = asyncio.create_task(
                agent.call_tool(tool, {"tabId": tab, "frame": cross, **extra})
            )
            window = await confirm_page(context)
            await shows(window, b)
            await press(window, "#deny")
            result = await attempt
            error = tool_error(result)
            assert error is not None and error["code"] == "origin_not_approved", result
            text = json.dumps(result.structured_content) + " ".join(
                getattr(c, "text", "") for c in result.content
            )
            assert SECRET not in text and "Inner cross" not in text and "item cross" not in text
            assert approved_origins(browser) == (a,)
