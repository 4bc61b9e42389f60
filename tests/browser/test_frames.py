"""Frames, in real Chromium through the real chain: a top page on 127.0.0.1 embeds a
same-origin iframe and a cross-origin one on localhost (another site, so Chrome runs it out of
process). page_frames lists them; snapshot, fill and click work inside each with `frame`, and
redaction applies there; a ref is bound to its frame's document; a frame the tab does not have
is a clear error. The attacker's case: an approved page embedding an unapproved site. Listing
shows only that frame's origin (never its url's secret query), and asking inside it goes to the
person like a navigation there; denied, it is refused and nothing from the frame comes back."""

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

#: In the cross-origin frame's url: page_frames must never show it for an unapproved origin.
SECRET = "frame-token-5f1e"


def _top(port: int, cross: str) -> bytes:
    return (
        "<!doctype html><html><head><title>top</title></head><body>"
        "<input id=name aria-label='Top name'><p id=out>top untouched</p>"
        "<iframe id=same name=samef src='/inner?who=same' width=400 height=200></iframe>"
        f"<iframe id=cross name=crossf src='http://{cross}:{port}/inner?who=cross&token={SECRET}'"
        " width=400 height=200></iframe>"
        "</body></html>"
    ).encode()


def _inner(who: str) -> bytes:
    return (
        f"<!doctype html><html><head><title>inner {who}</title></head><body>"
        f"<input id=name aria-label='Name {who}'>"
        "<input id=pw type=password value='hunter2-in-frame' aria-label='Password'>"
        "<button type=button id=go onclick=\"document.getElementById('out').textContent="
        f"'clicked ' + document.getElementById('name').value\">Go {who}</button>"
        "<button type=button id=card>Pay 4111 1111 1111 1111</button>"
        f"<p id=out>inner {who} untouched</p></body></html>"
    ).encode()


def _page(request: Request) -> bytes:
    if request.path == "/inner":
        return _inner(request.query("who", "?"))
    return _top(request.port or 80, "localhost")


@pytest.fixture
def site_port() -> Iterator[int]:
    with served_pages(hook=_page) as served:
        yield served.port


