"""Frames, the rest, in real Chromium through the real chain: trusted input
(page_mouse, page_hover), page_upload, the accessibility snapshot and page_find, each inside a
same-origin iframe and inside a cross-origin one (127.0.0.1 embeds localhost: another site, so
Chrome runs it out of process). The frames sit below a scrolled-away spacer, with borders and
padding, so the point in the frame has to be placed in the tab's viewport; each page's own
counters prove what was clicked. The edges: an element of the enclosing page over the frame is
reported covered and never clicked, a ref from another frame or an earlier document of the same
frame is refused, a frame the tab does not have is a clear error, and (the attacker's case) an
approved page cannot lend its approval to an embedded site for any of these tools: denied, the
frame's counters, hover state and file field are untouched."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    Request,
    confirm_page,
    keep_dialogs_open,
    launched,
    ok,
    press,
    served_pages,
    shows,
    trust_this_process,
    widen,
)
from tests.deadline import until
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

#: What each iframe element looks like (its content box is what the frame's viewport starts at).
FRAME_STYLE = "border:9px solid #333;padding:6px;margin-left:37px"


def _top(port: int) -> bytes:
    def framed(who: str, src: str) -> str:
        # An overlay of the top page over the bottom of each frame: the frame's #low is under it.
        return (
            f"<div style='position:relative;width:530px'>"
            f"<iframe id={who} name={who}f src='{src}' width=500 height=300"
            f" style='{FRAME_STYLE}'></iframe>"
            f"<div id=over-{who} style='position:absolute;left:0;right:0;bottom:0;height:70px'>"
            "</div></div>"
        )

    return (
        "<!doctype html><html><head><title>top</title></head><body>"
        "<p id=out>top untouched</p>"
        + framed("same", "/inner?who=same")
        + "<div style='height:1500px'>spacer</div>"
        + framed("cross", f"http://localhost:{port}/inner?who=cross")
        + "</body></html>"
    ).encode()


def _inner(who: str) -> bytes:
    return (
        "<!doctype html><html><head><title>inner</title><style>"
        "#menu .items { display: none; } #menu:hover .items { display: block; }"
        "#low { position: absolute; top: 255px; left: 10px; }"
        "#ask { position: absolute; top: 10px; left: 300px; }"
        "</style></head><body>"
        f"<button type=button id=trusted>Trusted {who}</button>"
        "<p id=out>none</p><p id=count>0</p>"
        f"<div id=menu>Menu {who}<div class=items><span id=item>Settings {who}</span></div></div>"
        f"<input type=file id=file aria-label='File {who}'><p id=got>no file</p>"
        f"<button type=button id=low>Low {who}</button><p id=lowcount>0</p>"
        "<button type=button id=ask onclick=\"document.getElementById('asked').textContent ="
        " confirm('Frame asks') ? 'yes' : 'no'\">Ask</button><p id=asked>not asked</p>"
        "<script>"
        "let n = 0, low = 0;"
        "document.getElementById('trusted').addEventListener('click', (e) => {"
        "  document.getElementById('out').textContent = e.isTrusted ? 'trusted' : 'untrusted';"
        "  document.getElementById('count').textContent = String(++n); });"
        "document.getElementById('low').addEventListener('click', () => {"
        "  document.getElementById('lowcount').textContent = String(++low); });"
        "document.getElementById('file').addEventListener('change', (e) => {"
        "  const f = e.target.files[0];"
        "  document.getElementById('got').textContent = f.name + ':' + f.size; });"
        "</script></body></html>"
    ).encode()


def _nested_top(port: int) -> bytes:
    """127.0.0.1 embeds localhost, which embeds localhost again and 127.0.0.1 again."""
    return (
        "<!doctype html><html><head><title>nested</title></head><body><p>nested top</p>"
        f"<iframe id=mid src='http://localhost:{port}/nest' width=700 height=500"
        f" style='{FRAME_STYLE}'></iframe></body></html>"
    ).encode()


def _nest(port: int) -> bytes:
    return (
        "<!doctype html><html><head><title>nest</title></head><body style='margin:20px'>"
        f"<iframe src='/inner?who=deep-cross' width=300 height=300 style='{FRAME_STYLE}'></iframe>"
        f"<iframe src='http://127.0.0.1:{port}/inner?who=deep-back' width=300 height=300"
        f" style='{FRAME_STYLE}'></iframe></body></html>"
    ).encode()


def _transformed(port: int) -> bytes:
    """The inner page in iframes drawn rotated and scaled (cross-origin, so out of process) and
    zoomed (same-origin). Not here: zoom on an out-of-process frame, where Chromium 156 does not
    deliver input at a point drawn outside the frame's unzoomed box
    (docs/platform-facts-a11y.md)."""
    bent = "transform:rotate(4deg) scale(0.6);transform-origin:30px 40px"
    return (
        "<!doctype html><html><head><title>transformed</title></head><body>"
        f"<iframe id=bent src='http://localhost:{port}/inner?who=bent' width=500 height=300"
        f" style='{FRAME_STYLE};{bent}'></iframe>"
        f"<iframe id=zoomed src='/inner?who=zoomed' width=400 height=300"
        f" style='{FRAME_STYLE};zoom:1.5'></iframe>"
        "</body></html>"
    ).encode()


def _page(request: Request) -> bytes:
    port = request.port or 80
    if request.path == "/inner":
        return _inner(request.query("who", "?"))
    if request.path == "/nested":
        return _nested_top(port)
    if request.path == "/nest":
        return _nest(port)
    if request.path == "/transformed":
        return _transformed(port)
    return _top(port)


@pytest.fixture
def site_port() -> Iterator[int]:
    with served_pages(hook=_page) as served:
        yield served.port


async def loaded_frames(agent: Any, tab: int) -> dict[str, int]:
    """The frameIds of the two iframes once both have committed /inner (by origin)."""

    async def both_committed() -> dict[str, int] | None:
        frames = (await ok(agent, "page_frames", {"tabId": tab}))["frames"]
        subs = [f for f in frames if f["frameId"] != 0]
        if len(subs) == 2 and all(f["url"] is None or "/inner" in f["url"] for f in subs):
            by = {f["origin"].split(":")[1].strip("/"): f["frameId"] for f in subs}
            if set(by) == {"127.0.0.1", "localhost"}:
                return {"same": by["127.0.0.1"], "cross": by["localhost"]}
        return None

    found: dict[str, int] = await until("both iframes committed /inner", both_committed)
    return found


async def state(agent: Any, tab: int, frame: int, selector: str) -> dict[str, Any]:
    return await ok(agent, "page_get_state", {"tabId": tab, "frame": frame, "selector": selector})


async def refused(agent: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await agent.call_tool(tool, args)
    error = tool_error(result)
    assert error is not None, (tool, args, result.structured_content)
    return {**error, "text": " ".join(getattr(c, "text", "") for c in result.content)}


def _sandbox(browser: ThrowawayBrowser) -> None:
    sandbox = browser.root / "config" / "uploads"
    sandbox.mkdir(mode=0o700)
    (sandbox / "report.txt").write_bytes(b"quarterly numbers\n")


@pytest.mark.promise("H4-37", "H4-38")
async def test_trusted_input_upload_and_a11y_in_same_and_cross_origin_frames(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    a, b = f"http://127.0.0.1:{site_port}", f"http://localhost:{site_port}"
    trust_this_process(browser, [a, b])
    _sandbox(browser)
    widen(browser, upload=True)

    async with launched(browser) as (context, agent):
        keep_dialogs_open(context)
        tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
        frames = await loaded_frames(agent, tab)
        refs: dict[str, str] = {}
        for who, frame in frames.items():
            at = {"tabId": tab, "frame": frame}
            # A compact accessibility snapshot of the frame: its own controls only.
            snap = await ok(
                agent, "page_snapshot", {"format": "json", **at, "mode": "a11y", "compact": True}
            )
            assert snap["mode"] == "a11y" and snap.get("fallback") is None, snap
            names = [i["name"] for i in snap["snapshot"]]
            assert f"Trusted {who}" in names and f"Low {who}" in names, names
            assert not any(n.startswith(("Menu", "Settings", "none")) for n in names), names
            assert "top untouched" not in json.dumps(snap)
            # page_find in the frame; its ref drives a trusted click there.
            found = await ok(agent, "page_find", {**at, "role": "button", "name": "trusted"})
            assert found["matches"][0]["name"] == f"Trusted {who}", found
            refs[who] = found["matches"][0]["ref"]
            clicked = await ok(agent, "page_mouse", {**at, "ref": refs[who]})
            assert clicked["clicked"] is True and clicked["covered"] is False, clicked
            assert f"Trusted {who}" in clicked["hitTarget"]

            # The click is handed to the frame's own process: its handler may run just after.
            async def outcome(where: Any = frame) -> str | None:
                text = (await state(agent, tab, where, "#out"))["text"]
                return None if text == "none" else str(text)

            assert await until("the frame's handler saw the click", outcome) == "trusted"
            assert (await state(agent, tab, frame, "#count"))["text"] == "1"
            # The answered point is the tab's viewport: past the iframe's border and padding.
            assert clicked["x"] > 37 + 9 + 6 and clicked["y"] > 9 + 6, clicked
            # The real pointer over the frame's :hover menu opens it.
            assert (await state(agent, tab, frame, "#item"))["visible"] is False
            hovered = await ok(agent, "page_hover", {**at, "text": f"Menu {who}"})
            assert hovered["hovered"] is True and hovered["covered"] is False, hovered
            assert (await state(agent, tab, frame, "#item"))["visible"] is True
            # The top page's overlay over the frame's bottom: covered, not clicked, even forced.
            for force in (False, True):
                low = await ok(agent, "page_mouse", {**at, "selector": "#low", "force": force})
                assert low["clicked"] is False and low["covered"] is True, low
                assert "enclosing page" in low["hitTarget"] and low.get("hitRef") is None, low
            assert (await state(agent, tab, frame, "#lowcount"))["text"] == "0"
            # A file into the frame's own file input, confirmed showing the path and origin.
            uploading = asyncio.create_task(
                agent.call_tool(
                    "page_upload", {**at, "selector": "#file", "path": "report.txt"}
                )  # fmt: skip
            )
            window = await confirm_page(context)
            await shows(window, "report.txt")
            await shows(window, a if who == "same" else b)
            await press(window, "#allow")
            result = await uploading
            assert not result.is_error, result.content
            assert (await state(agent, tab, frame, "#got"))["text"] == "report.txt:18"

        # A ref from the other frame is not this frame's: refused, nothing clicked.
        wrong = await refused(agent, "page_mouse", {"tabId": tab, "frame": frames["cross"],
                                                    "ref": refs["same"]})  # fmt: skip
        assert wrong["code"] == "bad_ref", wrong
        # A ref from an earlier document of the same frame: refused after the frame reloads.
        page_of = next(p for p in context.pages if p.url == f"{a}/")
        inner = next(f for f in page_of.frames if f.url.startswith(f"{a}/inner"))
        await inner.evaluate("location.reload()")

        async def reloaded() -> bool:  # the frame's new document (its counter starts again)
            again = await agent.call_tool("page_get_state", {"tabId": tab, "frame": frames[
                "same"], "selector": "#count"})  # fmt: skip
            return not again.is_error and again.structured_content["text"] == "0"

        await until("the reloaded frame answers", reloaded)
        stale = await refused(agent, "page_mouse", {"tabId": tab, "frame": frames["same"],
                                                    "ref": refs["same"]})  # fmt: skip
        assert stale["code"] == "bad_ref", stale
        for frame in frames.values():
            assert (await state(agent, tab, frame, "#lowcount"))["text"] == "0"
        assert (await state(agent, tab, frames["same"], "#count"))["text"] == "0"
        assert (await state(agent, tab, frames["cross"], "#count"))["text"] == "1"
        # A frame the tab does not have.
        for tool in ("page_mouse", "page_hover", "page_find"):
            args = {"role": "button"} if tool == "page_find" else {"selector": "#trusted"}
            missing = await refused(agent, tool, {"tabId": tab, "frame": 987654, **args})
            assert missing["code"] == "element_not_found", missing
            assert "page_frames" in missing["text"]
        # A dialog the out-of-process frame opens is still the tab's (its child session,
        # attached for the calls above, does not take it): reported, then answered.
        asked = await refused(agent, "page_click", {"tabId": tab, "frame": frames["cross"],
                                                    "selector": "#ask"})  # fmt: skip
        assert asked["code"] == "dialog_open", asked
        answered = await ok(agent, "page_dialog", {"tabId": tab, "action": "dismiss"})
        assert answered["handled"] is True and answered["type"] == "confirm", answered
        assert (await state(agent, tab, frames["cross"], "#asked"))["text"] == "no"
        # None of it reached the top document.
        top = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#out"})
        assert top["text"] == "top untouched"


@pytest.mark.promise("H4-35", "H4-38")
async def test_an_approved_page_cannot_lend_its_approval_for_trusted_input_or_upload(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    a, b = f"http://127.0.0.1:{site_port}", f"http://localhost:{site_port}"
    trust_this_process(browser, [a])
    _sandbox(browser)
    widen(browser, upload=True)

    async with launched(browser) as (context, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
        frames = await loaded_frames(agent, tab)
        cross = frames["cross"]
        for tool, args in (
            ("page_mouse", {"selector": "#trusted"}),
            ("page_hover", {"text": "Menu cross"}),
            ("page_upload", {"selector": "#file", "path": "report.txt"}),
            ("page_find", {"role": "button"}),
        ):
            attempt = asyncio.create_task(
                agent.call_tool(tool, {"tabId": tab, "frame": cross, **args})
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
            assert "Trusted cross" not in text and "Menu cross" not in text, text

        # Read outside the bridge: nothing was clicked, hovered or put into the file field.
        page_of = next(p for p in context.pages if p.url == f"{a}/")
        frame = next(f for f in page_of.frames if f.url.startswith(b))
        assert await frame.text_content("#count") == "0"
        assert await frame.text_content("#out") == "none"
        assert await frame.text_content("#got") == "no file"
        assert await frame.is_visible("#item") is False
        # The approved frame beside it still takes trusted input.
        clicked = await ok(agent, "page_mouse", {"tabId": tab, "frame": frames["same"],
                                                 "selector": "#trusted"})  # fmt: skip
        assert clicked["clicked"] is True
        same = next(f for f in page_of.frames if f.url.startswith(f"{a}/inner"))
        assert await same.text_content("#out") == "trusted"


@pytest.mark.promise("H4-38")
async def test_trusted_clicks_and_a11y_in_frames_nested_in_a_cross_origin_frame(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    """127.0.0.1 embeds localhost (out of process), which embeds localhost (same process as it)
    and 127.0.0.1 (back in the top's process, under an out-of-process parent)."""
    a, b = f"http://127.0.0.1:{site_port}", f"http://localhost:{site_port}"
    trust_this_process(browser, [a, b])

    async with launched(browser) as (_, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a}/nested"}))["tab"]["id"]
        deadline = asyncio.get_running_loop().time() + 30
        while True:
            frames = (await ok(agent, "page_frames", {"tabId": tab}))["frames"]
            deep = {
                f["url"].split("who=")[1]: f["frameId"]
                for f in frames
                if f["url"] is not None and "who=deep" in f["url"]
            }
            if set(deep) == {"deep-cross", "deep-back"}:
                break
            assert asyncio.get_running_loop().time() < deadline, frames
            await asyncio.sleep(0.1)
        for who, frame in deep.items():
            at = {"tabId": tab, "frame": frame}
            snap = await ok(
                agent, "page_snapshot", {"format": "json", **at, "mode": "a11y", "compact": True}
            )
            assert snap["mode"] == "a11y", snap
            assert f"Trusted {who}" in [i["name"] for i in snap["snapshot"]], snap
            clicked = await ok(agent, "page_mouse", {**at, "selector": "#trusted"})
            assert clicked["clicked"] is True and clicked["covered"] is False, clicked
            assert (await state(agent, tab, frame, "#out"))["text"] == "trusted", who
            assert (await state(agent, tab, frame, "#count"))["text"] == "1", who


@pytest.mark.promise("H4-38")
async def test_trusted_clicks_land_in_frames_drawn_transformed_or_zoomed(
    browser: ThrowawayBrowser, site_port: int
) -> None:
    """A point in a frame is mapped through its iframe element's box as Chrome draws it: a
    rotated and scaled out-of-process frame and a zoomed same-origin one each count exactly the
    clicks aimed at them (adding the content box's corner, as before, misses their low button)."""
    a, b = f"http://127.0.0.1:{site_port}", f"http://localhost:{site_port}"
    trust_this_process(browser, [a, b])

    async with launched(browser) as (context, agent):
        keep_dialogs_open(context)
        tab = (await ok(agent, "tab_open", {"url": f"{a}/transformed"}))["tab"]["id"]
        frames = await loaded_frames(agent, tab)
        for frame in (frames["same"], frames["cross"]):
            at = {"tabId": tab, "frame": frame}
            for n in ("1", "2"):
                clicked = await ok(agent, "page_mouse", {**at, "selector": "#trusted"})
                assert clicked["clicked"] is True and clicked["covered"] is False, clicked
                assert (await state(agent, tab, frame, "#out"))["text"] == "trusted"
                assert (await state(agent, tab, frame, "#count"))["text"] == n
            low = await ok(agent, "page_mouse", {**at, "selector": "#low"})
            assert low["clicked"] is True, low
            assert (await state(agent, tab, frame, "#lowcount"))["text"] == "1", low
        # Nothing else was hit: each frame counted only its own clicks.
        for frame in (frames["same"], frames["cross"]):
            assert (await state(agent, tab, frame, "#count"))["text"] == "2"
