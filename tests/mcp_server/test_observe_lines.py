"""An action's observation answers its snapshot in page_snapshot's line form (the one encoder,
mcp_server/catalogue/interact/lines.py): every field an action needs — ref, role, name, states,
href, value — comes back out of the observation's lines, for every action that observes; JSON
rows stay available (``observe.format: "json"``); the format is the server's alone (the extension,
which refuses any other observe key, is sent what it was sent before); an observation without a
snapshot, or a skipped one, reads as before."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabwarden.mcp_server import catalogue
from tabwarden.mcp_server.catalogue import BY_NAME, CATALOGUE
from tabwarden.mcp_server.catalogue.interact import lines
from tabwarden.mcp_server.catalogue.results import Observation
from tests.mcp_server.test_snapshot_lines import expected, rows

ACTING = sorted(s.name for s in CATALOGUE if issubclass(s.arguments, catalogue.Acting))


def _snapshot(items: list[dict[str, Any]]) -> dict[str, Any]:
    cut = {"rows": 3, "interactive": 1, "skip": 9, "rest": "call again with skip: 9"}
    return {
        "url": "https://x.test/",
        "title": "T",
        "snapshot": items,
        "truncated": True,
        "cut": cut,
        "mode": "a11y",
    }


#: Each observing action's own required arguments (beside tabId), the least it is called with.
OWN: dict[str, dict[str, Any]] = {
    "page_navigate": {"url": "https://x.test/"},
    "page_follow": {"ref": "@e1"},
    "page_fill": {"value": "v"},
    "page_press": {"key": "a"},
    "page_check": {"checked": True},
    "page_type": {"value": "v"},
    "page_keys": {"keys": "a"},
    "page_drag": {"selector": "#a", "to": {"selector": "#b"}},
    "page_fill_form": {"fields": [{"kind": "text", "selector": "#a", "value": "v"}]},
}


def _observed(name: str, observe: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    """What the server makes of the extension's ``reply`` to ``name``: the reply shaped by the
    call's arguments, its observation as the result's model (the one every action's result
    names) gives it."""
    spec = BY_NAME[name]
    assert spec.result.model_fields["observation"].annotation == Observation | None
    call = spec.arguments.model_validate({"tabId": 1, **OWN.get(name, {}), "observe": observe})
    shaped = call.shaped(reply)
    if "observation" in shaped:
        seen = Observation.model_validate(shaped["observation"])
        shaped["observation"] = seen.model_dump(mode="json")
    return shaped


ACTION_ROWS: list[dict[str, Any]] = [
    {
        "ref": "@e1",
        "role": "link",
        "name": 'Say "hi"',
        "tag": "a",
        "href": "https://x.test/a?b=1",
        "depth": 1,
    },
    {
        "ref": "@e2",
        "role": "checkbox",
        "name": "Remember me",
        "tag": "input",
        "states": {"checked": "mixed", "disabled": True, "focused": False},
    },
    {"ref": "@e3", "role": "textbox", "name": "Name", "tag": "input", "value": "alice b"},
    {"ref": "@e4", "role": "heading", "name": "Title", "tag": "h2", "level": 2},
]


@pytest.mark.parametrize("name", ACTING)
def test_every_observing_action_answers_lines_that_give_back_what_an_action_needs(
    name: str,
) -> None:
    reply = {"observation": {"snapshot": _snapshot(ACTION_ROWS)}}
    seen = _observed(name, {"snapshot": "full"}, reply)["observation"]["snapshot"]
    assert "snapshot" not in seen  # no JSON rows beside the lines
    assert lines.decode(seen["lines"], seen["url"]) == [expected(r) for r in ACTION_ROWS]
    back = {r["ref"]: r for r in lines.decode(seen["lines"], seen["url"])}
    assert back["@e1"]["href"] == "https://x.test/a?b=1" and back["@e1"]["name"] == 'Say "hi"'
    assert back["@e2"]["states"] == {"checked": "mixed", "disabled": True}
    assert back["@e3"]["value"] == "alice b"
    # What is beside the rows stays: the cut never goes silent.
    assert seen["cut"]["skip"] == 9 and seen["truncated"] is True and seen["url"]


@settings(max_examples=200, deadline=None)
@given(st.lists(rows(), max_size=8))
def test_any_observed_rows_round_trip(snapshot: list[dict[str, Any]]) -> None:
    reply = {"clicked": True, "observation": {"snapshot": _snapshot(snapshot)}}
    seen = _observed("page_click", {"snapshot": "compact"}, reply)["observation"]["snapshot"]
    url = seen["url"]
    shown = lines.fold(snapshot, cut=True)  # the observation says it was cut
    assert lines.decode(seen["lines"], url) == [expected(r, url) for r in shown]


def test_json_rows_stay_for_who_asks() -> None:
    reply = {"clicked": True, "observation": {"snapshot": _snapshot(ACTION_ROWS)}}
    observe = {"snapshot": "full", "format": "json"}
    seen = _observed("page_click", observe, reply)["observation"]["snapshot"]
    assert "lines" not in seen
    assert [r["ref"] for r in seen["snapshot"]] == ["@e1", "@e2", "@e3", "@e4"]
    assert seen["snapshot"][2]["value"] == "alice b"


def test_the_format_never_reaches_the_extension() -> None:
    # The extension refuses any observe key but snapshot and text (handlers/interact.js argObserve).
    for fmt in ("lines", "json"):
        call = BY_NAME["page_click"].arguments.model_validate(
            {"tabId": 1, "selector": "#a", "observe": {"snapshot": "compact", "format": fmt}}
        )
        assert call.wire()["observe"] == {"snapshot": "compact", "text": False}


def test_an_observation_without_a_snapshot_reads_as_before() -> None:
    text = {"text": "hi", "nextOffset": None, "totalChars": 2, "url": "https://x/", "title": "t"}
    for observation in ({"skipped": "the tab left the approved sites"}, {"text": text}):
        reply = {"clicked": True, "observation": observation}
        assert _observed("page_click", {"text": True}, reply) == reply
    assert _observed("page_click", {"text": True}, {"clicked": True}) == {"clicked": True}
