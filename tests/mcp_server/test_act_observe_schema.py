"""Every action's schema carries ``waitFor`` and ``observe`` from one shared model each (the
extension's argWait existed while the schemas dropped it); the actions the catalogue gives them
to are the ones the extension's wrapper serves (``OBSERVING_ACTIONS``, generated into
extension/worker/catalogue.js);
they reach the extension without their unset fields; a result carries ``observation`` only when
it was asked for. page_scroll, page_select, page_reveal, page_history and page_reload schemas
say what the extension accepts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tabwarden.mcp_server import catalogue
from tabwarden.mcp_server.catalogue import BY_NAME, CATALOGUE

REPO = Path(__file__).resolve().parents[2]
ACTING = sorted(s.name for s in CATALOGUE if issubclass(s.arguments, catalogue.Acting))


def _observing_actions() -> set[str]:
    source = (REPO / "extension/worker/catalogue.js").read_text("utf-8")
    block = re.search(r"OBSERVING_ACTIONS = Object\.freeze\(\[(.*?)\]\)", source, re.S)
    assert block is not None
    return set(re.findall(r'"([a-z_]+)"', block.group(1)))


def test_every_action_takes_waitfor_and_observe_and_no_read_does() -> None:
    assert set(ACTING) == {
        "page_click",
        "page_fill",
        "page_press",
        "page_select",
        "page_check",
        "page_clear",
        "page_scroll",
        "page_reveal",
        "page_hover",
        "page_mouse",
        "page_drag",
        "page_navigate",
        "page_history",
        "page_reload",
        "page_type",
        "page_keys",
        "page_follow",
        "page_fill_form",
    }
    for spec in CATALOGUE:
        if spec.name not in ACTING:
            assert "waitFor" not in spec.arguments.model_fields, spec.name


def test_the_catalogue_and_the_extension_wrap_the_same_actions() -> None:
    assert _observing_actions() == set(ACTING)


@pytest.mark.parametrize("name", ACTING)
def test_one_shared_model_each(name: str) -> None:
    schema = BY_NAME[name].arguments.model_json_schema()
    assert schema["$defs"]["WaitFor"] == catalogue.WaitFor.model_json_schema()
    assert schema["$defs"]["Observe"] == catalogue.Observe.model_json_schema()
    assert "observation" in BY_NAME[name].result.model_json_schema()["properties"]


def test_the_aftermath_travels_without_its_unset_fields() -> None:
    args = BY_NAME["page_click"].arguments.model_validate(
        {
            "tabId": 1,
            "selector": "#go",
            "waitFor": {"ref": "@e3", "state": "absent"},
            "observe": {"snapshot": "compact"},
        }
    )
    assert args.wire() == {
        "tabId": 1,
        "selector": "#go",
        "waitFor": {"ref": "@e3", "state": "absent", "timeoutMs": 5000},
        "observe": {"snapshot": "compact", "text": False},
    }
    mouse = BY_NAME["page_mouse"].arguments.model_validate(
        {"tabId": 1, "x": 3, "y": 4, "waitFor": {"text": "ok"}}
    )
    assert mouse.wire()["waitFor"] == {"text": "ok", "state": "visible", "timeoutMs": 5000}
    plain = BY_NAME["page_navigate"].arguments.model_validate({"tabId": 1, "url": "http://a/"})
    assert plain.wire() == {"tabId": 1, "url": "http://a/"}


@pytest.mark.parametrize(
    "bad",
    [
        {"waitFor": {"selector": "a", "state": "gone"}},
        {"waitFor": {"selector": "a", "timeoutMs": 120_001}},
        {"waitFor": {"selector": "a", "extra": 1}},
        {"waitFor": {}},
        {"waitFor": {"state": "absent"}},
        {"waitFor": {"selector": "", "text": ""}},
        {"waitFor": {"selector": "a", "text": "b"}},
        {"waitFor": {"ref": "@e1", "selector": "a"}},
        {"observe": {"snapshot": "everything"}},
        {"observe": {"text": True, "cookies": True}},
    ],
)
def test_a_malformed_aftermath_is_refused_by_the_schema(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        BY_NAME["page_fill"].arguments.model_validate(
            {"tabId": 1, "selector": "#a", "value": "x", **bad}
        )


def test_a_result_carries_observation_only_when_asked() -> None:
    done = BY_NAME["page_click"].result
    assert done.model_validate({"clicked": True}).model_dump(mode="json") == {"clicked": True}
    seen = done.model_validate({"clicked": True, "observation": {"skipped": "elsewhere"}})
    assert seen.model_dump(mode="json") == {
        "clicked": True,
        "observation": {"skipped": "elsewhere"},
    }


@pytest.mark.parametrize(
    ("args", "wire"),
    [
        ({}, {"to": "bottom"}),
        ({"to": "top"}, {"to": "top"}),
        ({"to": {"x": 0, "y": 40}}, {"to": {"x": 0.0, "y": 40.0}}),
        ({"dy": 250}, {"dy": 250.0}),
        (
            {"container": {"selector": "#list"}, "dx": -5, "dy": 10},
            {"dx": -5.0, "dy": 10.0, "container": {"selector": "#list"}},
        ),
        ({"ref": "@e4"}, {"ref": "@e4"}),
    ],
)
def test_page_scroll_wire(args: dict[str, Any], wire: dict[str, Any]) -> None:
    got = BY_NAME["page_scroll"].arguments.model_validate({"tabId": 2, **args}).wire()
    assert got == {"tabId": 2, **wire}


@pytest.mark.parametrize(
    "args",
    [
        {"ref": "@e4", "to": "top"},
        {"selector": "#x", "container": {"selector": "#list"}},
        {"container": {"selector": "#a", "text": "b"}, "dy": 1},
    ],
)
def test_page_scroll_refuses_two_meanings(args: dict[str, Any]) -> None:
    with pytest.raises(catalogue.BadArguments):
        BY_NAME["page_scroll"].arguments.model_validate({"tabId": 2, **args}).wire()


def test_page_select_reveal_history_reload_wire() -> None:
    select = BY_NAME["page_select"].arguments
    assert select.model_validate({"tabId": 1, "selector": "#s", "values": ["a", "b"]}).wire() == {
        "tabId": 1,
        "selector": "#s",
        "values": ["a", "b"],
    }
    assert select.model_validate({"tabId": 1, "ref": "@e1", "optionIndex": 2}).wire() == {
        "tabId": 1,
        "ref": "@e1",
        "optionIndex": 2,
    }
    reveal = BY_NAME["page_reveal"].arguments.model_validate(
        {"tabId": 1, "text": "Row 9", "container": {"ref": "@e2"}}
    )
    assert reveal.wire() == {
        "tabId": 1,
        "text": "Row 9",
        "maxSteps": 200,
        "timeoutMs": 20_000,
        "container": {"ref": "@e2"},
    }
    history = BY_NAME["page_history"].arguments
    assert history.model_validate({"tabId": 1}).wire() == {"tabId": 1, "steps": -1}
    with pytest.raises(ValidationError):
        history.model_validate({"tabId": 1, "steps": 51})
    reload = BY_NAME["page_reload"].arguments.model_validate({"tabId": 1, "bypassCache": True})
    assert reload.wire() == {"tabId": 1, "bypassCache": True}
    assert "page_back" not in BY_NAME and "page_forward" not in BY_NAME


def test_a_wait_names_exactly_one_thing_and_an_empty_one_never_travels() -> None:
    args = BY_NAME["page_click"].arguments.model_validate(
        {"tabId": 1, "selector": "#go", "waitFor": {"ref": "", "text": "Saved", "selector": ""}}
    )
    assert args.wire()["waitFor"] == {"text": "Saved", "state": "visible", "timeoutMs": 5000}


@pytest.mark.parametrize(
    "bad",
    [
        {},
        {"selector": "a", "text": "b"},
        {"selector": "", "text": ""},
        {"selector": "a", "state": "gone"},
    ],
)
def test_page_wait_for_waits_for_exactly_one_thing(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        BY_NAME["page_wait_for"].arguments.model_validate({"tabId": 1, **bad})
