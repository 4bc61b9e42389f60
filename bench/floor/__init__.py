"""The raw native-messaging floor: a minimal extension and host of the bench's own.

``measure_floor`` starts a throwaway headless Chromium (``tabwarden.cli.browser.ThrowawayBrowser``,
the same launcher and flags tabwarden's own figures use) with ``extension/`` loaded and
``host.py`` installed as its native-messaging host; the extension connects at start, the host
times small echoes and 10 MB transfers from its own side and writes them to a file this module
polls. No MCP, no socket, no guards: what any host on this machine pays for Chrome's framing.
It must never install anything outside the throwaway profile.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tabwarden.cli.browser import ThrowawayBrowser, chrome_binary
from tabwarden.manifests import extension_id_from_key

HERE = Path(__file__).resolve().parent
EXTENSION = HERE / "extension"
HOST_SCRIPT = HERE / "host.py"
HOST_NAME = "com.tabwarden.bench_floor"
DEADLINE_S = 180.0


class FloorFailed(RuntimeError):
    """The floor's host wrote no figures in time, or wrote an error."""


@dataclass(frozen=True, kw_only=True)
class Floor:
    echo_ms: list[float]
    bulk_ms: list[float]
    bulk_bytes: int
    chunk_bytes: int


def floor_extension_id() -> str:
    manifest = json.loads((EXTENSION / "manifest.json").read_text(encoding="utf-8"))
    return extension_id_from_key(manifest["key"])


def _install_host(browser: ThrowawayBrowser, out: Path, *, echo: int, bulk: int) -> None:
    wrapper = browser.root / "floor-host"
    argv = [sys.executable, "-I", str(HOST_SCRIPT), f"--out={out}", f"--echo={echo}"]
    argv.append(f"--bulk={bulk}")
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.join(argv)} "$@"\n', encoding="utf-8")
    wrapper.chmod(0o700)
    manifests = browser.profile / "NativeMessagingHosts"
    manifests.mkdir(mode=0o700, exist_ok=True)
    manifest = {
        "name": HOST_NAME,
        "description": "tabwarden bench floor host",
        "path": str(wrapper),
        "type": "stdio",
        "allowed_origins": [f"chrome-extension://{floor_extension_id()}/"],
    }
    (manifests / f"{HOST_NAME}.json").write_text(json.dumps(manifest), encoding="utf-8")


def measure_floor(*, echo: int, bulk: int, chrome: str | None = None) -> Floor:
    browser = ThrowawayBrowser(
        chrome=chrome_binary(chrome), extension=EXTENSION, grant_loopback=False
    )
    out = browser.root / "floor.json"
    try:
        _install_host(browser, out, echo=echo, bulk=bulk)
        browser.start("about:blank")
        deadline = time.monotonic() + DEADLINE_S
        while not out.exists():
            if time.monotonic() > deadline:
                raise FloorFailed(
                    f"the floor host wrote nothing within {DEADLINE_S:.0f} s:\n{browser.log_tail()}"
                )
            if browser.process is not None and browser.process.poll() is not None:
                raise FloorFailed(f"Chromium exited early:\n{browser.log_tail()}")
            time.sleep(0.05)  # polling the condition (the file), with the deadline above
        data = json.loads(out.read_text(encoding="utf-8"))
    finally:
        browser.close()
    if "error" in data:
        raise FloorFailed(f"the floor host failed: {data['error']}")
    return Floor(
        echo_ms=[float(x) for x in data["echo_ms"]],
        bulk_ms=[float(x) for x in data["bulk_ms"]],
        bulk_bytes=int(data["bulk_bytes"]),
        chunk_bytes=int(data["chunk_bytes"]),
    )
