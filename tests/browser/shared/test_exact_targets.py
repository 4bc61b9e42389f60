"""Exact targets, in real Chromium through the real chain: text names an element by its
whole text (whitespace collapsed, case-sensitive) unless the call asks for a substring or any
case; a name that matches several elements answers `ambiguous` with the candidates (their refs
work in the next call) and NOTHING is clicked; and every element action's result says what it
acted on (`target`: ref, role, name, and the frame when it is in one). Each button counts its
own clicks on the page, which is the proof of what was (and was not) clicked."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.harness import ok, served_pages
from tests.deadline import until
from tests.fakes import tool_error

pytestmark = pytest.mark.browser

#: Two elements that share a word, each counting its clicks into #log.
BODY = """
<button type=button id=save onclick="hit('save')">Save</button>
<p id=para onclick="hit('para')">Save the draft before you leave</p>
<button type=button id=nulla onclick="hit('nulla')">nulla</button>
<p id=lorem onclick="hit('lorem')">Lorem ipsum dolor nulla pariatur</p>
<button type=button id=spaced onclick="hit('spaced')">  Send
   now  </button>
<p id=log></p>
<script>
  const counts = {};
  function hit(id) {
    counts[id] = (counts[id] || 0) + 1;
    document.getElementById('log').textContent =
      Object.keys(counts).sort().map((k) => k + '=' + counts[k]).join(' ');
  }
