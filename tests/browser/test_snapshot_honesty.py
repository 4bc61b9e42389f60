"""page_snapshot says what it shortened and reads what it is pointed at, in real Chromium through
the real chain: a name or value cut at 200 characters ends in "…" and its row says so
(`shortened: {field: {chars, readWith}}`), and the tool it names returns the whole value; a link
row carries its resolved absolute `href`, masked as a URL (a secret-named, OAuth `code` or
token-like query value never comes back); and a text-only frame (paragraphs, no controls), on the
top page's origin or another, is read by page_snapshot, page_text, page_markdown and page_scrape
with `frame`: its own text, nothing of the top page's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import Request, launched, ok, served_pages, trust_this_process
from tests.deadline import until

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

LONG_NAME = "Read the whole story " + "of the long link " * 20  # > 200 chars
LONG_VALUE = "draft line " * 60  # > 200 chars
#: Query values that must never come back: secret-named, an OAuth code, a token-like value.
TOKEN = "tok-9f8e7d6c5b4a-secret"
OAUTH_CODE = "oauthcode-5e4d3c2b1a"
TOKEN_LIKE = "a1B2c3D4e5F6g7H8i9J0k1L2"
#: The frames' own words and the top page's.
TOP_WORDS = "Top page words"
FRAME_WORDS = {"same": "Plain words of the same-origin frame", "cross": "Plain words far away"}


def _top(port: int) -> str:
    return (
        "<!doctype html><html><head><title>honesty</title></head><body>"
        f"<p>{TOP_WORDS}</p>"
        f"<a id=long href='/story'>{LONG_NAME}</a>"
        "<a id=guide href='docs/guide?x=1'>Guide</a>"
        f"<a id=leaky href='/out?token={TOKEN}&amp;code={OAUTH_CODE}&amp;u={TOKEN_LIKE}"
        "&amp;next=%2Fhome'>Continue</a>"
        f"<textarea id=draft aria-label=Draft>{LONG_VALUE}</textarea>"
        "<iframe id=same src='/plain?who=same' width=400 height=120></iframe>"
        f"<iframe id=cross src='http://localhost:{port}/plain?who=cross' width=400 height=120>"
        "</iframe></body></html>"
    )


def _plain(who: str) -> str:
    return (
        f"<!doctype html><html><head><title>plain {who}</title></head><body>"
        f"<p>{FRAME_WORDS.get(who, '?')}</p><p>A second paragraph, and nothing to click.</p>"
        "</body></html>"
    )


def _page(request: Request) -> str:
    if request.path == "/plain":
        return _plain(request.query("who", "?"))
    return _top(request.port or 80)


@pytest.fixture
def port() -> Iterator[int]:
    with served_pages(hook=_page) as served:
        yield served.port


def _row(snapshot: dict[str, Any], tag: str, name_start: str) -> dict[str, Any]:
    rows = [r for r in snapshot["snapshot"] if r["tag"] == tag and r["name"].startswith(name_start)]
    assert len(rows) == 1, (tag, name_start, snapshot)
    found: dict[str, Any] = rows[0]
    return found


@pytest.mark.parametrize("mode", ["dom", "auto"])
async def test_a_shortened_name_or_value_says_so_and_the_tool_it_names_reads_it_whole(
    browser: ThrowawayBrowser, port: int, mode: str
) -> None:
    a = f"http://127.0.0.1:{port}"
    trust_this_process(browser, [a, f"http://localhost:{port}"])
    async with launched(browser) as (_, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
        snap = await ok(agent, "page_snapshot", {"format": "json", "tabId": tab, "mode": mode})

        link = _row(snap, "a", "Read the whole story")
        whole_name = " ".join(LONG_NAME.split())
        assert link["name"].endswith("…") and len(link["name"]) <= 200, link
        assert link["shortened"]["name"] == {"chars": len(whole_name), "readWith": "page_text"}
        read = await ok(agent, "page_text", {"tabId": tab, "ref": link["ref"]})
        assert read["text"].strip() == whole_name

        draft = _row(snap, "textarea", "Draft")
        assert draft["value"].endswith("…") and len(draft["value"]) <= 200, draft
        assert draft["shortened"]["value"] == {
            "chars": len(LONG_VALUE),
            "readWith": "page_get_state",
        }
        state = await ok(agent, "page_get_state", {"tabId": tab, "ref": draft["ref"]})
        assert state["value"] == LONG_VALUE and "shortened" not in state

        short = _row(snap, "a", "Guide")
        assert "shortened" not in short


@pytest.mark.parametrize("mode", ["dom", "auto"])
@pytest.mark.promise("H4-70")
async def test_link_rows_carry_their_absolute_href_with_secret_query_values_masked(
    browser: ThrowawayBrowser, port: int, mode: str
) -> None:
    a = f"http://127.0.0.1:{port}"
    trust_this_process(browser, [a, f"http://localhost:{port}"])
    async with launched(browser) as (_, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
        snap = await ok(agent, "page_snapshot", {"format": "json", "tabId": tab, "mode": mode})

        assert _row(snap, "a", "Guide")["href"] == f"{a}/docs/guide?x=1"
        assert _row(snap, "a", "Read the whole story")["href"] == f"{a}/story"
        leaky = _row(snap, "a", "Continue")["href"]
        assert leaky.startswith(f"{a}/out?token=[masked"), leaky
        assert "code=[masked" in leaky and "u=[masked" in leaky and "next=%2Fhome" in leaky, leaky
        whole = json.dumps(snap)
        for secret in (TOKEN, OAUTH_CODE, TOKEN_LIKE):
            assert secret not in whole


@pytest.mark.promise("H4-35")
@pytest.mark.parametrize("who", ["same", "cross"])
async def test_a_text_only_frame_is_read_by_snapshot_text_and_markdown(
    browser: ThrowawayBrowser, port: int, who: str
) -> None:
    a, b = f"http://127.0.0.1:{port}", f"http://localhost:{port}"
    trust_this_process(browser, [a, b])
    async with launched(browser) as (_, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
        words = FRAME_WORDS[who]

        async def frame_id() -> int | None:
            frames = (await ok(agent, "page_frames", {"tabId": tab}))["frames"]
            found = [f["frameId"] for f in frames[1:] if f"who={who}" in (f["url"] or "")]
            return found[0] if found else None

        frame = await until(f"the {who} frame is listed", frame_id)

        async def text_read() -> dict[str, Any] | None:
            got: dict[str, Any] = await ok(agent, "page_text", {"tabId": tab, "frame": frame})
            return got if words in got["text"] else None

        text = await until(f"the {who} frame has its text", text_read)
        assert TOP_WORDS not in text["text"]
        assert text["url"].startswith(a if who == "same" else b)

        for mode in ("auto", "dom", "a11y"):
            snap = await ok(
                agent,
                "page_snapshot",
                {"format": "json", "tabId": tab, "frame": frame, "mode": mode},
            )
            assert snap["snapshot"] == [], (mode, snap)
            assert words in snap["text"] and TOP_WORDS not in snap["text"], (mode, snap)
            assert "no elements to reference" in snap["note"], snap

        md = await ok(agent, "page_markdown", {"tabId": tab, "frame": frame})
        assert words in md["text"] and TOP_WORDS not in md["text"]

        scraped = await ok(agent, "page_scrape", {"tabId": tab, "frame": frame, "selector": "p"})
        texts = [item["text"] for item in scraped["items"]]
        assert words in texts and TOP_WORDS not in texts, texts

        top = await ok(agent, "page_snapshot", {"format": "json", "tabId": tab})
        assert "text" not in top and "note" not in top
