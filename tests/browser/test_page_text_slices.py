"""One read of a page serves every slice of its text (one read, not one per slice): on a page whose
text grows every 20 ms, the slices of one read fit together exactly — the same `totalChars` in each,
joined they are one text — while a fresh read (offset 0) sees the page as it is now. Real Chromium,
the real chain (Chrome's `documentId` is what tells "the same document")."""

from __future__ import annotations

import pytest
from mcp import Client

from tests.browser.harness import ok

pytestmark = [pytest.mark.browser, pytest.mark.pooled]


async def test_the_slices_of_one_read_fit_together_on_a_changing_page(
    agent: Client, site: str
) -> None:
    tab = (await ok(agent, "tab_open", {"url": f"{site}/growing"}))["tab"]["id"]
    first = await ok(agent, "page_text", {"tabId": tab, "maxChars": 7000})
    assert first["nextOffset"] == 7000
    parts, offset = [first["text"]], first["nextOffset"]
    while offset is not None:
        more = await ok(agent, "page_text", {"tabId": tab, "offset": offset, "maxChars": 7000})
        assert more["totalChars"] == first["totalChars"]  # the same read
        parts.append(more["text"])
        offset = more["nextOffset"]
    whole = "".join(parts)
    assert len(whole) == first["totalChars"] and whole.startswith("word word")
    fresh = await ok(agent, "page_text", {"tabId": tab, "maxChars": 7000})
    assert fresh["totalChars"] > first["totalChars"]  # offset 0 reads the page as it is
