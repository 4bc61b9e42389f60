"""Files out of a tab and the screen it is shown on, through the real chain in real
headless Chromium: page_pdf writes a PDF into the download sandbox (opened here: magic bytes, page
count, a landscape MediaBox), page_wait_download finds a download the page started copied into the
sandbox with the right bytes (a page naming it ``../../x`` stays inside), page_viewport's mobile
preset is read back by the page itself and reset restores it, and page_screenshot's jpeg / region /
maxWidth images have the sizes their own headers state; a capture too large to return answers
screenshot_too_large and the same tab's next call still works."""

from __future__ import annotations

import base64
import http.server
import os
import re
import socket
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.cli.demo import serve_http
from tests.browser.harness import code, launched, ok, trust_this_process
from tests.deadline import until
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

#: What the page's download serves: not text, so a mangled copy shows.
PAYLOAD = bytes(range(256)) * 64

DOC = b"""<!doctype html><html><head><title>report</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>section { height: 1200px; background: #fde; }</style></head><body>
<h1>Quarterly report</h1>
<p id="view">unknown</p>
<button id="get" type="button">Get the file</button>
<button id="broken" type="button">Get the broken file</button>
<section>one</section><section>two</section><section>three</section>
<script>
  const show = () => { document.getElementById('view').textContent =
    innerWidth + 'x' + innerHeight + '@' + devicePixelRatio +
    (matchMedia('(pointer: coarse)').matches ? ' coarse' : ' fine'); };
  addEventListener('resize', show); show();
  document.getElementById('get').addEventListener('click', () => {
    const a = document.createElement('a');
    a.href = '/files/payload.bin';
    a.download = '../../x';
    document.body.append(a);
    a.click();
  });
  document.getElementById('broken').addEventListener('click', () => {
    const a = document.createElement('a');
    a.href = '/files/broken.bin';
    a.download = 'broken.bin';
    document.body.append(a);
    a.click();
  });
</script></body></html>"""

#: A page whose full-page PNG cannot be small: random pixels, 2400 x 3200 (about 23 MB as PNG,
#: past the 24,000,000 base64 characters one reply may carry).
NOISE = b"""<!doctype html><html><head><title>noise</title>
<style>body { margin: 0 } canvas { display: block }</style></head><body>
<canvas id="c" width="2400" height="3200"></canvas>
<script>
  const c = document.getElementById('c'), g = c.getContext('2d');
  const img = g.createImageData(c.width, c.height);
  for (let i = 0; i < img.data.length; i += 65536) {
    crypto.getRandomValues(img.data.subarray(i, Math.min(i + 65536, img.data.length)));
  }
  for (let i = 3; i < img.data.length; i += 4) img.data[i] = 255;
  g.putImageData(img, 0, 0);
  // Ready once a frame holding the drawn canvas has been produced, not when the script returns.
  requestAnimationFrame(() => requestAnimationFrame(() => { document.title = 'noise ready'; }));
</script></body></html>"""


class _Files(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        pages = {"/": (DOC, "text/html"), "/noise": (NOISE, "text/html")}
        if self.path == "/files/broken.bin":  # promises more than it sends, then hangs up
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(10 * len(PAYLOAD)))
            self.end_headers()
            self.wfile.write(PAYLOAD)
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if self.path == "/files/payload.bin":
            body, kind = PAYLOAD, "application/octet-stream"
        elif self.path in pages:
            body, kind = pages[self.path]
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def files_site() -> Iterator[str]:
    with serve_http(_Files) as origin:
        yield origin


