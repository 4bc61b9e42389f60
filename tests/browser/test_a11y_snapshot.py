"""The accessibility snapshot in real Chromium through the real chain: page_snapshot
from Chrome's accessibility tree (roles, names, heading levels and states as Chrome computes them,
hidden nodes left out, open shadow roots in), its stable refs shared with the DOM walk, scope,
compact, maxNodes on a virtualised list of 10,000 rows, a page that never stops mutating, the
sparse-tree merge, page_find's ranking, page_get_state's {exists: false} and box, and page_text
of one ref — with the redaction an attacker would probe (password values, card numbers)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import (
    launched,
    ok,
    served_pages,
    trust_this_process,
)
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

CARD = "4111 1111 1111 1111"

#: ARIA roles and states, headings, a password, a card number, an aria-hidden (but visible)
#: button, a display:none one, an open shadow root, a labelled region to scope to.
ARIA = f"""<!doctype html><html><head><title>aria</title></head><body><main>
<h1>Orders</h1>
<h3>Filters</h3>
<div role="checkbox" aria-checked="true" tabindex="0">Agree</div>
<div role="checkbox" aria-checked="mixed" tabindex="0">Some</div>
<button type="button" aria-expanded="false">Menu</button>
<button type="button" aria-pressed="true">Bold</button>
<button type="button" disabled>Disabled action</button>
<label>Email <input id="email" required value="a@b.c"></label>
<label>Password <input id="pw" type="password" value="hunter2"></label>
<label>Card number <input id="card" value="{CARD}"></label>
<div role="tablist"><div role="tab" aria-selected="true" tabindex="0">First tab</div>\
<div role="tab" aria-selected="false" tabindex="-1">Second tab</div></div>
<div aria-hidden="true"><button type="button">Ghost button</button></div>
<button type="button" style="display:none">Gone button</button>
<div id="host"></div>
<section id="panel" aria-label="Panel"><button type="button">Save draft</button>\
<a href="#x">Save</a><button type="button">Autosave</button></section>
<button type="button" id="save">Save</button>
<button type="button">Pay {CARD}</button>
<p id="para">Total: <b>42</b> items, card {CARD}</p>
</main>
<script>
  document.getElementById('host').attachShadow({{mode: 'open'}}).innerHTML =
    '<button type="button">Shadow action</button>';
</script>
</body></html>""".encode()

#: A virtualised list of 10,000 rows: only the rows in view (plus a margin) are in the DOM.
VIRTUAL = b"""<!doctype html><html><head><title>virtual</title></head><body>
<div id="view" role="list" aria-label="Rows" style="height:400px;overflow:auto">
<div id="spacer" style="position:relative;height:200000px"></div></div>
<script>
  const view = document.getElementById('view'), spacer = document.getElementById('spacer');
  function paint() {
    const first = Math.floor(view.scrollTop / 20), rows = [];
    for (let i = first; i < Math.min(10000, first + 40); i++) {
      const row = document.createElement('div');
      row.setAttribute('role', 'listitem');
      row.setAttribute('aria-setsize', '10000');
      row.setAttribute('aria-posinset', String(i + 1));
      row.style.cssText = 'position:absolute;height:20px;top:' + (i * 20) + 'px';
      const b = document.createElement('button');
      b.type = 'button'; b.textContent = 'Row ' + (i + 1);
      row.append(b); rows.push(row);
    }
    spacer.replaceChildren(...rows);
  }
  view.addEventListener('scroll', paint); paint();
</script></body></html>"""

#: A page that never stops mutating: a ticking counter and a button that comes and goes.
MUTATING = b"""<!doctype html><html><head><title>mutating</title></head><body>
<button type="button" id="stable">Stable</button><p id="tick">0</p><div id="churn"></div>
<script>
  let n = 0;
  setInterval(() => {
    document.getElementById('tick').textContent = String(++n);
    const churn = document.getElementById('churn');
    if (n % 2) { const b = document.createElement('button'); b.textContent = 'Flicker ' + n;
      churn.replaceChildren(b); } else churn.replaceChildren();
  }, 5);
</script></body></html>"""

#: A broken modal pattern: visible buttons inside aria-hidden (the tree has almost none of them).
SPARSE = (
    b"""<!doctype html><html><head><title>sparse</title></head><body>
