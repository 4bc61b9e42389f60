"""The local pages every server is pointed at, served by a stdlib ``http.server`` on 127.0.0.1.

One origin (``http://127.0.0.1:<port>``) for all three servers, so tabwarden's throwaway trust
record approves exactly it. Every page is generated from fixed inputs (the screenshot's noise
comes from a seeded generator), so each server captures the same bytes; the corpus
(``/corpus/…``) is files of an installed Debian package, served as they are. It must never listen on
anything but loopback and never fetch from the network.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import mimetypes
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from bench import tasks
from tabwarden.cli.demo import serve_http

#: The agent flow's page: a button whose click reveals a line of text.
FLOW_TITLE = "bench flow"
REVEALED = "revealed after the click"
FLOW = f"""<!doctype html><html><head><meta charset="utf-8"><title>{FLOW_TITLE}</title></head>
<body><h1>Agent flow</h1><p>Press the button, then read the page.</p>
<button id="reveal" type="button"
 onclick="document.getElementById('out').textContent='{REVEALED}'">Reveal</button>
<p id="out">hidden</p></body></html>""".encode()

#: ``/text?chars=N``: one page whose ``innerText`` is about N characters (plain ASCII lines).
LINE = "The quick brown fox jumps over the lazy dog; pack my box with five dozen jugs. 0123456789\n"

#: ``/image?width=W&height=H``: a canvas of seeded noise, so its PNG barely compresses.
IMAGE = """<!doctype html><html><head><meta charset="utf-8"><title>bench image</title>
<style>html,body{{margin:0;padding:0;background:#fff}}canvas{{display:block}}</style></head>
<body><canvas id="c" width="{w}" height="{h}"></canvas><script>
const c = document.getElementById("c"), ctx = c.getContext("2d");
const img = ctx.createImageData({w}, {h}), d = img.data;
let s = 0x9e3779b9 >>> 0;
for (let i = 0; i < d.length; i += 4) {{
  s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
  d[i] = s & 255; d[i + 1] = (s >>> 8) & 255; d[i + 2] = (s >>> 16) & 255; d[i + 3] = 255;
}}
ctx.putImageData(img, 0, 0);
document.title = "bench image ready";
</script></body></html>"""


#: The corpus (bench/corpus.py): Debian's Python 3.11 HTML documentation (package
#: ``python3.11-doc``), served as it is installed under ``/corpus/``.
DOC_PACKAGE = "python3.11-doc"
DOC_ROOT = Path(os.environ.get("TABWARDEN_BENCH_DOCS", "/usr/share/doc/python3.11/html"))
CORPUS = "/corpus/"


def corpus_file(path: str, root: Path = DOC_ROOT) -> tuple[bytes, str] | None:
    """``/corpus/<p>``'s bytes and content type: the file ``<root>/<p>`` (symlinks followed, as
    Debian links jQuery into /usr/share/javascript), or ``None`` for a path that is not a file
    under ``root`` (``..``, an absolute path, a directory)."""
    rest = path[len(CORPUS) :] if path.startswith(CORPUS) else ""
    parts = [p for p in rest.split("/") if p]
    if not parts or any(p in (".", "..") or "\\" in p or "\0" in p for p in parts):
        return None
    target = root.joinpath(*parts)
    if not target.is_file():
        return None
    kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
    if kind.startswith("text/") or kind in ("application/javascript", "image/svg+xml"):
        kind += "; charset=utf-8"
    return target.read_bytes(), kind


def text_page(chars: int) -> bytes:
    lines = max(1, chars // len(LINE))
    body = "<pre>" + LINE * lines + "</pre>"
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>bench text</title></head>"
        f"<body>{body}</body></html>"
    ).encode()


class _Pages(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 — http.server's naming
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        task_page = tasks.route(url.path) if url.path.startswith("/task/") else None
        ctype = "text/html; charset=utf-8"
        doc = corpus_file(url.path) if url.path.startswith(CORPUS) else None
        if url.path.startswith(CORPUS):
            if doc is None:
                self.send_error(404)
                return
            body, ctype = doc
        elif task_page is not None:
            body = task_page
        elif url.path == "/flow":
            body = FLOW
        elif url.path == "/text":
            body = text_page(int(query.get("chars", "10000000")))
        elif url.path == "/image":
            width, height = int(query.get("width", "1280")), int(query.get("height", "2600"))
            body = IMAGE.format(w=width, h=height).encode()
        else:
            body = b"<!doctype html><title>bench</title><p>bench</p>"
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802 — a task page reporting its state (bench/tasks.py)
        url = urlparse(self.path)
        episode = parse_qs(url.query).get("ep", [""])[0]
        length = min(int(self.headers.get("Content-Length") or 0), 1_000_000)
        raw = self.rfile.read(length)
        try:
            report = json.loads(raw)
        except ValueError:
            report = None
        ok = url.path == "/state" and bool(episode) and isinstance(report, dict)
        if ok:
            tasks.REPORTS.post(episode, report)
        self.send_response(204 if ok else 400)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return


@contextlib.contextmanager
def serve_site() -> Iterator[str]:
    """The bench's pages on 127.0.0.1 with an ephemeral port; yields the origin (no slash)."""
    with serve_http(_Pages) as origin:
        yield origin