def _image_size(data: bytes) -> tuple[str, int, int]:
    """(kind, width, height) from a PNG's IHDR or a JPEG's start-of-frame: an oracle of its own,
    not the extension's worker/capture.js."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        width, height = struct.unpack(">II", data[16:24])
        return "png", width, height
    assert data[:2] == b"\xff\xd8", data[:4]
    at = 2
    while at < len(data):
        marker, length = data[at + 1], struct.unpack(">H", data[at + 2 : at + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return "jpeg", width, height
        at += 2 + length
    raise AssertionError("no JPEG frame header")


async def _shot(agent: object, args: dict[str, object]) -> tuple[str, int, int, dict[str, object]]:
    result = await agent.call_tool("page_screenshot", args)  # type: ignore[attr-defined]
    assert not result.is_error, result.content
    image = result.content[0]
    kind, width, height = _image_size(base64.b64decode(image.data))
    meta = result.structured_content
    assert (meta["width"], meta["height"]) == (width, height)
    assert meta["mimeType"] == image.mime_type == f"image/{kind}"
    return kind, width, height, meta


@pytest.mark.promise("H4-59", "H4-60")
async def test_pdf_download_viewport_and_screenshots(
    browser: ThrowawayBrowser, files_site: str
) -> None:
    config = browser.root / "config"
    trust_this_process(browser, [files_site])
    sandbox = config / "downloads"  # the default: <config>/downloads

    async with launched(browser) as (_, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{files_site}/"}))["tab"]["id"]

        # -- page_pdf: a real PDF in the sandbox, its bytes never in the result --------
        pdf = await ok(agent, "page_pdf", {"tabId": tab, "landscape": True, "name": "q3"})
        path = Path(pdf["path"])
        assert path.parent == sandbox.resolve() and path.name == "q3.pdf"
        assert set(pdf) == {"path", "size"}
        content = path.read_bytes()
        assert content[:5] == b"%PDF-" and len(content) == pdf["size"]
        pages = len(re.findall(rb"/Type\s*/Page(?![a-z])", content))
        assert pages >= 2, pages  # a 3,600 px page does not fit on one sheet
        width, height = (
            float(v)
            for v in re.search(
                rb"/MediaBox\s*\[\s*[\d.]+\s+[\d.]+\s+([\d.]+)\s+([\d.]+)", content
            ).groups()  # type: ignore[union-attr]
        )
        assert width > height  # landscape
        assert os.stat(path).st_mode & 0o777 == 0o600
        # Never overwritten: the same name again is a new file; a path in the name stays in.
        again = await ok(agent, "page_pdf", {"tabId": tab, "name": "q3"})
        assert Path(again["path"]).name == "q3 (1).pdf" and path.read_bytes() == content
        escaped = await ok(agent, "page_pdf", {"tabId": tab, "name": "../../escape"})
        assert Path(escaped["path"]).parent == sandbox.resolve()
        assert [p for p in browser.root.rglob("escape*") if p.parent != sandbox] == []

        # -- page_wait_download: the page's own download, copied into the sandbox ------
        assert await code(
            agent, "page_wait_download", {"tabId": tab, "filename": "x", "timeoutMs": 300}
        ) == "timeout"  # fmt: skip
        await ok(agent, "page_click", {"tabId": tab, "selector": "#get"})
        got = await ok(agent, "page_wait_download", {"tabId": tab, "timeoutMs": 30_000})
        assert got["state"] == "complete", got
        assert got["url"] == f"{files_site}/files/payload.bin"
        copy = Path(got["path"])
        assert copy.parent == sandbox.resolve(), copy  # "../../x" stayed inside
        assert ".." not in copy.name and copy.read_bytes() == PAYLOAD
        assert got["size"] == len(PAYLOAD)
        assert [p for p in browser.root.rglob("x") if p.is_file()] == []
        # A download the server cut short: failed, with Chrome's reason, nothing copied.
        in_box = set(sandbox.iterdir())
        await ok(agent, "page_click", {"tabId": tab, "selector": "#broken"})
        cut = await ok(agent, "page_wait_download", {"tabId": tab, "filename": "broken"})
        assert cut["state"] == "failed", cut
        assert cut["reason"] in {
            "SERVER_CONTENT_LENGTH_MISMATCH",
            "NETWORK_FAILED",
            "NETWORK_DISCONNECTED",
        }, cut
        assert "path" not in cut and set(sandbox.iterdir()) == in_box
        # Each finished download is answered once.
        assert await code(
            agent, "page_wait_download", {"tabId": tab, "timeoutMs": 300}
        ) == "timeout"  # fmt: skip

        # -- page_viewport: the mobile preset as the page itself sees it, then reset ---
        plain = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#view"})
        mobile = await ok(agent, "page_viewport", {"tabId": tab, "preset": "mobile"})
        assert mobile["emulating"]["deviceScaleFactor"] == 3
        seen = mobile["page"]
        assert (seen["innerWidth"], seen["devicePixelRatio"]) == (390, 3)
        assert seen["coarsePointer"] is True and seen["maxTouchPoints"] > 0
        shown = (await ok(agent, "page_get_state", {"tabId": tab, "selector": "#view"}))["text"]
        assert shown.startswith("390x") and shown.endswith("@3 coarse"), shown
        _, w, _, _ = await _shot(agent, {"tabId": tab})
        assert w == 390 * 3  # the capture is the emulated screen, in device pixels
        reset = await ok(agent, "page_viewport", {"tabId": tab, "reset": True})
        assert reset["emulating"] is None
        assert reset["page"]["devicePixelRatio"] == 1 and not reset["page"]["coarsePointer"]
        restored = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#view"})
        # The width, ratio and pointer the page had before. (Its height may differ here:
        # Playwright emulates its own 1280x720 viewport through another debugger session,
        # which ending ours does not re-apply; a person's window has no such second client.)
        before_w, after_w = plain["text"].split("x")[0], restored["text"].split("x")[0]
        assert after_w == before_w and restored["text"].endswith("@1 fine"), (plain, restored)

        # -- page_screenshot options ---------------------------------------------------
        vw, vh = reset["page"]["innerWidth"], reset["page"]["innerHeight"]
        kind, w, h, meta = await _shot(agent, {"tabId": tab, "format": "jpeg", "quality": 40})
        assert (kind, w, h) == ("jpeg", vw, vh)
        png_bytes = (await _shot(agent, {"tabId": tab}))[3]["bytes"]
        assert meta["bytes"] < png_bytes  # type: ignore[operator]
        region = {"x": 10, "y": 20, "width": 200, "height": 100}
        assert (await _shot(agent, {"tabId": tab, "region": region}))[:3] == ("png", 200, 100)
        kind, w, h, _ = await _shot(agent, {"tabId": tab, "maxWidth": 300})
        assert w == 300 and abs(h - round(vh * 300 / vw)) <= 1
        wide = {"x": 0, "y": 1000, "width": 400, "height": 200}
        both = await _shot(agent, {"tabId": tab, "region": wide, "maxWidth": 100, "format": "jpeg"})
        assert both[:3] == ("jpeg", 100, 50)
        assert await code(agent, "page_screenshot", {"tabId": tab, "quality": 50}) == (
            "bad_request"
        )

        # -- too large to return: a coded answer, and the port still works -------------
        noisy = (await ok(agent, "tab_open", {"url": f"{files_site}/noise"}))["tab"]["id"]
        # The noise is drawn by the page's own script: capture only once it says a frame
        # holding it was produced (a capture of the still-empty canvas compresses to almost
        # nothing).

        async def drawn() -> bool:
            tabs = (await ok(agent, "tab_list", {}))["tabs"]
            return any(t["id"] == noisy and t["title"] == "noise ready" for t in tabs)

        await until("the noise page drew", drawn)
        big = await agent.call_tool("page_screenshot", {"tabId": noisy, "fullPage": True})
        error = tool_error(big) or {}
        assert error.get("code") == "screenshot_too_large", big.content
        assert "maxWidth" in error["message"] and "region" in error["hint"]
        status = await ok(agent, "bridge_status", {})
        assert status["extensionConnected"] is True
        small = await _shot(
            agent, {"tabId": noisy, "fullPage": True, "maxWidth": 200, "format": "jpeg"}
        )
        assert small[:2] == ("jpeg", 200) and abs(small[2] - 267) <= 1