</script>
"""

TOP = (
    "<!doctype html><html><head><title>targets</title></head><body>"
    + BODY
    + "<iframe id=inner src='/inner' width=600 height=300></iframe></body></html>"
)
INNER = "<!doctype html><html><head><title>inner</title></head><body>" + BODY + "</body></html>"


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with served_pages({"/": TOP, "/inner": INNER}) as served:
        yield served.origin


async def _log(agent: Any, tab: int, frame: int | None = None) -> str:
    args: dict[str, Any] = {"tabId": tab, "selector": "#log"}
    if frame is not None:
        args["frame"] = frame
    state = await ok(agent, "page_get_state", args)
    return str(state["text"])


async def _error(agent: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await agent.call_tool(tool, args)
    error = tool_error(result)
    assert error is not None, (tool, args, result.content)
    return {**error, "text": result.content[0].text}


@pytest.mark.promise("H4-67")
async def test_exact_text_clicks_the_whole_match_and_names_it(agent: Any, tab: int) -> None:
    r = await ok(agent, "page_click", {"tabId": tab, "text": "nulla"})
    assert r["clicked"] is True
    target = r["target"]
    assert (target["role"], target["name"]) == ("button", "nulla")
    assert re.fullmatch(r"@e\d+", target["ref"])
    assert "frame" not in target
    assert await _log(agent, tab) == "nulla=1", "the button, never the paragraph with the word"
    # the ref the result names is a ref of this document: it clicks the same button again
    again = await ok(agent, "page_click", {"tabId": tab, "ref": target["ref"]})
    assert again["target"] == target
    assert await _log(agent, tab) == "nulla=2"
    # "Save": the button, not the paragraph that starts with the word
    saved = await ok(agent, "page_click", {"tabId": tab, "text": "Save"})
    assert (saved["target"]["role"], saved["target"]["name"]) == ("button", "Save")
    assert await _log(agent, tab) == "nulla=2 save=1"


async def test_a_part_of_the_text_matches_only_when_asked(agent: Any, tab: int) -> None:
    missing = await _error(agent, "page_click", {"tabId": tab, "text": "the draft"})
    assert missing["code"] == "element_not_found"
    assert "substring" in missing["text"]
    r = await ok(agent, "page_click", {"tabId": tab, "text": "the draft", "match": "substring"})
    assert r["target"]["name"] == "Save the draft before you leave"
    assert await _log(agent, tab) == "para=1"


@pytest.mark.promise("H4-67")
async def test_a_name_matching_two_is_ambiguous_clicks_nothing_and_a_candidate_ref_works(
    agent: Any, tab: int
) -> None:
    err = await _error(agent, "page_click", {"tabId": tab, "text": "nulla", "match": "substring"})
    assert err["code"] == "ambiguous"
    assert err["text"].startswith('ambiguous: 2 elements match text "nulla" (substring): ')
    candidates = re.findall(r'(@e\d+) (\w+) "([^"]*)"', err["text"])
    assert [(role, name[:10]) for _, role, name in candidates] == [
        ("button", "nulla"),
        ("p", "Lorem ipsu"),
    ]
    # nothing was clicked: the page's counters are as they were
    assert await _log(agent, tab) == ""
    # a selector that matches several is the same rule
    many = await _error(agent, "page_click", {"tabId": tab, "selector": "button"})
    assert many["code"] == "ambiguous" and many["text"].startswith("ambiguous: 3 elements")
    assert await _log(agent, tab) == ""
    # the second candidate's ref, straight from the answer, clicks that very element
    para_ref = candidates[1][0]
    r = await ok(agent, "page_click", {"tabId": tab, "ref": para_ref})
    assert r["target"]["ref"] == para_ref
    assert await _log(agent, tab) == "lorem=1"
    # or index chooses among the matches, in document order
    r = await ok(
        agent, "page_click", {"tabId": tab, "text": "nulla", "match": "substring", "index": 0}
    )
    assert r["target"]["name"] == "nulla"
    assert await _log(agent, tab) == "lorem=1 nulla=1"


async def test_case_only_when_asked_and_whitespace_is_collapsed(agent: Any, tab: int) -> None:
    assert (await _error(agent, "page_click", {"tabId": tab, "text": "send now"}))[
        "code"
    ] == "element_not_found"
    assert await _log(agent, tab) == ""
    r = await ok(agent, "page_click", {"tabId": tab, "text": "send NOW", "ignoreCase": True})
    assert r["target"]["name"] == "Send now"
    r = await ok(agent, "page_click", {"tabId": tab, "text": "  Send \n now "})
    assert r["target"]["name"] == "Send now"
    assert await _log(agent, tab) == "spaced=2"


async def test_inside_a_frame_the_target_names_the_frame(agent: Any, tab: int) -> None:
    async def inner_frame() -> int | None:
        frames = (await ok(agent, "page_frames", {"tabId": tab}))["frames"]
        inner = [f for f in frames if f["frameId"] != 0 and "/inner" in (f["url"] or "")]
        return inner[0]["frameId"] if inner else None

    frame = await until("the inner frame has loaded", inner_frame)
    r = await ok(agent, "page_click", {"tabId": tab, "frame": frame, "text": "Save"})
    assert r["target"]["frame"] == frame
    assert (r["target"]["role"], r["target"]["name"]) == ("button", "Save")
    assert await _log(agent, tab, frame) == "save=1"
    assert await _log(agent, tab) == "", "the top page's Save was not clicked"
    # the frame's ref works in that frame
    again = await ok(agent, "page_click", {"tabId": tab, "frame": frame, "ref": r["target"]["ref"]})
    assert again["target"]["frame"] == frame
    assert await _log(agent, tab, frame) == "save=2"


async def test_every_element_action_names_its_target(agent: Any, tab: int) -> None:
    state = await ok(agent, "page_get_state", {"tabId": tab, "text": "Save"})
    assert state["target"]["name"] == "Save"
    hovered = await ok(agent, "page_hover", {"tabId": tab, "text": "Save"})
    assert hovered["target"]["role"] == "button"
    scrolled = await ok(agent, "page_scroll", {"tabId": tab, "selector": "#para"})
    assert scrolled["target"]["name"] == "Save the draft before you leave"
    # a call that names no element says nothing of one
    moved = await ok(agent, "page_scroll", {"tabId": tab, "to": "top"})
    assert "target" not in moved