async def refused(agent: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await agent.call_tool(tool, args)
    error = tool_error(result)
    assert error is not None, (tool, args, result.structured_content)
    return {**error, "text": " ".join(getattr(c, "text", "") for c in result.content)}


async def frames_of(agent: Any, tab: int, want: int) -> list[dict[str, Any]]:
    """page_frames once all `want` frames are there (subframes commit after the top load)."""

    async def all_there() -> list[dict[str, Any]] | None:
        frames: list[dict[str, Any]] = (await ok(agent, "page_frames", {"tabId": tab}))["frames"]
        # Each iframe starts as about:blank (its parent's origin) before /inner commits.
        loaded = all(f["url"] is None or "/inner" in f["url"] for f in frames[1:])
        if (
            len(frames) >= want
            and loaded
            and any(f["origin"].startswith("http://localhost") for f in frames)
        ):
            return frames
        return None

    found: list[dict[str, Any]] = await until(f"page_frames lists {want} loaded frames", all_there)
    return found


@pytest.mark.promise("H4-35", "H4-39")
async def test_frames_are_listed_and_acted_in_each_on_its_own(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    a, b = f"http://127.0.0.1:{site_port}", f"http://localhost:{site_port}"
    trust_this_process(browser, [a, b])

    async with launched(browser) as (_, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]

        frames = await frames_of(agent, tab, 3)
        assert len(frames) == 3, frames
        top, *subs = frames
        assert top["frameId"] == 0 and top["index"] == 0 and top["parentFrameId"] is None
        assert top["origin"] == a and top["url"] == f"{a}/" and top["approved"] is True
        same = next(f for f in subs if f["origin"] == a)
        cross = next(f for f in subs if f["origin"] == b)
        assert same["url"] == f"{a}/inner?who=same" and same["name"] == "samef"
        assert cross["url"].startswith(f"{b}/inner?who=cross") and cross["name"] == "crossf"
        assert same["parentFrameId"] == 0 and cross["parentFrameId"] == 0
        assert {same["index"], cross["index"]} == {1, 2}

        # The top frame's snapshot holds only its own elements.
        # (The accessibility tree lists the two iframe elements themselves, never their
        # content.)
        top_snap = await ok(agent, "page_snapshot", {"format": "json", "tabId": tab})
        rows = top_snap["snapshot"]
        assert [i["name"] for i in rows if i["role"] != "Iframe"] == ["Top name"], top_snap
        assert [i["tag"] for i in rows if i["role"] == "Iframe"] == ["iframe", "iframe"]

        refs: dict[str, str] = {}
        for who, frame in (("same", same["frameId"]), ("cross", cross["frameId"])):
            snap = await ok(
                agent, "page_snapshot", {"format": "json", "tabId": tab, "frame": frame}
            )
            assert snap["mode"].startswith("a11y"), snap  # the frame's accessibility tree
            assert snap["url"].startswith(f"{a if who == 'same' else b}/inner?who={who}")
            names = [i["name"] for i in snap["snapshot"]]
            assert f"Go {who}" in names and f"Name {who}" in names, names
            # Redaction inside the frame: the card number and the password never leave.
            dumped = json.dumps(snap)
            assert "4111 1111 1111 1111" not in dumped and "hunter2" not in dumped
            go = next(i["ref"] for i in snap["snapshot"] if i["name"] == f"Go {who}")
            refs[who] = go
            await ok(agent, "page_fill", {"tabId": tab, "frame": frame, "selector": "#name",
                                          "value": f"hello {who}"})  # fmt: skip
            clicked = await ok(agent, "page_click", {"tabId": tab, "frame": frame, "ref": go})
            assert clicked["clicked"] is True and clicked["navigated"] is False
            out = await ok(agent, "page_get_state", {"tabId": tab, "frame": frame,
                                                     "selector": "#out"})  # fmt: skip
            assert out["text"] == f"clicked hello {who}"
            pw = await ok(agent, "page_get_state", {"tabId": tab, "frame": frame,
                                                    "selector": "#pw"})  # fmt: skip
            assert "hunter2" not in json.dumps(pw)
            done = f"clicked hello {who}"
            waited = await ok(agent, "page_wait_for", {"tabId": tab, "frame": frame,
                                                       "text": done})  # fmt: skip
            assert waited["matched"] is True
        assert refs["same"] != refs["cross"]  # numbered tab-wide

        # Nothing of the frames' actions reached the top document.
        top_out = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#out"})
        assert top_out["text"] == "top untouched"
        top_name = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#name"})
        assert top_name.get("value", "") == ""

        # A ref is bound to its frame's document: with another frame, or the top, bad_ref.
        for frame in (cross["frameId"], None):
            args = {"tabId": tab, "ref": refs["same"]}
            if frame is not None:
                args["frame"] = frame
            wrong = await refused(agent, "page_click", args)
            assert wrong["code"] == "bad_ref", wrong
        for frame in (same["frameId"], cross["frameId"]):
            out = await ok(agent, "page_get_state", {"tabId": tab, "frame": frame,
                                                     "selector": "#out"})  # fmt: skip
            assert out["text"].startswith("clicked hello")  # nothing clicked again
        # The top frame's own ref still works in the top frame.
        top_ref = top_snap["snapshot"][0]["ref"]
        await ok(agent, "page_fill", {"tabId": tab, "ref": top_ref, "value": "top value"})

        # A frame the tab does not have; a malformed one; a viewport-point tool in a frame.
        missing = await refused(agent, "page_click", {"tabId": tab, "frame": 987654,
                                                       "selector": "#go"})  # fmt: skip
        assert missing["code"] == "element_not_found" and "page_frames" in missing["text"]
        # (A malformed frame never leaves the MCP server: its schema rejects it.)
        bad = await agent.call_tool("page_snapshot", {"tabId": tab, "frame": -1})
        assert bad.is_error and "greater than or equal to 0" in getattr(bad.content[0], "text", "")
        # Trusted input works in a frame too (tests/browser/test_frames_input.py has more).
        mouse = await ok(agent, "page_mouse", {"tabId": tab, "frame": same["frameId"],
                                               "selector": "#go"})  # fmt: skip
        assert mouse["clicked"] is True and mouse["covered"] is False, mouse


@pytest.mark.promise("H4-35")
async def test_an_approved_page_cannot_lend_its_approval_to_an_embedded_site(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    a, b = f"http://127.0.0.1:{site_port}", f"http://localhost:{site_port}"
    trust_this_process(browser, [a])

    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
        frames = await frames_of(agent, tab, 3)
        cross = next(f for f in frames if f["origin"] == b)
        same = next(f for f in frames if f["frameId"] != 0 and f["origin"] == a)
        # Listed by origin only: not its url (whose query holds a token), not its name.
        assert cross["approved"] is False and cross["url"] is None and cross["name"] is None
        listing = await agent.call_tool("page_frames", {"tabId": tab})
        assert SECRET not in json.dumps(listing.structured_content)
        assert SECRET not in " ".join(getattr(c, "text", "") for c in listing.content)

        # Asking inside the unapproved frame goes to the person, as a navigation there
        # would; denied, the call is refused and nothing from the frame comes back.
        for tool, args in (
            ("page_snapshot", {}),
            ("page_get_state", {"selector": "#out"}),
            ("page_fill", {"selector": "#name", "value": "stolen"}),
        ):
            attempt = asyncio.create_task(
                agent.call_tool(tool, {"tabId": tab, "frame": cross["frameId"], **args})
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
            assert "inner cross" not in text and "Go cross" not in text and SECRET not in text
            assert approved_origins(browser) == (a,)

        # The fill never ran: the person (through Playwright, outside the bridge) sees the
        # frame's field empty; the approved frame beside it still works.
        page_of = next(p for p in context.pages if p.url == f"{a}/")
        frame = next(f for f in page_of.frames if f.url.startswith(b))
        assert await frame.input_value("#name") == ""
        snap = await ok(
            agent, "page_snapshot", {"format": "json", "tabId": tab, "frame": same["frameId"]}
        )
        assert any(i["name"] == "Go same" for i in snap["snapshot"])
