"""``tabwarden demo`` — every hop, for real, in a throwaway headless Chromium.

It serves a small local page, provisions a throwaway trust record (host key in a temp file store,
this program — the interpreter with what it runs — paired as the MCP client, the page's origin
approved — standing in for the terminal ceremonies a person would perform), starts Chromium with the
extension loaded and our host installed into the throwaway profile (the extension copy there also
holds loopback site access at install, standing in for Chrome's permission dialog, which headless
Chrome cannot show — see ``tabwarden.cli.browser``), then acts as an MCP client would: spawns
``tabwarden mcp`` with the SDK's stdio client and calls ``bridge_status``, ``tab_open``,
``tab_list`` and ``page_text``, printing a transcript. It never touches the person's own record.
Every process and temp directory it made is removed on the way out, Ctrl-C included.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.server
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tabwarden import osapi
from tabwarden.errors import TabwardenError
from tabwarden.protocol.codes import DEMO_FAILED

PAGE_TITLE = "tabwarden demo page"
PAGE = f"""<!doctype html><html><head><meta charset="utf-8"><title>{PAGE_TITLE}</title></head>
<body><h1>Hello from a local page</h1>\
<p>tabwarden sees this tab through every hop.</p></body></html>
""".encode()
CONNECT_DEADLINE = 60.0


class DemoFailed(TabwardenError):
    """The demo could not complete a step."""

    code = DEMO_FAILED
    hint = (
        "Run with --keep and read chromium.log in the printed directory; "
        "`tabwarden status` may help."
    )


class _PageHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 — http.server's naming
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return


@contextlib.contextmanager
def serve_http(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on 127.0.0.1 at an ephemeral port, in a thread, while the block runs;
    yields the origin (no trailing slash). The demo's page, the tests' sites and the bench's."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # Polled every 50 ms for shutdown (the default 0.5 s is what closing it would wait).
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def serve_page() -> Iterator[str]:
    """A one-page HTTP server on 127.0.0.1 with an ephemeral port."""
    with serve_http(_PageHandler) as origin:
        yield f"{origin}/"


def _say(step: str, text: str) -> None:
    print(f"{step:>7}  {text}", flush=True)


def _structured(result: Any) -> dict[str, Any]:
    data = result.structured_content
    return data if isinstance(data, dict) else {}


async def wait_for_extension(client: Any, deadline: float) -> dict[str, Any]:
    """Poll ``bridge_status`` (a local call) until the extension is connected or the deadline."""
    status: dict[str, Any] = {}
    while time.monotonic() < deadline:
        status = _structured(await client.call_tool("bridge_status", {}))
        if status.get("extensionConnected"):
            return status
        await asyncio.sleep(0.25)
    raise DemoFailed(
        f"the extension did not connect within {CONNECT_DEADLINE:.0f} s (last status: {status})"
    )


def provision_throwaway_trust(config: Path, *, client_exe: str, origins: list[str]) -> str:
    """Write a throwaway trust record in ``config`` (never the person's): a host key in a file
    store, ``client_exe`` paired, ``origins`` approved. Returns the key's fingerprint.

    ``client_exe`` is pinned as ``pair-client`` would: a plain executable by its image; this
    process's own interpreter as this process (the interpreter with what it runs), since an
    interpreter is never pinned alone (``tabwarden.bridge.client_identity``)."""
    import hashlib
    import time

    from tabwarden.bridge.client_identity import measure_process
    from tabwarden.trust import store
    from tabwarden.trust.keys import HostKey
    from tabwarden.trust.keystore import FileStore
    from tabwarden.trust.policy import DEFAULT_POLICY, apply_set
    from tabwarden.trust.record_file import seal_first_record

    key = HostKey.generate()
    key_store = FileStore(config / "host-key.pem")
    record = config / "trust.json"
    seal_first_record(record, key_store, reset=False)  # in `pair`'s order: never a key alone
    key_store.save(key)
    now = int(time.time())
    store.initialise(record, key, "file", now)
    if os.path.realpath(client_exe) == os.path.realpath(osapi.executable(os.getpid())):
        me = measure_process(os.getpid())
        client_exe, digest = me.exe, me.sha256
    else:
        with open(client_exe, "rb") as image:
            digest = hashlib.sha256(image.read()).hexdigest()
    store.add_client(record, key, "demo", client_exe, digest, now)
    store.set_baseline(record, key, apply_set(DEFAULT_POLICY, {"origins": origins}).to_json(), now)
    return str(key.public.fingerprint)


async def _drive(env: dict[str, str], url: str) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "tabwarden", "mcp"], env=env)
    _say("mcp", f"spawning `{sys.executable} -m tabwarden mcp` over stdio (the SDK's client)")
    async with Client(params) as client:
        tools = await client.list_tools()
        _say("mcp", f"{len(tools.tools)} tools: " + ", ".join(sorted(t.name for t in tools.tools)))
        status = await wait_for_extension(client, time.monotonic() + CONNECT_DEADLINE)
        _say("status", json.dumps(status))
        opened = await _call(client, "tab_open", {"url": url})
        tab_id = opened["tab"]["id"]
        _say("open", f"tab #{tab_id} in the agent's own window: {opened['tab']['url']}")
        tabs = (await _call(client, "tab_list", {})).get("tabs", [])
        for tab in tabs:
            _say("tab", f"#{tab['id']}  {tab['title']!r}  {tab['url']}")
        if not any(tab.get("url") == url and tab.get("title") == PAGE_TITLE for tab in tabs):
            raise DemoFailed(f"tab_list did not show the demo page {url}")
        text = await _call(client, "page_text", {"tabId": tab_id})
        _say("text", repr(text["text"].splitlines()[0] if text["text"] else ""))
        _say(
            "ok", "the agent opened and read the local page through MCP → socket → host → extension"
        )


async def _call(client: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    if result.is_error:
        raise DemoFailed(f"{tool} failed: {result.content[0].text if result.content else '?'}")
    return _structured(result)


def run(args: argparse.Namespace) -> int:
    from tabwarden.cli.browser import ThrowawayBrowser, chrome_binary

    browser = ThrowawayBrowser(chrome=chrome_binary(args.chrome), keep=args.keep)
    try:
        with serve_page() as url:
            _say("page", f"serving {url}")
            manifest = browser.install_host()
            _say("install", f"host manifest → {manifest}")
            origin = url.rstrip("/")
            fingerprint = provision_throwaway_trust(
                browser.root / "config",
                client_exe=os.path.realpath(osapi.executable(os.getpid())),
                origins=[origin],
            )
            _say(
                "trust",
                f"throwaway record: key {fingerprint}, this program paired, {origin} approved",
            )
            browser.start("about:blank")
            _say(
                "chrome",
                f"started {browser.chrome} (headless, throwaway profile {browser.profile})",
            )
            _say(
                "chrome",
                "loopback site access granted at install in this throwaway profile only "
                "(headless Chrome cannot show its permission dialog)",
            )
            try:
                asyncio.run(_drive(browser.env, url))
            except DemoFailed:
                print(browser.log_tail(), file=sys.stderr)
                raise
            if getattr(args, "keep_open", False):
                env = browser.env
                _say(
                    "hold",
                    "browser and host keep running; Ctrl-C stops them. Try: "
                    f"TABWARDEN_RUNTIME_DIR={env['TABWARDEN_RUNTIME_DIR']} "
                    f"TABWARDEN_CONFIG_DIR={env['TABWARDEN_CONFIG_DIR']} tabwarden status",
                )
                while True:  # until Ctrl-C: KeyboardInterrupt runs the cleanup below
                    time.sleep(3600)
    finally:
        browser.close()
        _say(
            "cleanup",
            "browser stopped" + (f"; kept {browser.root}" if args.keep else "; temp files removed"),
        )
    return 0
