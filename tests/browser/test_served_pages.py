"""The browser tests' local sites (harness.served_pages), over a real socket, no browser: pages by
path whatever the query, a fallback or a 404, a hook that answers first (and may wait), replies
with a status and headers, methods not served refused, and every request recorded as it came."""

from __future__ import annotations

import http.client
import threading
import time
from collections.abc import Mapping

from tests.browser.harness import HTML, Answer, Reply, Request, served_pages


def _fetch(
    port: int, path: str, method: str = "GET", body: bytes = b"", headers: Mapping[str, str] = {}
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body or None, headers=dict(headers))
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def test_pages_by_path_then_fallback_then_404() -> None:
    pages: dict[str, Answer] = {"/": b"<p>home</p>", "/data": ('{"a": 1}', "application/json")}
    with served_pages(pages) as site:
        status, headers, body = _fetch(site.port, "/?x=1")
        assert (status, headers["content-type"], body) == (200, HTML, b"<p>home</p>")
        assert headers["content-length"] == str(len(body))
        status, headers, body = _fetch(site.port, "/data")
        assert (status, headers["content-type"], body) == (200, "application/json", b'{"a": 1}')
        status, _, body = _fetch(site.port, "/elsewhere")
        assert (status, body) == (404, b"not here")
    with served_pages(pages, fallback="<p>é</p>") as site:
        assert _fetch(site.port, "/elsewhere")[::2] == (200, "<p>é</p>".encode())


def test_replies_carry_status_and_headers() -> None:
    pages: dict[str, Answer] = {
        "/go": Reply(status=302, content_type=None, headers={"Location": "/there"}),
        "/none": Reply(status=204, content_type=None),
        "/cookie": Reply(b"ok", "text/plain", headers={"Set-Cookie": "sid=1; Path=/"}),
    }
    with served_pages(pages) as site:
        status, headers, _ = _fetch(site.port, "/go")
        assert status == 302 and headers["location"] == "/there"
        assert "content-type" not in headers
        status, headers, body = _fetch(site.port, "/none")
        assert (status, body) == (204, b"") and "content-length" not in headers
        status, headers, body = _fetch(site.port, "/cookie")
        assert (status, body, headers["set-cookie"]) == (200, b"ok", "sid=1; Path=/")


def test_the_hook_answers_first_and_every_request_is_recorded() -> None:
    release = threading.Event()

    def hook(request: Request) -> Answer | None:
        if request.path == "/held":
            release.wait(30)
            return "held " + request.query("n", "?")
        return f"{request.host}:{request.port}" if request.path == "/who" else None

    with served_pages({"/who": b"never"}, hook=hook, methods=("GET", "POST")) as site:
        assert _fetch(site.port, "/who", headers={"Host": f"a.test:{site.port}"})[2] == (
            f"a.test:{site.port}".encode()
        )
        held: list[bytes] = []
        waiter = threading.Thread(target=lambda: held.append(_fetch(site.port, "/held?n=7")[2]))
        waiter.start()
        deadline = time.monotonic() + 30
        while not site.requests("/held"):  # it arrived ...
            assert time.monotonic() < deadline, site.requests()
            time.sleep(0.01)
        assert held == []  # ... and the hook holds its answer back until released
        release.set()
        waiter.join(30)
        assert held == [b"held 7"]
        _fetch(site.port, "/post", "POST", b"payload", {"Cookie": "c=1"})
        seen = site.requests()
        assert [(r.method, r.target) for r in seen] == [
            ("GET", "/who"),
            ("GET", "/held?n=7"),
            ("POST", "/post"),
        ]
        [post] = site.requests("/post")
        assert (post.body, post.headers["cookie"]) == (b"payload", "c=1")


def test_a_method_not_listed_is_refused_unrecorded() -> None:
    with served_pages({"/": b"home"}) as site:
        assert _fetch(site.port, "/", "POST", b"x")[0] == 501
        assert site.requests() == []
