"""Actionability, in real Chromium through the real chain: before an element action
acts, it waits (up to timeoutMs) until its element is there, visible, still, enabled and (for a
click) not covered, and says how long it waited (`waitedMs`); when the element never gets there
it answers which condition failed and acts on NOTHING. Each button counts its own clicks on the
page, and the page counts every pointer press it receives: that is the proof of what was (and was
not) done."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.harness import ok, served_pages
from tests.deadline import until
from tests.fakes import tool_error

pytestmark = pytest.mark.browser

#: #start makes, 1.5 s later, #late appear and #later enabled; the others never get there.
PAGE = """<!doctype html><html><head><title>ready</title>
<style>
  @keyframes slide { from { transform: translateX(0) } to { transform: translateX(300px) } }
  #moving { position: absolute; top: 300px; left: 10px;
            animation: slide 1s linear infinite alternate }
  #hidden { display: none }
</style></head><body>
<button type=button id=start onclick="hit('start'); go()">Start</button>
<button type=button id=later disabled onclick="hit('later')">Later</button>
<button type=button id=never disabled onclick="hit('never')">Never</button>
<button type=button id=hidden onclick="hit('hidden')">Hidden</button>
<button type=button id=moving onclick="hit('moving')">Moving</button>
<p id=log></p>
<script>
  const counts = {};
  function hit(id) {
    counts[id] = (counts[id] || 0) + 1;
    document.getElementById('log').textContent =
      Object.keys(counts).sort().map((k) => k + '=' + counts[k]).join(' ');
  }
  // every pointer press the page receives, wherever it lands (a disabled button's too)
  addEventListener('pointerdown', () => hit('press'), true);
  function go() {
    setTimeout(() => {
      const late = document.createElement('button');
      late.type = 'button'; late.id = 'late'; late.textContent = 'Late';
      late.onclick = () => hit('late');
      document.body.prepend(late);
      document.getElementById('later').disabled = false;
    }, 1500);
  }
</script>
</body></html>"""


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with served_pages({"/": PAGE}) as served:
        yield served.origin


async def _log(agent: Any, tab: int) -> str:
    state = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#log"})
    return str(state["text"])


async def _error(agent: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await agent.call_tool(tool, args)
    error = tool_error(result)
    assert error is not None, (tool, args, result.content)
    return {**error, "text": result.content[0].text}


async def _page_ready(agent: Any, tab: int) -> None:
    await until("the fixture page is loaded", lambda: _exists(agent, tab, "#moving"))


async def _exists(agent: Any, tab: int, selector: str) -> bool:
    state = await ok(agent, "page_get_state", {"tabId": tab, "selector": selector})
    return state.get("exists", True) is not False


@pytest.mark.promise("H4-68")
async def test_a_late_button_is_waited_for_and_clicked(agent: Any, tab: int) -> None:
    await _page_ready(agent, tab)
    await ok(agent, "page_click", {"tabId": tab, "selector": "#start"})
    r = await ok(agent, "page_click", {"tabId": tab, "selector": "#late"})
    assert r["clicked"] is True
    assert r["waitedMs"] > 0, "it was not there when the click began: the click waited for it"
    assert await _log(agent, tab) == "late=1 press=2 start=1"


@pytest.mark.promise("H4-68")
async def test_a_button_disabled_for_a_while_is_clicked_once_enabled(agent: Any, tab: int) -> None:
    await _page_ready(agent, tab)
    await ok(agent, "page_click", {"tabId": tab, "selector": "#start"})
    r = await ok(agent, "page_click", {"tabId": tab, "selector": "#later"})
    assert r["clicked"] is True
    assert r["target"]["name"] == "Later"
    assert "later=1" in await _log(agent, tab)


@pytest.mark.promise("H4-68")
async def test_a_never_enabled_button_is_refused_and_never_pressed(agent: Any, tab: int) -> None:
    await _page_ready(agent, tab)
    err = await _error(agent, "page_click", {"tabId": tab, "selector": "#never", "timeoutMs": 1500})
    assert err["code"] == "element_disabled"
    assert "nothing was done" in err["text"]
    assert await _log(agent, tab) == "", "no press and no click reached the page"
    # a fill waits the same way: a disabled field is never typed in
    err = await _error(
        agent, "page_fill", {"tabId": tab, "selector": "#never", "value": "x", "timeoutMs": 300}
    )
    assert err["code"] == "element_disabled"


@pytest.mark.promise("H4-68")
async def test_a_hidden_button_is_refused_and_nothing_is_clicked(agent: Any, tab: int) -> None:
    await _page_ready(agent, tab)
    err = await _error(
        agent, "page_click", {"tabId": tab, "selector": "#hidden", "timeoutMs": 1500}
    )
    assert err["code"] == "element_not_visible"
    assert await _log(agent, tab) == ""
    # hover waits for a shown element too
    err = await _error(agent, "page_hover", {"tabId": tab, "selector": "#hidden", "timeoutMs": 300})
    assert err["code"] == "element_not_visible"


@pytest.mark.promise("H4-68")
async def test_a_moving_button_is_refused_and_never_clicked(agent: Any, tab: int) -> None:
    await _page_ready(agent, tab)
    err = await _error(
        agent, "page_click", {"tabId": tab, "selector": "#moving", "timeoutMs": 1500}
    )
    assert err["code"] == "element_not_stable"
    assert await _log(agent, tab) == "", "no press and no click reached the page"


async def test_an_element_that_never_appears_is_not_found_after_the_wait(
    agent: Any, tab: int
) -> None:
    await _page_ready(agent, tab)
    err = await _error(agent, "page_click", {"tabId": tab, "selector": "#nope", "timeoutMs": 300})
    assert err["code"] == "element_not_found"
    assert await _log(agent, tab) == ""
