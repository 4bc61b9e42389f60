"""A focused micro-bench of the large-result path without a browser: one ``page_text`` slice of
``--chars`` characters from a fake extension (chunked as the extension chunks), through the real
host and the real ``tabwarden mcp``, read by the ``mcp`` SDK's stdio client.

The posture is the bench's own (``bench/servers.py``): a throwaway trust record with this
interpreter paired as the MCP client, so the host and the server read a cached record as a paired
user's do; ``--unpaired`` measures the posture before pairing instead, where no record exists
and every call looks for one (and for a host key) afresh.

Prints the median wall time per call and the CPU each process spent on it (the host, the MCP
server, and this process: the client plus the fake extension), which a loaded machine moves far
less than wall time. Figures, never pass/fail::

    .venv/bin/python -m bench.textpath --chars 5000000 --rounds 7
    .venv/bin/python -m bench.textpath --screenshot --chars 10000000 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tabwarden.cli.demo import provision_throwaway_trust
from tests.fakes import FakeBrowser, host_env

LINE = "The quick brown fox jumps over the lazy dog, again and again.\n"
#: The extension's chunk size (extension/worker/chunking.js CHUNK_BYTES; ASCII text here).
CHUNK_CHARS = 1_000_000


def _serve(browser: FakeBrowser, text: str) -> None:
    while True:
        try:
            request = browser.receive()
        except (EOFError, OSError, ValueError):
            return
        if request.get("type") != "request":
            continue
        result: dict[str, Any] = {"tabs": []}
        if request["action"] == "page_text":
            result = {"text": text, "nextOffset": None, "totalChars": len(text)}
            result |= {"url": "http://127.0.0.1/", "title": "text"}
        elif request["action"] == "page_screenshot":
            result = {"data": text, "mimeType": "image/png", "width": 1280, "height": 4200}
        reply = {"type": "reply", "id": request["id"], "ok": True, "result": result}
        body = json.dumps(reply, ensure_ascii=False, separators=(",", ":"))
        if len(body) <= CHUNK_CHARS:
            browser.send(reply)
            continue
        parts = [body[i : i + CHUNK_CHARS] for i in range(0, len(body), CHUNK_CHARS)]
        for seq, part in enumerate(parts):
            browser.send(
                {"type": "chunk", "id": reply["id"], "seq": seq, "total": len(parts), "data": part}
            )


def _cpu_ms(process: psutil.Process) -> float:
    times = process.cpu_times()
    return (times.user + times.system) * 1000


async def measure(
    chars: int, rounds: int, *, tool: str = "page_text", paired: bool = True
) -> dict[str, float]:
    text = (LINE * (chars // len(LINE) + 1))[:chars]
    if tool == "page_screenshot":  # ``chars`` bytes of noise, base64 as the extension sends it
        text = base64.b64encode(os.urandom(chars)).decode()
    root = Path(tempfile.mkdtemp(prefix="tw-textpath-"))
    runtime = root / "run"
    runtime.mkdir(mode=0o700)
    if paired:  # host_env's config directory; the MCP server's spawner is this interpreter
        config = root / "config"
        config.mkdir(mode=0o700)
        provision_throwaway_trust(config, client_exe=os.path.realpath("/proc/self/exe"), origins=[])
    browser = FakeBrowser(runtime, attested=True)
    samples: dict[str, list[float]] = {"wall": [], "host": [], "mcp": [], "client": []}
    try:
        browser.wait_socket()
        browser.hello()
        threading.Thread(target=_serve, args=(browser, text), daemon=True).start()
        params = StdioServerParameters(
            command=sys.executable, args=["-I", "-m", "tabwarden", "mcp"], env=host_env(runtime)
        )
        me = psutil.Process()
        host = psutil.Process(browser.proc.pid)
        with open(root / "mcp.err", "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                deadline = time.monotonic() + 60
                while not (
                    (await client.call_tool("bridge_status", {})).structured_content or {}
                ).get("extensionConnected"):
                    if time.monotonic() > deadline:
                        raise SystemExit("the fake extension never connected")
                    await asyncio.sleep(0.05)
                [server] = [p for p in me.children() if "mcp" in p.cmdline()]
                for _ in range(rounds):
                    before = {"host": _cpu_ms(host), "mcp": _cpu_ms(server), "client": _cpu_ms(me)}
                    start = time.perf_counter()
                    result = await client.call_tool(
                        tool, {"tabId": 1} if tool != "tab_list" else {}
                    )
                    samples["wall"].append((time.perf_counter() - start) * 1000)
                    samples["host"].append(_cpu_ms(host) - before["host"])
                    samples["mcp"].append(_cpu_ms(server) - before["mcp"])
                    samples["client"].append(_cpu_ms(me) - before["client"])
                    got = (result.structured_content or {}).get("text", text)
                    if tool == "page_screenshot":
                        got = getattr(result.content[0], "data", None) if result.content else None
                    if result.is_error or got != text:
                        raise SystemExit(f"wrong answer: {str(result.content)[:300]}")
    finally:
        browser.close()
    figures = {name: statistics.median(values) for name, values in samples.items()}
    return figures | {f"{name}_total": sum(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.textpath", description=__doc__)
    parser.add_argument("--chars", type=int, default=5_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--light", action="store_true", help="measure tab_list instead (per call, --rounds calls)"
    )
    parser.add_argument(
        "--screenshot",
        action="store_true",
        help="measure page_screenshot instead: a PNG of --chars bytes (base64 on the wire)",
    )
    parser.add_argument(
        "--unpaired",
        action="store_true",
        help="no trust record (the posture before pairing) instead of the bench's paired one",
    )
    args = parser.parse_args()
    paired = not args.unpaired
    if args.screenshot:
        figures = asyncio.run(
            measure(args.chars, args.rounds, tool="page_screenshot", paired=paired)
        )
        print(
            f"page_screenshot of {args.chars:,} bytes, median of {args.rounds}: "
            f"wall {figures['wall']:.0f} ms; CPU host {figures['host']:.0f} ms, "
            f"tabwarden mcp {figures['mcp']:.0f} ms, client + fake extension "
            f"{figures['client']:.0f} ms"
        )
        return
    if args.light:
        figures = asyncio.run(measure(0, args.rounds, tool="tab_list", paired=paired))
        print(
            f"tab_list, median of {args.rounds}: wall {figures['wall']:.2f} ms; CPU per call "
            f"host {figures['host_total'] / args.rounds:.2f} ms, tabwarden mcp "
            f"{figures['mcp_total'] / args.rounds:.2f} ms, client + fake extension "
            f"{figures['client_total'] / args.rounds:.2f} ms"
        )
        return
    figures = asyncio.run(measure(args.chars, args.rounds, paired=paired))
    print(
        f"page_text of {args.chars:,} characters, median of {args.rounds}: "
        f"wall {figures['wall']:.0f} ms; CPU host {figures['host']:.0f} ms, "
        f"tabwarden mcp {figures['mcp']:.0f} ms, client + fake extension "
        f"{figures['client']:.0f} ms"
    )


if __name__ == "__main__":
    main()
