"""A tool result's payload travels once when it is large (docs/adr/0006, "Large results"): the
structured content holds all of it, the text block says so and shows it cut; a result of
ordinary size keeps the whole JSON in both. Through a real host and its chunked replies, with
the SDK's in-process client reading the result as an agent's client would."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

from mcp import Client
from mcp_types import CallToolResult, TextContent

from tabwarden.mcp_server.bridge_client import BridgeClient
from tabwarden.mcp_server.results import SUMMARY_STRING_CHARS, WHOLE_TEXT_MAX_CHARS
from tabwarden.mcp_server.server import build_server
from tests.fakes import FakeBrowser
from tests.fixtures import config_of, pair_in_process_client, paired_guard

LINE = 'A line of page text, with "quotes", a tab\tand ünïcødé.\n'


def _page(chars: int) -> dict[str, Any]:
    text = (LINE * (chars // len(LINE) + 1))[:chars]
    return {"text": text, "nextOffset": None, "totalChars": chars, "url": "http://a/", "title": "T"}


def _answer_in_chunks(browser: FakeBrowser, result: dict[str, Any]) -> threading.Thread:
    """Answer the next request as the extension does: its reply's JSON in slices of at most
    1,000,000 characters when it is larger than that."""

    def run() -> None:
        request = browser.receive()
        reply = {"type": "reply", "id": request["id"], "ok": True, "result": result}
        text = json.dumps(reply, ensure_ascii=False, separators=(",", ":"))
        parts = [text[i : i + 1_000_000] for i in range(0, len(text), 1_000_000)]
        if len(parts) == 1:
            browser.send(reply)
            return
        for seq, part in enumerate(parts):
            browser.send(
                {"type": "chunk", "id": reply["id"], "seq": seq, "total": len(parts), "data": part}
            )

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


async def _read(browser: FakeBrowser, result: dict[str, Any]) -> CallToolResult:
    bridge = BridgeClient(label="test", env={"TABWARDEN_RUNTIME_DIR": str(browser.runtime)})
    server = build_server(bridge, paired_guard())
    async with Client(server, raise_exceptions=True) as client:
        deadline = time.monotonic() + 30  # a hang guard, not a timing assertion
        while not ((await client.call_tool("bridge_status", {})).structured_content or {}).get(
            "extensionConnected"
        ):
            assert time.monotonic() < deadline, "the extension never connected"
            await asyncio.sleep(0.02)
        thread = _answer_in_chunks(browser, result)
        answer = await client.call_tool("page_text", {"tabId": 1})
        thread.join(30)
        return answer


def _text_block(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


def test_a_large_result_travels_once_and_its_text_block_says_where(
    fake_browser: FakeBrowser,
) -> None:
    pair_in_process_client(config_of(fake_browser))
    fake_browser.wait_socket()
    fake_browser.hello()
    page = _page(WHOLE_TEXT_MAX_CHARS + 500_000)  # two chunks from the extension

    result = asyncio.run(asyncio.wait_for(_read(fake_browser, page), 120))

    assert not result.is_error
    assert result.structured_content == page  # all of it, once
    text = _text_block(result)
    assert len(text) < 2 * SUMMARY_STRING_CHARS + 1_000  # the text is not a second copy
    size = len(json.dumps(page, ensure_ascii=False, separators=(",", ":")))
    head, _, shown = text.partition("\n")
    assert f"{size:,} characters" in head and "structured content" in head
    cut = json.loads(shown)
    assert cut["text"].startswith(page["text"][:SUMMARY_STRING_CHARS])
    rest = len(page["text"]) - SUMMARY_STRING_CHARS
    assert cut["text"].endswith(f"[{rest:,} more characters in structuredContent]")
    assert {k: v for k, v in cut.items() if k != "text"} == {
        k: v for k, v in page.items() if k != "text"
    }


def test_a_result_of_ordinary_size_keeps_its_whole_json_in_the_text_block(
    fake_browser: FakeBrowser,
) -> None:
    pair_in_process_client(config_of(fake_browser))
    fake_browser.wait_socket()
    fake_browser.hello()
    page = _page(100_000)  # page_text's default slice

    result = asyncio.run(asyncio.wait_for(_read(fake_browser, page), 120))

    assert result.structured_content == page
    assert json.loads(_text_block(result)) == page