<button type="button">Reachable</button>
<div aria-hidden="true">"""
    + b"".join(f'<button type="button">Hidden {i}</button>'.encode() for i in range(6))
    + b"</div></body></html>"
)

PAGES = {"/aria": ARIA, "/virtual": VIRTUAL, "/mutating": MUTATING, "/sparse": SPARSE}


@pytest.fixture
def a11y_site() -> Iterator[str]:
    with served_pages(PAGES, fallback=b"<!doctype html><title>other</title>") as served:
        yield served.origin


def by_name(snap: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in snap["snapshot"]}


@pytest.mark.promise("H4-32")
async def test_a11y_snapshot_find_state_and_text_on_an_aria_page(
    browser: ThrowawayBrowser, a11y_site: str
) -> None:
    trust_this_process(browser, [a11y_site])

    async with launched(browser) as (_, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a11y_site}/aria"}))["tab"]["id"]

        snap = await ok(agent, "page_snapshot", {"format": "json", "tabId": tab})
        assert snap["mode"] == "a11y" and snap["truncated"] is False, snap
        rows = by_name(snap)
        # Roles, names, levels and states as Chrome computes them.
        assert (rows["Orders"]["role"], rows["Orders"]["level"]) == ("heading", 1)
        assert (rows["Filters"]["role"], rows["Filters"]["level"]) == ("heading", 3)
        assert rows["Agree"]["role"] == "checkbox"
        assert rows["Agree"]["states"]["checked"] is True
        assert rows["Some"]["states"]["checked"] == "mixed"
        assert rows["Menu"]["states"]["expanded"] is False
        assert rows["Bold"]["states"]["pressed"] is True
        assert rows["Disabled action"]["states"]["disabled"] is True
        assert rows["Email"]["states"]["required"] is True
        assert rows["Email"]["value"] == "a@b.c"
        assert rows["First tab"]["states"]["selected"] is True
        assert rows["Shadow action"]["role"] == "button"  # an open shadow root
        assert rows["Panel"]["role"] == "region"
        assert rows["Save draft"]["depth"] > rows["Panel"]["depth"]
        # Hidden nodes are left out; a password's value never appears, nor its bullets;
        # a card number is masked in a value.
        assert "Ghost button" not in rows and "Gone button" not in rows
        assert rows["Password"]["role"] == "textbox" and rows["Password"].get("value") is None
        assert CARD not in rows["Card number"]["value"]
        pay = next(item for item in snap["snapshot"] if item["name"].startswith("Pay"))
        assert CARD not in pay["name"] and pay["role"] == "button"
        dump = json.dumps(snap)
        assert "hunter2" not in dump and "\u2022" not in dump and CARD not in dump

        # Stable refs: the same elements keep their refs across a11y snapshots, and the DOM
        # walk hands out the very same refs (one ref store); the walk lists what the tree
        # hides.
        again = by_name(
            await ok(agent, "page_snapshot", {"format": "json", "tabId": tab, "mode": "a11y"})
        )
        assert {n: r["ref"] for n, r in again.items()} == {n: r["ref"] for n, r in rows.items()}
        dom = await ok(agent, "page_snapshot", {"format": "json", "tabId": tab, "mode": "dom"})
        assert dom["mode"] == "dom"
        dom_rows = by_name(dom)
        assert dom_rows["Save"]["ref"] == rows["Save"]["ref"]
        assert dom_rows["Menu"]["ref"] == rows["Menu"]["ref"]
        assert "Ghost button" in dom_rows
        assert "hunter2" not in json.dumps(dom)

        # compact: interactive elements only.
        compact = await ok(
            agent, "page_snapshot", {"format": "json", "tabId": tab, "compact": True}
        )
        roles = {item["role"] for item in compact["snapshot"]}
        assert "heading" not in roles and "region" not in roles
        assert {"button", "checkbox", "textbox", "link", "tab"} <= roles

        # Scope by ref and by selector: the region and what it holds, nothing else.
        panel = rows["Panel"]["ref"]
        scoped = await ok(agent, "page_snapshot", {"format": "json", "tabId": tab, "ref": panel})
        names = [item["name"] for item in scoped["snapshot"]]
        assert names == ["Panel", "Save draft", "Save", "Autosave"], names
        by_selector = await ok(
            agent, "page_snapshot", {"format": "json", "tabId": tab, "selector": "#panel"}
        )
        assert [item["name"] for item in by_selector["snapshot"]] == names

        # page_find: exact name first, then prefix, then substring; role filters; limit.
        found = await ok(agent, "page_find", {"tabId": tab, "role": "button", "name": "save"})
        assert [m["name"] for m in found["matches"]] == ["Save", "Save draft", "Autosave"]
        assert found["matches"][0]["ref"] == rows["Save"]["ref"] and found["total"] == 3
        exact = await ok(
            agent, "page_find", {"tabId": tab, "role": "button", "name": "Save", "exact": True}
        )
        assert [m["ref"] for m in exact["matches"]] == [rows["Save"]["ref"]]
        one = await ok(agent, "page_find", {"tabId": tab, "name": "save", "limit": 1})
        assert len(one["matches"]) == 1 and one["total"] == 4  # the link counts too
        too_many = await agent.call_tool("page_find", {"tabId": tab, "name": "x", "limit": 51})
        assert too_many.is_error

        # page_get_state: box and inViewport; {exists: false} for no match and a stale ref.
        state = await ok(agent, "page_get_state", {"tabId": tab, "ref": rows["Save"]["ref"]})
        assert state["exists"] is True and state["tag"] == "button"
        assert state["box"]["width"] > 0 and state["box"]["height"] > 0
        assert state["inViewport"] is True
        missing = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#nope"})
        assert missing["exists"] is False and "#nope" in missing["reason"]

        # page_text of one ref: its text, masked as page text; a password field has none.
        text = await ok(agent, "page_text", {"tabId": tab, "ref": rows["Orders"]["ref"]})
        assert text["text"] == "Orders" and text["totalChars"] == 6
        main = next(item for item in snap["snapshot"] if item["role"] == "main")
        body = await ok(agent, "page_text", {"tabId": tab, "ref": main["ref"]})
        assert "Total: 42 items" in body["text"] and CARD not in body["text"]
        assert "hunter2" not in body["text"]
        pw = await ok(agent, "page_text", {"tabId": tab, "ref": rows["Password"]["ref"]})
        assert pw["text"] == ""

        # A new document: the old refs answer {exists: false}, never another element.
        await ok(agent, "page_navigate", {"tabId": tab, "url": f"{a11y_site}/aria"})
        stale = await ok(agent, "page_get_state", {"tabId": tab, "ref": rows["Save"]["ref"]})
        assert stale["exists"] is False and "page_snapshot" in stale["reason"]
        fresh = by_name(await ok(agent, "page_snapshot", {"format": "json", "tabId": tab}))
        assert fresh["Save"]["ref"] != rows["Save"]["ref"]


@pytest.mark.promise("H4-32")
async def test_a11y_snapshot_bounded_steady_and_merged_when_sparse(
    browser: ThrowawayBrowser, a11y_site: str
) -> None:
    trust_this_process(browser, [a11y_site])

    async with launched(browser) as (_, agent):
        tab = (await ok(agent, "tab_open", {"url": f"{a11y_site}/virtual"}))["tab"]["id"]

        # 10,000 rows, a few dozen rendered: maxNodes bounds the answer and says so.
        bounded = await ok(agent, "page_snapshot", {"format": "json", "tabId": tab, "maxNodes": 10})
        assert len(bounded["snapshot"]) == 10 and bounded["truncated"] is True
        whole = await ok(agent, "page_snapshot", {"format": "json", "tabId": tab, "compact": True})
        assert whole["mode"] == "a11y"
        names = [item["name"] for item in whole["snapshot"]]
        assert "Row 1" in names and "Row 10000" not in names and len(names) <= 40

        # A page that mutates every few milliseconds: every snapshot answers, and the
        # element that stays keeps its ref.
        await ok(agent, "page_navigate", {"tabId": tab, "url": f"{a11y_site}/mutating"})
        seen = set()
        for _ in range(5):
            snap = await ok(agent, "page_snapshot", {"format": "json", "tabId": tab})
            assert snap["mode"] == "a11y"
            seen.add(by_name(snap)["Stable"]["ref"])
        assert len(seen) == 1

        # A sparse tree (visible buttons under aria-hidden): auto merges the DOM walk's rows,
        # marked; mode a11y alone lists only what the tree has.
        await ok(agent, "page_navigate", {"tabId": tab, "url": f"{a11y_site}/sparse"})
        auto = await ok(agent, "page_snapshot", {"format": "json", "tabId": tab})
        assert auto["mode"] == "a11y+dom"
        rows = by_name(auto)
        assert rows["Reachable"].get("source") is None
        assert rows["Hidden 3"]["source"] == "dom"
        only = await ok(agent, "page_snapshot", {"format": "json", "tabId": tab, "mode": "a11y"})
        assert [item["name"] for item in only["snapshot"]] == ["Reachable"]
        assert tool_error(await agent.call_tool("page_snapshot", {"tabId": tab, "ref": "@e999"}))
