"""page_markdown and page_scrape on a real article page in real Chromium through the real chain:
the Markdown keeps the table (a GFM pipe table), emphasis, the quote, the code block
with its language, inline code, the image as ``![alt](absolute src)`` and links resolved against
the document's base URL; ``main: true`` answers the ``<main>`` element without the navigation,
the aside, or the page's header and footer. page_scrape answers address attributes absolute.
The attacker's case: the page's links and images carry credentials (userinfo, a session value,
a token-like value, an ``access_token`` fragment, a signed image URL) and a cross-site frame
holds words of its own; none of it comes back, in either tool or either mode."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from tests.browser.harness import Request, ok, served_pages
from tests.deadline import until

pytestmark = pytest.mark.browser

#: What the attacker's links and image carry: none of it may come back.
SECRETS = (
    "alice",
    "hunter2pw",
    "sess-value-5e1f",
    "a8f5f167f44f4964e6c998dee827110c",
    "frag7token9value",
    "Zm9vYmFyYmF6cXV4MDEyMzQ1",
    "cross-frame-words-7c2d",
)


def _article(port: int) -> bytes:
    evil = (
        f"http://alice:hunter2pw@localhost:{port}/cb?session=sess-value-5e1f&q=ok"
        "&t=a8f5f167f44f4964e6c998dee827110c#access_token=frag7token9value"
    )
    return (
        "<!doctype html><html><head><title>Release notes</title><base href='/docs/'></head><body>"
        "<header><a href='/'>Site home</a></header>"
        "<nav><ul><li><a href='/menu-a'>Menu A</a></li></ul></nav>"
        "<main><h1>Release notes</h1>"
        "<p>This is <strong>important</strong> and <em>subtle</em>, run <code>make all</code> "
        "then read the <a href='guide.html'>guide</a>.</p>"
        "<table><thead><tr><th>Item</th><th>Cost</th></tr></thead>"
        "<tbody><tr><td><a href='tea'>Tea</a></td><td><b>3</b></td></tr>"
        "<tr><td>Cake | slice</td><td>4</td></tr></tbody></table>"
        "<blockquote><p>Quoted wisdom,</p><p>twice.</p></blockquote>"
        "<pre><code class='language-python'>print('hi')\n</code></pre>"
        "<p><img src='img/cat.png' alt='A cat' width=10 height=10></p>"
        f"<p><a class=evil href='{evil}'>Sign in again</a> "
        f"<img class=evil src='http://localhost:{port}/px.gif?sig=Zm9vYmFyYmF6cXV4MDEyMzQ1&w=1'"
        " alt='tracker' width=1 height=1></p>"
        f"<iframe src='http://localhost:{port}/inner' width=200 height=100></iframe>"
        "</main>"
        "<aside>Sponsored sidebar</aside>"
        "<footer>Copyright footer</footer>"
        "</body></html>"
    ).encode()


def _page(request: Request) -> bytes | None:
    if request.path == "/inner":
        return b"<!doctype html><p>cross-frame-words-7c2d</p>"
    if request.path == "/article":
        return _article(request.port or 80)
    return None


@pytest.fixture(scope="module")
def origins(site_port: int) -> list[str]:
    return [f"http://127.0.0.1:{site_port}"]


@pytest.fixture(scope="module")
def site_port() -> Iterator[int]:
    with served_pages(hook=_page, fallback=b"<!doctype html><p>x</p>") as served:
        yield served.port


def _leaks(reply: Any) -> list[str]:
    dumped = json.dumps(reply)
    return [s for s in SECRETS if s in dumped]


@pytest.mark.promise("H4-75")
async def test_markdown_keeps_structure_main_mode_drops_site_chrome_and_nothing_secret_leaks(
    agent: Client, site_port: int
) -> None:
    a = f"http://127.0.0.1:{site_port}"

    tab = (await ok(agent, "tab_open", {"url": f"{a}/article"}))["tab"]["id"]

    async def read(main: bool) -> dict[str, Any] | None:
        md: dict[str, Any] = await ok(agent, "page_markdown", {"tabId": tab, "main": main})
        return md if "Sign in again" in md["text"] else None

    whole = await until("the article has loaded", lambda: read(False))
    text = whole["text"]
    assert "# Release notes" in text, text
    assert (
        "This is **important** and *subtle*, run `make all` then read the "
        f"[guide]({a}/docs/guide.html)." in text
    ), text
    assert (
        f"| Item | Cost |\n| --- | --- |\n| [Tea]({a}/docs/tea) | **3** |\n"
        "| Cake \\| slice | 4 |" in text
    ), text
    assert "> Quoted wisdom,\n>\n> twice." in text, text
    assert "```python\nprint('hi')\n```" in text, text
    assert f"![A cat]({a}/docs/img/cat.png)" in text, text
    for chrome in ("Site home", "Menu A", "Sponsored sidebar", "Copyright footer"):
        assert chrome in text, (chrome, text)
    # The attacker's link and image: there, with every credential masked by shape.
    assert f"[Sign in again](http://localhost:{site_port}/cb?session=[masked:" in text, text
    assert f"![tracker](http://localhost:{site_port}/px.gif?sig=[masked:" in text, text
    assert _leaks(whole) == [], _leaks(whole)

    main = await until("main mode reads", lambda: read(True))
    body = main["text"]
    assert body.startswith("# Release notes\n\nThis is **important**"), body
    assert "| Item | Cost |" in body and f"![A cat]({a}/docs/img/cat.png)" in body, body
    for chrome in ("Site home", "Menu A", "Sponsored sidebar", "Copyright footer"):
        assert chrome not in body, (chrome, body)
    assert main["url"] == f"{a}/article" and main["title"] == "Release notes", main
    assert _leaks(main) == [], _leaks(main)


@pytest.mark.promise("H4-75")
async def test_scrape_answers_absolute_addresses_masked_as_links_are(
    agent: Client, site_port: int
) -> None:
    a = f"http://127.0.0.1:{site_port}"

    tab = (await ok(agent, "tab_open", {"url": f"{a}/article"}))["tab"]["id"]

    async def links() -> list[dict[str, Any]] | None:
        got = await ok(agent, "page_scrape", {"tabId": tab, "selector": "a", "attrs": ["href"]})
        items: list[dict[str, Any]] = got["items"]
        return items if len(items) == 5 else None

    items = await until("the article's links are there", links)
    hrefs = {i["text"]: i["attrs"]["href"] for i in items}
    assert hrefs["Site home"] == f"{a}/" and hrefs["Menu A"] == f"{a}/menu-a", hrefs
    assert hrefs["guide"] == f"{a}/docs/guide.html" and hrefs["Tea"] == f"{a}/docs/tea", hrefs
    evil = hrefs["Sign in again"]
    assert evil.startswith(f"http://localhost:{site_port}/cb?session=[masked:"), evil
    assert "&q=ok&t=[masked: 32 chars, hex]#access_token=[masked:" in evil, evil

    imgs = await ok(
        agent, "page_scrape", {"tabId": tab, "selector": "img", "attrs": ["src", "alt"]}
    )
    srcs = [i["attrs"]["src"] for i in imgs["items"]]
    assert srcs[0] == f"{a}/docs/img/cat.png", srcs
    assert srcs[1].startswith(f"http://localhost:{site_port}/px.gif?sig=[masked:"), srcs
    for reply in (items, imgs):
        assert _leaks(reply) == [], _leaks(reply)
