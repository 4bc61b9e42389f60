"""The three servers under test, how each is started, and the one table (``TOOLS``) naming, per
server, the tool and arguments of each measured operation: the bench calls exactly these.

All three are driven by the same client (the ``mcp`` SDK's stdio ``Client``, initialize
handshake), pointed at the same Chromium binary with the same quiet flags
(``tabwarden.cli.browser.QUIET_FLAGS``), headless and with a throwaway profile. tabwarden runs as in
its own tests and demo: a throwaway paired setup (``tabwarden.cli.demo``), the extension loaded
and the host launched by Chrome (``tabwarden.cli.browser.ThrowawayBrowser``), and ``tabwarden
mcp`` spawned as ``tests/browser/harness.py``'s ``mcp_client`` spawns it. A call that fails,
times out or answers with the wrong content raises ``CallFailed``; nothing here retries or drops
a failure.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import struct
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, TextIO

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult

from bench.peers import NODE_MODULES
from tabwarden.cli.browser import QUIET_FLAGS, ROOT_FLAG, ThrowawayBrowser
from tabwarden.cli.demo import provision_throwaway_trust, wait_for_extension
from tests.browser.harness import mcp_client

TABWARDEN: Final = "tabwarden"
PLAYWRIGHT: Final = "playwright"
DEVTOOLS: Final = "devtools"
SERVERS: Final = (TABWARDEN, PLAYWRIGHT, DEVTOOLS)
TITLES: Final = {
    TABWARDEN: "tabwarden",
    PLAYWRIGHT: "@playwright/mcp",
    DEVTOOLS: "chrome-devtools-mcp",
}
PEERS: Final = {PLAYWRIGHT: "@playwright/mcp", DEVTOOLS: "chrome-devtools-mcp"}

#: One tool call's deadline: a call not answered by then is counted as lost, never waited out.
CALL_TIMEOUT_S: Final = 60.0
#: tabwarden's ``page_text`` slice limit (its catalogue caps ``maxChars`` at 5,000,000).
TEXT_SLICE: Final = 5_000_000
#: How the peers read a page's text (neither has a page-text tool; both evaluate script).
INNER_TEXT: Final = "() => document.body.innerText"


class CallFailed(RuntimeError):
    """A call errored, timed out or answered with content the operation does not accept."""


ANSI: Final = re.compile(r"\x1b\[[0-9;]*m")


def one_line(exc: BaseException, limit: int = 300) -> str:
    """An error as one plain line for the table (the peers' messages carry colour codes)."""
    return " ".join(ANSI.sub("", f"{type(exc).__name__}: {exc}").split())[:limit]


@dataclass(frozen=True)
class Target:
    """What an operation's arguments may name: the session's page, a URL, an element ref."""

    page: int | None = None
    url: str = ""
    ref: str = ""
    offset: int = 0
    #: What @playwright/mcp's actions take as the element's description (for the person).
    element: str = "Reveal button"


@dataclass(frozen=True)
class Call:
    tool: str
    args: Callable[[Target], dict[str, Any]]


#: operation → server → the call. docs/performance.md's bench section prints this table.
TOOLS: Final[Mapping[str, Mapping[str, Call]]] = {
    "light": {
        TABWARDEN: Call("tab_list", lambda t: {}),
        PLAYWRIGHT: Call("browser_tabs", lambda t: {"action": "list"}),
        DEVTOOLS: Call("list_pages", lambda t: {}),
    },
    "navigate": {
        TABWARDEN: Call("page_navigate", lambda t: {"tabId": t.page, "url": t.url}),
        PLAYWRIGHT: Call("browser_navigate", lambda t: {"url": t.url}),
        DEVTOOLS: Call("navigate_page", lambda t: {"pageId": t.page, "type": "url", "url": t.url}),
    },
    "snapshot": {
        TABWARDEN: Call("page_snapshot", lambda t: {"tabId": t.page}),
        PLAYWRIGHT: Call("browser_snapshot", lambda t: {}),
        DEVTOOLS: Call("take_snapshot", lambda t: {"pageId": t.page}),
    },
    "read": {  # the corpus's read-and-act step: the look with the page's text
        TABWARDEN: Call("page_snapshot", lambda t: {"tabId": t.page, "text": True}),
        PLAYWRIGHT: Call("browser_snapshot", lambda t: {}),
        DEVTOOLS: Call("take_snapshot", lambda t: {"pageId": t.page}),
    },
    "click": {
        TABWARDEN: Call("page_click", lambda t: {"tabId": t.page, "ref": t.ref}),
        PLAYWRIGHT: Call("browser_click", lambda t: {"target": t.ref, "element": t.element}),
        DEVTOOLS: Call("click", lambda t: {"pageId": t.page, "uid": t.ref}),
    },
    "text": {
        TABWARDEN: Call(
            "page_text", lambda t: {"tabId": t.page, "offset": t.offset, "maxChars": TEXT_SLICE}
        ),
        PLAYWRIGHT: Call("browser_evaluate", lambda t: {"function": INNER_TEXT}),
        DEVTOOLS: Call("evaluate_script", lambda t: {"pageId": t.page, "function": INNER_TEXT}),
    },
    "screenshot": {
        TABWARDEN: Call("page_screenshot", lambda t: {"tabId": t.page, "fullPage": True}),
        PLAYWRIGHT: Call("browser_take_screenshot", lambda t: {"fullPage": True, "type": "png"}),
        DEVTOOLS: Call(
            "take_screenshot", lambda t: {"pageId": t.page, "fullPage": True, "format": "png"}
        ),
    },
}


def describe_tools() -> list[tuple[str, dict[str, str]]]:
    """``TOOLS`` as text: each operation's call per server, arguments shown for a sample target."""
    sample = Target(page=1, url="URL", ref="REF")
    rows = []
    for op, calls in TOOLS.items():
        cells = {}
        for server, call in calls.items():
            args = json.dumps(call.args(sample), separators=(", ", ": "))
            cells[server] = f"`{call.tool}` {args}" if args != "{}" else f"`{call.tool}`"
        rows.append((op, cells))
    return rows


def snapshot_rows(result: CallToolResult) -> list[dict[str, Any]]:
    """tabwarden's page_snapshot rows: the line form (the default since ADR 0016) decoded, or
    the JSON rows a server before it (or ``format: "json"``) answers."""
    from tabwarden.mcp_server.catalogue.interact import lines

    data = result.structured_content or {}
    given = data.get("lines")
    rows: list[dict[str, Any]] = (
        lines.decode(given) if isinstance(given, str) else data.get("snapshot", [])
    )
    return rows


def _text_parts(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


def png_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG's IHDR, or ``None`` when ``data`` is not a PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@dataclass
class Session:
    """One connected client of one server, and the page its operations act on."""

    server: str
    client: Client
    origin: str
    page: int | None = None

    async def call(self, op: str, **target: Any) -> CallToolResult:
        spec = TOOLS[op][self.server]
        args = spec.args(replace(Target(page=self.page), **target))
        try:
            result = await self.client.call_tool(
                spec.tool, args, read_timeout_seconds=CALL_TIMEOUT_S
            )
        except Exception as exc:  # a timeout or a broken pipe is a lost call, reported as such
            raise CallFailed(f"{spec.tool}: {type(exc).__name__}: {exc}"[:300]) from exc
        if result.is_error:
            raise CallFailed(f"{spec.tool}: {_text_parts(result)}"[:300])
        return result

    # -- reading each server's answers ----------------------------------------------------

    def ref_named(self, result: CallToolResult, name: str) -> str:
        """The element ref of the button called ``name`` in a snapshot result."""
        if self.server == TABWARDEN:
            items = snapshot_rows(result)
            for item in items:
                if item.get("name") == name:
                    return str(item["ref"])
        else:
            text = _text_parts(result)
            pattern = (
                rf'button "{re.escape(name)}"[^\n]*\[ref=(\w+)\]'
                if self.server == PLAYWRIGHT
                else rf'uid=(\S+) button "{re.escape(name)}"'
            )
            match = re.search(pattern, text)
            if match:
                return match.group(1)
        raise CallFailed(f"{self.server}: the snapshot names no button {name!r}")

    def everything(self, result: CallToolResult) -> str:
        """A result's text parts and structured content, as one string to search."""
        return _text_parts(result) + json.dumps(result.structured_content or {})

    def next_offset(self, result: CallToolResult) -> int | None:
        """Where a sliced page-text reply continues (tabwarden's ``nextOffset``), else ``None``."""
        if self.server != TABWARDEN:
            return None
        value = (result.structured_content or {}).get("nextOffset")
        return value if isinstance(value, int) else None

    def text_of(self, result: CallToolResult) -> str:
        """A page-text result's text (read after the clock stops: this is the bench's parsing,
        not the server's work)."""
        if self.server == TABWARDEN:
            return str((result.structured_content or {}).get("text", ""))
        body = _text_parts(result)
        # playwright: "### Result\n<JSON>\n### Ran Playwright code…"; devtools: a ```json fence.
        pattern = (
            r"### Result\n(.*?)\n(?:###|$)" if self.server == PLAYWRIGHT else r"```json\n(.*)\n```"
        )
        match = re.search(pattern, body, re.DOTALL)
        if not match:
            raise CallFailed(f"{self.server}: no JSON result in {body[:200]!r}")
        value = json.loads(match.group(1))
        if not isinstance(value, str):
            raise CallFailed(f"{self.server}: the script answered {type(value).__name__}")
        return value

    def image_of(self, result: CallToolResult) -> bytes | None:
        """The PNG a screenshot result carries inline, or ``None`` when it sent none."""
        for content in result.content:
            if content.type == "image":
                return base64.b64decode(content.data)
        return None


@dataclass
class Launcher:
    """Starts sessions of each server in one run's scratch directory (``root``)."""

    root: Path
    chrome: str
    origin: str
    logs: dict[str, TextIO] = field(default_factory=dict)
    browser: ThrowawayBrowser | None = None
    #: The capability tasks run tabwarden with the confirm list emptied (``tabwarden policy set
    #: confirm=``, as a person may), since the peers ask no one: nobody approves in a bench.
    no_confirm: bool = False
    #: A screen size for tabwarden's headless Chromium (``"1600x900"``), as a person's desktop
    #: has: headless Chromium's own screen is 800x600, which clamps the agent's 1280x800 window
    #: to 800 CSS px, where pages show their small-screen layout. ``None``: Chromium's default.
    screen: str | None = None

    def log(self, server: str) -> TextIO:
        if server not in self.logs:
            self.logs[server] = open(self.root / f"{server}.stderr.log", "a", encoding="utf-8")
        return self.logs[server]

    def close(self) -> None:
        for handle in self.logs.values():
            handle.close()
        if self.browser is not None:
            self.browser.close()

    def start_tabwarden_browser(self) -> ThrowawayBrowser:
        """The throwaway paired setup: record, extension, host installed, Chromium started."""
        browser = (
            ThrowawayBrowser(chrome=self.chrome)
            if self.screen is None
            else _ScreenBrowser(chrome=self.chrome, screen=self.screen)
        )
        self.browser = browser
        browser.install_host()
        provision_throwaway_trust(
            browser.config, client_exe=os.path.realpath("/proc/self/exe"), origins=[self.origin]
        )
        if self.no_confirm:
            _empty_confirm(browser.config, self.origin)
        browser.start("about:blank")
        return browser

    def params(self, server: str) -> StdioServerParameters:
        if server == TABWARDEN:
            if self.browser is None:
                raise RuntimeError("start_tabwarden_browser() first")
            params: StdioServerParameters = mcp_client(self.browser).server  # type: ignore[assignment]
            return params
        home = self.root / f"home-{server}"
        home.mkdir(exist_ok=True)
        env = dict(os.environ, HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
        flags = list(QUIET_FLAGS)
        if server == PLAYWRIGHT:
            config = self.root / "playwright-config.json"
            config.write_text(
                json.dumps({"browser": {"launchOptions": {"args": flags}}}), encoding="utf-8"
            )
            argv = [
                str(NODE_MODULES / "@playwright/mcp/cli.js"),
                "--headless",
                "--isolated",
                f"--executable-path={self.chrome}",
                f"--config={config}",
                f"--output-dir={self.root / 'playwright-output'}",
            ]
            if os.getuid() == 0:
                argv.append("--no-sandbox")
        else:
            env["CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS"] = "1"
            if os.getuid() == 0:
                flags.append(ROOT_FLAG)
            argv = [
                str(NODE_MODULES / "chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js"),
                "--headless",
                "--isolated",
                f"--executablePath={self.chrome}",
                "--no-usage-statistics",
                "--no-performance-crux",
                *(f"--chromeArg={flag}" for flag in flags),
            ]
        return StdioServerParameters(command="node", args=argv, env=env, cwd=self.root)

    def client(self, server: str) -> Client:
        transport = stdio_client(self.params(server), errlog=self.log(server))
        return Client(transport, mode="legacy")  # every server: the initialize handshake

    @contextlib.asynccontextmanager
    async def session(self, server: str) -> AsyncIterator[Session]:
        """A connected, warmed-up session: its page open on ``origin`` and one light call made
        (which is when the peers launch their browsers)."""
        async with self.client(server) as client:
            session = Session(server, client, self.origin)
            if server == TABWARDEN:
                await wait_for_extension(client, _deadline(120.0))
                opened = await client.call_tool("tab_open", {"url": f"{self.origin}/"})
                if opened.is_error:
                    raise CallFailed(f"tab_open: {_text_parts(opened)}"[:300])
                session.page = int((opened.structured_content or {})["tab"]["id"])
                await session.call("light")
            elif server == PLAYWRIGHT:
                await session.call("light")
                await session.call("navigate", url=f"{self.origin}/")
            else:
                listed = _text_parts(await session.call("light"))
                match = re.search(r"^(\d+): .*\[selected\]", listed, re.MULTILINE)
                if not match:
                    raise CallFailed(f"list_pages named no selected page: {listed[:200]!r}")
                session.page = int(match.group(1))
                await session.call("navigate", url=f"{self.origin}/")
            yield session


@dataclass
class _ScreenBrowser(ThrowawayBrowser):
    """The throwaway browser on a headless screen of ``screen`` (``WxH``): headless Chromium's
    ``--screen-info``, which changes the screen the windows open on and nothing else."""

    screen: str = "1600x900"

    def argv(self, url: str) -> list[str]:
        *flags, last = super().argv(url)
        return [*flags, f"--screen-info={{{self.screen}}}", last]


def _empty_confirm(config: Path, origin: str) -> None:
    """Rewrite the throwaway record's baseline with nothing left to confirm (the bench's own
    throwaway record, never the person's)."""
    from tabwarden.trust import store
    from tabwarden.trust.keystore import FileStore
    from tabwarden.trust.policy import DEFAULT_POLICY, apply_set

    key = FileStore(config / "host-key.pem").load()
    if key is None:
        raise RuntimeError(f"no host key in {config}")
    policy = apply_set(DEFAULT_POLICY, {"origins": [origin], "confirm": []})
    store.set_baseline(config / "trust.json", key, policy.to_json(), int(time.time()))


def _deadline(seconds: float) -> float:
    return time.monotonic() + seconds  # wait_for_extension's clock
