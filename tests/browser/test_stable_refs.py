"""Stable refs in a real page (a click must land on the element meant): re-snapshot after the page
removes, inserts and reorders elements; an old ref names its own element or answers ``bad_ref`` —
never another one. Real headless Chromium, the real chain, a fixture page that records every click
it receives."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.browser.harness import code, ok

pytestmark = [pytest.mark.browser, pytest.mark.pooled]


def refs(snap: dict[str, Any]) -> dict[str, str]:
    return {item["name"]: item["ref"] for item in snap["snapshot"]}


@pytest.mark.promise("H4-20")
async def test_refs_follow_their_elements_across_snapshots(agent: Client, site: str) -> None:
    tab = (await ok(agent, "tab_open", {"url": f"{site}/refs"}))["tab"]["id"]

    async def clicks() -> str:
        state = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#out"})
        return str(state["text"])

    async def click(selector: str) -> None:
        await ok(agent, "page_click", {"tabId": tab, "selector": selector})

    first = refs(await ok(agent, "page_snapshot", {"format": "json", "tabId": tab}))
    delete, cancel = first["Delete account"], first["Cancel"]

    # The page removes "Delete account": its ref is dead, and nothing else took it.
    await click("#remove")
    second = refs(await ok(agent, "page_snapshot", {"format": "json", "tabId": tab}))
    assert "Delete account" not in second and second["Cancel"] == cancel
    assert delete not in second.values()
    assert await code(agent, "page_click", {"tabId": tab, "ref": delete}) == "bad_ref"
    assert await clicks() == "none"  # the stale ref clicked nothing at all

    # An element inserted first gets a new number; the old ones stay.
    await click("#insert")
    third = refs(await ok(agent, "page_snapshot", {"format": "json", "tabId": tab}))
    assert third["Cancel"] == cancel
    assert third["Keep account"] not in first.values()

    # Reordered: each ref still names its own element.
    await click("#reorder")
    fourth = refs(await ok(agent, "page_snapshot", {"format": "json", "tabId": tab}))
    assert fourth == third
    await ok(agent, "page_click", {"tabId": tab, "ref": cancel})
    await ok(agent, "page_click", {"tabId": tab, "ref": third["Keep account"]})
    assert await clicks() == "none cancel keep"

    # A ref from the previous snapshot works without a new one...
    await ok(agent, "page_click", {"tabId": tab, "ref": cancel})
    assert await clicks() == "none cancel keep cancel"
    # ...and after a cross-document navigation every old ref is dead, even once the new
    # document has been snapshotted (its numbering starts after the tab's highest ref).
    await ok(agent, "page_navigate", {"tabId": tab, "url": f"{site}/refs"})
    fresh = refs(await ok(agent, "page_snapshot", {"format": "json", "tabId": tab}))
    assert set(fresh.values()).isdisjoint({*first.values(), *third.values()})
    for ref in {*first.values(), *third.values()}:
        assert await code(agent, "page_click", {"tabId": tab, "ref": ref}) == "bad_ref"
    assert await clicks() == "none"
    await ok(agent, "page_click", {"tabId": tab, "ref": fresh["Cancel"]})
    assert await clicks() == "none cancel"
